#!/usr/bin/env bash
# crawl.sh COLLECTION [CYCLES]
#
# Runs CYCLES crawl cycles (default 1) on COLLECTION: manager -> harvester
# -> gatherer -> seeder. Before the first cycle it finishes any batch left
# half-way by an earlier run (a failure or a kill), so a rerun continues
# from the stage that did not finish. Stops early, successfully, when the
# frontier is empty. Stops at the first failing stage with its exit code,
# naming the stage.
#
# Environment: WIRE_BIN (directory of the binaries; default REPO/bin, built
# when missing), WIRE_BUILD=1 (rebuild first), and any WIRE_* setting.
# Exit codes: 0 done (or frontier empty), 2 usage, else the failing
# stage's code.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 COLLECTION [CYCLES]" >&2
	exit 2
}
[ $# -ge 1 ] && [ $# -le 2 ] || usage
col=$1
cycles=${2:-1}
case $cycles in '' | *[!0-9]*) echo "crawl.sh: CYCLES must be a whole number, got '$cycles'" >&2; exit 2 ;; esac
[ -f "$col/FORMAT" ] || { echo "crawl.sh: $col is not a collection (create it with: seeder init --collection $col)" >&2; exit 2; }
wire_need_bins || { echo "crawl.sh: build failed" >&2; exit 1; }

# stage NAME: runs one stage; returns 0 if it did work, 3 if it had
# nothing to do, exits the script on any other code.
stage() {
	local name=$1 rc
	wire_log "cycle $cycle: $name run"
	"$WIRE_BIN/$name" run --collection "$col"
	rc=$?
	case $rc in
	0) return 0 ;;
	3) return 3 ;;
	*) wire_log "crawl.sh: $name failed (exit $rc) in cycle $cycle on $col"; exit "$rc" ;;
	esac
}

# drain finishes every batch already in the pipeline.
drain() {
	local s
	for s in harvester gatherer seeder; do
		while stage "$s"; do :; done
	done
}

cycle=0
drain
for ((cycle = 1; cycle <= cycles; cycle++)); do
	if ! stage manager; then
		wire_log "frontier is empty after $((cycle - 1)) cycle(s)"
		break
	fi
	drain
done
wire_log "crawl.sh: done"
exit 0
