#!/usr/bin/env bash
# bench-crawl.sh [HOSTS [PAGES [BUDGET]]]
#
# The scale run: serves the synthetic test web on loopback with HOSTS
# in-scope hosts (default 10000) and about PAGES pages (default 1000000),
# heavy-tailed site and page sizes, plus the hostile hosts (drip, endless
# body, gzip bomb, redirect loop, 50 MB page, garbage, 20,000 links,
# calendar trap, deep nesting, DNS failures, resets), behaving like a real
# web in time (--heterogeneous: heavy-tailed response times, 2% slow
# hosts, Crawl-delays of 2-5 s on 3% of the sites of every size, five big
# sites, bare names redirecting to www names); crawls it in cycles
# of manager, harvester, gatherer and seeder with batches of BENCH_BATCH
# URLs (default 100000) until the frontier is empty or BUDGET pages
# (default 1000000) have been fetched; and prints, per stage and cycle,
# wall time, CPU time, peak memory, pages, links and bytes on disk, and
# at the end the coverage of the reachable allowed pages (from the test
# web's truth), pages/s over the whole crawl and bytes of collection per
# page. A small run:
#
#   scripts/bench-crawl.sh 2000 30000 30000
#
# Environment: BENCH_DIR (work directory, default a new directory under
# ${TMPDIR:-/tmp}; the collection is BENCH_DIR/col, the report
# BENCH_DIR/bench.txt), BENCH_BATCH (100000), BENCH_WAIT (harvester wait,
# 10ms), BENCH_CONNECTIONS (harvester connections, 1000),
# BENCH_TIMEOUT (harvester total time limit, 10s), BENCH_ADDRESSES
# (loopback addresses the test web spreads its hosts over, default 1000:
# about 10 hosts per address, as virtual hosts share servers),
# BENCH_PER_IP (harvester.connections_per_ip, default the config's 8; with
# BENCH_ADDRESSES=1 set it to 0, or the whole web is one server of 8
# connections), BENCH_SITE_BATCH
# (manager.max_pages_per_site, default 2000), BENCH_BATCH_DURATION
# (manager.batch_duration, default 30s), BENCH_MAX_PAGES (largest
# site, default max(400, PAGES/50)), BENCH_WEB_FLAGS (further testweb
# flags, default --heterogeneous; empty for the uniform web of the runs
# in docs/scale.md before 2026-11-27), BENCH_HTTPS (share of the sites
# over TLS, testweb --https-share, default 0.85; 0 for the plain-HTTP web
# of the runs recorded before 2026-11-27), BENCH_SEED (1), BENCH_KEEP=1 (keep
# BENCH_DIR), WIRE_BIN and WIRE_BUILD as for crawl.sh. Needs GNU time
# (/usr/bin/time; Debian: apt-get install time). Exit codes: 0 done, 1 a
# stage failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [HOSTS [PAGES [BUDGET]]]" >&2
	exit 2
}
[ $# -le 3 ] || usage
hosts=${1:-10000}
pages=${2:-1000000}
budget=${3:-1000000}
for v in "$hosts" "$pages" "$budget"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
batch=${BENCH_BATCH:-100000}
wait=${BENCH_WAIT:-10ms}
conns=${BENCH_CONNECTIONS:-1000}
addresses=${BENCH_ADDRESSES:-1000}
perip=${BENCH_PER_IP:-8}
timeout=${BENCH_TIMEOUT:-10s}
sitebatch=${BENCH_SITE_BATCH:-2000}
batchdur=${BENCH_BATCH_DURATION:-30s}
maxpages=${BENCH_MAX_PAGES:-$((pages / 50 > 400 ? pages / 50 : 400))}
seed=${BENCH_SEED:-1}
webflags=${BENCH_WEB_FLAGS---heterogeneous}
case ${BENCH_HTTPS:-0.85} in
0 | 0.0 | "") ;;
*) webflags="$webflags --https-share ${BENCH_HTTPS:-0.85}" ;;
esac
TIME=/usr/bin/time
if ! "$TIME" -f %e true >/dev/null 2>&1; then
	echo "bench-crawl.sh: GNU time is needed at $TIME (Debian/Ubuntu: apt-get install time)" >&2
	exit 2
fi

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-bench.XXXXXX")}
mkdir -p "$dir"
if [ -e "$dir/col" ]; then
	echo "bench-crawl.sh: $dir/col exists; give an empty BENCH_DIR" >&2
	exit 2
fi
col=$dir/col
report=$dir/bench.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

wire_need_bins || { echo "bench-crawl.sh: build failed" >&2; exit 1; }
(cd "$WIRE_ROOT" && go build -o "$WIRE_BIN/" ./scripts/testweb ./scripts/crawlcheck) || {
	echo "bench-crawl.sh: building testweb and crawlcheck failed" >&2
	exit 1
}

web_pid=
time_pid=
cleanup() {
	if [ -n "$web_pid" ]; then
		kill "$web_pid" 2>/dev/null || true
	fi
	if [ -n "$time_pid" ]; then
		wait "$time_pid" 2>/dev/null || true
	fi
	if [ "${BENCH_KEEP:-0}" != 1 ] && [ -z "${BENCH_DIR:-}" ]; then
		rm -rf "$dir"
	fi
}
trap cleanup EXIT

# The test web, under GNU time so that its own peak memory is known.
out "== bench-crawl: $hosts hosts, about $pages pages (largest site $maxpages), budget $budget pages, batches of $batch"
out "   test web flags: ${webflags:-(none)}"
out "   wait $wait, $conns connections ($perip per IP address, 0: no cap; $addresses addresses), total time limit $timeout, at most $sitebatch URLs per site and batch; dir $dir"
out "   machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
start_web=$(date +%s.%N)
# shellcheck disable=SC2086 # BENCH_WEB_FLAGS is a list of flags
"$TIME" -f '%e %U %S %M' -o "$dir/testweb.time" "$WIRE_BIN/testweb" --hosts "$hosts" --pages "$pages" \
	--max-pages "$maxpages" --heavy-pages --hostile $webflags --addresses "$addresses" --seed "$seed" --seeds 100 --seeds-out "$dir/seeds.txt" \
	--config-out "$dir/web.json" --ready-file "$dir/ready" >"$dir/testweb.out" 2>&1 &
time_pid=$!
for _ in $(seq 1 600); do
	[ -f "$dir/ready" ] && break
	kill -0 "$time_pid" 2>/dev/null || { cat "$dir/testweb.out" >&2; echo "bench-crawl.sh: the test web did not start" >&2; exit 1; }
	sleep 0.1
done
[ -f "$dir/ready" ] || { echo "bench-crawl.sh: the test web did not become ready in 60 s" >&2; exit 1; }
web_pid=$(ps -o pid= --ppid "$time_pid" | head -1 | tr -d ' ')
[ -n "$web_pid" ] || web_pid=$time_pid
dns=$(sed -n 's/^dns=//p' "$dir/ready")
out "   test web ready in $(awk -v s="$start_web" -v t="$(date +%s.%N)" 'BEGIN {printf "%.1f", t - s}') s: $(sed -n 's/^http=//p' "$dir/ready") (DNS $dns)"

"$WIRE_BIN/seeder" init --collection "$col" --config "$WIRE_ROOT/collection/wire.toml" \
	--harvester-allow-private --harvester-dns-server "$dns" --harvester-wait "$wait" \
	--harvester-connections "$conns" --harvester-connections-per-ip "$perip" --harvester-total-timeout "$timeout" \
	--manager-batch-size "$batch" --manager-max-pages-per-site "$sitebatch" --manager-batch-duration "$batchdur" \
	--scope-domains cl >/dev/null || exit 1
"$WIRE_BIN/seeder" add --collection "$col" "$dir/seeds.txt" >/dev/null || exit 1

# measure STAGE CYCLE: runs one stage under GNU time; prints its line and
# adds to the per-stage totals. Returns the stage's exit code.
declare -A tot_wall tot_cpu max_rss max_anon
for s in $WIRE_STAGES; do tot_wall[$s]=0; tot_cpu[$s]=0; max_rss[$s]=0; max_anon[$s]=0; done
measure() {
	local s=$1 cyc=$2 rc line wall user sys rss anon
	shift 2
	"$TIME" -f '%e %U %S %M' -o "$dir/stage.time" "$WIRE_BIN/$s" run --collection "$col" --quiet "$@" \
		>"$dir/$s.out" 2>"$dir/$s.err" &
	local tpid=$! spid
	# Peak anonymous memory (heap, stacks), sampled every 0.2 s: GNU
	# time's peak RSS also counts the pages of graph.db the stage has
	# mapped and touched, which is the kernel's page cache and grows with
	# the graph.
	(
		peak=0
		while kill -0 "$tpid" 2>/dev/null; do
			c=$(pgrep -P "$tpid" | head -1)
			if [ -n "$c" ]; then
				a=$(awk '/^RssAnon:/ {print $2}' "/proc/$c/status" 2>/dev/null)
				[ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
			fi
			sleep 0.2
		done
		echo "$peak" >"$dir/stage.anon"
	) &
	spid=$!
	wait "$tpid"
	rc=$?
	wait "$spid"
	anon=$(cat "$dir/stage.anon")
	[ "$anon" -gt "${max_anon[$s]}" ] && max_anon[$s]=$anon
	line=$(tail -1 "$dir/stage.time")
	read -r wall user sys rss <<<"$line"
	tot_wall[$s]=$(awk -v a="${tot_wall[$s]}" -v b="$wall" 'BEGIN {print a + b}')
	tot_cpu[$s]=$(awk -v a="${tot_cpu[$s]}" -v b="$user" -v c="$sys" 'BEGIN {print a + b + c}')
	[ "$rss" -gt "${max_rss[$s]}" ] && max_rss[$s]=$rss
	out "$(printf '   %5s %-9s exit %d  wall %8.1f s  cpu %8.1f s  peak %7.0f MB  anon %7.0f MB' "$cyc" "$s" "$rc" "$wall" \
		"$(awk -v a="$user" -v b="$sys" 'BEGIN {print a + b}')" "$(awk -v r="$rss" 'BEGIN {print r / 1024}')" "$(awk -v r="$anon" 'BEGIN {print r / 1024}')")"
	if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
		tail -5 "$dir/$s.err" >&2
	fi
	return "$rc"
}

fetched=0
cycle=0
crawl_start=$(date +%s.%N)
out ""
out "   cycle stage      exit  wall            cpu             peak memory"
while [ "$fetched" -lt "$budget" ]; do
	cycle=$((cycle + 1))
	size=$((budget - fetched < batch ? budget - fetched : batch))
	c0=$(date +%s.%N)
	measure manager "$cycle" --manager-batch-size "$size"
	rc=$?
	if [ "$rc" = 3 ]; then
		out "   cycle $cycle: the frontier is empty"
		# The manager says what holds the rest back (site caps, depth,
		# the per-script limit, revisit period).
		out "   $(tail -1 "$dir/manager.err")"
		cycle=$((cycle - 1))
		break
	fi
	[ "$rc" = 0 ] || { out "bench-crawl.sh: manager failed (exit $rc) in cycle $cycle"; exit 1; }
	for s in harvester gatherer seeder; do
		measure "$s" "$cycle"
		rc=$?
		[ "$rc" = 0 ] || { out "bench-crawl.sh: $s failed (exit $rc) in cycle $cycle"; exit 1; }
	done
	n=$(ls "$col/batches" | sort | tail -1)
	read -r urls f bytes links newurls <<<"$("$WIRE_BIN/crawlcheck" batch --collection "$col" "$((10#$n))" | tr '=' ' ' | awk '{print $2, $4, $6, $8, $10}')"
	fetched=$((fetched + f))
	disk=$(du -sb "$col" | cut -f1)
	out "$(printf '   cycle %d: batch %d URLs, %d fetched (%.1f MB), %d links, %d new URLs; %d fetched in all; %.1f MB on disk; %.1f s' \
		"$cycle" "$urls" "$f" "$(awk -v b="$bytes" 'BEGIN {print b / 1e6}')" "$links" "$newurls" "$fetched" \
		"$(awk -v b="$disk" 'BEGIN {print b / 1e6}')" "$(awk -v s="$c0" -v t="$(date +%s.%N)" 'BEGIN {print t - s}')")"
done
crawl_end=$(date +%s.%N)

kill "$web_pid" 2>/dev/null
wait "$time_pid" 2>/dev/null
web_pid=
time_pid=
read -r wwall wuser wsys wrss <<<"$(tail -1 "$dir/testweb.time")"

out ""
out "== totals"
for s in $WIRE_STAGES; do
	out "$(printf '   %-9s wall %8.1f s  cpu %8.1f s  peak %7.0f MB  anon %7.0f MB' "$s" "${tot_wall[$s]}" "${tot_cpu[$s]}" "$(awk -v r="${max_rss[$s]}" 'BEGIN {print r / 1024}')" "$(awk -v r="${max_anon[$s]}" 'BEGIN {print r / 1024}')")"
done
out "$(printf '   %-9s wall %8.1f s  cpu %8.1f s  peak %7.0f MB' testweb "$wwall" "$(awk -v a="$wuser" -v b="$wsys" 'BEGIN {print a + b}')" "$(awk -v r="$wrss" 'BEGIN {print r / 1024}')")"
disk=$(du -sb "$col" | cut -f1)
elapsed=$(awk -v s="$crawl_start" -v t="$crawl_end" 'BEGIN {print t - s}')
out "$(printf '   %d cycles, %d pages fetched in %.1f s: %.1f pages/s; collection %.1f MB, %.0f bytes per page' \
	"$cycle" "$fetched" "$elapsed" "$(awk -v f="$fetched" -v e="$elapsed" 'BEGIN {print (e > 0 ? f / e : 0)}')" \
	"$(awk -v b="$disk" 'BEGIN {print b / 1e6}')" "$(awk -v b="$disk" -v f="$fetched" 'BEGIN {print (f > 0 ? b / f : 0)}')")"
du -sb "$col/graph.db" "$col/text" "$col/batches" 2>/dev/null | awk '{printf "   %-40s %10.1f MB\n", $2, $1 / 1e6}' | tee -a "$report"
out ""
"$WIRE_BIN/crawlcheck" coverage --collection "$col" --web "$dir/web.json" --seeds "$dir/seeds.txt" | sed 's/^/   /' | tee -a "$report"
out ""
out "report: $report"
