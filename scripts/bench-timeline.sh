#!/usr/bin/env bash
# bench-timeline.sh [HOSTS [PAGES]]
#
# The crawl as its user feels it (issue 16, docs/scale.md "The crawl's
# timeline"). Serves the synthetic test web on loopback with HOSTS
# in-scope hosts (default 1000) and about PAGES pages (default 41000),
# with --heterogeneous (per-server response times, Crawl-delay on some
# sites, big sites, www/bare aliases) unless BENCH_HETERO=0, and measures
# from the web's request log (testweb --log), each run on a fresh test web
# (same seed, same web) and a fresh collection:
#
#  (i)   the whole crawl, harvester.wait 0, scripts/crawl.sh from the
#        seeds until the frontier is empty (or BENCH_LIMIT): time to 50,
#        90, 99 and 100 % of the reachable pages, the crawl order's
#        cumulative PageRank against the sorted-PageRank bound, and when
#        each page was found and fetched (crawlcheck discovery: the time
#        from found to fetched, and the lost order split into discovery,
#        politeness and value order, issue 34), and where its time went
#        batch by batch (crawlcheck cycles: harvests, the harvester's idle
#        time between them, gathering and seeding after each harvest, in
#        BENCH_DIR/crawl/cycles.txt, its totals in the report);
#  (ii)  the harvester alone: the collection seeded with every reachable
#        URL, one manager run making one batch of all of them, then one
#        harvester run: time to 50 ... 100 % from the harvester's start;
#  (iii) the crawl at harvester.wait 1s, stopped with SIGINT at
#        BENCH_POLITE_TIME (300 s): coverage against the polite bound at
#        60, 120 and 300 s (every rule counted, by politeness unit and by
#        address, with the per-host bound of before issue 34 beside it),
#        and crawlcheck discovery as for (i);
#
# then the figures issues 16 and 34 set targets for (crawlcheck
# targets). The
# report is printed and saved to BENCH_DIR/timeline.txt. A small run:
#
#   BENCH_LIMIT=120 BENCH_POLITE_TIME=120 scripts/bench-timeline.sh 200 5000
#
# Every collection has harvester.allow_private, the web's DNS server,
# manager.max_fetches_per_script 0 (so every reachable page may be
# fetched), harvester.connections BENCH_CONNECTIONS (1000) and
# harvester.connections_per_ip BENCH_PER_IP (8 when the web spreads its
# hosts over several addresses, else 0); other settings are the
# defaults. Only settings that every build knows are given as flags;
# newer ones go through the environment (an older build ignores unknown
# WIRE_* variables but refuses unknown flags and config keys), so that
# WIRE_BIN=/path/to/old/bin measures an older build with this script:
# BENCH_BATCH_DURATION (default: none, the config's default, as issue 34
# asks) sets WIRE_MANAGER_BATCH_DURATION; any WIRE_* variable set by the
# caller reaches every stage too. The runs at wait 0, (i) and (ii), have
# harvester.address_wait BENCH_ZERO_ADDRESS_WAIT (default 0: issue 34's
# "at wait 0 (address_wait 0)"); (iii) has the default floor.
#
# Environment: BENCH_RUNS (which runs, default "crawl harvester polite":
# (i), (ii), (iii); the targets are printed when all three ran),
# BENCH_WEB_FLAGS (more testweb flags), BENCH_SEED (1), BENCH_HETERO (1: pass --heterogeneous),
# BENCH_HOSTILE (0; 1 adds the hostile hosts), BENCH_HTTPS (share of the
# sites over TLS, testweb --https-share, default 0.85: the mostly-HTTPS
# web of issue 23; 0 for the plain-HTTP web of the runs recorded before
# 2026-11-27), BENCH_SUBDOMAINS (share of the in-scope sites renamed as
# subdomains of a few registrable domains on several addresses, testweb
# --subdomain-share, e.g. 0.5; default 0: none, the web of the runs
# recorded before issue 34; the same as BENCH_WEB_FLAGS="--subdomain-share
# 0.5"; it needs BENCH_ADDRESSES of 2 or more), BENCH_CRAWL_DELAY_MAX_PAGES
# (N: the web's Crawl-delay sites, as many, are drawn only among the
# sites of at most N pages, testweb --crawl-delay-max-pages, so that no
# site's delay holds the crawl up for minutes and the harvester alone
# reaches 99 % within seconds; needs BENCH_HETERO=1; default empty or 0:
# sites of every size, the web of the runs recorded before it existed),
# BENCH_SEEDS (50 seed URLs),
# BENCH_ADDRESSES (loopback addresses of the web, default HOSTS/10),
# BENCH_PER_IP, BENCH_CONNECTIONS, BENCH_MAX_PAGES (largest site, default
# max(400, PAGES/50)), BENCH_LIMIT (time limit of each run, 600 s),
# BENCH_POLITE_TIME (300 s), BENCH_DIR (work directory, default a new one
# under ${TMPDIR:-/tmp}), BENCH_KEEP=1 (keep the collections; otherwise
# only the report, the web descriptions and the request logs stay),
# BENCH_TOOLS (where testweb and crawlcheck are built from this tree,
# default REPO/bin), WIRE_BIN and WIRE_BUILD as for crawl.sh. Peak memory
# per stage needs GNU time (/usr/bin/time); without it it is left out.
#
# BENCH_BASE=REV (a commit, branch or tag, e.g. main) measures another
# build (its binaries and its own scripts/crawl.sh) in the same run, as issue 34 asks ("main's binaries measured in
# the same run"): REV's four stages are built (git archive, go build)
# into BENCH_DIR/base-bin, then for each of BENCH_ROUNDS rounds (default
# 1) the selected runs are made with REV's binaries into
# BENCH_DIR/base-N and with this tree's into BENCH_DIR/new-N, one after
# the other on the same web, and `crawlcheck compare` prints each round
# side by side (times to 50 ... 100 %, coverage against the polite
# bound, cumulative PageRank, and peak memory per stage with new / base,
# marked over past 1.10) into BENCH_DIR/compare-N.txt. The test web and
# crawlcheck are this tree's in both.
# Exit codes: 0 done, 1 a run failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [HOSTS [PAGES]]" >&2
	exit 2
}
[ $# -le 2 ] || usage
hosts=${1:-1000}
pages=${2:-41000}

# BENCH_BASE: this script again, once per round with REV's binaries and
# once with this tree's, then the comparison.
if [ -n "${BENCH_BASE:-}" ]; then
	dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-timeline.XXXXXX")}
	mkdir -p "$dir"
	rounds=${BENCH_ROUNDS:-1}
	case $rounds in '' | *[!0-9]* | 0)
		echo "bench-timeline.sh: BENCH_ROUNDS $rounds is not a positive count" >&2
		exit 2
		;;
	esac
	base_bin=$dir/base-bin
	if [ ! -x "$base_bin/seeder" ]; then
		rev=$(git -C "$WIRE_ROOT" rev-parse --verify "$BENCH_BASE^{commit}") || {
			echo "bench-timeline.sh: BENCH_BASE $BENCH_BASE is not a revision of $WIRE_ROOT" >&2
			exit 2
		}
		rm -rf "$dir/base-src"
		mkdir -p "$dir/base-src" "$base_bin"
		wire_brotli_or_purego bench-timeline.sh # REV may have the C brotli decoder
		git -C "$WIRE_ROOT" archive "$rev" | tar -x -C "$dir/base-src" &&
			(cd "$dir/base-src" && go build -o "$base_bin/" ./manager ./harvester ./gatherer ./seeder) || {
			echo "bench-timeline.sh: building $BENCH_BASE ($rev) failed" >&2
			exit 1
		}
		# REV's own crawl.sh (and lib.sh) run REV's binaries: its rules
		# go with them (a newer crawl.sh may pass flags REV lacks).
		rm -rf "$dir/base-scripts"
		mv "$dir/base-src/scripts" "$dir/base-scripts"
		rm -rf "$dir/base-src"
		echo "bench-timeline.sh: base $BENCH_BASE is $rev, binaries in $base_bin" >&2
	fi
	wire_need_bins || { echo "bench-timeline.sh: build failed" >&2; exit 1; }
	self=$WIRE_ROOT/scripts/bench-timeline.sh
	for r in $(seq 1 "$rounds"); do
		BENCH_BASE= WIRE_BIN=$base_bin BENCH_CRAWL_SH=$dir/base-scripts/crawl.sh BENCH_DIR=$dir/base-$r "$self" "$hosts" "$pages" || exit 1
		BENCH_BASE= WIRE_BIN=$WIRE_BIN BENCH_DIR=$dir/new-$r "$self" "$hosts" "$pages" || exit 1
		echo "== round $r: base $BENCH_BASE against this tree" | tee "$dir/compare-$r.txt"
		"${BENCH_TOOLS:-$WIRE_ROOT/bin}/crawlcheck" compare --base "$dir/base-$r" --new "$dir/new-$r" | sed 's/^/   /' | tee -a "$dir/compare-$r.txt"
	done
	exit 0
fi
# The crawl.sh of the crawls: this tree's, or BENCH_BASE's own.
crawl_sh=${BENCH_CRAWL_SH:-$WIRE_ROOT/scripts/crawl.sh}
seed=${BENCH_SEED:-1}
hetero=${BENCH_HETERO:-1}
hostile=${BENCH_HOSTILE:-0}
nseeds=${BENCH_SEEDS:-50}
addresses=${BENCH_ADDRESSES:-$((hosts / 10 > 1 ? hosts / 10 : 1))}
perip=${BENCH_PER_IP:-$((addresses > 1 ? 8 : 0))}
conns=${BENCH_CONNECTIONS:-1000}
maxpages=${BENCH_MAX_PAGES:-$((pages / 50 > 400 ? pages / 50 : 400))}
limit=${BENCH_LIMIT:-600}
polite_t=${BENCH_POLITE_TIME:-300}
for v in "$hosts" "$pages" "$seed" "$nseeds" "$addresses" "$perip" "$conns" "$maxpages" "$limit" "$polite_t"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
[ "$polite_t" -le "$limit" ] || polite_t=$limit
# The default batch length is the config's (since issue 34 it adapts to
# the crawl by itself, manager.batch_cycle_factor); BENCH_BATCH_DURATION
# sets one (10s was this script's default before).
if [ -n "${BENCH_BATCH_DURATION:-}" ]; then
	export WIRE_MANAGER_BATCH_DURATION=$BENCH_BATCH_DURATION
fi
zero_floor=${BENCH_ZERO_ADDRESS_WAIT-0}
web_flags=()
[ "$hetero" = 1 ] && web_flags+=(--heterogeneous)
https_share=${BENCH_HTTPS:-0.85}
case $https_share in
0 | 0.0 | "") ;;
*) web_flags+=(--https-share "$https_share") ;;
esac
[ "$hostile" = 1 ] && web_flags+=(--hostile)
subdomains=${BENCH_SUBDOMAINS:-0}
case $subdomains in
0 | 0.0 | "") ;;
*) web_flags+=(--subdomain-share "$subdomains") ;;
esac
cd_max_pages=${BENCH_CRAWL_DELAY_MAX_PAGES:-0}
case $cd_max_pages in
*[!0-9]*) usage ;;
0 | "") cd_max_pages=0 ;;
*) web_flags+=(--crawl-delay-max-pages "$cd_max_pages") ;;
esac
# BENCH_WEB_FLAGS: more testweb flags (e.g. --crawl-delay-fraction 0.01).
read -r -a extra_web_flags <<<"${BENCH_WEB_FLAGS:-}"
web_flags+=("${extra_web_flags[@]}")
# BENCH_RUNS: which of the three runs to make (default all; the targets
# need all three).
runs=" ${BENCH_RUNS:-crawl harvester polite} "
want() { [[ $runs == *" $1 "* ]]; }
TIME=/usr/bin/time
"$TIME" -f %e true >/dev/null 2>&1 || TIME=

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-timeline.XXXXXX")}
mkdir -p "$dir"
for r in crawl harvester polite; do
	if [ -e "$dir/$r" ]; then
		echo "bench-timeline.sh: $dir/$r exists; give an empty BENCH_DIR" >&2
		exit 2
	fi
done
report=$dir/timeline.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

wire_bench_tools bench-timeline.sh || exit 1

# Stage wrappers: crawl.sh runs them as WIRE_BIN; each appends "stage
# wall-seconds peak-KB" to $STAGE_TIMES under GNU time.
wrap=$dir/wrap
mkdir -p "$wrap"
for s in $WIRE_STAGES; do
	if [ -n "$TIME" ]; then
		printf '#!/bin/sh\nexec %s -a -o "$STAGE_TIMES" -f "%s %%e %%M" "%s/%s" "$@"\n' "$TIME" "$s" "$bin" "$s" >"$wrap/$s"
	else
		printf '#!/bin/sh\nexec "%s/%s" "$@"\n' "$bin" "$s" >"$wrap/$s"
	fi
	chmod +x "$wrap/$s"
done

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
		rm -rf "$dir"/*/col "$wrap"
	fi
}
trap cleanup EXIT

secs() { wire_secs; }
since() { wire_since "$1"; }

# start_web RUN: a fresh test web for RUN, logging its requests to
# $dir/RUN/requests.tsv; sets web_pid and dns.
start_web() {
	wire_start_web "$dir/$1" "$tools/testweb" --hosts "$hosts" --pages "$pages" --max-pages "$maxpages" --heavy-pages \
		"${web_flags[@]}" --addresses "$addresses" --seed "$seed" --seeds "$nseeds" || {
		echo "bench-timeline.sh: the test web did not start" >&2
		exit 1
	}
	dns=$web_dns
}

# stop_web RUN: stops the test web, which then writes its request log.
stop_web() {
	wire_stop_web "$dir/$1" || exit 1
}

# new_collection RUN WAIT: a fresh collection $dir/RUN/col; at wait 0
# with address_wait $zero_floor.
new_collection() {
	local floor=()
	if [ "$2" = 0 ] && [ -n "$zero_floor" ]; then
		floor=(--harvester-address-wait "$zero_floor")
	fi
	"$bin/seeder" init --collection "$dir/$1/col" \
		--harvester-allow-private --harvester-dns-server "$dns" --harvester-wait "$2" "${floor[@]}" \
		--harvester-connections "$conns" --harvester-connections-per-ip "$perip" \
		--manager-max-fetches-per-script 0 --scope-domains cl >/dev/null || exit 1
}

# bounded LIMIT LOG CMD...: wire_bounded (lib.sh).
bounded() { wire_bounded "$@"; }

# stage_figures RUN: per stage, runs, wall time and peak memory.
stage_figures() {
	local f=$dir/$1/stages.time
	[ -s "$f" ] || return 0
	awk 'NF == 3 && $1 != "Command" {n[$1]++; w[$1] += $2; if ($3 > m[$1]) m[$1] = $3}
		END {for (s in n) printf "   %-9s %3d runs  wall %8.1f s  peak %7.0f MB\n", s, n[s], w[s], m[s] / 1024}' "$f" |
		sort | tee -a "$report"
}

# timeline RUN WAIT [FLAGS...]: the run's timeline, as text in the report
# and as JSON in $dir/RUN/timeline.json.
timeline() {
	local r=$1 w=$2
	shift 2
	local args=(--web "$dir/$r/web.json" --seeds "$dir/$r/seeds.txt" --log "$dir/$r/requests.tsv" --wait "$w" "$@")
	[ -d "$dir/$r/col" ] && args+=(--collection "$dir/$r/col")
	"$tools/crawlcheck" timeline "${args[@]}" --json-out "$dir/$r/timeline.json" >"$dir/$r/timeline.txt" || exit 1
	sed 's/^/   /' "$dir/$r/timeline.txt" | tee -a "$report"
}

# discovery RUN WAIT START: when each page of a crawl from the seeds was
# found and fetched, as text in the report and as JSON in
# $dir/RUN/discovery.json.
discovery() {
	local r=$1 w=$2 start=$3
	local args=(--web "$dir/$r/web.json" --seeds "$dir/$r/seeds.txt" --log "$dir/$r/requests.tsv" --wait "$w" --start "$start")
	[ -d "$dir/$r/col" ] && args+=(--collection "$dir/$r/col")
	"$tools/crawlcheck" discovery "${args[@]}" --json-out "$dir/$r/discovery.json" >"$dir/$r/discovery.txt" || exit 1
	sed 's/^/   /' "$dir/$r/discovery.txt" | tee -a "$report"
}

# cycles RUN START: where the crawl's time went, batch by batch
# (crawlcheck cycles), in $dir/RUN/cycles.txt; its last line in the report.
cycles() {
	[ -d "$dir/$1/col" ] || return 0
	"$tools/crawlcheck" cycles --collection "$dir/$1/col" --start "$2" >"$dir/$1/cycles.txt" 2>&1 || return 0
	tail -1 "$dir/$1/cycles.txt" | sed 's/^/   cycles: /' | tee -a "$report"
}

out "== bench-timeline $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts, about $pages pages (largest site $maxpages), seed $seed, $nseeds seeds, heterogeneous $hetero, hostile $hostile, subdomains $subdomains$([ "$cd_max_pages" = 0 ] || echo ", Crawl-delay sites of at most $cd_max_pages pages")"
out "   $addresses addresses, $conns connections ($perip per IP address, 0: no cap), max_fetches_per_script 0, time limit $limit s per run; binaries $bin; dir $dir"
wire_env=$(env | grep '^WIRE_' | grep -v '^WIRE_BIN=\|^WIRE_BUILD=' | sort | tr '\n' ' ')
[ -z "$wire_env" ] || out "   environment: $wire_env"
out "   machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"

# (i) The whole crawl at wait 0.
cycle=0
if want crawl; then
out ""
out "== (i) the whole crawl, harvester.wait 0, until the frontier is empty or $limit s"
start_web crawl
new_collection crawl 0
"$bin/seeder" add --collection "$dir/crawl/col" "$dir/crawl/seeds.txt" >/dev/null || exit 1
export STAGE_TIMES=$dir/crawl/stages.time
t0=$(secs)
bounded "$limit" "$dir/crawl/crawl.log" env WIRE_BIN="$wrap" "$crawl_sh" "$dir/crawl/col" 1000000
crawl_secs=$(since "$t0")
stop_web crawl
batches=$(ls "$dir/crawl/col/batches" 2>/dev/null | wc -l)
cycle=$(awk -v e="$crawl_secs" -v b="$batches" 'BEGIN {printf "%.3f", (b > 0 ? e / b : 0)}')
if [ "$run_stopped" = 1 ]; then
	out "   stopped at the time limit after $crawl_secs s, $batches batches"
elif [ "$run_rc" != 0 ]; then
	tail -5 "$dir/crawl/crawl.log" >&2
	out "bench-timeline.sh: crawl.sh failed (exit $run_rc)"
	exit 1
else
	out "   frontier empty after $crawl_secs s, $batches batches: $cycle s per cycle"
fi
stage_figures crawl
timeline crawl 0 --start "$run_start" --end "$run_end"
discovery crawl 0 "$run_start"
cycles crawl "$run_start"
fi

# (ii) The harvester alone, one batch of every reachable URL.
if want harvester; then
out ""
out "== (ii) the harvester alone: one batch of every reachable URL, harvester.wait 0"
start_web harvester
"$tools/crawlcheck" reachable --web "$dir/harvester/web.json" --seeds "$dir/harvester/seeds.txt" >"$dir/harvester/urls.txt" || exit 1
nurls=$(wc -l <"$dir/harvester/urls.txt")
new_collection harvester 0
"$bin/seeder" add --collection "$dir/harvester/col" "$dir/harvester/urls.txt" >/dev/null || exit 1
export STAGE_TIMES=$dir/harvester/stages.time
# One batch of everything, harvested to its end: no time sizing, no tail,
# no deadline (environment only: older builds ignore these).
WIRE_MANAGER_BATCH_DURATION=0 "$wrap/manager" run --collection "$dir/harvester/col" --quiet --manager-batch-size "$((nurls + 1000))" \
	--manager-max-pages-per-site "$((nurls + 1000))" --manager-max-site-pages 0 >"$dir/harvester/manager.log" 2>&1 || {
	tail -5 "$dir/harvester/manager.log" >&2
	out "bench-timeline.sh: manager failed"
	exit 1
}
t0=$(secs)
WIRE_HARVESTER_TAIL_FRACTION=0 WIRE_HARVESTER_BATCH_DEADLINE=0 \
	bounded "$limit" "$dir/harvester/harvester.log" "$wrap/harvester" run --collection "$dir/harvester/col" --quiet
harv_secs=$(since "$t0")
stop_web harvester
if [ "$run_stopped" = 0 ] && [ "$run_rc" != 0 ]; then
	tail -5 "$dir/harvester/harvester.log" >&2
	out "bench-timeline.sh: harvester failed (exit $run_rc)"
	exit 1
fi
out "   $nurls reachable URLs seeded; batch: $("$tools/crawlcheck" batch --collection "$dir/harvester/col" 1 2>/dev/null); harvester $harv_secs s$([ "$run_stopped" = 1 ] && echo ", stopped at the time limit")"
stage_figures harvester
timeline harvester 0 --start "$run_start" --end "$run_end"
fi

# (iii) The crawl at wait 1s, stopped at BENCH_POLITE_TIME.
if want polite; then
out ""
out "== (iii) the crawl at harvester.wait 1s, stopped at $polite_t s"
start_web polite
new_collection polite 1s
"$bin/seeder" add --collection "$dir/polite/col" "$dir/polite/seeds.txt" >/dev/null || exit 1
export STAGE_TIMES=$dir/polite/stages.time
bounded "$polite_t" "$dir/polite/crawl.log" env WIRE_BIN="$wrap" "$crawl_sh" "$dir/polite/col" 1000000
stop_web polite
if [ "$run_stopped" = 0 ] && [ "$run_rc" != 0 ]; then
	tail -5 "$dir/polite/crawl.log" >&2
	out "bench-timeline.sh: crawl.sh failed (exit $run_rc)"
	exit 1
fi
out "   $(ls "$dir/polite/col/batches" 2>/dev/null | wc -l) batches$([ "$run_stopped" = 0 ] && echo ", frontier empty before $polite_t s")"
stage_figures polite
timeline polite 1s --start "$run_start" --end "$run_end" --at 60s,120s,300s
discovery polite 1s "$run_start"
cycles polite "$run_start"
fi

out ""
want crawl && want harvester && want polite && "$tools/crawlcheck" targets --crawl "$dir/crawl/timeline.json" --harvester "$dir/harvester/timeline.json" \
	--polite "$dir/polite/timeline.json" --discovery "$dir/crawl/discovery.json" --cycle "${cycle}s" | sed 's/^/   /' | tee -a "$report"
out ""
out "report: $report"
