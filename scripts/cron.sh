#!/usr/bin/env bash
# cron.sh [--cycles N] [--for DURATION | --until TIME] [--grace DURATION] COLLECTION
#
# The crawl as cron runs it: one run at a time per collection, a bounded
# amount of work, every line logged with a timestamp in
# COLLECTION/logs/cron.log, and an exit code that says what happened.
#
# A run takes COLLECTION/locks/cron.lock (flock). If another cron.sh
# holds it, this one writes one line and exits at once with code 4
# (locked, as a stage whose lock is held).
# It then runs scripts/crawl.sh COLLECTION N: every batch an earlier run
# left half-way (a failure or a kill) is finished first, then up to N
# cycles (default 1) of manager -> harvester -> gatherer -> seeder,
# stopping early when the frontier is empty. Cycles overlap as
# crawl.sh's do (the harvester fetches batch N+1 while the gatherer and
# the seeder take in batch N); WIRE_OVERLAP=0 runs one stage at a time.
#
#   --cycles N        at most N new batches (0: only finish what is
#                     unfinished)
#   --for DURATION    stop DURATION after the start (90s, 45m, 4h, 1d):
#                     no stage starts after it, and crawl.sh and every
#                     stage still running then get SIGTERM (they stop
#                     cleanly; the next run resumes them), and SIGKILL
#                     after --grace
#   --until TIME      the same with a clock time (anything `date -d`
#                     reads: 06:00, "2026-11-23 06:00"); a bare time of
#                     day already past means that time tomorrow
#   --grace DURATION  how long the stages may take to stop after SIGTERM
#                     at the deadline or on a signal (default 2m; without
#                     a deadline a signal waits for them)
#
# Environment: WIRE_BIN (directory of the binaries, see lib.sh),
# WIRE_CRON_LOG_MAX (rotate cron.log past this many bytes at the start
# of a run, default 10485760), WIRE_CRON_LOG_KEEP (old logs kept:
# cron.log.1 ... cron.log.K, default 7), WIRE_CRON_TEE=1 (also copy the
# log to stderr), WIRE_OVERLAP, WIRE_OVERLAP_MIN_SITES,
# WIRE_SERIAL_BATCHES, WIRE_FOLLOW and WIRE_HARVEST_FOLLOW (crawl.sh's),
# and any WIRE_* setting. Needs bash 5.1 or later, as crawl.sh does.
#
# Exit codes: 0 done (cycles done, frontier empty or deadline reached),
# 2 usage (or not a collection), 4 another cron.sh runs on the
# collection, 130 or 143 interrupted (SIGINT, SIGTERM: to cron.sh, or to
# a stage by someone else; the next run resumes); else the failing
# stage's own code (1 failure, 2 bad configuration, 4 a stage run by hand
# holds that stage's lock, 5 the harvester found the network down, 6 a
# damaged file, 7 disk full: less free space than collection.min_free),
# with a
# line "FAILED: STAGE on batch NNNNNN exited CODE: LAST LINE" on stderr
# and in the log ("INTERRUPTED: ..." for 130 and 143, "NETWORK DOWN:
# ..." for 5, "DISK FULL: ..." for 7; with overlap, once the stages beside it have finished
# their batch), or crawl.sh's own when it fails by itself ("FAILED:
# crawl.sh exited CODE: ..."). docs/operations.md explains every line.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

readonly EXIT_LOCKED=4 # pkg/command ExitLocked

usage() {
	echo "usage: $0 [--cycles N] [--for DURATION | --until TIME] [--grace DURATION] COLLECTION" >&2
	exit 2
}

# seconds DURATION prints DURATION (90, 90s, 45m, 4h, 1d) in seconds.
seconds() {
	local v=$1 n unit
	n=${v%[smhd]}
	unit=${v#"$n"}
	case $n in '' | *[!0-9]*) return 1 ;; esac
	case $unit in
	'' | s) echo "$n" ;;
	m) echo $((n * 60)) ;;
	h) echo $((n * 3600)) ;;
	d) echo $((n * 86400)) ;;
	esac
}

cycles=1
deadline=
grace=120
col=
while [ $# -gt 0 ]; do
	case $1 in
	--cycles)
		[ $# -ge 2 ] || usage
		case $2 in '' | *[!0-9]*) echo "cron.sh: --cycles wants a whole number, got '$2'" >&2; exit 2 ;; esac
		cycles=$2
		shift 2
		;;
	--for)
		[ $# -ge 2 ] || usage
		s=$(seconds "$2") || { echo "cron.sh: --for wants a duration such as 90s, 45m, 4h or 1d, got '$2'" >&2; exit 2; }
		deadline=$(($(date +%s) + s))
		shift 2
		;;
	--until)
		[ $# -ge 2 ] || usage
		deadline=$(date -d "$2" +%s 2>/dev/null) || { echo "cron.sh: --until wants a time date(1) reads, got '$2'" >&2; exit 2; }
		# A bare time of day already past today means tomorrow (a run
		# started at 23:30 with --until 06:00).
		if [[ $2 =~ ^[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?$ ]] && [ "$deadline" -le "$(date +%s)" ]; then
			deadline=$(date -d "tomorrow $2" +%s)
		fi
		shift 2
		;;
	--grace)
		[ $# -ge 2 ] || usage
		grace=$(seconds "$2") || { echo "cron.sh: --grace wants a duration, got '$2'" >&2; exit 2; }
		shift 2
		;;
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "cron.sh: unknown option $1" >&2; usage ;;
	*)
		[ -z "$col" ] || usage
		col=$1
		shift
		;;
	esac
done
[ -n "$col" ] || usage
# Times given by the user (--until) were read in the local time zone;
# from here on everything is logged in UTC.
export TZ=UTC
[ -f "$col/FORMAT" ] || { echo "cron.sh: $col is not a collection (create it with: seeder init --collection $col)" >&2; exit 2; }
col=$(cd "$col" && pwd)
logdir=$col/logs
# The lock and marker names below are defined in pkg/collection/names.go
# (collection.CronLock, collection.MarkerFile); this script repeats them.
lockfile=$col/locks/cron.lock
log=$logdir/cron.log
mkdir -p "$logdir" "$col/locks"

# The lock: fd 9 stays open for the whole run and is inherited by the
# stages, so a stage left running by a killed cron.sh still keeps the
# next run out.
exec 9>>"$lockfile"
if ! flock -n 9; then
	holder=$(head -c 200 "$lockfile" 2>/dev/null | tr '\n' ' ')
	msg="another cron.sh holds $lockfile (${holder% }); not starting"
	printf '%(%Y-%m-%dT%H:%M:%SZ)T cron[%d]: skipped: %s\n' -1 $$ "$msg" >>"$log"
	echo "cron.sh: $msg" >&2
	exit $EXIT_LOCKED
fi
printf 'pid %d since %(%Y-%m-%dT%H:%M:%SZ)T\n' $$ -1 >"$lockfile"

# Rotation, under the lock: cron.log -> cron.log.1 -> ... -> cron.log.K.
logmax=${WIRE_CRON_LOG_MAX:-10485760}
logkeep=${WIRE_CRON_LOG_KEEP:-7}
case $logmax$logkeep in *[!0-9]*) echo "cron.sh: WIRE_CRON_LOG_MAX and WIRE_CRON_LOG_KEEP want whole numbers, got '$logmax' and '$logkeep'" >&2; exit 2 ;; esac
if [ -f "$log" ] && [ "$(stat -c %s "$log")" -gt "$logmax" ]; then
	if [ "$logkeep" -ge 1 ]; then
		rm -f "$log.$logkeep"
		for ((i = logkeep - 1; i >= 1; i--)); do
			[ -f "$log.$i" ] && mv "$log.$i" "$log.$((i + 1))"
		done
		mv "$log" "$log.1"
	else
		: >"$log"
	fi
fi
exec 3>>"$log"

tee_err=${WIRE_CRON_TEE:-0}
[ -t 2 ] && tee_err=1

# logline TEXT writes "TIME cron[PID]: TEXT" to the log.
logline() {
	local line
	printf -v line '%(%Y-%m-%dT%H:%M:%SZ)T cron[%d]: %s' -1 $$ "$*"
	echo "$line" >&3
	[ "$tee_err" = 1 ] && echo "$line" >&2
	return 0
}

# out LINE writes a line, already stamped, to the log.
out() {
	echo "$1" >&3
	[ "$tee_err" = 1 ] && echo "$1" >&2
	return 0
}

work=$(mktemp -d)
crawl_pid=
tr_pid=
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

# The state of the crawl as crawl.sh's lines tell it, written by
# translate to $work/state and read here by load: the running stages
# (run: stage -> batch, since: stage -> start in seconds), the batches
# the manager wrote (cycles), whether it found the frontier empty, and
# the first failing stage (fail_stage, fail_batch, fail_rc) with its
# last output line (why).
declare -A run=() since=()
cycles_done=0 frontier=0 fail_stage= fail_batch= fail_rc= why= why_crawl=

# load reads the state translate last wrote.
load() {
	[ -f "$work/state" ] && . "$work/state"
	return 0
}

# running prints the running stages, "harvester on batch 000003,
# gatherer on batch 000002", with " after Ns" each if $1 is "took";
# nothing if none runs.
running() {
	local s o=
	for s in $WIRE_STAGES; do
		[ -n "${run[$s]:-}" ] || continue
		o+="${o:+, }$s on batch ${run[$s]}"
		[ "${1:-}" = took ] && o+=" after $((EPOCHSECONDS - since[$s]))s"
	done
	echo "$o"
}

# save_state writes the state to $work/state (atomically: on_signal may
# read it at any time); called by translate, whose last (stage and batch
# -> the stage's last output line) and last_crawl (crawl.sh's last line)
# it reads.
save_state() {
	local s st="run=() since=()"
	for s in "${!run[@]}"; do st+=" run[$s]=${run[$s]} since[$s]=${since[$s]}"; done
	why=${last[$fail_stage $fail_batch]:-}
	printf '%s\ncycles_done=%d frontier=%d fail_stage=%q fail_batch=%q fail_rc=%q why=%q why_crawl=%q\n' \
		"$st" "$cycles_done" "$frontier" "$fail_stage" "$fail_batch" "$fail_rc" "$why" "$last_crawl" >"$work/state.new"
	mv -f "$work/state.new" "$work/state"
}

# translate copies crawl.sh's output to the log: crawl.sh's own
# timestamped lines as cron.sh's ("TIME cron[PID]: TEXT", in the words
# docs/operations.md lists), the stages' lines ("STAGE NNNNNN| TEXT",
# tagged by crawl.sh with overlap, here by the one running stage without)
# with the time they came. It keeps the state above in $work/state,
# rewritten at every start or end of a stage and at the end.
translate() {
	trap '' INT TERM # it must see crawl.sh's last lines, however the run stops
	local line ts text s b rest paren tag now last_crawl=
	local -A last=()
	local re_ts='^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z) (.*)$'
	local re_stage='^(cycle ([0-9]+): )?(manager|harvester|gatherer|seeder) on batch ([0-9]{6}): (.*)$'
	local re_fail='^crawl\.sh: (manager|harvester|gatherer|seeder) (also )?(failed|interrupted|found the network down|found the disk full) \(exit ([0-9]+)\) on batch ([0-9]{6})'
	local re_tagged='^(manager|harvester|gatherer|seeder) ([0-9]{6})\| (.*)$'
	while IFS= read -r line || [ -n "$line" ]; do
		printf -v now '%(%Y-%m-%dT%H:%M:%SZ)T' -1
		if [[ $line =~ $re_tagged ]]; then
			out "$now $line"
			last[${BASH_REMATCH[1]} ${BASH_REMATCH[2]}]=${BASH_REMATCH[3]}
			continue
		fi
		if [[ $line =~ $re_ts ]]; then
			ts=${BASH_REMATCH[1]} text=${BASH_REMATCH[2]}
		elif [[ ${line:0:1} = ' ' && ( ${line:1} =~ $re_stage || ${line:1} = 'crawl.sh: '* ) ]]; then
			# A line of crawl.sh whose date(1) the deadline's SIGTERM
			# to its process group killed.
			ts=$now text=${line:1}
		else
			# A stage's line without a tag (WIRE_OVERLAP=0: one stage at
			# a time), or a line crawl.sh printed without a time.
			if [ ${#run[@]} = 1 ]; then
				for s in "${!run[@]}"; do tag="$s ${run[$s]}"; done
				out "$now $tag| $line"
				last[$tag]=$line
			else
				# crawl.sh's usage and setup errors
				out "$now cron[$$]: crawl.sh: ${line#crawl.sh: }"
				last_crawl=$line
			fi
			continue
		fi
		if [[ $text =~ $re_stage ]]; then
			s=${BASH_REMATCH[3]} b=${BASH_REMATCH[4]} rest=${BASH_REMATCH[5]}
			case $rest in
			start*)
				run[$s]=$b since[$s]=$EPOCHSECONDS
				rest=${rest#start} # " (fg; beside: …)" with overlap, "" without
				if [ -n "${BASH_REMATCH[2]}" ]; then
					paren=${rest#' ('}
					paren=${paren%')'}
					rest=" (cycle ${BASH_REMATCH[2]}${paren:+; $paren})"
				fi
				text="$s on batch $b: start$rest"
				;;
			done*)
				unset "run[$s]" "since[$s]" "last[$s $b]"
				[ "$s" = manager ] && cycles_done=${BASH_REMATCH[2]:-$((cycles_done + 1))}
				text="$s on batch $b: $rest"
				;;
			'nothing to schedule: frontier is empty'*)
				unset "run[$s]" "since[$s]"
				frontier=1
				text="$s: nothing to do: ${rest#nothing to schedule: }"
				;;
			'nothing to schedule while '*)
				unset "run[$s]" "since[$s]"
				text="$s: nothing to do ${rest#nothing to schedule }"
				;;
			'nothing to do (exit 3)'*)
				unset "run[$s]" "since[$s]"
				text="$s: nothing to do on batch $b (it looked ready)${rest#nothing to do (exit 3)}"
				;;
			esac
			out "$ts cron[$$]: $text"
			save_state
			continue
		fi
		if [[ $text =~ $re_fail ]]; then
			s=${BASH_REMATCH[1]}
			unset "run[$s]" "since[$s]"
			if [ -z "$fail_stage" ]; then
				fail_stage=$s fail_rc=${BASH_REMATCH[4]} fail_batch=${BASH_REMATCH[5]}
			fi
			out "$ts cron[$$]: $text"
			save_state
			continue
		fi
		case $text in
		'crawl.sh: done' | 'crawl.sh: stopped after '* | 'crawl.sh: interrupted by '*)
			;; # cron.sh's end line says it
		'crawl.sh: received SIG'*)
			# cron.sh said it already when it was signalled itself; at
			# the deadline, timeout(1) sent it.
			if [ -n "$deadline" ] && [ "$EPOCHSECONDS" -ge "$deadline" ] && [ ! -e "$work/signalled" ]; then
				out "$ts cron[$$]: deadline reached: stopping ${text#*: stopping }"
			elif [ ! -e "$work/signalled" ]; then
				out "$ts cron[$$]: $text"
			fi
			;;
		*) out "$ts cron[$$]: $text" ;;
		esac
		last_crawl=$text
	done
	save_state
}

on_signal() {
	local sig=$1 what
	trap '' INT TERM
	load
	what=$(running)
	if [ -n "$crawl_pid" ]; then
		: >"$work/signalled"
		logline "received SIG$sig: stopping ${what:-crawl.sh}"
		kill -TERM "$crawl_pid" 2>/dev/null
		wait "$crawl_pid" 2>/dev/null
		[ -n "$tr_pid" ] && wait "$tr_pid" 2>/dev/null
		load
	elif [ -n "$tr_pid" ]; then
		# Signalled before crawl.sh started: nobody will open the fifo.
		kill -KILL "$tr_pid" 2>/dev/null
	fi
	logline "end: interrupted by SIG$sig after $cycles_done cycle(s); the next run continues from ${what:-here}"
	[ "$sig" = INT ] && exit 130
	exit 143
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

# next_stage prints the stage the crawl would start with: the first of
# harvester, gatherer and seeder with a batch ready for it by the
# markers (docs/format/collection.md), else the manager.
next_stage() {
	local d
	for d in "$col"/batches/[0-9][0-9][0-9][0-9][0-9][0-9]; do
		[ -f "$d/batch.tsv" ] && [ ! -e "$d/harvested.done" ] && { echo harvester; return; }
	done
	for d in "$col"/batches/[0-9][0-9][0-9][0-9][0-9][0-9]; do
		[ -e "$d/harvested.done" ] && [ ! -e "$d/gathered.done" ] && { echo gatherer; return; }
	done
	for d in "$col"/batches/[0-9][0-9][0-9][0-9][0-9][0-9]; do
		[ -e "$d/gathered.done" ] && [ ! -e "$d/seeded.done" ] && { echo seeder; return; }
	done
	echo manager
}

finish() {
	logline "end: $*"
	exit 0
}

dl=-
[ -n "$deadline" ] && dl=$(date -d "@$deadline" +%Y-%m-%dT%H:%M:%SZ)
logline "start: collection=$col cycles=$cycles deadline=$dl"
if ! wire_need_bins >"$work/build" 2>&1; then
	logline "FAILED: build of the binaries: $(tail -1 "$work/build")"
	logline "end: failed (exit 1) before any stage"
	echo "cron.sh: FAILED: build of the binaries (log: $log)" >&2
	exit 1
fi
if [ -n "$deadline" ] && [ "$EPOCHSECONDS" -ge "$deadline" ]; then
	finish "deadline reached after 0 cycle(s), before the $(next_stage) stage; the next run continues from there"
fi

# The crawl: crawl.sh, under timeout(1) when there is a deadline.
# timeout runs crawl.sh in a process group of its own and sends SIGTERM
# to the whole group (crawl.sh and its stages) at the deadline, SIGKILL
# --grace later; crawl.sh's tags ignore SIGTERM and pass on the stages'
# last lines. The binaries are built already (WIRE_BUILD=0).
mkfifo "$work/fifo"
translate <"$work/fifo" 9>&- &
tr_pid=$!
crawl=("$BASH" "$WIRE_ROOT/scripts/crawl.sh" "$col" "$cycles")
if [ -n "$deadline" ]; then
	left=$((deadline - EPOCHSECONDS))
	[ "$left" -ge 1 ] || left=1
	WIRE_BIN=$WIRE_BIN WIRE_BUILD=0 timeout --signal=TERM --kill-after="$grace" "$left" "${crawl[@]}" >"$work/fifo" 2>&1 3>&- &
else
	WIRE_BIN=$WIRE_BIN WIRE_BUILD=0 "${crawl[@]}" >"$work/fifo" 2>&1 3>&- &
fi
crawl_pid=$!
wait "$crawl_pid"
rc=$?
wait "$tr_pid"
crawl_pid= tr_pid=
load

# A failing stage first: crawl.sh exits with its code, or the deadline
# came while the stages beside it finished their batch.
if [ -n "$fail_stage" ]; then
	what="$fail_stage on batch $fail_batch"
	rc=$fail_rc
	case $fail_stage:$rc in
	*:130 | *:143) tag=INTERRUPTED ended=interrupted ;;
	harvester:5) tag="NETWORK DOWN" ended="network down" ;;
	*:7) tag="DISK FULL" ended="disk full" ;;
	*) tag=FAILED ended=failed ;;
	esac
	logline "$tag: $what exited $fail_rc: ${why:-no output}"
	logline "end: $ended (exit $rc) after $cycles_done cycle(s); the next run continues from $what"
	echo "cron.sh: $tag: $what exited $fail_rc: ${why:-no output} (log: $log)" >&2
	exit "$rc"
fi
case $rc in
0)
	[ "$frontier" = 1 ] && finish "ok: frontier empty after $cycles_done cycle(s)"
	finish "ok: $cycles_done cycle(s)"
	;;
124 | 137)
	if [ -n "$deadline" ]; then
		what=$(running took)
		[ -n "$what" ] || finish "deadline reached after $cycles_done cycle(s), before the $(next_stage) stage; the next run continues from there"
		[ ${#run[@]} = 1 ] && finish "deadline reached after $cycles_done cycle(s): stopped $what; the next run resumes it"
		finish "deadline reached after $cycles_done cycle(s): stopped $what; the next run resumes them"
	fi
	;;
esac
# crawl.sh itself failed, or was stopped by someone else's signal.
why=$why_crawl
if [ "$rc" = 130 ] || [ "$rc" = 143 ]; then
	logline "INTERRUPTED: crawl.sh exited $rc: ${why:-no output}"
	logline "end: interrupted (exit $rc) after $cycles_done cycle(s); the next run continues from here"
	echo "cron.sh: INTERRUPTED: crawl.sh exited $rc: ${why:-no output} (log: $log)" >&2
	exit "$rc"
fi
logline "FAILED: crawl.sh exited $rc: ${why:-no output}"
logline "end: failed (exit $rc) after $cycles_done cycle(s); the next run continues from here"
echo "cron.sh: FAILED: crawl.sh exited $rc: ${why:-no output} (log: $log)" >&2
exit "$rc"
