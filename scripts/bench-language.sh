#!/bin/sh
# bench-language.sh: what language detection costs the gatherer, as
# issue 20 asks it (no more than 10 % slower with detection on):
# BenchmarkGather (detection and simhash, the default) against
# BenchmarkGatherNoLanguage (the same with gatherer.language_sample = 0),
# in MB per CPU-second, on the same corpus (pkg/extract/testdata/pages,
# ten copies, 11 MB).
#
#   scripts/bench-language.sh              # 8 rounds of 20 runs
#   ROUNDS=12 GATHERTIME=30x scripts/bench-language.sh
#
# Each benchmark runs in a process of its own (a process pays once for
# what it sets up: the heap's growth, and with detection the model's
# loading, 20-40 ms), and the rounds alternate which goes first, so that
# neither always meets the machine's load of the moment or inherits the
# other's warm heap. It prints both figures of every round, the ratio
# within each round, and their medians.
set -eu
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-8}
GATHERTIME=${GATHERTIME:-20x}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/gatherer.test" ./pkg/gatherer
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
for i in $(seq "$ROUNDS"); do
	if [ $((i % 2)) -eq 1 ]; then order='Gather GatherNoLanguage'; else order='GatherNoLanguage Gather'; fi
	for b in $order; do
		(cd pkg/gatherer && "$tmp/gatherer.test" -test.run XXX -test.bench "Benchmark$b\$" -test.benchtime "$GATHERTIME") |
			awk -v round="$i" '/^Benchmark/ { for (k = 2; k <= NF; k++) if ($k == "MB/cpu-s") print round, $1, $(k-1) }' >> "$tmp/out.txt"
	done
done
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
awk -v load="$load0 at the start, $load at the end" '
function median(s,    n, i, j, t, a) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{ name = $2; sub(/-[0-9]+$/, "", name); v[$1, name] = $3; if ($1 > rounds) rounds = $1 }
END {
	printf "load average %s\n\n| round | first | detection on (MB/cpu-s) | detection off (MB/cpu-s) | on / off |\n|---|---|---|---|---|\n", load
	for (r = 1; r <= rounds; r++) {
		on = v[r, "BenchmarkGather"]; off = v[r, "BenchmarkGatherNoLanguage"]
		printf "| %d | %s | %.1f | %.1f | %.1f %% |\n", r, r % 2 ? "on" : "off", on, off, 100 * on / off
		ons = ons " " on; offs = offs " " off; ratios = ratios " " 100 * on / off
	}
	printf "| median | | %.1f | %.1f | %.1f %% |\n", median(ons), median(offs), median(ratios)
	printf "\ntarget: detection on at 90 %% or more of detection off (no more than 10 %% slower)\n"
}' "$tmp/out.txt"
