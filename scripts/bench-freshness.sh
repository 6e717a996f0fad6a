#!/usr/bin/env bash
# bench-freshness.sh
#
# Do recrawls keep a changing web fresh? (issue 35, docs/results.md
# "Freshness"). Serves the changing synthetic test web on loopback, fixed
# here as the issue fixes it: BENCH_HOSTS (1,000) sites of about
# BENCH_PAGES (10,000) pages, 70 % of the HTML pages changing as Poisson
# processes with mean intervals log-uniform over 30 s to 50 min, 60 % of
# the sites honest (true Last-Modified and ETag, 304), 20 % silent (no
# validators), 20 % lying (Last-Modified: now), and with --heterogeneous a
# few Crawl-delay sites (3 %, drawn among the sites of at most 20 pages)
# and no big sites, so that the first crawl reaches 90 % in minutes at
# wait 1 s. It crawls it from the seeds with scripts/crawl.sh looped as
# cron would run it (each run until the frontier is empty, the next
# BENCH_CRON_PAUSE seconds later) for BENCH_MINUTES (10) minutes at
# harvester.wait 1s, then measures from the web's request log and truth
# (crawlcheck freshness) over the window from the moment the first crawl
# reached 90 % of the reachable pages to the end:
#
#   - the time-averaged freshness (plain and PageRank-weighted) and mean
#     age, for the pages fetched before the window and for all pages, and
#     for the known ones by kind of site (honest, none, lying);
#   - the fetches in the window: new versions, first fetches, unchanged
#     pages fetched whole, 304s; the revisits to honest sites that were
#     conditional;
#   - the same budget's expected freshness under uniform revisiting, the
#     optimum for known rates (Cho and Garcia-Molina, TODS 2003), that
#     optimum per site on each site's own fetches, and the optimum under
#     politeness (no politeness unit revisited more often than
#     1/max(wait, Crawl-delay, response time), no address more often
#     than address_wait and connections_per_ip allow);
#   - Nutch's adaptive schedule simulated on the same budget, and the
#     manager's change-rate estimates against the true rates (pages
#     visited 8 times or more: the share within a factor of 2);
#
# and prints the issue's targets against them (crawlcheck freshness
# --targets). The report is printed and
# saved to BENCH_DIR/freshness.txt.
#
# Only manager.time_scale is set of the freshness machinery (the issue:
# "the benchmark sets s and nothing else"): s = BENCH_TIME_SCALE, default
# 1/8640 (a day lasts 10 s): the estimator's prior change interval (30
# days) becomes 5 min, about the median of the web's mean intervals (the
# geometric mean of 30 s and 50 min is 5 min), and min_revisit (7 days)
# 70 s, so that a page can be revisited several times in 10 minutes while
# the fastest pages (30 s) are not chased. Other settings: the web's DNS
# server, harvester.allow_private, manager.max_fetches_per_script 0,
# harvester.connections 1000 and connections_per_ip 8 (several addresses).
# The web has been changing for BENCH_WEB_AGE seconds (3600, longer than
# its slowest mean interval) when the crawl starts (testweb
# --time-origin), so that a page's first Last-Modified dates a change
# before the crawl, as on a real web, rather than the web's birth.
#
# A smoke run (about 3 minutes):
#
#   BENCH_HOSTS=50 BENCH_PAGES=500 BENCH_MINUTES=2 scripts/bench-freshness.sh
#
# Environment: BENCH_HOSTS, BENCH_PAGES, BENCH_MINUTES, BENCH_TIME_SCALE,
# BENCH_WEB_AGE (3600; 0: the web starts with the crawl), BENCH_WAIT (1s), BENCH_CRON_PAUSE (5), BENCH_SEED (1), BENCH_SEEDS (50
# seed URLs), BENCH_ADDRESSES (HOSTS/10), BENCH_MAX_PAGES (largest site,
# default max(50, PAGES/HOSTS*5)), BENCH_WEB_FLAGS (more testweb flags),
# BENCH_DIR (work directory, default a new one under ${TMPDIR:-/tmp}),
# BENCH_KEEP=1 (keep the collection), BENCH_TOOLS (where testweb and
# crawlcheck are built, default REPO/bin), WIRE_BIN and WIRE_BUILD as for
# crawl.sh. Exit codes: 0 done (whether or not the targets were met), 1 a
# run failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 (settings in the environment: see the header)" >&2
	exit 2
}
[ $# -eq 0 ] || usage
hosts=${BENCH_HOSTS:-1000}
pages=${BENCH_PAGES:-10000}
minutes=${BENCH_MINUTES:-10}
scale=${BENCH_TIME_SCALE:-0.000115740740740741}
wait=${BENCH_WAIT:-1s}
pause=${BENCH_CRON_PAUSE:-5}
seed=${BENCH_SEED:-1}
webage=${BENCH_WEB_AGE:-3600}
nseeds=${BENCH_SEEDS:-50}
addresses=${BENCH_ADDRESSES:-$((hosts / 10 > 1 ? hosts / 10 : 1))}
perip=$((addresses > 1 ? 8 : 0))
maxpages=${BENCH_MAX_PAGES:-$((pages * 5 / hosts > 50 ? pages * 5 / hosts : 50))}
for v in "$hosts" "$pages" "$minutes" "$pause" "$seed" "$nseeds" "$addresses" "$maxpages" "$webage"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
[ "$hosts" -gt 0 ] && [ "$minutes" -gt 0 ] || usage
read -r -a extra_web_flags <<<"${BENCH_WEB_FLAGS:-}"
if [ "$webage" -gt 0 ]; then
	extra_web_flags+=(--time-origin "$(date -u -d "@$(($(date +%s) - webage))" +%Y-%m-%dT%H:%M:%SZ)")
fi

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-freshness.XXXXXX")}
mkdir -p "$dir"
[ -z "$(ls -A "$dir")" ] || { echo "bench-freshness.sh: $dir is not empty; give an empty BENCH_DIR" >&2; exit 2; }
report=$dir/freshness.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

wire_bench_tools bench-freshness.sh || exit 1

web_pid=
job_pid=
cleanup() {
	if [ -n "$job_pid" ]; then
		kill -KILL -- "-$job_pid" 2>/dev/null || true
	fi
	if [ -n "$web_pid" ]; then
		kill "$web_pid" 2>/dev/null || true
		wait "$web_pid" 2>/dev/null || true
	fi
	if [ "${BENCH_KEEP:-0}" != 1 ]; then
		rm -rf "$dir/col"
	fi
}
trap cleanup EXIT

out "== bench-freshness $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts, about $pages pages (largest site $maxpages), seed $seed, $minutes min at wait $wait, time_scale $scale"
out "   web: --change (70 % changing, 30 s to 50 min), honest 0.6, lying 0.2, --heterogeneous with 3 % Crawl-delay sites of at most 20 pages, no big sites; $addresses addresses; changing for ${webage} s before the crawl"
out "   machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binaries $bin; dir $dir"

wire_start_web "$dir" "$tools/testweb" --hosts "$hosts" --pages "$pages" --max-pages "$maxpages" \
	--heterogeneous --big-sites -1 --crawl-delay-fraction 0.03 --crawl-delay-max-pages 20 \
	--change --change-share 0.7 --change-interval-min 30s --change-interval-max 50m \
	--honest-share 0.6 --lying-share 0.2 \
	--addresses "$addresses" --seed "$seed" --seeds "$nseeds" "${extra_web_flags[@]}" || {
	echo "bench-freshness.sh: the test web did not start" >&2
	exit 1
}
"$bin/seeder" init --collection "$dir/col" \
	--harvester-allow-private --harvester-dns-server "$web_dns" --harvester-wait "$wait" \
	--harvester-connections 1000 --harvester-connections-per-ip "$perip" \
	--manager-max-fetches-per-script 0 --manager-time-scale "$scale" --scope-domains cl >/dev/null || exit 1
"$bin/seeder" add --collection "$dir/col" "$dir/seeds.txt" >/dev/null || exit 1

# The crawl as cron runs it: crawl.sh until the frontier is empty (nothing
# due), again BENCH_CRON_PAUSE seconds later, until the time is up.
# SIGINT at the time limit stops crawl.sh (which stops its stages) and
# then the loop.
wire_bounded "$((minutes * 60))" "$dir/crawl.log" bash -c '
	runs=0 stop=
	trap "stop=1" INT TERM
	while [ -z "$stop" ]; do
		"$1" "$2" 1000000 || echo "crawl.sh exited $?"
		runs=$((runs + 1))
		echo "cron run $runs done"
		[ -z "$stop" ] || break
		sleep "$3" &
		wait $!
	done' cron "$WIRE_ROOT/scripts/crawl.sh" "$dir/col" "$pause"
wire_stop_web "$dir" || exit 1
runs=$(grep -c '^cron run' "$dir/crawl.log")
failed=$(grep -c '^crawl.sh exited' "$dir/crawl.log")
out "   crawl: $runs crawl.sh runs (the last stopped at the time limit; $((failed > 0 ? failed - 1 : 0)) others exited non-zero), $(ls "$dir/col/batches" | wc -l) batches, $(wc -l <"$dir/requests.tsv") requests"
if [ "$failed" -gt 1 ]; then
	grep -B3 '^crawl.sh exited' "$dir/crawl.log" | tail -20 >&2
fi
out ""

"$tools/crawlcheck" freshness --web "$dir/web.json" --seeds "$dir/seeds.txt" --log "$dir/requests.tsv" \
	--collection "$dir/col" --start "$run_start" --window-start 90% --window-end "$run_end" --targets \
	--json-out "$dir/freshness.json" >"$dir/freshness-table.txt" 2>"$dir/freshness.err" || {
	cat "$dir/freshness.err" >&2
	out "bench-freshness.sh: crawlcheck freshness failed (did the first crawl reach 90 %?)"
	exit 1
}
tee -a "$report" <"$dir/freshness-table.txt"

out ""
out "report: $report"
