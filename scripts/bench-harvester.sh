#!/usr/bin/env bash
# bench-harvester.sh
#
# Measures the harvester on the synthetic test web (pkg/testweb, served on
# loopback by the benchmark process itself) and prints, in one run:
#
#   1. wait 0: the harvester's requests/s (the `harvester run` command,
#      WARC files and logs written) against a plain keep-alive Go client
#      fetching the same URLs at the same concurrency, one connection per
#      host, looking host names up in the test web's DNS server as the
#      harvester does (the ceiling; the same client without the per-host
#      limit is printed too); best of BENCH_ROUNDS rounds each, with the
#      CPU per request, the TCP connections each opened, and the busiest
#      host's timeline (with 200 hosts both clients end when their largest
#      host, 278 requests on one connection, is done); and, for information,
#      the harvester's rate over its request phase alone (first request
#      to last: without reading the batch, the final fsyncs and publishing);
#      and each client's time to 50, 90 and 99 % of the requests answered,
#      from the start of its run (the harvester's command start included),
#      with the harvester's speed as a share of the client's at each
#      (issue 34: at least 0.8), per round with the load average; and
#      each client's median CPU per 1000 requests (user + system time of
#      the process over its rounds, the test web's share included in
#      both: a figure the load moves less than the times); and (since
#      2026-12-08) per round the hosts each client had started by its
#      50 % point, and the plain client once more taking the hosts in the
#      harvester's order rather than the biggest first (its times and a
#      RESULT line: the order's part in the difference at 50 %), and the
#      harvester's CPU per 1000 requests up to its last request answered
#      (publishing, the CDXJ index above all, comes after the 99 % point);
#   2. wait 1 s on a small web: the harvester's makespan against the lower
#      bound politeness sets (the largest per-host page count x the wait).
#
# The lines starting with "bench: RESULT" are the figures docs/harvester.md
# records. Takes about a minute (the wait-1s part is bounded by its
# largest site: 40 pages, about 41 s).
#
# Environment (defaults in brackets): BENCH_HOSTS [200], BENCH_MAX_PAGES
# [300], BENCH_CONNECTIONS [32], BENCH_LATENCY [0s, added by the test web
# to every response], BENCH_ROUNDS [3], BENCH_WAIT_HOSTS [40],
# BENCH_WAIT_MAX_PAGES [40], BENCH_WAIT [1s] (BENCH_WAIT_HOSTS=0 leaves
# part 2 out), BENCH_DNS_LOOKUPS [the config's harvester.dns_lookups, 32].
# For a CPU profile of the
# harvester alone: WIRE_BENCH=1 BENCH_PROFILE=1 BENCH_HOSTS=1500 go test
# ./harvester -run '^TestBenchHarvester$' -cpuprofile cpu.out (the
# clients' goroutines carry the pprof label client=harvester|plain).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -eq 0 ] || { echo "usage: $0 (settings in the environment, see the script)" >&2; exit 2; }
cd "$WIRE_ROOT"
wire_log "bench-harvester: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! WIRE_BENCH=1 go test ./harvester -run '^TestBenchHarvester$' -count=1 -v -timeout 20m >"$out" 2>&1; then
	cat "$out" >&2
	echo "bench-harvester.sh: the benchmark failed" >&2
	exit 1
fi
grep '^bench:' "$out"
wire_log "bench-harvester: done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
