#!/usr/bin/env bash
# harvest-stage.sh run --collection COLLECTION --batch N: the harvester
# stage of a cycle job (cycle.sbatch links it as the harvester crawl.sh
# runs, COLLECTION/slurm/bin/harvester), for a crawl on Slurm
# (docs/operations.md, "On Slurm").
#
# With one shard it is the harvester. With SHARDS > 1 it submits the
# batch's harvest as a job array of harvest.sbatch, one task per shard
# not done yet (harvester run --shard i/SHARDS on the collection's batch
# directory, on a shared file system), waits for it (the batch's
# harvested.done, written by the last shard, every second; squeue every
# poll seconds), and once every shard's marker is there runs the
# harvester on the batch, which merges the shards if the last one did
# not and removes the shard directories. It exits as the harvester would, so
# crawl.sh's rules hold: 0 harvested; a shard's exit code (the highest)
# if some shard is not done: 5 network down, 7 disk full, 143 stopped...
# Meanwhile it holds the collection's harvester lock (a harvester run
# by hand on the collection exits 4). SIGTERM (crawl.sh stopping)
# cancels the array: each shard stops cleanly, and a rerun submits the
# shards not done, which resume.
set -uo pipefail
usage() { echo "usage: $0 run --collection COLLECTION --batch N" >&2; exit 2; }
[ $# = 5 ] && [ "$1" = run ] && [ "$2" = --collection ] && [ "$4" = --batch ] || usage
col=$3 n=$5
case $n in '' | *[!0-9]*) usage ;; esac
. "$col/slurm/conf" || exit 2
. "$WIRE_SLURM_DIR/lib.sh"
slurm_who=harvest
[ "$shards" -gt 1 ] || exec "$WIRE_BIN/harvester" "$@"

b=$(printf '%06d' "$((10#$n))")
dir=$col/batches/$b
[ -f "$dir/batch.tsv" ] || { slurm_log "batch $b: no batch.tsv in $dir"; exit 1; }
# harvested ends the stage once the batch is harvested (merged by the
# last shard): a run of the harvester on it tidies the shard directories
# away (and says "already harvested").
harvested() {
	"$WIRE_BIN/harvester" "$@" >/dev/null 2>&1
	slurm_log "batch $b: harvested"
	exit 0
}
[ -e "$dir/harvested.done" ] && harvested "$@"

# The collection's harvester lock, as the harvester takes it (flock).
mkdir -p "$col/locks"
exec 9>>"$col/locks/harvester.lock"
flock -n 9 || { slurm_log "batch $b: another harvester holds $col/locks/harvester.lock"; exit 4; }

todo=()
for i in $(seq 1 "$shards"); do
	[ -e "$dir/harvested-shard-$i-of-$shards.done" ] || todo+=("$i")
done
rcdir=$col/slurm/shards
mkdir -p "$rcdir"
job=
if [ ${#todo[@]} -gt 0 ]; then
	for i in "${todo[@]}"; do rm -f "$rcdir/$b-$i.rc"; done
	list=$(IFS=,; echo "${todo[*]}")
	job=$(sbatch --parsable --job-name="$name-h" --array="$list" --output="$col/slurm/logs/harvest-$b-%a-%A.out" \
		"${sbatch_all[@]}" "${sbatch_harvest[@]}" "$WIRE_SLURM_DIR/harvest.sbatch" "$col" "$b") ||
		{ slurm_log "batch $b: sbatch of the shards failed"; exit 1; }
	job=${job%%;*}
	slurm_log "batch $b: shards $list of $shards submitted as job array $job"
	stopped=
	trap 'stopped=1; scancel "$job" 2>/dev/null' TERM INT
	# The batch's harvested.done (written by the last shard, which
	# merges) ends the wait at once; it is looked for every second, and
	# squeue every poll seconds: it lists the array until its last task
	# has ended (and says "Invalid job id" once the controller has
	# forgotten it); a query that failed otherwise (the controller busy)
	# is tried again. After a SIGTERM the shards are waited for (up to
	# 120 s), so that they have saved their work when this stage ends.
	stop_t= last_q=-1000000
	while :; do
		[ -z "$stopped" ] && [ -e "$dir/harvested.done" ] && break
		if [ $((SECONDS - last_q)) -ge "$poll" ]; then
			last_q=$SECONDS
			out=$(squeue -h -j "$job" -o %i 2>&1)
			q=$?
			if [ "$q" = 0 ] && [ -z "$out" ]; then break; fi
			if [ "$q" != 0 ] && grep -qi 'invalid job id' <<<"$out"; then break; fi
		fi
		if [ -n "$stopped" ]; then
			[ -n "$stop_t" ] || stop_t=$SECONDS
			[ $((SECONDS - stop_t)) -ge 120 ] && break
		fi
		sleep 1 &
		wait $!
	done
	trap - TERM INT
fi

worst=0 missing=()
for i in $(seq 1 "$shards"); do
	[ -e "$dir/harvested-shard-$i-of-$shards.done" ] && continue
	missing+=("$i")
	rc=$(cat "$rcdir/$b-$i.rc" 2>/dev/null || echo 1)
	[ "$rc" -gt "$worst" ] && worst=$rc
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$worst" = 0 ] || [ "$worst" = 3 ] && worst=1
	[ -n "${stopped:-}" ] && worst=143
	slurm_log "batch $b: shard(s) ${missing[*]} of $shards not done (exit $worst; logs in $col/slurm/logs/harvest-$b-*)"
	exit "$worst"
fi
flock -u 9
exec 9>&-
[ -e "$dir/harvested.done" ] && harvested "$@"
# Every shard is done and none merged (they ran apart): merge.
exec "$WIRE_BIN/harvester" "$@"
