#!/usr/bin/env bash
# bench-siterank.sh [HOSTS [PAGES]]
#
# What the global site rank is worth in order (issue 36, "Ordering sees
# the whole web"; docs/manager.md "Global site rank"). Serves the test
# web on loopback (HOSTS in-scope hosts, default 100, about PAGES pages,
# default 3000, half of the sites subdomains of a few registrable domains,
# on HOSTS/10 shared addresses) and crawls it, each run on a fresh test
# web (same seed, same web) and fresh collections:
#
#  whole      one collection, crawl.sh to an empty frontier;
#  global     two partitions (crawl.partition 1/2 and 2/2, each the
#             other's crawl.partition_peers) crawled at the same time,
#             manager.global_site_rank true: rounds of crawl.sh on both
#             at once (the seeder exchanges after each batch) and seeder
#             exchange on both, until neither finds anything new;
#  local      the same with manager.global_site_rank false.
#
# BENCH_ROUNDS (default 2) rounds of global and local, alternated. Each
# run's order comes from the web's one request log (crawlcheck timeline):
# the average cumulative PageRank over the sorted-PageRank bound by page
# order and by time. The cost: the site graph each seeder published
# (bytes, ms: "site graph published" in the crawl logs) and what the
# managers' global site rank took ("global site rank" lines).
#
# Environment: BENCH_ROUNDS, BENCH_SEED (7), BENCH_ADDRESSES (HOSTS/10),
# BENCH_PER_IP (8), BENCH_WAIT (harvester.wait, 0), BENCH_LIMIT (time
# limit of each crawl.sh, 600 s), BENCH_BATCH_DURATION (10s), BENCH_RUNS
# (default "whole global local"; whole runs in the first round only), BENCH_DIR, BENCH_KEEP=1, BENCH_TOOLS,
# WIRE_BIN as for crawl.sh (built once at the start; crawl.sh runs with
# WIRE_BUILD=0, so no build falls inside a measured run). Time zero of a
# partitioned run is after both collections are initialised and seeded.
#
# Exit codes: 0 done, 1 a run failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [HOSTS [PAGES]]" >&2
	exit 2
}
[ $# -le 2 ] || usage
hosts=${1:-100}
pages=${2:-3000}
seed=${BENCH_SEED:-7}
addresses=${BENCH_ADDRESSES:-$((hosts / 10 > 2 ? hosts / 10 : 2))}
perip=${BENCH_PER_IP:-8}
wait=${BENCH_WAIT:-0}
limit=${BENCH_LIMIT:-600}
rounds=${BENCH_ROUNDS:-2}
read -r -a runs <<<"${BENCH_RUNS:-whole global local}"
for v in "$hosts" "$pages" "$seed" "$addresses" "$perip" "$limit" "$rounds"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
export WIRE_MANAGER_BATCH_DURATION=${BENCH_BATCH_DURATION:-10s}

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-siterank.XXXXXX")}
mkdir -p "$dir"
[ -z "$(ls -A "$dir")" ] || { echo "bench-siterank.sh: $dir is not empty; give an empty BENCH_DIR" >&2; exit 2; }
report=$dir/siterank.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

wire_bench_tools bench-siterank.sh || exit 1
# The binaries are built (or found up to date) once, here: crawl.sh must
# not build them again inside a measured run.
export WIRE_BUILD=0

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
		rm -rf "$dir"/*/p1 "$dir"/*/p2 "$dir"/*/whole
	fi
}
trap cleanup EXIT

# start_web RUN: a fresh test web for RUN (the same every time).
start_web() {
	wire_start_web "$dir/$1" "$tools/testweb" --hosts "$hosts" --pages "$pages" --max-pages 200 \
		--addresses "$addresses" --subdomain-share 0.5 --seed "$seed" --seeds 20 --http 127.0.0.1:0 || {
		echo "bench-siterank.sh: the test web did not start" >&2
		exit 1
	}
}

# init COL SETTINGS...: a new collection.
init() {
	local col=$1
	shift
	"$bin/seeder" init --collection "$col" --harvester-allow-private --harvester-dns-server "$web_dns" \
		--harvester-wait "$wait" --harvester-address-wait 0s --harvester-connections-per-ip "$perip" \
		--manager-max-fetches-per-script 0 --scope-domains cl "$@" >/dev/null || exit 1
	"$bin/seeder" add --collection "$col" "$(dirname "$col")/seeds.txt" >/dev/null || exit 1
}

# partitions RUN: rounds of crawl.sh on both partitions at once, then
# seeder exchange on both, until neither finds anything new.
partitions() {
	local r=$1 d=$dir/$1 round news before after
	for round in $(seq 1 12); do
		before=$(ls "$d"/p1/batches "$d"/p2/batches 2>/dev/null | wc -l)
		"$WIRE_ROOT/scripts/crawl.sh" "$d/p1" 1000000 >>"$d/crawl-p1.log" 2>&1 &
		local a=$!
		"$WIRE_ROOT/scripts/crawl.sh" "$d/p2" 1000000 >>"$d/crawl-p2.log" 2>&1 &
		local b=$!
		wait "$a" || return 1
		wait "$b" || return 1
		news=0
		for i in 1 2; do
			"$bin/seeder" exchange --collection "$d/p$i" >"$d/exchange.out" 2>>"$d/crawl-p$i.log" || return 1
			grep -q "nothing new" "$d/exchange.out" || news=1
		done
		after=$(ls "$d"/p1/batches "$d"/p2/batches 2>/dev/null | wc -l)
		[ "$news" = 0 ] && [ "$before" = "$after" ] && break
	done
	echo "$round rounds" >"$d/rounds"
}

# run RUN: one run of kind RUN (whole, global or local) in $dir/RUN.N.
run() {
	local kind=$1 r=$1.$2 col
	start_web "$r"
	case $kind in
	whole)
		init "$dir/$r/whole"
		wire_bounded "$limit" "$dir/$r/crawl.log" "$WIRE_ROOT/scripts/crawl.sh" "$dir/$r/whole" 1000000
		col=$dir/$r/whole
		;;
	global | local)
		local flag=true
		[ "$kind" = local ] && flag=false
		for i in 1 2; do
			init "$dir/$r/p$i" --crawl-partition "$i/2" --crawl-partition-peers "$dir/$r/p$((3 - i))" --manager-global-site-rank="$flag"
		done
		run_start=$(wire_now)
		partitions "$r"
		run_rc=$?
		run_end=$(wire_now)
		col=$dir/$r/p1
		;;
	esac
	wire_stop_web "$dir/$r" || exit 1
	[ "$run_rc" = 0 ] || { out "bench-siterank.sh: $r failed (exit $run_rc)"; exit 1; }
	"$tools/crawlcheck" timeline --web "$dir/$r/web.json" --seeds "$dir/$r/seeds.txt" --log "$dir/$r/requests.tsv" \
		--wait "$wait" --collection "$col" --start "$run_start" --end "$run_end" \
		--json-out "$dir/$r/timeline.json" >"$dir/$r/timeline.txt" || exit 1
	out "== $r ($(cat "$dir/$r/rounds" 2>/dev/null || echo "one collection"))"
	sed 's/^/   /' "$dir/$r/timeline.txt" | tee -a "$report"
	if [ "$kind" != whole ]; then
		cat "$dir/$r"/crawl-p*.log | awk '/site graph published/ {
				for (i = 1; i <= NF; i++) { if ($i ~ /^bytes=/) { split($i, a, "="); b += a[2]; n++ } if ($i ~ /^elapsed_ms=/) { split($i, c, "="); ms += c[2] } }
			} /global site rank/ && /elapsed=/ {
				for (i = 1; i <= NF; i++) if ($i ~ /^elapsed=/) { split($i, e, "="); v = e[2]; if (v ~ /ms$/) { sub(/ms$/, "", v); g += v } else if (v ~ /µs$/) { sub(/µs$/, "", v); g += v / 1000 } else if (v ~ /s$/) { sub(/s$/, "", v); g += v * 1000 }; m++ }
			} END {
				printf "   site graphs published: %d, mean %.0f bytes, mean %.1f ms to build and write; manager global site rank: %d runs, mean %.2f ms\n", n, (n ? b / n : 0), (n ? ms / n : 0), m, (m ? g / m : 0)
			}' | tee -a "$report"
	fi
}

out "== bench-siterank $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts, about $pages pages, $addresses addresses, half the sites subdomains, seed $seed"
out "   wait $wait, $perip connections per IP, batch_duration $WIRE_MANAGER_BATCH_DURATION; runs ${runs[*]}, $rounds rounds"
out "   machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binaries $bin; dir $dir"
out ""
for n in $(seq 1 "$rounds"); do
	for kind in "${runs[@]}"; do
		[ "$kind" = whole ] && [ "$n" -gt 1 ] && continue
		run "$kind" "$n"
		out "   load $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
out ""
out "== summary: average cumulative PageRank over the sorted bound, by pages and by time; fetched of reachable; last request (s)"
for f in "$dir"/*/timeline.json; do
	r=$(basename "$(dirname "$f")")
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%-10s %.4f %.4f %d/%d %.1f" % (sys.argv[2], d["pagerank_ratio"], d["pagerank_ratio_by_time"], d["fetched"], d["reachable"], d["last_end_s"]))' "$f" "$r" | tee -a "$report"
done
