#!/usr/bin/env bash
# crawl.sh [--serial] COLLECTION [CYCLES]
#
# Crawls COLLECTION: the manager writes a batch, the harvester fetches
# it, the gatherer parses it, the seeder takes it into graph.db. CYCLES
# (default 1) is the number of batches the manager writes; 0 only
# finishes what an earlier run left unfinished.
#
# Cycles overlap: while the gatherer and the seeder take in batch N, the
# manager writes batch N+1 and the harvester fetches it. The rules
# (docs/architecture.md, "Overlapping cycles"):
#   - one run of each stage at a time, each on the oldest batch ready for
#     it (named with --batch, so the log says which);
#   - the manager never runs beside the seeder: both open graph.db;
#   - the manager writes a new batch only when at most one batch is
#     unfinished (not seeded) and none waits for the harvester: it has
#     taken in every batch but the one being harvested or gathered, and
#     the harvester never has two batches queued;
#   - when the manager and the seeder could both start, the manager goes
#     first if the harvester is idle, the seeder first otherwise;
#   - beside a batch not yet seeded, the manager writes a batch only if it
#     has at least WIRE_OVERLAP_MIN_SITES % (default 50; 0 with
#     WIRE_HARVEST_FOLLOW=1) of that batch's
#     sites (manager run --min-sites): a thinner one would be what the
#     time budget held back of a few hosts, and would keep the harvester
#     on them while the links of the batch in flight wait; the manager
#     then runs again after the next seeder, with them. 0 turns this off;
#   - the first WIRE_SERIAL_BATCHES (default 4; 0 with WIRE_HARVEST_FOLLOW=1)
#     batches of a collection
#     do not overlap: each is written only once every batch before it is
#     seeded, so it holds the pages their links found. A crawl's first
#     batches find most of its new pages (a recrawl: the sites and pages
#     new since the old crawl, which no history values); written blind,
#     those pages wait a batch longer (docs/architecture.md, "Overlapping
#     cycles"). 0 lets every batch overlap.
#   - the gatherer follows the harvest in flight (gatherer run --follow,
#     WIRE_FOLLOW=1, the default): when no harvested batch waits for it,
#     it gathers the batch the harvester is fetching while it is written,
#     so that the batch is gathered a moment after it is harvested and the
#     seeder and the manager get its links at once. A harvester that stops
#     (fails, is killed, finds nothing to do) before its batch is
#     harvested has the gatherer following it stopped too (SIGTERM; a
#     rerun follows or gathers the batch again); 0 gathers each batch
#     after its harvest, as before.
#   - the harvester follows the batches (harvester run --follow,
#     WIRE_HARVEST_FOLLOW=1, the default): it takes each batch the
#     manager writes while it runs, the moment its batch.tsv exists, and
#     harvests it beside the batches it holds, with one politeness state
#     (docs/harvester.md, "Following the batches"); each batch is still
#     published, gathered and seeded on its own. The gatherer follows the
#     oldest batch the harvester holds. With it the thin-batch minimum and
#     the serial start default to 0 (a thin or blind batch beside costs
#     the harvester nothing: the next batch is written once the batch
#     before it is seeded, and taken at once). 0 runs one harvester per
#     batch, each starting when the one before ended, as before.
# So the manager writes batch N+1 while the harvester fetches batch N,
# and the harvester takes batch N+1 at once (with WIRE_HARVEST_FOLLOW=0,
# as soon as batch N is done).
# Batches left half-way by an earlier run (a failure or a kill) are
# taken up first by the same rules: the manager writes nothing new until
# at most one of them is left. A manager that finds nothing to schedule
# while batches are unfinished does not end the crawl: it runs again
# after the seeder has taken in the next batch; the crawl ends when it
# finds nothing with every batch seeded, or after CYCLES batches, once
# they are all seeded.
#
# WIRE_OVERLAP=0 (or --serial) runs one stage at a time: every batch
# left half-way first, then manager -> harvester -> gatherer -> seeder,
# CYCLES times.
#
# A failing stage (any exit code but 0 and 3) stops the crawl: no stage
# is started after it, the stages running beside it finish their batch,
# and crawl.sh exits with the failing stage's code, naming the stage and
# the batch; a stage stopped by a signal (130, 143) is said to be
# "interrupted", a harvester that found the network down (5) so, both
# to be run again. SIGINT or SIGTERM to crawl.sh is passed on (SIGTERM) to the
# running stages, which stop cleanly; crawl.sh waits for them and exits
# 130 or 143. A rerun continues where the crawl stopped.
#
# Output: crawl.sh's own lines on stderr, timestamped; with overlap, each
# line a stage prints is prefixed "STAGE NNNNNN| " (stdout stays stdout).
#
# Environment: WIRE_BIN (directory of the binaries; default REPO/bin, built
# when missing, or, when WIRE_BIN is not given, when a Go source of the tree is newer and go is
# installed), WIRE_BUILD=1 (rebuild first; 0: never), WIRE_OVERLAP (1, the
# default; 0 serial), WIRE_OVERLAP_MIN_SITES (a percentage; 0 off, the
# default with WIRE_HARVEST_FOLLOW=1; else 50), WIRE_SERIAL_BATCHES (the
# first batches that do not overlap: 0 none, the default with
# WIRE_HARVEST_FOLLOW=1; else 4),
# WIRE_FOLLOW (1, the default: the gatherer follows the harvest in
# flight; 0 off; only with overlap), WIRE_HARVEST_FOLLOW (1, the
# default: the harvester takes each batch as it is written; 0 off; only
# with overlap),
# and any WIRE_* setting.
# Needs bash 5.1 or later (wait -n -p). Exit codes: 0 done (or frontier
# empty), 2 usage, 130/143 interrupted, else the failing stage's code.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [--serial] COLLECTION [CYCLES]" >&2
	exit 2
}
overlap=${WIRE_OVERLAP:-1}
if [ "${1:-}" = --serial ]; then
	overlap=0
	shift
fi
case $overlap in 0 | 1) ;; *) echo "crawl.sh: WIRE_OVERLAP must be 0 or 1, got '$overlap'" >&2; exit 2 ;; esac
harvest_follow=${WIRE_HARVEST_FOLLOW:-1}
case $harvest_follow in 0 | 1) ;; *) echo "crawl.sh: WIRE_HARVEST_FOLLOW must be 0 or 1, got '$harvest_follow'" >&2; exit 2 ;; esac
[ "$overlap" = 1 ] || harvest_follow=0
# A harvester that takes each batch as it is written (--follow) never
# idles behind a thin or blind batch, so the rules that kept such
# batches from being written (the thin-batch minimum, the serial start)
# are off by default with it.
default_min_sites=50 default_serial=4
[ "$harvest_follow" = 1 ] && default_min_sites=0 default_serial=0
min_sites_pct=${WIRE_OVERLAP_MIN_SITES:-$default_min_sites}
case $min_sites_pct in '' | *[!0-9]*) echo "crawl.sh: WIRE_OVERLAP_MIN_SITES must be a whole number (a percentage), got '$min_sites_pct'" >&2; exit 2 ;; esac
serial_batches=${WIRE_SERIAL_BATCHES:-$default_serial}
follow=${WIRE_FOLLOW:-1}
case $follow in 0 | 1) ;; *) echo "crawl.sh: WIRE_FOLLOW must be 0 or 1, got '$follow'" >&2; exit 2 ;; esac
case $serial_batches in '' | *[!0-9]*) echo "crawl.sh: WIRE_SERIAL_BATCHES must be a whole number (of batches), got '$serial_batches'" >&2; exit 2 ;; esac
[ $# -ge 1 ] && [ $# -le 2 ] || usage
col=$1
cycles=${2:-1}
case $cycles in '' | *[!0-9]*) echo "crawl.sh: CYCLES must be a whole number, got '$cycles'" >&2; exit 2 ;; esac
[ -f "$col/FORMAT" ] || { echo "crawl.sh: $col is not a collection (create it with: seeder init --collection $col)" >&2; exit 2; }
wire_need_bins || { echo "crawl.sh: build failed" >&2; exit 1; }
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
	# wait -n -p (bash 5.1) tells which stage ended.
	echo "crawl.sh: bash 5.1 or later is needed, this is $BASH_VERSION" >&2
	exit 2
fi

declare -A pid=()   # running stage -> its pid
declare -A batch=() # running stage -> its batch
declare -A since=() # running stage -> its start (seconds)
declare -A name_of=() # pid -> running stage
declare -A dry=()   # stage -> 1 after it said "nothing to do" for a batch the markers call ready
cycle=0             # batches written by the manager in this run
mgr_done=0          # 1: no more manager runs (CYCLES reached or frontier empty)
mgr_wait_seed=0     # 1: the manager found nothing while batches were unfinished: rerun after a seeder
fail_rc=0 fail_what= fail_how=
following=0         # 1: the running gatherer follows the harvest in flight (--follow)
follow_stopped=0    # 1: crawl.sh stopped that gatherer because its harvester stopped

# scan reads the batch markers (docs/format/collection.md) and sets:
# ready_harvester, ready_gatherer, ready_seeder (the oldest batch ready for
# each, or empty), unfinished (batches not seeded), unharvested (batches
# not harvested) and next_id (the manager's next batch). The file names
# (batch.tsv, the *.done markers) are defined in pkg/collection
# (collection.go, names.go); this script repeats them as literals.
scan() {
	local d b last=0
	ready_harvester= ready_gatherer= ready_seeder= unfinished=0 unharvested=0 last_unfinished=
	for d in "$col"/batches/[0-9][0-9][0-9][0-9][0-9][0-9]; do
		[ -d "$d" ] || continue
		b=${d##*/}
		last=$((10#$b))
		[ -f "$d/batch.tsv" ] || continue # the manager is writing it (or was killed doing so)
		[ -e "$d/seeded.done" ] && continue
		unfinished=$((unfinished + 1))
		last_unfinished=$b
		if [ ! -e "$d/harvested.done" ]; then
			unharvested=$((unharvested + 1))
			[ -z "$ready_harvester" ] && ready_harvester=$b
		elif [ ! -e "$d/gathered.done" ]; then
			[ -z "$ready_gatherer" ] && ready_gatherer=$b
		else
			[ -z "$ready_seeder" ] && ready_seeder=$b
		fi
	done
	printf -v next_id '%06d' $((last + 1))
}

# running NAME succeeds if stage NAME runs.
running() { [ -n "${pid[$1]:-}" ]; }

# what NAME describes a running stage: "harvester on batch 000003".
what() { echo "$1 on batch ${batch[$1]}"; }

# beside NAME lists the other running stages.
beside() {
	local s out=
	for s in $WIRE_STAGES; do
		[ "$s" != "$1" ] && running "$s" && out+="${out:+, }$(what "$s")"
	done
	echo "${out:-nothing}"
}

# tag prefixes every line of its input with "$1| ". It ignores SIGINT and
# SIGTERM and ends when the stage closes its output: a Ctrl-C sent to the
# whole process group must not kill it before the stage has said how it
# stopped (nor the stage, writing to it, with SIGPIPE).
tag() {
	trap '' INT TERM
	exec sed -u "s/^/$1| /"
}

# launch NAME BATCH starts stage NAME on BATCH in the background.
launch() {
	local name=$1 b=$2 p role=
	local args=(run --collection "$col")
	[ "$name" = manager ] || args+=(--batch "$((10#$b))")
	[ "$name" = gatherer ] && [ "$following" = 1 ] && args+=(--follow)
	[ "$name" = harvester ] && [ "$harvest_follow" = 1 ] && args+=(--follow)
	if [ "$name" = manager ] && [ "$overlap" = 1 ] && [ -n "$last_unfinished" ] && [ "$min_sites_pct" -gt 0 ]; then
		# Beside a batch in flight, a new batch must be worth the
		# harvester's time: at least min_sites_pct % of that batch's
		# sites, else the manager waits for its links (exit 3, and it
		# runs again after the next seeder, without the minimum).
		local sites
		sites=$(sed -n '1,10s/^# counts:.* sites=\([0-9][0-9]*\).*/\1/p' "$col/batches/$last_unfinished/batch.tsv" 2>/dev/null)
		if [ -n "$sites" ] && [ $(((sites * min_sites_pct + 99) / 100)) -gt 1 ]; then
			args+=(--min-sites "$(((sites * min_sites_pct + 99) / 100))")
		fi
	fi
	batch[$name]=$b
	if [ "$overlap" = 1 ]; then
		# fg: the harvester, or any stage while the harvester is idle
		# (the crawl waits for it); bg: a stage beside the harvester.
		role=fg
		[ "$name" != harvester ] && running harvester && role=bg
		wire_log "${name/#manager/cycle $((cycle + 1)): manager} on batch $b: start ($role; beside: $(beside "$name"))"
		"$WIRE_BIN/$name" "${args[@]}" > >(tag "$name $b") 2> >(tag "$name $b" >&2) &
	else
		wire_log "${name/#manager/cycle $((cycle + 1)): manager} on batch $b: start"
		"$WIRE_BIN/$name" "${args[@]}" &
	fi
	p=$!
	pid[$name]=$p
	name_of[$p]=$name
	since[$name]=$SECONDS
}

# schedule starts every stage the rules allow (see the header).
schedule() {
	[ "$fail_rc" = 0 ] || return 0
	scan
	if [ "$overlap" = 0 ]; then
		[ ${#pid[@]} = 0 ] || return 0
		local s
		for s in harvester gatherer seeder; do
			local r=ready_$s
			if [ -n "${!r}" ] && [ -z "${dry[$s]:-}" ]; then
				launch "$s" "${!r}"
				return 0
			fi
		done
		if [ "$unfinished" = 0 ] && may_manage; then
			launch manager "$next_id"
		fi
		return 0
	fi
	# A following harvester is named by the oldest batch it holds.
	if running harvester && [ "$harvest_follow" = 1 ] && [ -n "$ready_harvester" ]; then
		batch[harvester]=$ready_harvester
	fi
	# Without --follow, a batch the manager is writing is the
	# harvester's only once it is recorded, i.e. once the manager has
	# ended. A following harvester takes a batch once its batch.tsv
	# exists (the manager writes the file, then records it; a manager
	# killed in between has its next run complete the record from the
	# file).
	if ! running harvester && [ -n "$ready_harvester" ] && [ -z "${dry[harvester]:-}" ] &&
		! { [ "$harvest_follow" = 0 ] && running manager && [ "$ready_harvester" = "${batch[manager]}" ]; }; then
		launch harvester "$ready_harvester"
	fi
	if ! running gatherer && [ -z "${dry[gatherer]:-}" ]; then
		# The batch in flight to follow: the harvester's own, or with
		# --follow the oldest it holds (it takes every batch written
		# while it runs).
		local fb=
		if running harvester; then
			fb=${batch[harvester]}
			[ "$harvest_follow" = 1 ] && [ -n "$ready_harvester" ] && fb=$ready_harvester
		fi
		if [ -n "$ready_gatherer" ]; then
			following=0
			launch gatherer "$ready_gatherer"
		elif [ "$follow" = 1 ] && [ -n "$fb" ] && [ ! -e "$col/batches/$fb/gathered.done" ]; then
			following=1 follow_stopped=0
			launch gatherer "$fb"
		fi
	fi
	local manage=0 seed=0
	# The harvester's own batch counts as unfinished but not as waiting;
	# a following harvester takes every batch written while it runs.
	local waiting=$unharvested
	running harvester && waiting=$((waiting - 1))
	running harvester && [ "$harvest_follow" = 1 ] && waiting=0
	# One batch may be unfinished beside the next, from batch
	# serial_batches + 1 on; the first ones wait for every link.
	local beside_max=1
	[ $((10#$next_id)) -le "$serial_batches" ] && beside_max=0
	if [ "$unfinished" -le "$beside_max" ] && [ "$waiting" = 0 ] && may_manage; then manage=1; fi
	if ! running seeder && [ -n "$ready_seeder" ] && [ -z "${dry[seeder]:-}" ]; then seed=1; fi
	running manager && seed=0
	running seeder && manage=0
	if [ "$manage" = 1 ] && { [ "$seed" = 0 ] || ! running harvester; }; then
		launch manager "$next_id"
	elif [ "$seed" = 1 ]; then
		launch seeder "$ready_seeder"
	fi
}

# may_manage succeeds if the manager may write another batch now.
may_manage() {
	! running manager && [ "$mgr_done" = 0 ] && [ "$mgr_wait_seed" = 0 ] && [ "$cycle" -lt "$cycles" ]
}

# ended NAME RC records the end of stage NAME with exit code RC.
ended() {
	local name=$1 rc=$2 b=${batch[$1]} took=$((SECONDS - since[$1]))
	local desc
	desc=$(what "$name")
	local fol=
	[ "$name" = gatherer ] && [ "$following" = 1 ] && fol=", following its harvest"
	unset "pid[$name]" "batch[$name]" "since[$name]"
	if [ "$name" = harvester ] && [ "$rc" != 0 ] && [ "$following" = 1 ] && running gatherer &&
		[ ! -e "$col/batches/${batch[gatherer]}/harvested.done" ]; then
		# The harvest the gatherer follows will not be published by
		# this run: stop the gatherer too (a rerun takes the batch up).
		wire_log "crawl.sh: stopping the gatherer following batch ${batch[gatherer]}: its harvester ended (exit $rc)"
		follow_stopped=1
		kill -TERM "${pid[gatherer]}" 2>/dev/null
	fi
	if [ "$name" = gatherer ] && [ "$follow_stopped" = 1 ] && { [ "$rc" = 143 ] || [ "$rc" = 130 ]; }; then
		wire_log "$desc: stopped with its harvester"
		following=0 follow_stopped=0
		return
	fi
	[ "$name" = gatherer ] && following=0
	case $rc in
	0)
		if [ "$name" = manager ]; then
			cycle=$((cycle + 1))
			wire_log "cycle $cycle: $desc: done in ${took}s"
			[ "$cycle" -ge "$cycles" ] && mgr_done=1
		else
			wire_log "$desc: done in ${took}s$fol"
			[ "$name" = seeder ] && mgr_wait_seed=0
		fi
		return
		;;
	3)
		if [ "$name" = manager ]; then
			scan
			if [ "$unfinished" -gt 0 ]; then
				wire_log "cycle $((cycle + 1)): $desc: nothing to schedule while $unfinished batch(es) are not seeded; it runs again after the next seeder"
				mgr_wait_seed=1
			else
				wire_log "cycle $((cycle + 1)): $desc: nothing to schedule: frontier is empty after $cycle cycle(s)"
				mgr_done=1
			fi
		else
			# The markers said the batch was ready and the stage
			# disagrees: leave that stage alone for the rest of the run.
			wire_log "$desc: nothing to do (exit 3); not running the $name again in this run"
			dry[$name]=1
		fi
		return
		;;
	esac
	local how
	how=$(outcome "$name" "$rc")
	if [ "$fail_rc" = 0 ]; then
		fail_rc=$rc
		fail_what="$desc" fail_how=$how
		wire_log "crawl.sh: $name $how (exit $rc) on batch $b in cycle $cycle on $col; starting no other stage$([ ${#pid[@]} -gt 0 ] && echo "; waiting for $(beside "$name")")"
	else
		wire_log "crawl.sh: $name also $how (exit $rc) on batch $b"
	fi
}

# outcome NAME RC names how stage NAME that exited RC (not 0 or 3)
# stopped: "interrupted" (130, 143: a signal; a rerun resumes it), "found
# the network down" (the harvester's 5), "found the disk full" (any
# stage's 7: collection.min_free), else "failed". cron.sh reads
# these words.
outcome() {
	case $1:$2 in
	*:130 | *:143) echo interrupted ;;
	harvester:5) echo "found the network down" ;;
	*:7) echo "found the disk full" ;;
	*) echo failed ;;
	esac
}

# stop_all SIG RC: passes SIGTERM on to the running stages, waits for
# them and exits RC.
stop_all() {
	local sig=$1 rc=$2 s
	trap '' INT TERM
	if [ ${#pid[@]} -gt 0 ]; then
		wire_log "crawl.sh: received SIG$sig: stopping $(beside -)"
		for s in "${!pid[@]}"; do kill -TERM "${pid[$s]}" 2>/dev/null; done
		for s in "${!pid[@]}"; do wait "${pid[$s]}" 2>/dev/null; done
	fi
	wire_log "crawl.sh: interrupted by SIG$sig after $cycle cycle(s); a rerun continues from here"
	exit "$rc"
}
trap 'stop_all INT 130' INT
trap 'stop_all TERM 143' TERM

while :; do
	schedule
	[ ${#pid[@]} -gt 0 ] || break
	done_pid=
	wait -n -p done_pid "${pid[@]}" 2>/dev/null
	rc=$?
	if [ -z "${done_pid:-}" ]; then
		# A signal interrupted the wait, or a stage ended while
		# crawl.sh was busy and bash filed its status where wait -n
		# does not look ("no such job"): wait for it by its pid.
		for s in "${!pid[@]}"; do
			if ! kill -0 "${pid[$s]}" 2>/dev/null; then
				done_pid=${pid[$s]}
				wait "$done_pid"
				rc=$?
				break
			fi
		done
		[ -n "${done_pid:-}" ] || continue
	fi
	ended "${name_of[$done_pid]}" "$rc"
	unset "name_of[$done_pid]"
done
if [ "$fail_rc" != 0 ]; then
	wire_log "crawl.sh: stopped after $cycle cycle(s): $fail_what $fail_how (exit $fail_rc); a rerun continues from there"
	exit "$fail_rc"
fi
scan
if [ "$unfinished" -gt 0 ]; then
	wire_log "crawl.sh: done; $unfinished batch(es) left unfinished (see manager status)"
else
	wire_log "crawl.sh: done"
fi
exit 0
