# Shared by the scripts: where the repository and the binaries are, and
# how to build them. Sourced, not run.

WIRE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WIRE_BIN=${WIRE_BIN:-$WIRE_ROOT/bin}
WIRE_STAGES="manager harvester gatherer seeder"

# wire_build builds the four stages and the test web into $WIRE_BIN.
wire_build() {
	mkdir -p "$WIRE_BIN"
	(cd "$WIRE_ROOT" && go build -o "$WIRE_BIN/" ./manager ./harvester ./gatherer ./seeder ./scripts/testweb)
}

# wire_need_bins builds the binaries if any is missing (or WIRE_BUILD=1).
wire_need_bins() {
	local b
	if [ "${WIRE_BUILD:-0}" = 1 ]; then
		wire_build
		return
	fi
	for b in $WIRE_STAGES; do
		if [ ! -x "$WIRE_BIN/$b" ]; then
			wire_build
			return
		fi
	done
}

# wire_log prints a timestamped line on stderr.
wire_log() {
	printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2
}
