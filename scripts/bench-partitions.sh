#!/usr/bin/env bash
# bench-partitions.sh
#
# One test web crawled as 1, 2 and 4 partitioned collections (issue 36,
# "Measured"; docs/scale.md "Partitions (bench-partitions.sh)";
# docs/operations.md "Partitioned collections"). Serves the synthetic
# test web on loopback once, with sites renamed as subdomains of a few
# registrable domains and shared addresses (testweb --subdomain-share,
# --addresses), and for each K of BENCH_K, one after the other on the
# same web:
#
#  - K fresh collections on this machine's file system, partition i/K,
#    each with the K-1 others as crawl.partition_peers, every one seeded
#    with the whole seed list (each keeps its own sites); K = 1 is one
#    plain collection;
#  - their crawls side by side, as operators would run them: per
#    partition a loop of scripts/crawl.sh to an empty frontier, then
#    `seeder exchange`, over and over, until the whole set is done: every
#    partition found its frontier empty and took nothing new in since
#    the last exchange file any partition published (each loop records
#    the number of published files it had seen when it found nothing new;
#    the set is done when all K record the current number);
#  - the test web's one request log, cut by the run's start and end;
#
# then per K, `crawlcheck timeline` (coverage of the reachable pages,
# the crawl order's cumulative PageRank by page order and by time; each
# page's PageRank and first fetch in KDIR/pages.tsv) on the run's
# requests and `crawlcheck exchange` on its collections and requests
# (pages fetched, URLs fetched by two partitions, host names and server
# addresses asked by two partitions, links sent and taken in, files
# not taken, exchange bytes per cycle and per line, the seeder's intake
# time per batch, graph.db bytes), against K = 1 (the first K of
# BENCH_K), and the peak memory per stage (GNU time). The report is
# printed and saved to BENCH_DIR/partitions.txt. A small run:
#
#   BENCH_HOSTS=100 BENCH_PAGES=3000 scripts/bench-partitions.sh
#
# Environment: BENCH_PAGES (about 100000 pages), BENCH_HOSTS (2000
# in-scope hosts), BENCH_K (the partition counts, default "1 2 4"; the
# first is the reference), BENCH_SUBDOMAINS (0.5: share of the sites
# renamed as subdomains), BENCH_ADDRESSES (loopback addresses of the
# web, default HOSTS/10), BENCH_PER_IP (harvester.connections_per_ip,
# 8), BENCH_CONNECTIONS (1000), BENCH_HETERO (0; 1: testweb
# --heterogeneous, whose slow hosts and Crawl-delay sites make each K's
# run end in a tail of minutes on a few sites, which says nothing about
# the exchange), BENCH_CRAWL_DELAY_MAX_PAGES (with BENCH_HETERO=1, 20:
# the Crawl-delay sites among the sites of at most this many pages),
# BENCH_HTTPS (share of the sites over TLS, 0.85),
# BENCH_MAX_PAGES (largest site, default max(400, PAGES/50)), BENCH_SEED
# (1), BENCH_SEEDS (50 seed URLs), BENCH_WEB_FLAGS (more testweb flags),
# BENCH_WAIT (harvester.wait, 0; harvester.address_wait is 0 too, as in
# bench-timeline.sh's crawl at wait 0), BENCH_LIMIT (time limit of each
# K's run, 1800 s: then every partition gets SIGINT and the run is
# reported as stopped), BENCH_DIR (work directory, default a new one
# under ${TMPDIR:-/tmp}), BENCH_KEEP=1 (keep the collections; otherwise
# only the report, the web's description, the request logs and the
# crawl logs stay), BENCH_TOOLS, WIRE_BIN and WIRE_BUILD as for
# bench-timeline.sh. Every collection has harvester.allow_private, the
# web's DNS server and manager.max_fetches_per_script 0 (with 1, which
# query URL of a script is fetched depends on the order, and the order
# differs between K: TestPartitions).
#
# Exit codes: 0 done (the figures say whether the targets were met), 1 a
# run failed or did not finish within BENCH_LIMIT, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 (settings in the environment: BENCH_PAGES, BENCH_HOSTS, BENCH_K, ...)" >&2
	exit 2
}
[ $# -eq 0 ] || usage
pages=${BENCH_PAGES:-100000}
hosts=${BENCH_HOSTS:-2000}
ks=${BENCH_K:-1 2 4}
seed=${BENCH_SEED:-1}
nseeds=${BENCH_SEEDS:-50}
addresses=${BENCH_ADDRESSES:-$((hosts / 10 > 2 ? hosts / 10 : 2))}
perip=${BENCH_PER_IP:-8}
conns=${BENCH_CONNECTIONS:-1000}
maxpages=${BENCH_MAX_PAGES:-$((pages / 50 > 400 ? pages / 50 : 400))}
limit=${BENCH_LIMIT:-1800}
cd_max_pages=${BENCH_CRAWL_DELAY_MAX_PAGES:-20}
wait_=${BENCH_WAIT:-0}
for v in "$pages" "$hosts" "$seed" "$nseeds" "$addresses" "$perip" "$conns" "$maxpages" "$limit" "$cd_max_pages"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
for k in $ks; do
	case $k in '' | *[!0-9]* | 0) echo "bench-partitions.sh: BENCH_K: $k is not a partition count" >&2; exit 2 ;; esac
done
[ -n "$ks" ] || usage
web_flags=(--subdomain-share "${BENCH_SUBDOMAINS:-0.5}")
[ "${BENCH_HETERO:-0}" = 1 ] && web_flags+=(--heterogeneous)
[ "${BENCH_HETERO:-0}" = 1 ] && [ "$cd_max_pages" != 0 ] && web_flags+=(--crawl-delay-max-pages "$cd_max_pages")
https_share=${BENCH_HTTPS:-0.85}
case $https_share in 0 | 0.0 | "") ;; *) web_flags+=(--https-share "$https_share") ;; esac
read -r -a extra_web_flags <<<"${BENCH_WEB_FLAGS:-}"
web_flags+=("${extra_web_flags[@]}")
TIME=/usr/bin/time
"$TIME" -f %e true >/dev/null 2>&1 || TIME=

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-partitions.XXXXXX")}
mkdir -p "$dir"
for k in $ks; do
	if [ -e "$dir/k$k" ]; then
		echo "bench-partitions.sh: $dir/k$k exists; give an empty BENCH_DIR" >&2
		exit 2
	fi
done
report=$dir/partitions.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

wire_bench_tools bench-partitions.sh || exit 1

# Stage wrappers: crawl.sh and the loops run them as WIRE_BIN; each
# appends "stage wall-seconds peak-KB" to $STAGE_TIMES under GNU time.
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
loop_pids=()
cleanup() {
	local p n
	# SIGINT first: crawl.sh stops the stages it started (each in its own
	# process group, which a SIGKILL of the loop's group would leave
	# running), then SIGKILL after 30 s.
	for p in "${loop_pids[@]}"; do
		kill -INT -- "-$p" 2>/dev/null || true
	done
	for n in $(seq 1 60); do
		for p in "${loop_pids[@]}"; do
			kill -0 -- "-$p" 2>/dev/null && break
			p=
		done
		[ -z "${p:-}" ] && break
		sleep 0.5
	done
	for p in "${loop_pids[@]}"; do
		kill -KILL -- "-$p" 2>/dev/null || true
	done
	if [ -n "$web_pid" ]; then
		kill "$web_pid" 2>/dev/null || true
		wait "$web_pid" 2>/dev/null || true
	fi
	if [ "${BENCH_KEEP:-0}" != 1 ]; then
		rm -rf "$dir"/k*/p* "$dir"/k*/col "$wrap"
	fi
}
trap cleanup EXIT

# published: the number of exchange files published by the collections
# of $1 (a K directory), all destinations.
published() {
	find "$1" -path '*/exchange/out/to-*' -name '*.sz' -not -path '*/pending/*' 2>/dev/null | wc -l
}

# part_loop KDIR COL I: one partition's crawl, as its operator runs it:
# crawl.sh to an empty frontier, then seeder exchange, until KDIR/stop
# exists. Writes KDIR/idle-I (the number of published exchange files it
# had seen) when a round seeded no batch and took nothing new in, and
# removes it otherwise; KDIR/failed-I when a stage failed. A crawl.sh
# that found the network down (exit 5) is run again, as cron would.
part_loop() {
	local kdir=$1 col=$2 i=$3 before after seen t0 ex rc
	: >>"$kdir/exchange-$i.log"
	while [ ! -e "$kdir/stop" ]; do
		before=$(ls "$col/batches" 2>/dev/null | wc -l)
		WIRE_BIN=$wrap "$WIRE_ROOT/scripts/crawl.sh" "$col" 1000000 >>"$kdir/crawl-$i.log" 2>&1
		rc=$?
		[ -e "$kdir/stop" ] && return 0
		if [ "$rc" = 5 ]; then
			# The harvester found the network down (the test web's DNS
			# server did not answer in time, on a loaded machine): what
			# an operator's cron does, run again; counted in the report.
			echo "network down" >>"$kdir/retries-$i"
			rm -f "$kdir/idle-$i"
			sleep 5
			continue
		elif [ "$rc" != 0 ]; then
			echo "crawl.sh $col failed (exit $rc)" >"$kdir/failed-$i"
			return 1
		fi
		after=$(ls "$col/batches" 2>/dev/null | wc -l)
		seen=$(published "$kdir")
		t0=$(wire_secs)
		if ! ex=$("$wrap/seeder" exchange --collection "$col" 2>>"$kdir/crawl-$i.log"); then
			[ -e "$kdir/stop" ] && return 0
			echo "seeder exchange $col failed" >"$kdir/failed-$i"
			return 1
		fi
		printf '%s\n' "$ex" >>"$kdir/exchange-$i.log"
		echo "exchange-run $(wire_since "$t0")" >>"$kdir/exchange-$i.log"
		if [ "$before" = "$after" ] && [[ $ex == *"nothing new"* ]]; then
			echo "$seen" >"$kdir/idle-$i.tmp" && mv "$kdir/idle-$i.tmp" "$kdir/idle-$i"
			sleep 1
		else
			rm -f "$kdir/idle-$i"
		fi
	done
}

# run_set K: crawls the web as K partitions side by side (K = 1: one
# collection, crawl.sh to an empty frontier); sets run_start, run_end,
# run_secs, run_ok.
run_set() {
	local k=$1 kdir=$dir/k$1 i j peers p n done_ t0 el
	mkdir -p "$kdir"
	local cols=()
	for i in $(seq 1 "$k"); do cols+=("$kdir/p$i"); done
	for i in $(seq 1 "$k"); do
		local part=()
		if [ "$k" -gt 1 ]; then
			peers=
			for j in $(seq 1 "$k"); do
				[ "$j" = "$i" ] || peers=${peers:+$peers,}${cols[j - 1]}
			done
			part=(--crawl-partition "$i/$k" --crawl-partition-peers "$peers")
		fi
		"$bin/seeder" init --collection "${cols[i - 1]}" \
			--harvester-allow-private --harvester-dns-server "$web_dns" --harvester-wait "$wait_" --harvester-address-wait 0 \
			--harvester-connections "$conns" --harvester-connections-per-ip "$perip" \
			--manager-max-fetches-per-script 0 --scope-domains cl "${part[@]}" >/dev/null || exit 1
		"$bin/seeder" add --collection "${cols[i - 1]}" "$dir/web/seeds.txt" >/dev/null || exit 1
	done
	export STAGE_TIMES=$kdir/stages.time
	run_start=$(wire_now)
	t0=$(wire_secs)
	loop_pids=()
	for i in $(seq 1 "$k"); do
		set -m
		if [ "$k" = 1 ]; then
			WIRE_BIN=$wrap "$WIRE_ROOT/scripts/crawl.sh" "${cols[0]}" 1000000 >"$kdir/crawl-1.log" 2>&1 &
		else
			part_loop "$kdir" "${cols[i - 1]}" "$i" &
		fi
		loop_pids+=($!)
		set +m
	done
	run_ok=1
	if [ "$k" = 1 ]; then
		while kill -0 "${loop_pids[0]}" 2>/dev/null; do
			el=$(wire_since "$t0")
			if awk -v e="$el" -v l="$limit" 'BEGIN {exit !(e >= l)}'; then
				kill -INT -- "-${loop_pids[0]}" 2>/dev/null
				run_ok=0
				break
			fi
			sleep 0.5
		done
		wait "${loop_pids[0]}" || run_ok=0
	else
		while :; do
			if ls "$kdir"/failed-* >/dev/null 2>&1; then
				cat "$kdir"/failed-* >&2
				run_ok=0
				break
			fi
			n=$(published "$kdir")
			done_=1
			for i in $(seq 1 "$k"); do
				[ "$(cat "$kdir/idle-$i" 2>/dev/null)" = "$n" ] || { done_=0; break; }
			done
			[ "$done_" = 1 ] && break
			el=$(wire_since "$t0")
			if awk -v e="$el" -v l="$limit" 'BEGIN {exit !(e >= l)}'; then
				run_ok=0
				break
			fi
			sleep 0.5
		done
		touch "$kdir/stop"
		if [ "$run_ok" = 0 ]; then
			for p in "${loop_pids[@]}"; do kill -INT -- "-$p" 2>/dev/null; done
		fi
		for p in "${loop_pids[@]}"; do wait "$p"; done
	fi
	# A stage still running in a loop's process group outlived its
	# crawl.sh (seen once: a gatherer --follow of a harvest stopped by
	# SIGINT): said, and killed.
	for p in "${loop_pids[@]}"; do
		if kill -0 -- "-$p" 2>/dev/null; then
			echo "bench-partitions.sh: K = $k: a process outlived its crawl.sh: $(pgrep -g "$p" -a | head -3 | tr '\n' ';')" >&2
			kill -KILL -- "-$p" 2>/dev/null
		fi
	done
	run_end=$(wire_now)
	run_secs=$(wire_since "$t0")
	loop_pids=()
}

# stage_figures K: per stage, runs, wall time and peak memory.
stage_figures() {
	local f=$dir/k$1/stages.time
	[ -s "$f" ] || return 0
	awk 'NF == 3 && $1 != "Command" {n[$1]++; w[$1] += $2; if ($3 > m[$1]) m[$1] = $3}
		END {for (s in n) printf "   %-9s %4d runs  wall %8.1f s  peak %7.0f MB\n", s, n[s], w[s], m[s] / 1024}' "$f" |
		sort | tee -a "$report"
}

mkdir -p "$dir/web"
wire_start_web "$dir/web" "$tools/testweb" --hosts "$hosts" --pages "$pages" --max-pages "$maxpages" --heavy-pages \
	"${web_flags[@]}" --addresses "$addresses" --seed "$seed" --seeds "$nseeds" || {
	echo "bench-partitions.sh: the test web did not start" >&2
	exit 1
}
web_dns=$(sed -n 's/^dns=//p' "$dir/web/ready")

out "== bench-partitions $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts, about $pages pages (largest site $maxpages), $addresses addresses, seed $seed, $nseeds seeds; testweb ${web_flags[*]}"
out "   K = $ks, harvester.wait $wait_, address_wait 0, $conns connections ($perip per IP address), max_fetches_per_script 0, time limit $limit s per K; binaries $bin; dir $dir"
out "   machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"

failed=0
declare -A starts ends
for k in $ks; do
	out ""
	out "== K = $k: $(date -u +%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	run_set "$k"
	starts[$k]=$run_start
	ends[$k]=$run_end
	retries=$(cat "$dir/k$k"/retries-* 2>/dev/null | wc -l)
	[ "$retries" = 0 ] || out "   crawl.sh found the network down (exit 5: the test web's DNS server did not answer in time) $retries times; run again each time"
	if [ "$run_ok" = 1 ]; then
		out "   done after $run_secs s: every partition's frontier empty, nothing new in the exchange"
	else
		out "   NOT done: stopped or failed after $run_secs s (logs: $dir/k$k/crawl-*.log)"
		failed=1
	fi
	stage_figures "$k"
	sleep 2 # the next run's requests start in a later second
done

wire_stop_web "$dir/web" || exit 1

base=
for k in $ks; do
	kdir=$dir/k$k
	# This run's requests: those that started within its seconds.
	awk -F'\t' -v s="${starts[$k]:0:19}" -v e="${ends[$k]:0:19}" 'substr($5, 1, 19) >= s && substr($5, 1, 19) <= e' \
		"$dir/web/requests.tsv" >"$kdir/requests.tsv"
	"$tools/crawlcheck" timeline --web "$dir/web/web.json" --seeds "$dir/web/seeds.txt" --log "$kdir/requests.tsv" \
		--wait "$wait_" --start "${starts[$k]}" --end "${ends[$k]}" --collection "$kdir/p1" \
		--json-out "$kdir/timeline.json" --pages-out "$kdir/pages.tsv" >"$kdir/timeline.txt" || exit 1
	args=()
	for i in $(seq 1 "$k"); do
		args+=(--collection "$kdir/p$i")
		[ "$k" = 1 ] || args+=(--exchange-log "$kdir/exchange-$i.log")
	done
	[ -n "$base" ] && args+=(--base "$base")
	out ""
	out "== K = $k: $(grep -c . "$kdir/requests.tsv") requests"
	"$tools/crawlcheck" exchange "${args[@]}" --timeline "$kdir/timeline.json" --log "$kdir/requests.tsv" --json-out "$kdir/exchange.json" >"$kdir/exchange.txt" || exit 1
	sed 's/^/   /' "$kdir/exchange.txt" | tee -a "$report"
	[ -n "$base" ] || base=$kdir/exchange.json
done
out ""
out "report: $report"
exit "$failed"
