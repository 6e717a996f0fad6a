package fetch

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Resolver looks host names up, through a given DNS server or the
// system's, and keeps every answer — and every failure, so that a dead
// name costs one lookup per batch however many URLs it has — for a
// configurable time. Concurrent lookups of one name share one query. It is
// safe for concurrent use.
type Resolver struct {
	r        *net.Resolver
	timeout  time.Duration
	keep     time.Duration // 0 = forever
	now      func() time.Time
	mu       sync.Mutex
	cache    map[string]*lookup
	lookups  int // queries made (not answered from the cache)
	failures int
}

type lookup struct {
	done    chan struct{}
	addrs   []netip.Addr
	err     error
	expires time.Time // zero: never
}

// NewResolver returns a resolver that asks server (host:port, UDP then
// TCP as the answer requires) or, when server is empty, the system
// resolver. timeout bounds each lookup; answers and failures are kept for
// keep (0: for the life of the resolver).
func NewResolver(server string, timeout, keep time.Duration) *Resolver {
	r := &Resolver{r: net.DefaultResolver, timeout: timeout, keep: keep, now: time.Now, cache: map[string]*lookup{}}
	if server != "" {
		d := net.Dialer{Timeout: timeout}
		r.r = &net.Resolver{
			PreferGo: true,
			Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, server)
			},
		}
	}
	return r
}

// ResolverStats counts what a resolver did.
type ResolverStats struct {
	Lookups  int // queries sent (cache misses)
	Failures int // of which failed
}

// Stats returns the resolver's counts so far.
func (r *Resolver) Stats() ResolverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ResolverStats{Lookups: r.lookups, Failures: r.failures}
}

// Lookup returns the addresses of host, from the cache while the answer
// is fresh. IP literals are returned as they are. Failures are *Error of
// kind KindDNS.
func (r *Resolver) Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	r.mu.Lock()
	l, ok := r.cache[host]
	if ok && !l.expires.IsZero() && r.now().After(l.expires) {
		select {
		case <-l.done:
			ok = false // stale: ask again
		default: // still being looked up: share it
		}
	}
	if !ok {
		l = &lookup{done: make(chan struct{})}
		r.cache[host] = l
		r.lookups++
		r.mu.Unlock()
		l.addrs, l.err = r.resolve(ctx, host)
		r.mu.Lock()
		if l.err != nil && ctx.Err() != nil {
			// Our caller stopped: do not remember a failure that is not
			// the name's.
			if r.cache[host] == l {
				delete(r.cache, host)
			}
		} else if l.err != nil {
			r.failures++
		}
		if r.keep > 0 {
			l.expires = r.now().Add(r.keep)
		}
		r.mu.Unlock()
		close(l.done)
		return l.addrs, l.err
	}
	r.mu.Unlock()
	select {
	case <-l.done:
		return l.addrs, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *Resolver) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	// The trailing dot makes the name absolute, so no search domain of
	// the machine is tried.
	ips, err := r.r.LookupNetIP(ctx, "ip", host+".")
	var nf *net.DNSError
	if err != nil && errors.As(err, &nf) && nf.IsNotFound && ctx.Err() == nil {
		// "No such host" from a lookup of both families can be one
		// answer (an empty AAAA) beside a failed query (the A query's
		// resolver gone meanwhile): the name is confirmed missing only
		// by its A query alone. (An outage test saw it when the
		// resolver went down mid-lookup.)
		ips, err = r.r.LookupNetIP(ctx, "ip4", host+".")
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ctx.Err()
		}
		detail := err.Error()
		var de *net.DNSError
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			detail = "timeout looking up " + host + " after " + r.timeout.String()
		case errors.As(err, &de):
			switch {
			case de.IsNotFound:
				detail = "no such host " + host
			case de.IsTimeout:
				detail = "timeout looking up " + host
			default:
				detail = de.Err + " looking up " + host
			}
		}
		return nil, &Error{Kind: KindDNS, Detail: detail, Err: err}
	}
	if len(ips) == 0 {
		return nil, &Error{Kind: KindDNS, Detail: "no address for " + host}
	}
	out := make([]netip.Addr, len(ips))
	for i, ip := range ips {
		out[i] = ip.Unmap()
	}
	return out, nil
}
