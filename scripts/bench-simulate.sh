#!/usr/bin/env bash
# bench-simulate.sh — time `manager simulate` (docs/simulator.md) and
# write the results of docs/results.md:
#
#   1. paper model, every strategy, national web of PAGES pages (default
#      1,000,000: about 15.6 million links) with its previous crawl;
#   2. paper model, every strategy, the test web of HOSTS hosts (default
#      67,000: about a million pages) with its previous crawl;
#   3. batch model (the manager and the seeder for real), every strategy,
#      national web of BATCH_PAGES pages (default 100,000);
#   4. paper model, breadth-first and OPIC, Sydney limit T = 0 (none),
#      16 and 8 on the national web, to compare queue sizes;
#   5. paper model with many robots, four strategies on the national web:
#      cumulative PageRank against time; r = 1000 (the paper's real
#      crawls), and r = 50 with sites of at most 2,000 pages (so that the
#      largest site is not the whole crawl's critical path);
#   6. the historical strategies, OPIC and omniscient on the national web
#      with 20%, 45% (the paper's Figure 5) and 70% new pages.
#
# Each run prints its table with the wall-clock time of every strategy,
# and /usr/bin/time's total wall time and peak memory. Results (curves,
# tables, SVG charts) go to OUT (default /tmp/wire-bench-simulate).
#
#   scripts/bench-simulate.sh                 # everything (about 25 min on 2 loaded cores)
#   STEPS="1 3" PAGES=200000 scripts/bench-simulate.sh
#
# The machine this project is measured on is shared: say in docs which
# figures were taken under load (uptime is printed before each step).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PAGES=${PAGES:-1000000}
HOSTS=${HOSTS:-67000}
BATCH_PAGES=${BATCH_PAGES:-100000}
OUT=${OUT:-/tmp/wire-bench-simulate}
STEPS=${STEPS:-1 2 3 4 5 6}

mkdir -p "$OUT/bin"
(cd "$WIRE_ROOT" && go build -o "$OUT/bin/" ./manager)
sim() {
	local name=$1
	shift
	wire_log "step $name: manager simulate $*"
	uptime >&2
	/usr/bin/time -f "total: wall %e s, user %U s, sys %S s, max RSS %M KB" \
		"$OUT/bin/manager" simulate -q --out "$OUT/$name" "$@" 2>&1 | tee "$OUT/$name.txt"
}

for step in $STEPS; do
	case $step in
	1) sim national --generate national --pages "$PAGES" --strategies all \
		--title "national web, $PAGES pages, paper model (r=1, w=15 s)" ;;
	2) sim testweb --generate testweb --hosts "$HOSTS" --strategies all \
		--title "test web, $HOSTS hosts, paper model (r=1, w=15 s)" ;;
	3) sim batch --generate national --pages "$BATCH_PAGES" --model batch --strategies all \
		--robots 1000 --manager-batch-size $((BATCH_PAGES / 10)) --manager-pagerank-interval $((BATCH_PAGES / 10)) \
		--title "national web, $BATCH_PAGES pages, batch model (r=1000, w=15 s)" ;;
	4) for t in 0 16 8; do
		sim "sydney-$t" --generate national --pages "$PAGES" --strategies breadth-first,opic --sydney-t "$t" \
			--title "national web, $PAGES pages, Sydney t=$t"
	done ;;
	5) sim robots-1000 --generate national --pages "$PAGES" --strategies breadth-first,opic,larger-sites-first,omniscient \
		--robots 1000 --title "national web, $PAGES pages, r=1000, w=15 s"
		sim robots-50 --generate national --pages "$PAGES" --max-site-pages 2000 --strategies breadth-first,opic,larger-sites-first,omniscient \
			--robots 50 --title "national web, $PAGES pages, sites of at most 2,000 pages, r=50, w=15 s" ;;
	6) for f in 0.2 0.45 0.7; do
		sim "history-$f" --generate national --pages "$PAGES" --strategies opic,history,omniscient --history-new "$f" \
			--title "national web, $PAGES pages, $f new since the previous crawl"
	done ;;
	*) echo "unknown step $step" >&2; exit 2 ;;
	esac
done
wire_log "results in $OUT"
