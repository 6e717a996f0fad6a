#!/usr/bin/env bash
# bench-tls.sh
#
# The harvester over TLS (issue 23): part 1 of bench-harvester.sh (wait 0,
# the `harvester run` command against a plain keep-alive Go client, one
# connection per host, on the same URLs, best of BENCH_ROUNDS rounds) on
# two webs of one seed in the same run, one all plain HTTP and one all
# HTTPS (pkg/testweb, every site over TLS with certificates of the web's
# CA, which both clients trust; no certificate trouble). Prints pages/s
# and CPU per page (the benchmark process's, the test web's share
# included) with and without TLS, the TLS handshakes per host (one
# connection per host kept alive; session resumption across a host's
# connections: the harvester's client session cache), and the
# harvester's share of each ceiling (target >= 70 %).
#
# The lines starting with "bench: RESULT" are the figures docs/harvester.md
# records. Environment: BENCH_HOSTS [200], BENCH_MAX_PAGES [300],
# BENCH_CONNECTIONS [32], BENCH_ROUNDS [2].
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -eq 0 ] || { echo "usage: $0 (settings in the environment, see the script)" >&2; exit 2; }
cd "$WIRE_ROOT"
wire_log "bench-tls: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! WIRE_BENCH=1 go test ./harvester -run '^TestBenchTLS$' -count=1 -v -timeout 20m >"$out" 2>&1; then
	cat "$out" >&2
	echo "bench-tls.sh: the benchmark failed" >&2
	exit 1
fi
grep '^bench:' "$out"
wire_log "bench-tls: done, load average $(cut -d' ' -f1-3 /proc/loadavg)"
