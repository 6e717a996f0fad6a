#!/usr/bin/env bash
# submit.sh [--seeds FILE] [--only I] [--peer J=SOURCE]... PREFIX K SHARDS [-- SEEDER INIT FLAGS...]
# submit.sh --stop [--only I] PREFIX K
#
# Crawls a web split over K partitioned collections on a Slurm cluster
# (docs/operations.md, "On Slurm"): the collections PREFIX1 … PREFIXK
# (crawl.partition i/K), each crawled by a chain of cycle jobs
# (cycle.sbatch: crawl.sh with the harvester stage as a job array of
# SHARDS shards, harvest.sbatch) until every partition's frontier is
# empty and every link between them has been taken in. Run it on a
# machine where sbatch works; the jobs need this repository, the
# binaries and the collections at the same paths on the nodes.
#
# A collection that does not exist is created, with --seeds FILE: seeder
# init --crawl-partition i/K (the other collections as its
# crawl.partition_peers on a shared file system) and the SEEDER INIT
# FLAGS, then seeder add FILE (every partition gets the whole list and
# keeps its own). An existing one must be partition i/K.
#
# The exchange between partitions: on a shared file system (the
# default) each reads the others' exchange/out/to-I/ directly; with
# --peer J=SOURCE for each other partition J (an rsync source,
# host:/data/p2), the collections are on separate file systems: run
# submit.sh once per partition with --only I where that collection is,
# and the cycle jobs copy the other partitions' files in with rsync
# (docs/format/exchange.md). --only I submits partition I alone.
#
# Submitting again while a partition's cycle job is queued or running
# leaves it alone; otherwise it starts a new chain (the crawl continues
# where it was: after new seeds, a failure that gave up, --stop).
# --stop cancels the partitions' jobs (cycle jobs and harvest arrays)
# and marks them stopped (COLLECTION/slurm/stop): the stages stop
# cleanly, and submit.sh resumes them later.
#
# Environment: WIRE_SLURM_SBATCH (sbatch options for every job:
# --partition=NAME, --account=…), WIRE_SLURM_SBATCH_CYCLE and
# WIRE_SLURM_SBATCH_HARVEST (for the cycle jobs and the shards: --mem,
# --cpus-per-task, --time, --nodelist…; they override the #SBATCH lines
# of cycle.sbatch and harvest.sbatch), WIRE_SLURM_IDLE_WAIT (300: seconds
# before an idle partition looks again for links from the others),
# WIRE_SLURM_RETRY_WAIT (60: seconds before a failed cycle is tried
# again), WIRE_SLURM_MAX_FAILURES (5 failed cycle jobs in a row, then it
# gives up), WIRE_SLURM_POLL (5: seconds between looks at a harvest
# array), WIRE_SLURM_PULL_EVERY (60: seconds between copies of the
# exchange, copy mode), WIRE_SLURM_CYCLES (crawl.sh's CYCLES per cycle
# job; default 1000000: to an empty frontier), WIRE_BIN (the binaries;
# default REPO/bin, built when missing) and the crawl.sh settings
# (WIRE_OVERLAP_MIN_SITES, WIRE_SERIAL_BATCHES…), which the jobs inherit.
# Exit codes: 0 submitted (or stopped), 1 failure, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
WIRE_SLURM_DIR=$WIRE_ROOT/scripts/slurm

usage() {
	echo "usage: $0 [--seeds FILE] [--only I] [--peer J=SOURCE]... PREFIX K SHARDS [-- SEEDER INIT FLAGS...]" >&2
	echo "       $0 --stop [--only I] PREFIX K" >&2
	exit 2
}
die() { echo "submit.sh: $*" >&2; exit 1; }

seeds= only= stop=0
declare -A peer=()
while [ $# -gt 0 ]; do
	case $1 in
	--seeds) [ $# -ge 2 ] || usage; seeds=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
	--peer)
		[ $# -ge 2 ] || usage
		case $2 in [1-9]*=?*) ;; *) echo "submit.sh: --peer wants J=SOURCE, got '$2'" >&2; usage ;; esac
		peer[${2%%=*}]=${2#*=}
		shift 2
		;;
	--stop) stop=1; shift ;;
	--) break ;;
	-*) echo "submit.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
if [ "$stop" = 1 ]; then
	[ $# = 2 ] || usage
else
	[ $# -ge 3 ] || usage
fi
prefix=$1 K=$2 shards=${3:-1}
shift "$(($# >= 3 ? 3 : 2))"
[ "${1:-}" = -- ] && shift
init_flags=("$@")
case $K in '' | *[!0-9]* | 0) echo "submit.sh: K must be a whole number of partitions, got '$K'" >&2; exit 2 ;; esac
case $shards in '' | *[!0-9]* | 0) echo "submit.sh: SHARDS must be a whole number, got '$shards'" >&2; exit 2 ;; esac
case $only in '') ;; *[!0-9]*) echo "submit.sh: --only wants a partition number, got '$only'" >&2; exit 2 ;; *)
	[ "$only" -ge 1 ] && [ "$only" -le "$K" ] || { echo "submit.sh: --only $only: not a partition of 1..$K" >&2; exit 2; } ;;
esac
mode=shared
if [ ${#peer[@]} -gt 0 ]; then
	mode=copy
	[ -n "$only" ] || { echo "submit.sh: --peer (copy mode) is run once per partition, with --only I" >&2; exit 2; }
	for j in $(seq 1 "$K"); do
		[ "$j" = "$only" ] && continue
		[ -n "${peer[$j]:-}" ] || { echo "submit.sh: copy mode: --peer $j=SOURCE is missing" >&2; exit 2; }
	done
	command -v rsync >/dev/null 2>&1 || die "copy mode needs rsync"
fi
for c in sbatch squeue scancel scontrol; do
	command -v "$c" >/dev/null 2>&1 || die "$c not found: this is not a Slurm submit host"
done
case $prefix in /*) ;; *) prefix=$PWD/$prefix ;; esac
base=$(basename "$prefix")
parts=$(seq 1 "$K")
[ -n "$only" ] && parts=$only

if [ "$stop" = 1 ]; then
	for i in $parts; do
		col=$prefix$i
		[ -d "$col/slurm" ] && touch "$col/slurm/stop"
		scancel --name "wire-$base$i" 2>/dev/null
		scancel --name "wire-$base$i-h" 2>/dev/null
		wire_log "partition $i: jobs wire-$base$i and wire-$base$i-h cancelled; submit.sh resumes it"
	done
	exit 0
fi

wire_need_bins || die "build failed"
[ -z "$seeds" ] || [ -f "$seeds" ] || die "--seeds $seeds: no such file"

# cols: every partition's collection as the cycle jobs reach it.
cols=("")
for j in $(seq 1 "$K"); do
	if [ "$mode" = copy ] && [ "$j" != "$only" ]; then
		cols+=("${peer[$j]}")
	else
		cols+=("$prefix$j")
	fi
done

split_words() { read -r -a "$1" <<<"${2:-}"; }
split_words sbatch_all "${WIRE_SLURM_SBATCH:-}"
split_words sbatch_cycle "${WIRE_SLURM_SBATCH_CYCLE:-}"
split_words sbatch_harvest "${WIRE_SLURM_SBATCH_HARVEST:-}"
for v in IDLE_WAIT:300 RETRY_WAIT:60 MAX_FAILURES:5 POLL:5 PULL_EVERY:60 CYCLES:1000000; do
	var=WIRE_SLURM_${v%%:*}
	val=${!var:-${v#*:}}
	case $val in '' | *[!0-9]*) echo "submit.sh: $var must be a whole number, got '$val'" >&2; exit 2 ;; esac
	printf -v "${v%%:*}" '%s' "$val"
done

for i in $parts; do
	col=$prefix$i
	if [ ! -f "$col/FORMAT" ]; then
		[ -n "$seeds" ] || die "$col is not a collection: create it (seeder init --crawl-partition $i/$K), or pass --seeds FILE"
		args=(init --collection "$col" --crawl-partition "$i/$K")
		if [ "$mode" = shared ]; then
			for j in $(seq 1 "$K"); do [ "$j" = "$i" ] || args+=(--crawl-partition-peers "$prefix$j"); done
		fi
		"$WIRE_BIN/seeder" "${args[@]}" "${init_flags[@]}" >/dev/null || die "seeder init $col failed"
		"$WIRE_BIN/seeder" add --collection "$col" "$seeds" >/dev/null || die "seeder add $seeds to $col failed"
		wire_log "partition $i: created $col"
	fi
	grep -q "^partition = \"$i/$K\"" "$col/wire.toml" 2>/dev/null ||
		die "$col is not partition $i/$K (crawl.partition in $col/wire.toml)"
	if [ "$mode" = shared ]; then
		# The seeder must read the others' files where the scripts count
		# them: its crawl.partition_peers names every other collection.
		peers=$(grep '^partition_peers = ' "$col/wire.toml")
		for j in $(seq 1 "$K"); do
			[ "$j" = "$i" ] && continue
			case $peers in *"\"$prefix$j\""*) ;; *)
				die "$col does not read partition $j's exchange files on the shared file system (crawl.partition_peers in $col/wire.toml lacks $prefix$j): set it, or give --only $i --peer $j=SOURCE (copy mode)"
				;;
			esac
		done
	fi
	mkdir -p "$col/slurm/logs" "$col/slurm/shards"
	{
		echo "# written by scripts/slurm/submit.sh $(date -u +%Y-%m-%dT%H:%M:%SZ); read by the Slurm jobs of this partition"
		declare -p WIRE_SLURM_DIR WIRE_ROOT WIRE_BIN col mode cols sbatch_all sbatch_cycle sbatch_harvest
		part=$i name=wire-$base$i
		declare -p part K shards name IDLE_WAIT RETRY_WAIT MAX_FAILURES POLL PULL_EVERY CYCLES |
			sed -e 's/ IDLE_WAIT=/ idle_wait=/; s/ RETRY_WAIT=/ retry_wait=/; s/ MAX_FAILURES=/ max_failures=/' \
				-e 's/ POLL=/ poll=/; s/ PULL_EVERY=/ pull_every=/; s/ CYCLES=/ cycles=/'
	} >"$col/slurm/conf.tmp" && mv "$col/slurm/conf.tmp" "$col/slurm/conf" || die "cannot write $col/slurm/conf"
	running=$(squeue -h --name "wire-$base$i" -o %i 2>/dev/null | head -1)
	if [ -n "$running" ]; then
		wire_log "partition $i: cycle job $running is queued or running: left alone (settings rewritten)"
		continue
	fi
	rm -f "$col/slurm/stop" "$col/slurm/done" "$col/slurm/failed" "$col/slurm/failures" "$col/slurm/idle"
	# The first cycle job and its successor: a job that dies before it
	# has queued one (each does, first thing) does not end the chain.
	job=$(sbatch --parsable --job-name="wire-$base$i" --output="$col/slurm/logs/cycle-%j.out" --dependency=singleton \
		"${sbatch_all[@]}" "${sbatch_cycle[@]}" "$WIRE_SLURM_DIR/cycle.sbatch" "$col") || die "sbatch of partition $i's cycle job failed"
	job=${job%%;*}
	next=$(sbatch --parsable --job-name="wire-$base$i" --output="$col/slurm/logs/cycle-%j.out" --dependency="afterany:$job,singleton" \
		"${sbatch_all[@]}" "${sbatch_cycle[@]}" "$WIRE_SLURM_DIR/cycle.sbatch" "$col") || die "sbatch of partition $i's second cycle job failed"
	wire_log "partition $i: cycle jobs $job and ${next%%;*} (its successor) submitted ($col, $shards harvester shard(s), $mode exchange; log $col/slurm/logs/)"
done
