package fetch

import (
	"errors"
	"net"
	"syscall"
)

// ErrNetworkDown means the network failed as a whole: the DNS resolver
// does not answer, or no server can be reached for lack of a route. A
// harvester that finds it stops the batch without counting anything
// against the web (docs/harvester.md, "A network outage").
var ErrNetworkDown = errors.New("network down")

// ResolverFailure tells whether err is a DNS failure of the resolver
// rather than an answer about the name: the resolver refused the
// connection or did not answer in time, or answered SERVFAIL or another
// failure. A name that does not exist (NXDOMAIN), or has no address, is
// an answer: false.
func ResolverFailure(err error) bool {
	var fe *Error
	if !errors.As(err, &fe) || fe.Kind != KindDNS {
		return false
	}
	if fe.Err == nil {
		return false // "no address for HOST": the resolver answered
	}
	var de *net.DNSError
	if errors.As(fe.Err, &de) {
		return !de.IsNotFound
	}
	return true // a time limit or a dial error of the resolver
}

// NoRoute tells whether err is a connection that failed for lack of a
// route: the network or the host is unreachable (ENETUNREACH,
// EHOSTUNREACH, ENETDOWN), as when the machine has lost its link. A
// connection refused or timed out is not: the first proves a route, the
// second says nothing certain.
func NoRoute(err error) bool {
	return errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETDOWN)
}
