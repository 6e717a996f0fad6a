#!/usr/bin/env bash
# cron.sh [--cycles N] [--for DURATION | --until TIME] [--grace DURATION] COLLECTION
#
# The crawl as cron runs it: one run at a time per collection, a bounded
# amount of work, every line logged with a timestamp in
# COLLECTION/logs/cron.log, and an exit code that says what happened.
#
# A run takes COLLECTION/locks/cron.lock (flock). If another cron.sh
# holds it, this one writes one line and exits at once with code 75.
# It then finishes every batch an earlier run left half-way (a failure
# or a kill: harvester, gatherer, seeder, oldest batch first), and runs
# up to N cycles (default 1) of manager -> harvester -> gatherer ->
# seeder, stopping early when the frontier is empty.
#
#   --cycles N        at most N new batches (0: only finish what is
#                     unfinished)
#   --for DURATION    stop starting stages DURATION after the start
#                     (90s, 45m, 4h, 1d); a stage still running then gets
#                     SIGTERM (it stops cleanly; the next run resumes it),
#                     and SIGKILL after --grace
#   --until TIME      the same with a clock time (anything `date -d`
#                     reads: 06:00, "2026-11-23 06:00"); a bare time of
#                     day already past means that time tomorrow
#   --grace DURATION  how long a stage may take to stop after SIGTERM at
#                     the deadline (default 2m)
#
# Environment: WIRE_BIN (directory of the binaries, see lib.sh),
# WIRE_CRON_LOG_MAX (rotate cron.log past this many bytes at the start
# of a run, default 10485760), WIRE_CRON_LOG_KEEP (old logs kept:
# cron.log.1 ... cron.log.K, default 7), WIRE_CRON_TEE=1 (also copy the
# log to stderr), and any WIRE_* setting.
#
# Exit codes: 0 done (cycles done, frontier empty or deadline reached),
# 2 usage, 75 another cron.sh runs on the collection, 143 stopped by
# SIGTERM or SIGINT; else the failing stage's own code (1 failure, 2 bad
# configuration, 4 a stage run by hand holds that stage's lock), with a
# line "FAILED: STAGE on batch NNNNNN exited CODE: LAST LINE" on stderr
# and in the log. docs/operations.md explains every line.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

readonly EXIT_LOCKED=75

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

# stamp TAG copies its input to the log, each line as "TIME TAG| LINE",
# and keeps the last line in $work/last.
stamp() {
	local tag=$1 line last=
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%(%Y-%m-%dT%H:%M:%SZ)T %s| %s\n' -1 "$tag" "$line" >&3
		[ "$tee_err" = 1 ] && printf '%(%Y-%m-%dT%H:%M:%SZ)T %s| %s\n' -1 "$tag" "$line" >&2
		last=$line
	done
	printf '%s\n' "$last" >"$work/last"
}

work=$(mktemp -d)
stage_pid=
stamp_pid=
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
on_signal() {
	local sig=$1
	if [ -n "$stage_pid" ]; then
		logline "received SIG$sig: stopping ${current:-the current stage}"
		kill -TERM "$stage_pid" 2>/dev/null
		wait "$stage_pid" 2>/dev/null
		[ -n "$stamp_pid" ] && wait "$stamp_pid" 2>/dev/null
	fi
	logline "end: interrupted by SIG$sig after $cycle cycle(s); the next run continues from ${current:-here}"
	exit 143
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT

# ready NAME prints the batch a stage would take: the oldest batch whose
# previous marker exists and whose own does not (docs/format/collection.md).
ready() {
	local prev own d
	case $1 in
	harvester) prev=batch.tsv own=harvested.done ;;
	gatherer) prev=harvested.done own=gathered.done ;;
	seeder) prev=gathered.done own=seeded.done ;;
	esac
	for d in "$col"/batches/[0-9][0-9][0-9][0-9][0-9][0-9]; do
		[ -f "$d/batch.tsv" ] && [ -e "$d/$prev" ] && [ ! -e "$d/$own" ] && { basename "$d"; return; }
	done
	echo "-"
}

# next_id prints the id the manager's next batch will get.
next_id() {
	local d last=0
	for d in "$col"/batches/[0-9][0-9][0-9][0-9][0-9][0-9]; do
		[ -d "$d" ] && last=$((10#$(basename "$d")))
	done
	printf '%06d' $((last + 1))
}

past_deadline() { [ -n "$deadline" ] && [ "$(date +%s)" -ge "$deadline" ]; }

finish() {
	logline "end: $*"
	exit 0
}

# stage NAME runs one stage on the collection; returns 0 if it did work,
# 3 if it had nothing to do; on anything else ends the run.
stage() {
	local name=$1 batch rc start left
	if past_deadline; then
		finish "deadline reached after $cycle cycle(s), before the $name stage; the next run continues from there"
	fi
	if [ "$name" = manager ]; then batch=$(next_id); else batch=$(ready "$name"); fi
	current="$name on batch $batch"
	[ "$batch" = - ] && current="$name (no batch looks ready)"
	logline "$current: start"
	start=$(date +%s)
	rm -f "$work/fifo" "$work/last"
	mkfifo "$work/fifo"
	stamp "$name ${batch/#-/------}" <"$work/fifo" &
	stamp_pid=$!
	if [ -n "$deadline" ]; then
		left=$((deadline - start))
		[ "$left" -ge 1 ] || left=1
		timeout --signal=TERM --kill-after="$grace" "$left" "$WIRE_BIN/$name" run --collection "$col" >"$work/fifo" 2>&1 &
	else
		"$WIRE_BIN/$name" run --collection "$col" >"$work/fifo" 2>&1 &
	fi
	stage_pid=$!
	wait "$stage_pid"
	rc=$?
	wait "$stamp_pid"
	stage_pid= stamp_pid=
	if [ "$name" = manager ] && [ "$rc" = 0 ]; then
		batch=$(next_id)
		batch=$(printf '%06d' $((10#$batch - 1)))
		current="$name on batch $batch"
	fi
	case $rc in
	0)
		logline "$current: done in $(($(date +%s) - start))s"
		return 0
		;;
	3)
		logline "$name: nothing to do"
		return 3
		;;
	124 | 137)
		if [ -n "$deadline" ]; then
			finish "deadline reached after $cycle cycle(s): stopped $current after $(($(date +%s) - start))s; the next run resumes it"
		fi
		;;
	esac
	local why
	why=$(cat "$work/last" 2>/dev/null)
	logline "FAILED: $current exited $rc: ${why:-no output}"
	logline "end: failed (exit $rc) after $cycle cycle(s); the next run continues from $current"
	echo "cron.sh: FAILED: $current exited $rc: ${why:-no output} (log: $log)" >&2
	exit "$rc"
}

# drain finishes every batch already in the pipeline.
drain() {
	local s
	for s in harvester gatherer seeder; do
		while stage "$s"; do :; done
	done
}

cycle=0
current=
dl=-
[ -n "$deadline" ] && dl=$(date -d "@$deadline" +%Y-%m-%dT%H:%M:%SZ)
logline "start: collection=$col cycles=$cycles deadline=$dl"
if ! wire_need_bins >"$work/build" 2>&1; then
	logline "FAILED: build of the binaries: $(tail -1 "$work/build")"
	logline "end: failed (exit 1) before any stage"
	echo "cron.sh: FAILED: build of the binaries (log: $log)" >&2
	exit 1
fi
drain
while [ "$cycle" -lt "$cycles" ]; do
	cycle=$((cycle + 1))
	if ! stage manager; then
		cycle=$((cycle - 1))
		finish "ok: frontier empty after $cycle cycle(s)"
	fi
	drain
done
finish "ok: $cycle cycle(s)"
