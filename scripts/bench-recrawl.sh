#!/usr/bin/env bash
# bench-recrawl.sh [HOSTS [PAGES]]
#
# Does a recrawl put the valuable pages first? (issue 24, docs/results.md
# "Recrawls: the historical strategies on the wire"). Serves the
# heterogeneous synthetic test web on loopback (HOSTS in-scope hosts,
# default 300, about PAGES pages, default 8000) and crawls it with
# scripts/crawl.sh from the seeds to an empty frontier, each run on a
# fresh test web (same seed, same web) and a fresh collection:
#
#  first/R            the first crawl, strategy pagerank, server ranking R;
#  old                a crawl of an older version of the web: the same
#                     seed with BENCH_OLD_HOSTS hosts (default 85 % of
#                     HOSTS), so sites and pages were added and removed
#                     since (its links and sizes differ);
#  exact/V/R          the recrawl from first/R0 (R0 the first ranking of
#                     BENCH_RANKINGS: a complete crawl of this same web,
#                     so the history is exact): seeder import --seeds
#                     BENCH_IMPORT_SEEDS (fetched: every page it fetched
#                     is a seed, the best each address can serve in batch_duration go in batch 1), manager history
#                     import, strategy historical with
#                     historical_new_pages V, server ranking R;
#  older/V/R          the same from the old crawl.
#
# Each run's timeline comes from the web's request log (crawlcheck
# timeline): the average cumulative PageRank over the sorted-PageRank
# bound by page order and by time, and the time to 50, 90 and 99 % of the
# reachable pages. A table of all runs ends the report, then the issue's
# targets: with exact history the recrawl reaches 0.97 of the bound by
# page order; with older history it beats the first crawl; the time to
# 99 % is no worse than the first crawl's (each against first/R of the
# same ranking).
#
# Environment: BENCH_RANKINGS (default "crawl-ability value"),
# BENCH_VARIANTS (default "zero random parent", the paper's; "pagerank" too), BENCH_HISTORIES (default
# "exact older"), BENCH_IMPORT_SEEDS (fetched or starts; default
# fetched), BENCH_OLD_HOSTS, BENCH_SEED (1), BENCH_HETERO (1),
# BENCH_SEEDS (50 seed URLs), BENCH_ADDRESSES (HOSTS/10),
# BENCH_PER_IP (8 when several addresses), BENCH_CONNECTIONS (1000),
# BENCH_WAIT (harvester.wait, default 0), BENCH_MAX_PAGES (largest site,
# default max(200, PAGES/50)), BENCH_LIMIT (time limit of each run, 600
# s), BENCH_BATCH_DURATION (manager.batch_duration, default 10s),
# BENCH_DIR (work directory, default a new one under ${TMPDIR:-/tmp}),
# BENCH_KEEP=1 (keep the collections), BENCH_TOOLS, WIRE_BIN and
# WIRE_BUILD as for crawl.sh. A small run:
#
#   BENCH_VARIANTS=parent BENCH_HISTORIES=exact scripts/bench-recrawl.sh 100 2000
#
# Exit codes: 0 done (whether or not the targets were met), 1 a run
# failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [HOSTS [PAGES]]" >&2
	exit 2
}
[ $# -le 2 ] || usage
hosts=${1:-300}
pages=${2:-8000}
seed=${BENCH_SEED:-1}
hetero=${BENCH_HETERO:-1}
nseeds=${BENCH_SEEDS:-50}
addresses=${BENCH_ADDRESSES:-$((hosts / 10 > 1 ? hosts / 10 : 1))}
perip=${BENCH_PER_IP:-$((addresses > 1 ? 8 : 0))}
conns=${BENCH_CONNECTIONS:-1000}
maxpages=${BENCH_MAX_PAGES:-$((pages / 50 > 200 ? pages / 50 : 200))}
limit=${BENCH_LIMIT:-600}
old_hosts=${BENCH_OLD_HOSTS:-$((hosts * 85 / 100))}
wait=${BENCH_WAIT:-0}
import_seeds=${BENCH_IMPORT_SEEDS:-fetched}
read -r -a rankings <<<"${BENCH_RANKINGS:-crawl-ability value}"
read -r -a variants <<<"${BENCH_VARIANTS:-zero random parent}"
read -r -a histories <<<"${BENCH_HISTORIES:-exact older}"
for v in "$hosts" "$pages" "$seed" "$nseeds" "$addresses" "$perip" "$conns" "$maxpages" "$limit" "$old_hosts"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
case $import_seeds in fetched | starts) ;; *) usage ;; esac
[ ${#rankings[@]} -gt 0 ] || usage
for h in "${histories[@]}"; do
	case $h in exact | older) ;; *) usage ;; esac
done
if [ -n "${BENCH_BATCH_DURATION-10s}" ]; then
	export WIRE_MANAGER_BATCH_DURATION=${BENCH_BATCH_DURATION-10s}
fi
web_flags=()
[ "$hetero" = 1 ] && web_flags+=(--heterogeneous)

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-recrawl.XXXXXX")}
mkdir -p "$dir"
[ -z "$(ls -A "$dir")" ] || { echo "bench-recrawl.sh: $dir is not empty; give an empty BENCH_DIR" >&2; exit 2; }
report=$dir/recrawl.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

wire_bench_tools bench-recrawl.sh || exit 1

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
		rm -rf "$dir"/*/col "$dir"/*/*/*/col
	fi
}
trap cleanup EXIT

# start_web RUN HOSTS: a fresh test web of HOSTS hosts for RUN, logging
# its requests to $dir/RUN/requests.tsv; sets web_pid and dns. Every run
# serves on the port of the first (URLs carry it, and a recrawl imports
# them).
http=127.0.0.1:0
start_web() {
	wire_start_web "$dir/$1" "$tools/testweb" --hosts "$2" --pages "$((pages * $2 / hosts))" --max-pages "$maxpages" --heavy-pages \
		"${web_flags[@]}" --addresses "$addresses" --seed "$seed" --seeds "$nseeds" --http "$http" || {
		echo "bench-recrawl.sh: the test web did not start" >&2
		exit 1
	}
	dns=$web_dns
	http=$(sed -n 's/^http=//p' "$dir/$1/ready")
}

# new_collection RUN RANKING SETTINGS...: a fresh collection $dir/RUN/col.
new_collection() {
	local r=$1 rank=$2
	shift 2
	"$bin/seeder" init --collection "$dir/$r/col" \
		--harvester-allow-private --harvester-dns-server "$dns" --harvester-wait "$wait" \
		--harvester-connections "$conns" --harvester-connections-per-ip "$perip" --harvester-ranking "$rank" \
		--manager-max-fetches-per-script 0 --scope-domains cl "$@" >/dev/null || exit 1
}

# crawl RUN: crawl.sh on $dir/RUN/col to an empty frontier, then the
# web's timeline (the reachable pages from the web's own seeds).
crawl() {
	local r=$1
	wire_bounded "$limit" "$dir/$r/crawl.log" "$WIRE_ROOT/scripts/crawl.sh" "$dir/$r/col" 1000000
	wire_stop_web "$dir/$r" || exit 1
	if [ "$run_rc" != 0 ] && [ "$run_stopped" = 0 ]; then
		tail -5 "$dir/$r/crawl.log" >&2
		out "bench-recrawl.sh: crawl.sh failed on $r (exit $run_rc)"
		exit 1
	fi
	"$tools/crawlcheck" timeline --web "$dir/$r/web.json" --seeds "$dir/$r/seeds.txt" --log "$dir/$r/requests.tsv" \
		--wait "$wait" --collection "$dir/$r/col" --start "$run_start" --end "$run_end" \
		--json-out "$dir/$r/timeline.json" >"$dir/$r/timeline.txt" || exit 1
	local batches
	batches=$(ls "$dir/$r/col/batches" 2>/dev/null | wc -l)
	out "== $r: $batches batches$([ "$run_stopped" = 1 ] && echo ", stopped at the time limit")"
	sed 's/^/   /' "$dir/$r/timeline.txt" | tee -a "$report"
}

# first RANKING: the first crawl of the web.
first() {
	local r=first/$1
	start_web "$r" "$hosts"
	new_collection "$r" "$1" --manager-strategy pagerank
	"$bin/seeder" add --collection "$dir/$r/col" "$dir/$r/seeds.txt" >/dev/null || exit 1
	crawl "$r"
}

# recrawl HISTORY VARIANT RANKING FROM: the recrawl from collection FROM.
recrawl() {
	local r=$1/$2/$3 from=$4
	start_web "$r" "$hosts"
	new_collection "$r" "$3" --manager-strategy historical --manager-historical-new-pages "$2"
	"$bin/seeder" import --collection "$dir/$r/col" --from "$from" --seeds "$import_seeds" >"$dir/$r/import.log" 2>&1 || {
		cat "$dir/$r/import.log" >&2
		exit 1
	}
	"$bin/seeder" add --collection "$dir/$r/col" "$dir/$r/seeds.txt" >/dev/null || exit 1
	"$bin/manager" history import --collection "$dir/$r/col" "$from" >"$dir/$r/history.log" 2>&1 || {
		cat "$dir/$r/history.log" >&2
		exit 1
	}
	crawl "$r"
}

out "== bench-recrawl $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts, about $pages pages (largest site $maxpages), old web $old_hosts hosts, seed $seed, heterogeneous $hetero"
out "   $addresses addresses, $conns connections ($perip per IP), wait $wait, batch_duration ${WIRE_MANAGER_BATCH_DURATION:-config}, import --seeds $import_seeds; rankings ${rankings[*]}; variants ${variants[*]}; histories ${histories[*]}"
out "   machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binaries $bin; dir $dir"
out ""

for rank in "${rankings[@]}"; do
	first "$rank"
done
exact_from=$dir/first/${rankings[0]}/col
for h in "${histories[@]}"; do
	from=$exact_from
	if [ "$h" = older ]; then
		start_web old "$old_hosts"
		new_collection old "${rankings[0]}" --manager-strategy pagerank
		"$bin/seeder" add --collection "$dir/old/col" "$dir/old/seeds.txt" >/dev/null || exit 1
		crawl old
		from=$dir/old/col
	fi
	for v in "${variants[@]}"; do
		for rank in "${rankings[@]}"; do
			recrawl "$h" "$v" "$rank" "$from"
		done
	done
done

# The table and the targets, from each run's timeline.txt.
out ""
out "== summary (PageRank ratio over the sorted bound; times in s from the crawl's start)"
row() {
	awk -v run="$1" '
		/time to  50%/ {t50 = $(NF-1)} /time to  90%/ {t90 = $(NF-1)} /time to  99%/ {t99 = $(NF-1)}
		/sorted-PageRank order:/ {for (i = 1; i <= NF; i++) if ($i == "by" && $(i+1) == "page") o = $(i-1); else if ($i == "by" && $(i+1) == "time") tm = $(i-1)}
		END {printf "%-28s %8s %8s %8s %8s %8s\n", run, o, tm, t50, t90, t99}' "$dir/$1/timeline.txt"
}
out "$(printf '%-28s %8s %8s %8s %8s %8s' run order time t50 t90 t99)"
runs=()
for rank in "${rankings[@]}"; do runs+=("first/$rank"); done
for h in "${histories[@]}"; do
	for v in "${variants[@]}"; do
		for rank in "${rankings[@]}"; do runs+=("$h/$v/$rank"); done
	done
done
for r in "${runs[@]}"; do
	out "$(row "$r")"
done
out ""
out "== targets (issue 24)"
get() { row "$1" | awk -v f="$2" '{print $f}'; }
for rank in "${rankings[@]}"; do
	f_order=$(get "first/$rank" 2)
	f_t99=$(get "first/$rank" 6)
	for h in "${histories[@]}"; do
		for v in "${variants[@]}"; do
			r=$h/$v/$rank
			o=$(get "$r" 2)
			t99=$(get "$r" 6)
			verdict=$(awk -v h="$h" -v o="$o" -v fo="$f_order" -v t="$t99" -v ft="$f_t99" 'BEGIN {
				ok = 1; why = ""
				if (h == "exact" && o + 0 < 0.97) { ok = 0; why = why " order " o " < 0.97" }
				if (h == "older" && o + 0 <= fo + 0) { ok = 0; why = why " order " o " <= first " fo }
				if (t == "not" || t + 0 > ft + 0) { ok = 0; why = why " t99 " t " > first " ft }
				print (ok ? "met" : "NOT met:" why) }')
			out "$(printf '   %-28s %s' "$r" "$verdict")"
		done
	done
done
out ""
out "report: $report"
