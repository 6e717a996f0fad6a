#!/bin/sh
# bench-manager.sh: wall time and peak memory of a full "manager run" on
# generated national-web-shaped collections (pkg/manager/scale_test.go),
# for the pagerank and opic strategies, and the extrapolation to a
# country of 50 million pages and 1 billion links.
#
#   scripts/bench-manager.sh                      # 1M×20, 1M×40, 2M×20, 5M×20 links/page
#   SIZES="1000000:20" scripts/bench-manager.sh   # PAGES:LINKS_PER_PAGE ...
#   WIRE_SCALE_DIR=/data/scale scripts/bench-manager.sh
#   FIT_ONLY=1 scripts/bench-manager.sh           # only the fits, from $WIRE_SCALE_DIR/results.txt
#   CYCLES=5 GOGCS=100 SIZES="1000000:20" scripts/bench-manager.sh
#                                                 # then 5 cycles of the first strategy on a copy:
#                                                 # manager run, then the batch seeded (scaleCycles),
#                                                 # a day later each; CYCLE lines: cpu and wall per run
#   FETCHED=0.95 CYCLES=5 ...                     # a recrawl: 95 % of each site fetched
#   BATCH=10000 CYCLES=5 ...                      # manager.batch_size of every run (default: the config's)
#   WIRE_SCALE_SOURCE=testweb SIZES="1000000:0 5000000:0" scripts/bench-manager.sh
#                                                 # graphs from the test web's own generator
#                                                 # (pkg/testweb; links per page are its own)
#
# Collections are built once into $WIRE_SCALE_DIR (default /tmp/wire-scale,
# about 1 GB per million pages) and reused. Each run is a child process:
# "maxrss" is its peak resident set (graph.db's mapped file pages
# included), "anon" its peak anonymous memory (heap and stacks: what must
# fit in RAM). GOGC values in $GOGCS (default "100 25") are tried for
# each run. The fits are least squares of memory = a + b·pages + c·links
# over the pagerank runs of the first GOGC value: over all of them, and,
# to show that the model extrapolates, over all but the largest, whose
# memory it then predicts.
set -eu
cd "$(dirname "$0")/.."
DIR=${WIRE_SCALE_DIR:-/tmp/wire-scale}
SIZES=${SIZES:-"1000000:20 1000000:40 2000000:20 5000000:20"}
GOGCS=${GOGCS:-"100 25"}
mkdir -p "$DIR"
results="$DIR/results.txt"
[ -n "${FIT_ONLY:-}" ] || {
go test -c -o "$DIR/manager.test" ./pkg/manager
: >"$results"
for s in $SIZES; do
	pages=${s%:*}
	links=${s#*:}
	for gc in $GOGCS; do
		echo "# $pages pages, $links links per page, GOGC=$gc" >&2
		GOGC=$gc WIRE_SCALE_PAGES=$pages WIRE_SCALE_LINKS=$links WIRE_SCALE_DIR=$DIR \
			WIRE_SCALE_CYCLES=${CYCLES:-0} WIRE_SCALE_FETCHED=${FETCHED:-0.5} WIRE_SCALE_BATCH=${BATCH:-0} \
			"$DIR/manager.test" -test.run '^TestScale$' -test.v -test.timeout 0 |
			grep -E 'RESULT|CYCLE' | sed -e "s/.*RESULT /gogc=$gc /" -e "s/.*CYCLE /gogc=$gc cycle=/" | tee -a "$results"
	done
done
}
first=${GOGCS%% *}
fit() { # metric [holdout]: least squares of metric = a + b·pages + c·links over the pagerank runs with GOGC=$first
	echo
	if [ -n "${2:-}" ]; then
		echo "fit of $1 over the pagerank runs with GOGC=$first but the largest, and its prediction of the largest"
	else
		echo "fit of $1 over the pagerank runs with GOGC=$first: $1 MiB = a + b·pages + c·links"
	fi
	awk -v gc="gogc=$first" -v m="$1" -v holdout="${2:-}" '
function val(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) { sub(/[A-Za-z\/]+$/, "", kv[2]); return kv[2] + 0 } } }
$1 == gc && $2 !~ /^cycle=/ && / strategy=pagerank / {
	n++; p[n] = val("pages"); l[n] = val("links"); y[n] = val(m)
}
END {
	big = 0
	if (holdout != "") {
		for (i = 1; i <= n; i++) if (big == 0 || p[i] + l[i] > p[big] + l[big]) big = i
	}
	if (n - (big > 0) < 3) { print "need 3 pagerank runs or more for the fit"; exit }
	for (i = 1; i <= n; i++) {
		if (i == big) continue
		x1 = p[i]; x2 = l[i]
		s11 += 1; s12 += x1; s13 += x2; s22 += x1*x1; s23 += x1*x2; s33 += x2*x2
		t1 += y[i]; t2 += x1*y[i]; t3 += x2*y[i]
	}
	det = s11*(s22*s33 - s23*s23) - s12*(s12*s33 - s23*s13) + s13*(s12*s23 - s22*s13)
	a = (t1*(s22*s33 - s23*s23) - s12*(t2*s33 - s23*t3) + s13*(t2*s23 - s22*t3)) / det
	b = (s11*(t2*s33 - t3*s23) - t1*(s12*s33 - s23*s13) + s13*(s12*t3 - t2*s13)) / det
	c = (s11*(s22*t3 - s23*t2) - s12*(s12*t3 - t2*s13) + t1*(s12*s23 - s22*s13)) / det
	printf "a = %.0f MiB, b = %.1f bytes per page, c = %.2f bytes per link\n", a, b*1048576, c*1048576
	for (i = 1; i <= n; i++) printf "  %9d pages %11d links: measured %6.0f MiB, %s %6.0f MiB\n", p[i], l[i], y[i], i == big ? "predicted" : "fit", a + b*p[i] + c*l[i]
	printf "50M pages, 1B links: %.1f GiB\n", (a + b*50000000 + c*1000000000)/1024
}' "$results"
}
fit live
fit live holdout
fit anon
fit anon holdout
