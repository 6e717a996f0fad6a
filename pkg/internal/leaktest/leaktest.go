// Package leaktest is the goroutine-leak check of the packages that start
// goroutines of their own (the harvester's connections and lookups, the
// gatherer's and seeder's workers, bbolt writers): their TestMain calls
// Main, which fails the package's tests if any goroutine they started is
// still running when they end (go.uber.org/goleak). A leak there would
// grow with every batch of a crawl that runs for weeks.
package leaktest

import (
	"testing"

	"go.uber.org/goleak"
)

// Main runs the tests and then checks for leaked goroutines. DNS lookups
// the net package runs on its own are not ours: a lookup whose context
// is cancelled returns at once but its query goes on until the resolver
// answers or times out (the tests' silent DNS servers never answer), so
// those goroutines are ignored.
func Main(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net.dnsPacketRoundTrip"),
		goleak.IgnoreAnyFunction("net.(*Resolver).lookupIPAddr.func2"),
		goleak.IgnoreAnyFunction("net.(*Resolver).goLookupIPCNAMEOrder.func3.1"),
		goleak.IgnoreAnyFunction("net.(*Resolver).goLookupIPCNAMEOrder.func4"),
	)
}
