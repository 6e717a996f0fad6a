#!/usr/bin/env bash
# faults.sh [SEED]
#
# The long fault-injection run (the short one is `go test
# ./scripts/faulttest`). Serves a test web on loopback (hostile hosts
# included), crawls it for FAULT_CYCLES serial cycles and then
# FAULT_OVERLAP_CYCLES or more overlapped ones (crawl.sh's schedule: the
# harvester of batch N+1 beside the gatherer and seeder of batch N) while
# killing the stages with SIGKILL at random moments (at least FAULT_KILLS
# kills, at least FAULT_PER_STAGE in each stage, at least
# FAULT_OVERLAP_KILLS of a harvester while a seeder runs and as many of a
# seeder while a harvester runs; each killed run is rerun), then checks: seeder check passes; every URL of every batch was fetched
# once or is still pending; no document has two ids; the text of every
# fetched page is retrievable (and a sample through gatherer cat); the
# server's records show no politeness violation across the restarts.
# Then it breaks the environment: a full disk (2 MB tmpfs; needs root,
# else skipped with a message), a read-only collection, a missing,
# misspelt or wrongly typed config key, a missing config file, truncated
# batch files — each must fail with one line naming the problem and leave
# a collection that seeder check accepts. docs/faults.md has the details.
#
# SEED is the kill schedule's seed (default: from the clock); it is
# printed first so that a failing run can be repeated. Environment:
# FAULT_HOSTS (300), FAULT_MAX_PAGES (400), FAULT_CYCLES (12),
# FAULT_OVERLAP_CYCLES (12; 0 for none), FAULT_OVERLAP_KILLS (3),
# FAULT_KILLS (40), FAULT_PER_STAGE (5), FAULT_BATCH (400), FAULT_WAIT
# (20ms), FAULT_ADDRESSES (30: loopback addresses the web's hosts share,
# so that the audit by server sees shared addresses), FAULT_ADDRESS_WAIT
# (5ms, harvester.address_wait), FAULT_DIR (scratch directory, default a new one, removed on
# success), FAULT_HOSTILE (1; 0 leaves the hostile hosts out), FAULT_HTTPS
# (0.85: the share of the sites served over TLS, with the hostile TLS
# hosts among the hostile ones, checked to end as tls errors within the
# connect time limit; 0 for plain HTTP only), FAULT_ENV
# (1; 0 skips the environment faults), WIRE_BIN and WIRE_BUILD as for
# crawl.sh. Exit codes: 0 all checks passed, 1 a check failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -le 1 ] || { echo "usage: $0 [SEED]" >&2; exit 2; }
seed=${1:-$(date +%s%N)}
case $seed in '' | *[!0-9]*) echo "faults.sh: SEED must be a whole number, got '$seed'" >&2; exit 2 ;; esac

wire_need_bins || { echo "faults.sh: build failed" >&2; exit 1; }
(cd "$WIRE_ROOT" && go build -o "$WIRE_BIN/" ./scripts/crawlcheck) || { echo "faults.sh: building crawlcheck failed" >&2; exit 1; }

dir=${FAULT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/wire-faults.XXXXXX")}
args=(--bin "$WIRE_BIN" --dir "$dir" --seed "$seed"
	--hosts "${FAULT_HOSTS:-300}" --max-pages "${FAULT_MAX_PAGES:-400}"
	--cycles "${FAULT_CYCLES:-12}" --overlap-cycles "${FAULT_OVERLAP_CYCLES:-12}" --min-overlap-kills "${FAULT_OVERLAP_KILLS:-3}"
	--min-kills "${FAULT_KILLS:-40}" --min-per-stage "${FAULT_PER_STAGE:-5}"
	--batch "${FAULT_BATCH:-400}" --wait "${FAULT_WAIT:-20ms}"
	--addresses "${FAULT_ADDRESSES:-30}" --address-wait "${FAULT_ADDRESS_WAIT:-5ms}")
[ "${FAULT_HOSTILE:-1}" = 1 ] && args+=(--hostile)
args+=(--https-share "${FAULT_HTTPS:-0.85}")
[ "${FAULT_ENV:-1}" = 1 ] || args+=(--skip-env)

wire_log "faults.sh: seed $seed, scratch directory $dir"
"$WIRE_BIN/crawlcheck" faults "${args[@]}"
rc=$?
if [ "$rc" = 0 ]; then
	[ -n "${FAULT_DIR:-}" ] || rm -rf "$dir"
	wire_log "faults.sh: passed (seed $seed)"
	exit 0
fi
wire_log "faults.sh: FAILED (seed $seed); the collection is kept in $dir/col; rerun with: $0 $seed"
exit 1
