# Shared by the Slurm scripts (docs/operations.md, "On Slurm"). Sourced,
# not run, after the partition's settings file COLLECTION/slurm/conf
# (written by submit.sh), which sets:
#   WIRE_SLURM_DIR  this directory       WIRE_ROOT  the repository
#   WIRE_BIN        the stage binaries   col        this partition's collection
#   part, K         this partition, i of K          shards  harvester shards
#   mode            shared (the collections on one file system) or copy (rsync)
#   cols            every partition's collection, indexed 1..K: a path
#                   (shared), or for the others an rsync source (copy)
#   name            the cycle jobs' name (the harvest arrays add "-h")
#   sbatch_all, sbatch_cycle, sbatch_harvest  extra sbatch options
#   cycles, idle_wait, retry_wait, max_failures, poll, pull_every
# The files of the Slurm scripts are under COLLECTION/slurm/:
#   conf     the settings above            bin/   the stages crawl.sh runs
#   logs/    the jobs' output              idle   written when idle (below)
#   peers/   the other partitions' idle files (copy mode)
#   done     the whole crawl ended         stop   submit.sh --stop was run
#   failures consecutive failed cycle jobs running  the cycle job running now
#   failed   why the cycle jobs gave up    shards/ the harvest shards' exit codes

# slurm_log prints a timestamped line on stderr (the job's output file).
slurm_log() {
	printf '%s %s[%s]: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "${slurm_who:-slurm}" "${SLURM_JOB_ID:-$$}" "$*" >&2
}

# slurm_state is the directory of the Slurm scripts' files of the
# collection.
slurm_state() { echo "$col/slurm"; }

# slurm_count DIR prints how many published exchange files DIR holds
# (NNNNNNNN.sz; docs/format/exchange.md), 0 when it does not exist.
slurm_count() {
	local n=0 f
	for f in "$1"/[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]*.sz; do
		[ -f "$f" ] && n=$((n + 1))
	done
	echo "$n"
}

# slurm_inbox J prints the directory where this partition finds the files
# partition J sent it: J's outbox (shared) or the copy of it (copy mode).
slurm_inbox() {
	if [ "$mode" = shared ]; then
		echo "${cols[$1]}/exchange/out/to-$part"
	else
		echo "$col/exchange/in/p$1"
	fi
}

# slurm_idle_file J prints where partition J's idle file is read.
slurm_idle_file() {
	if [ "$1" = "$part" ]; then
		echo "$col/slurm/idle"
	elif [ "$mode" = shared ]; then
		echo "${cols[$1]}/slurm/idle"
	else
		echo "$col/slurm/peers/p$1.idle"
	fi
}

# slurm_pull copies, in copy mode, each other partition's outbox for this
# one and its idle file (rsync; a peer that cannot be reached is said
# and skipped: the next pull gets it): the exchange files, the peer's
# report of this partition's files it has taken (taken: the seeder then
# removes them from its outbox) and its site graph (sitegraph.sz;
# docs/format/exchange.md). The exchange files are published
# by rename and rsync writes each under a temporary name: a copy is
# never half a file. Nothing to do on a shared file system.
slurm_pull() {
	[ "$mode" = copy ] || return 0
	local j
	mkdir -p "$col/slurm/peers"
	for j in $(seq 1 "$K"); do
		[ "$j" = "$part" ] && continue
		mkdir -p "$col/exchange/in/p$j"
		rsync -a --include='[0-9]*.sz' --include=taken --include=sitegraph.sz --exclude='*' "${cols[$j]}/exchange/out/to-$part/" "$col/exchange/in/p$j/" 2>/dev/null ||
			slurm_log "could not copy the exchange files of partition $j from ${cols[$j]} (tried again at the next pull)"
		rm -f "$col/slurm/peers/p$j.idle"
		rsync -a "${cols[$j]}/slurm/idle" "$col/slurm/peers/p$j.idle.tmp" 2>/dev/null &&
			mv "$col/slurm/peers/p$j.idle.tmp" "$col/slurm/peers/p$j.idle"
	done
}

# slurm_seen_counts prints, for each other partition J, "seen J N": the
# number of files from J this partition can see now. Counted before
# the exchange that finds nothing new, so every one of them was taken in.
slurm_seen_counts() {
	local j
	for j in $(seq 1 "$K"); do
		[ "$j" = "$part" ] || echo "seen $j $(slurm_count "$(slurm_inbox "$j")")"
	done
}

# slurm_write_idle SEEN records that this partition is idle: its frontier
# is empty, every batch is seeded, and its last exchange took nothing
# new. The file holds the lines SEEN (slurm_seen_counts, from before that
# exchange) and, for each other partition J, "sent J N": the files
# published for J.
slurm_write_idle() {
	local j f="$col/slurm/idle"
	{
		echo "# wire slurm idle $part/$K $(date -u +%Y-%m-%dT%H:%M:%SZ) job ${SLURM_JOB_ID:-}"
		echo "$1"
		for j in $(seq 1 "$K"); do
			[ "$j" = "$part" ] || echo "sent $j $(slurm_count "$col/exchange/out/to-$j")"
		done
	} >"$f.tmp" && mv "$f.tmp" "$f"
}

# slurm_all_idle succeeds when the whole crawl is over: every partition
# has an idle file, and every file a partition sent another was seen by
# it when it wrote its own (sent J→K in J's file equals seen J in K's).
# A partition that has work, or will have, either has no idle file
# (cycle.sbatch removes it when it starts) or was sent a file after it
# wrote it, which the counts show. Says why not, on stderr, when not.
slurm_all_idle() {
	local j k f n
	declare -A sent=() seen=()
	for j in $(seq 1 "$K"); do
		f=$(slurm_idle_file "$j")
		if [ ! -f "$f" ]; then
			slurm_log "not over: partition $j is not idle"
			return 1
		fi
		while read -r kind k n; do
			case $kind in
			sent) sent[$j,$k]=$n ;;
			seen) seen[$j,$k]=$n ;;
			esac
		done <"$f"
	done
	for j in $(seq 1 "$K"); do
		for k in $(seq 1 "$K"); do
			[ "$j" = "$k" ] && continue
			if [ "${sent[$j,$k]:-x}" != "${seen[$k,$j]:-y}" ]; then
				slurm_log "not over: partition $j sent $k ${sent[$j,$k]:-?} files, $k had seen ${seen[$k,$j]:-?}"
				return 1
			fi
		done
	done
}

# slurm_pending prints the ids of this partition's pending cycle jobs but
# the running one.
slurm_pending() {
	squeue -h --name "$name" --states PENDING -o %i 2>/dev/null | grep -vx "${SLURM_JOB_ID:-x}" || true
}
