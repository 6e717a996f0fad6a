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
// system's, and remembers every answer (and every failure) for the rest of
// the run: a batch is short compared to DNS lifetimes, and each host is
// asked once however many URLs it has. It is safe for concurrent use.
type Resolver struct {
	r       *net.Resolver
	timeout time.Duration
	mu      sync.Mutex
	cache   map[string]*lookup
}

type lookup struct {
	done  chan struct{}
	addrs []netip.Addr
	err   error
}

// NewResolver returns a resolver that asks server (host:port, UDP then
// TCP as the answer requires) or, when server is empty, the system
// resolver. timeout bounds each lookup.
func NewResolver(server string, timeout time.Duration) *Resolver {
	r := &Resolver{r: net.DefaultResolver, timeout: timeout, cache: map[string]*lookup{}}
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

// Lookup returns the addresses of host, from the cache after the first
// call. IP literals are returned as they are. Failures are *Error of kind
// KindDNS.
func (r *Resolver) Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	r.mu.Lock()
	l, ok := r.cache[host]
	if !ok {
		l = &lookup{done: make(chan struct{})}
		r.cache[host] = l
		r.mu.Unlock()
		l.addrs, l.err = r.resolve(ctx, host)
		if l.err != nil && ctx.Err() != nil {
			// Our caller stopped: do not remember a failure that is not
			// the name's.
			r.mu.Lock()
			delete(r.cache, host)
			r.mu.Unlock()
		}
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
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ctx.Err()
		}
		detail := err.Error()
		var de *net.DNSError
		if errors.As(err, &de) {
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
