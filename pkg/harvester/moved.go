package harvester

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

// heldUnit is a host of the previous harvest that is not in this batch
// but holds back a unit of it (another name of one of its domains whose
// next request is still to come): carryOver holds its unit at the
// address the previous harvest dialled, and followMoves at its address
// now, if the server moved.
type heldUnit struct {
	host      string
	ip        netip.Addr // the address the previous harvest dialled
	notBefore time.Time
}

// followMoves looks up again the hosts whose units the previous harvest
// holds back (h.held) and, for each whose address changed, holds back its
// unit on the new address too: the politeness state of a server that
// moved between batches moves with it (docs/harvester.md, "DNS and the
// address policy"). The hosts of the batch itself need nothing: their
// state is kept by name and joins their unit at the address they resolve
// to. At most harvester.dns_lookups lookups at once, each bounded by
// dns_timeout; run calls it before the scheduler starts.
func (h *harvest) followMoves(ctx context.Context) {
	if len(h.held) == 0 {
		return
	}
	sem := make(chan struct{}, max(h.cfg.Harvester.DNSLookups, 1))
	var wg sync.WaitGroup
	moved := 0
	var mu sync.Mutex
	for _, hu := range h.held {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ip, err := h.client.Resolve(ctx, hu.host)
			if err != nil || ip == hu.ip {
				return
			}
			h.hosts.laterUnit(ip, hu.host, hu.notBefore)
			mu.Lock()
			moved++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if moved > 0 {
		h.log.Info("servers moved since the previous harvest: their units are held at the new address", "hosts", moved)
	}
}
