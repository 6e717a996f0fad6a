#!/usr/bin/env bash
# fuzz.sh [FUZZTIME [PACKAGE...]]
#
# Runs every Go fuzz target of the repository (or of the given packages,
# default ./...) for FUZZTIME each (default 30s; any `go test -fuzztime`
# value: 10s, 2m, 5000x), one after the other. Targets are discovered
# with `go test -list 'Fuzz.*'`, so a new Fuzz function is picked up
# without editing this script. A target that fails leaves its failing
# input where Go puts it, PACKAGE/testdata/fuzz/FuzzNAME/HASH: from then
# on plain `go test` runs it as a regression test. Commit that file with
# the fix. See docs/fuzzing.md.
#
# A target that fails only with "context deadline exceeded" at the end of
# its time and writes no failing input hit a race in Go's fuzzing
# coordinator (go.dev/issue/75804, fixed in Go 1.27): it is reported as
# such and not counted as a failure; use a count (-fuzztime 100000x) to
# avoid the race altogether.
#
# Environment: FUZZ_PARALLEL (fuzzing workers per target, default Go's:
# GOMAXPROCS), FUZZ_MATCH (regular expression: only targets whose name
# matches). Exit codes: 0 no target failed, 1 some target failed (listed
# at the end), 2 usage or build failure.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

fuzztime=${1:-30s}
[ $# -gt 0 ] && shift
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
match=${FUZZ_MATCH:-.}
par=()
[ -n "${FUZZ_PARALLEL:-}" ] && par=(-parallel "$FUZZ_PARALLEL")
cd "$WIRE_ROOT" || exit 2

# List "PACKAGE TARGET" pairs: `go test -list` prints a package's matching
# names, then "ok PACKAGE ...".
list=$(mktemp)
stamp=$(mktemp)
trap 'rm -f "$list" "$stamp"' EXIT
if ! go test -list '^Fuzz' "${pkgs[@]}" >"$list" 2>&1; then
	grep -v '^ok\|^?' "$list" >&2
	echo "fuzz.sh: listing the fuzz targets failed (does the tree build?)" >&2
	exit 2
fi
targets=$(awk '
	/^Fuzz/ { names[++n] = $1; next }
	/^ok[ \t]/ { for (i = 1; i <= n; i++) print $2, names[i]; n = 0 }
' "$list" | grep -E " ($match)" || true)
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets found in ${pkgs[*]}" >&2
	exit 2
fi
count=$(printf '%s\n' "$targets" | wc -l)
wire_log "fuzz.sh: $count targets, $fuzztime each"

# corpus lists the failing inputs Go has saved for a target.
corpus() {
	ls "$1/testdata/fuzz/$2" 2>/dev/null | sort
}

failed=()
flaked=()
out=$(mktemp)
trap 'rm -f "$list" "$stamp" "$out"' EXIT
while read -r pkg name; do
	wire_log "fuzz.sh: $pkg $name"
	dir=$(go list -f '{{.Dir}}' "$pkg")
	before=$(corpus "$dir" "$name")
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "${par[@]}" "$pkg" 2>&1 | tee "$out"; then
		continue
	fi
	# Go before 1.27 may fail a target with "context deadline exceeded"
	# at the -fuzztime boundary on a loaded machine, without any failing
	# input (go.dev/issue/75804): that is not a finding.
	if [ "$(corpus "$dir" "$name")" = "$before" ] && grep -q 'context deadline exceeded' "$out" &&
		! grep -q 'Failing input written to' "$out"; then
		wire_log "fuzz.sh: $name: 'context deadline exceeded' at the end of -fuzztime and no failing input: Go's coordinator race (go.dev/issue/75804), not a finding"
		flaked+=("$pkg $name")
		continue
	fi
	failed+=("$pkg $name")
done <<<"$targets"
[ ${#flaked[@]} -eq 0 ] || wire_log "fuzz.sh: ${#flaked[@]} targets hit Go's deadline race (not findings): ${flaked[*]}"

if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "fuzz.sh: ${#failed[@]} of $count targets failed; their failing inputs are new files under the package's testdata/fuzz/:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	find . -path '*/testdata/fuzz/*' -type f -newer "$stamp" | sed 's/^/    /' >&2
	exit 1
fi
wire_log "fuzz.sh: all $count targets ran $fuzztime without a failure"
