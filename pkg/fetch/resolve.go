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
// name costs one lookup per batch however many URLs it has. Answers from
// a given server are asked with github.com/miekg/dns and kept for their
// TTL, within a floor and a ceiling; answers of the system resolver,
// which gives no TTL, for a fixed time; failures for a time of their own
// (dnsquery.go). Concurrent lookups of one name share one query. It is
// safe for concurrent use.
type Resolver struct {
	r        *net.Resolver
	q        *dnsQuerier // the given server's, nil for the system resolver
	timeout  time.Duration
	keep     time.Duration // system resolver answers; 0 = forever
	ttl      TTLBounds
	now      func() time.Time
	mu       sync.Mutex
	cache    map[string]*lookup
	lookups  int // queries made (not answered from the cache)
	failures int
	answered int // queries the resolver answered (addresses, or the name's failure)
}

type lookup struct {
	done    chan struct{}
	addrs   []netip.Addr
	err     error
	expires time.Time // zero: never
}

// TTLBounds are how long a Resolver keeps what it learnt. Zero values
// keep the old rule: everything for the resolver's keep time.
type TTLBounds struct {
	Min, Max time.Duration // an answer's TTL is raised to Min and cut to Max (0: no bound)
	Negative time.Duration // a failure (NXDOMAIN, no address, SERVFAIL, no answer) is kept this long; 0: keep
}

// NewResolver returns a resolver that asks server (host:port, UDP then
// TCP as the answer requires) or, when server is empty, the system
// resolver. timeout bounds each lookup; answers and failures are kept for
// keep (0: for the life of the resolver).
func NewResolver(server string, timeout, keep time.Duration) *Resolver {
	return NewTTLResolver(server, timeout, keep, TTLBounds{})
}

// NewTTLResolver is NewResolver with TTLs: the answers of server are
// kept for their TTL within ttl's bounds, those of the system resolver
// for keep; failures for ttl.Negative (else keep).
func NewTTLResolver(server string, timeout, keep time.Duration, ttl TTLBounds) *Resolver {
	r := &Resolver{r: net.DefaultResolver, timeout: timeout, keep: keep, ttl: ttl, now: time.Now, cache: map[string]*lookup{}}
	if server != "" {
		r.q = &dnsQuerier{server: server, timeout: timeout}
	}
	return r
}

// expiry is how long a lookup's outcome is kept: ttl is the answer's
// TTL (hasTTL: it had one), err its failure.
func (r *Resolver) expiry(ttl time.Duration, hasTTL bool, err error) time.Duration {
	switch {
	case err != nil && r.ttl.Negative > 0:
		return r.ttl.Negative
	case err != nil || !hasTTL:
		return r.keep
	}
	if r.ttl.Min > 0 && ttl < r.ttl.Min {
		ttl = r.ttl.Min
	}
	if r.ttl.Max > 0 && ttl > r.ttl.Max {
		ttl = r.ttl.Max
	}
	return max(ttl, time.Nanosecond) // 0 would mean forever
}

// ResolverStats counts what a resolver did.
type ResolverStats struct {
	Lookups  int // queries sent (cache misses)
	Failures int // of which failed
	// Answered counts the queries the resolver answered: with addresses,
	// or with the name's own failure (NXDOMAIN, no address). A query
	// that failed for the resolver's fault (ResolverFailure) or was cut
	// short is not answered. The outage rule reads it: only an answer
	// proves the resolver up, not a request on a cached address.
	Answered int
}

// Stats returns the resolver's counts so far.
func (r *Resolver) Stats() ResolverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ResolverStats{Lookups: r.lookups, Failures: r.failures, Answered: r.answered}
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
		var ttl time.Duration
		var hasTTL bool
		l.addrs, ttl, hasTTL, l.err = r.resolve(ctx, host)
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
		if l.err == nil || (ctx.Err() == nil && !ResolverFailure(l.err)) {
			r.answered++
		}
		if keep := r.expiry(ttl, hasTTL, l.err); keep > 0 {
			l.expires = r.now().Add(keep)
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

// resolve asks the server (or the system resolver) for host's addresses:
// the addresses, the answer's TTL if it has one, or an *Error of kind
// KindDNS.
func (r *Resolver) resolve(ctx context.Context, host string) ([]netip.Addr, time.Duration, bool, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	var (
		ips    []netip.Addr
		ttl    time.Duration
		hasTTL bool
		err    error
	)
	if r.q != nil {
		ips, ttl, err = r.q.lookup(ctx, host)
		hasTTL = err == nil
	} else {
		ips, err = r.system(ctx, host)
	}
	if err != nil {
		return nil, 0, false, r.dnsError(ctx, host, err)
	}
	if len(ips) == 0 {
		return nil, 0, false, &Error{Kind: KindDNS, Detail: "no address for " + host}
	}
	out := make([]netip.Addr, len(ips))
	for i, ip := range ips {
		out[i] = ip.Unmap()
	}
	return out, ttl, hasTTL, nil
}

// system looks host up with the system resolver.
func (r *Resolver) system(ctx context.Context, host string) ([]netip.Addr, error) {
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
	return ips, err
}

// dnsError turns a failed lookup into the *Error the harvester logs
// (or ctx's error when the caller stopped).
func (r *Resolver) dnsError(ctx context.Context, host string, err error) error {
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
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
	return &Error{Kind: KindDNS, Detail: detail, Err: err}
}
