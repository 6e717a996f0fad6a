#!/usr/bin/env bash
# bench-politeness.sh [HOSTS]
#
# Politeness by server, measured (issue 17, docs/harvester.md
# "Politeness by server"): a whole crawl (scripts/crawl.sh until the
# frontier is empty, or BENCH_LIMIT) of the heterogeneous test web with
# the hostile hosts, HOSTS in-scope hosts (default 300) spread over
# HOSTS/8 loopback addresses, once with the binaries of this tree ("new")
# and once with those of an older revision ("old"), each on a fresh test
# web (same seed, same web) and a fresh collection with the same
# settings. For each it prints the audit of the test web's request log
# by server (crawlcheck politeness: requests, units, addresses, most in
# flight per unit and per address, gaps under the wait or Crawl-delay,
# address-floor violations, requests per hostile host) and the crawl's
# wall time to an empty frontier; then the time ratio new/old, the time
# the new rules cost.
#
# The old build: WIRE_OLD_BIN (a directory holding manager, harvester,
# gatherer and seeder), or else revision WIRE_OLD_REV (default a9cc4c6,
# before the harvester's politeness by server) built from a temporary
# `git worktree`. Settings that an older build may not know are given
# only through the environment (old binaries refuse unknown flags but
# ignore unknown WIRE_* variables); the current scripts/crawl.sh runs
# both.
#
# Settings of both crawls: harvester.wait BENCH_WAIT (200ms),
# harvester.connections BENCH_CONNECTIONS (200),
# harvester.connections_per_ip BENCH_PER_IP (4), harvester.address_wait
# BENCH_ADDRESS_WAIT (250ms, the default), harvester.total_timeout
# BENCH_TOTAL_TIMEOUT (10s), manager.batch_duration BENCH_BATCH_DURATION
# (10s), manager.max_fetches_per_script 0, the rest the defaults. The
# web: --heterogeneous --hostile, largest site BENCH_MAX_PAGES (100),
# Crawl-delays of 1 s (BENCH_WEB_FLAGS, default "--crawl-delay-min 1s
# --crawl-delay-max 1s", so that the slowest site does not hold the
# crawl for many minutes), BENCH_SEEDS seeds (20), BENCH_SEED (1),
# BENCH_ADDRESSES addresses, mostly HTTPS: BENCH_HTTPS (0.85) of the
# sites over TLS (testweb --https-share; the hostile TLS hosts join the
# hostile ones; the harvester trusts the web's CA through
# WIRE_HARVESTER_CA_FILE; 0 for plain HTTP only). manager.max_site_pages BENCH_MAX_SITE_PAGES
# (default twice the largest site) stops the hostile link farm
# (many-links, 20,000 pages) and the calendar trap there, so that the
# frontier empties in minutes. The audit also checks that no hostile host
# whose answers must be cut got more than BENCH_MAX_CUT page requests
# (default 4: issue 17's N + 1 with N = 3; 0: not checked), and forgives
# BENCH_SLACK (3ms, politeaudit.ServerSlack) of server scheduling lag. Each run's directory keeps
# web.json, seeds.txt, requests.tsv, crawl.log and audit.txt (the table
# and the first 50 violations described).
#
# Other environment: BENCH_LIMIT (time limit of each crawl, 300 s; at the
# limit it gets SIGINT and the time is marked as a bound), BENCH_RUNS
# ("new old"), BENCH_DIR (work directory, default a new one under
# ${TMPDIR:-/tmp}; the collections are removed unless BENCH_KEEP=1).
# Loopback only. The report is printed and saved to
# BENCH_DIR/politeness.txt. Exit codes: 0 done (whatever the audit
# found), 1 a crawl or a build failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [HOSTS]" >&2
	exit 2
}
[ $# -le 1 ] || usage
hosts=${1:-300}
seed=${BENCH_SEED:-1}
nseeds=${BENCH_SEEDS:-20}
addresses=${BENCH_ADDRESSES:-$((hosts / 8 > 1 ? hosts / 8 : 1))}
maxpages=${BENCH_MAX_PAGES:-100}
conns=${BENCH_CONNECTIONS:-200}
perip=${BENCH_PER_IP:-4}
maxcut=${BENCH_MAX_CUT:-4}
sitecap=${BENCH_MAX_SITE_PAGES:-$((2 * maxpages))}
limit=${BENCH_LIMIT:-300}
for v in "$hosts" "$seed" "$nseeds" "$addresses" "$maxpages" "$conns" "$perip" "$maxcut" "$sitecap" "$limit"; do
	case $v in '' | *[!0-9]*) usage ;; esac
done
wait_=${BENCH_WAIT:-200ms}
addrwait=${BENCH_ADDRESS_WAIT:-250ms}
timeout=${BENCH_TOTAL_TIMEOUT:-10s}
slack=${BENCH_SLACK:-3ms}
old_rev=${WIRE_OLD_REV:-a9cc4c6}
runs=" ${BENCH_RUNS:-new old} "
read -r -a web_flags <<<"${BENCH_WEB_FLAGS---crawl-delay-min 1s --crawl-delay-max 1s}"
https_share=${BENCH_HTTPS:-0.85}
export WIRE_MANAGER_BATCH_DURATION=${BENCH_BATCH_DURATION:-10s}
# Newer settings through the environment only (see above).
export WIRE_HARVESTER_ADDRESS_WAIT=$addrwait WIRE_MANAGER_MAX_SITE_PAGES=$sitecap

dir=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-politeness.XXXXXX")}
mkdir -p "$dir"
for r in new old; do
	if [ -e "$dir/$r" ]; then
		echo "bench-politeness.sh: $dir/$r exists; give an empty BENCH_DIR" >&2
		exit 2
	fi
done
report=$dir/politeness.txt
: >"$report"
out() { printf '%s\n' "$*" | tee -a "$report"; }

web_pid=
job_pid=
old_src=
cleanup() {
	if [ -n "$job_pid" ]; then
		kill -KILL -- "-$job_pid" 2>/dev/null || true
	fi
	if [ -n "$web_pid" ]; then
		kill "$web_pid" 2>/dev/null || true
		wait "$web_pid" 2>/dev/null || true
	fi
	if [ -n "$old_src" ]; then
		git -C "$WIRE_ROOT" worktree remove --force "$old_src" 2>/dev/null || true
	fi
	if [ "${BENCH_KEEP:-0}" != 1 ]; then
		rm -rf "$dir"/new/col "$dir"/old/col
	fi
}
trap cleanup EXIT

# The new stages and the tools (testweb, crawlcheck) from this tree.
bin_new=$dir/bin-new
tools=$bin_new
WIRE_BIN=$bin_new wire_build || { echo "bench-politeness.sh: build failed" >&2; exit 1; }
(cd "$WIRE_ROOT" && go build -o "$tools/" ./scripts/crawlcheck) || {
	echo "bench-politeness.sh: building crawlcheck failed" >&2
	exit 1
}
bin_old=${WIRE_OLD_BIN:-}
if [[ $runs == *" old "* ]] && [ -z "$bin_old" ]; then
	old_src=$dir/old-src
	git -C "$WIRE_ROOT" worktree add --detach "$old_src" "$old_rev" >/dev/null 2>&1 || {
		echo "bench-politeness.sh: git worktree add of $old_rev failed" >&2
		old_src=
		exit 1
	}
	bin_old=$dir/bin-old
	(cd "$old_src" && go build -o "$bin_old/" ./manager ./harvester ./gatherer ./seeder) || {
		echo "bench-politeness.sh: building $old_rev failed" >&2
		exit 1
	}
	git -C "$WIRE_ROOT" worktree remove --force "$old_src" && old_src=
fi

out "== bench-politeness $(date -u +%Y-%m-%dT%H:%MZ): $hosts hosts on $addresses addresses, largest site $maxpages pages, --heterogeneous --hostile ${web_flags[*]}, seed $seed, $nseeds seeds"
out "   wait $wait_, connections $conns ($perip per address), address_wait $addrwait, total_timeout $timeout, batch_duration $WIRE_MANAGER_BATCH_DURATION, max_site_pages $sitecap; time limit $limit s per crawl; dir $dir"
out "   new: this tree ($(git -C "$WIRE_ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$WIRE_ROOT" diff --quiet 2>/dev/null || echo ', with changes')); old: ${WIRE_OLD_BIN:-revision $old_rev}"
out "   machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# crawl RUN BIN: the whole crawl with the stages of BIN; sets secs_RUN
# and stopped_RUN.
crawl() {
	local r=$1 b=$2 t0 secs
	out ""
	out "== $r: $b"
	local tls=() caenv=()
	case $https_share in
	0 | 0.0 | "") ;;
	*)
		tls=(--https-share "$https_share" --ca-out "$dir/$r/ca.pem")
		# Through the environment: an old build ignores it (and fetches
		# without checking certificates, as it always did).
		caenv=(WIRE_HARVESTER_CA_FILE="$dir/$r/ca.pem")
		;;
	esac
	wire_start_web "$dir/$r" "$tools/testweb" --hosts "$hosts" --max-pages "$maxpages" --heterogeneous --hostile \
		"${web_flags[@]}" "${tls[@]}" --addresses "$addresses" --seed "$seed" --seeds "$nseeds" || exit 1
	"$b/seeder" init --collection "$dir/$r/col" \
		--harvester-allow-private --harvester-dns-server "$web_dns" --harvester-wait "$wait_" \
		--harvester-connections "$conns" --harvester-connections-per-ip "$perip" --harvester-total-timeout "$timeout" \
		--manager-max-fetches-per-script 0 --scope-domains cl >/dev/null || exit 1
	"$b/seeder" add --collection "$dir/$r/col" "$dir/$r/seeds.txt" >/dev/null || exit 1
	t0=$(wire_secs)
	wire_bounded "$limit" "$dir/$r/crawl.log" env WIRE_BIN="$b" "${caenv[@]}" "$WIRE_ROOT/scripts/crawl.sh" "$dir/$r/col" 1000000
	secs=$(wire_since "$t0")
	wire_stop_web "$dir/$r" || exit 1
	if [ "$run_stopped" = 0 ] && [ "$run_rc" != 0 ]; then
		tail -5 "$dir/$r/crawl.log" >&2
		out "bench-politeness.sh: crawl.sh failed (exit $run_rc)"
		exit 1
	fi
	printf -v "secs_$r" '%s' "$secs"
	printf -v "stopped_$r" '%s' "$run_stopped"
	if [ "$run_stopped" = 1 ]; then
		out "   stopped at the time limit after $secs s ($(ls "$dir/$r/col/batches" | wc -l) batches): the time is a lower bound"
	else
		out "   frontier empty after $secs s, $(ls "$dir/$r/col/batches" | wc -l) batches"
	fi
	"$tools/crawlcheck" politeness --log "$dir/$r/requests.tsv" --web "$dir/$r/web.json" --label "$r" \
		--wait "$wait_" --connections-per-ip "$perip" --address-wait "$addrwait" --total-timeout "$timeout" \
		--slack "$slack" --max-cut-requests "$maxcut" >"$dir/$r/audit.txt" 2>"$dir/$r/audit.err"
	# The table and the summary lines; the problems stay in audit.txt.
	grep -v '^PROBLEM' "$dir/$r/audit.txt" | sed 's/^/   /' | tee -a "$report"
	out "   ($(grep -c '^PROBLEM' "$dir/$r/audit.txt") problems described in $dir/$r/audit.txt)"
}

secs_new=
secs_old=
stopped_new=0
stopped_old=0
[[ $runs == *" new "* ]] && crawl new "$bin_new"
[[ $runs == *" old "* ]] && crawl old "$bin_old"

out ""
if [ -n "$secs_new" ] && [ -n "$secs_old" ]; then
	bound=
	[ "$stopped_new$stopped_old" = 00 ] || bound=" (a crawl stopped at the time limit: not a true ratio)"
	out "== wall time to an empty frontier: new $secs_new s, old $secs_old s, new/old $(awk -v n="$secs_new" -v o="$secs_old" 'BEGIN {printf "%.2f", (o > 0 ? n / o : 0)}')$bound"
fi
out "report: $report"
