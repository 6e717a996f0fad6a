# Shared by the scripts: where the repository and the binaries are, and
# how to build them. Sourced, not run.

WIRE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# wire_bin_given is set when WIRE_BIN names binaries of the caller's own
# (an older build to compare, a test's fakes): those are never rebuilt
# unless WIRE_BUILD=1.
wire_bin_given=${WIRE_BIN:+1}
WIRE_BIN=${WIRE_BIN:-$WIRE_ROOT/bin}
WIRE_STAGES="manager harvester gatherer seeder"

# wire_brotli_or_purego NAME: a Go build with cgo links the C brotli
# decoder (pkg/contentcoding/brotli_cgo.go), whose headers come with
# Debian's libbrotli-dev (scripts/test-deps.sh installs it). Where a C
# compiler is but the headers are not, the builds of the scripts use the
# pure-Go decoder (GOFLAGS -tags=nocbrotli), and NAME says so once; not
# in CI (CI=true), where test-deps.sh could have installed them and the
# build then fails on the missing header.
wire_brotli_or_purego() {
	[ "$(go env CGO_ENABLED 2>/dev/null)" = 1 ] || return 0
	case " $(go env GOFLAGS 2>/dev/null) " in *nocbrotli*) return 0 ;; esac
	echo '#include <brotli/decode.h>' | $(go env CC) -E - >/dev/null 2>&1 && return 0
	[ "${CI:-}" = true ] && return 0
	echo "$1: no brotli headers (Debian's libbrotli-dev): building with -tags nocbrotli, the pure-Go brotli decoder" >&2
	local flags
	flags=$(go env GOFLAGS)
	export GOFLAGS="${flags:+$flags }-tags=nocbrotli"
}

# wire_build builds the four stages and the test web into $WIRE_BIN.
wire_build() {
	wire_brotli_or_purego build
	mkdir -p "$WIRE_BIN"
	(cd "$WIRE_ROOT" && go build -o "$WIRE_BIN/" ./manager ./harvester ./gatherer ./seeder ./scripts/testweb)
}

# wire_need_bins builds the binaries if any is missing, if WIRE_BUILD=1,
# or, for the tree's own bin/ (WIRE_BIN not given) and unless
# WIRE_BUILD=0, if the go command is here and a Go source of the tree is
# newer than one of them: a stale bin/ once ran the fault run
# with binaries that lacked a setting (go build is incremental, so an
# up-to-date tree costs a second). A deployment without Go, or with
# WIRE_BUILD=0, runs the binaries it has.
wire_need_bins() {
	local b
	if [ "${WIRE_BUILD:-}" = 1 ]; then
		wire_build
		return
	fi
	for b in $WIRE_STAGES; do
		if [ ! -x "$WIRE_BIN/$b" ]; then
			wire_build
			return
		fi
	done
	[ "${WIRE_BUILD:-}" = 0 ] || [ -n "$wire_bin_given" ] && return 0
	command -v go >/dev/null 2>&1 || return 0
	for b in $WIRE_STAGES; do
		if [ -n "$(find "$WIRE_ROOT" -name .git -prune -o -name '*.go' -newer "$WIRE_BIN/$b" -print -quit 2>/dev/null)" ]; then
			wire_log "sources newer than $WIRE_BIN/$b: rebuilding the binaries"
			wire_build
			return
		fi
	done
}

# wire_log prints a timestamped line on stderr.
# wire_bench_tools NAME: the stage binaries (wire_need_bins) and the
# bench tools testweb and crawlcheck built from this tree into
# BENCH_TOOLS (default REPO/bin); sets bin and tools. NAME (the calling
# script) names the failure. For the scripts/bench-*.sh that serve the
# test web.
wire_bench_tools() {
	wire_need_bins || { echo "$1: build failed" >&2; return 1; }
	bin=$WIRE_BIN
	tools=${BENCH_TOOLS:-$WIRE_ROOT/bin}
	mkdir -p "$tools"
	wire_brotli_or_purego "$1"
	(cd "$WIRE_ROOT" && go build -o "$tools/" ./scripts/testweb ./scripts/crawlcheck) || {
		echo "$1: building testweb and crawlcheck failed" >&2
		return 1
	}
}

wire_log() {
	printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2
}

# Timing and a served test web, for the benchmarks (bench-timeline.sh,
# bench-politeness.sh).

# wire_now prints the time in RFC 3339 with nanoseconds, UTC.
wire_now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

# wire_secs prints the time in seconds since the epoch, with decimals.
wire_secs() { date +%s.%N; }

# wire_since T0 prints the seconds since T0 (from wire_secs), one decimal.
wire_since() { awk -v s="$1" -v t="$(wire_secs)" 'BEGIN {printf "%.1f", t - s}'; }

# wire_start_web DIR TESTWEB [FLAGS...]: serves a test web with the
# testweb binary TESTWEB and FLAGS in the background, writing its seeds
# to DIR/seeds.txt, its description to DIR/web.json, its output to
# DIR/testweb.out and, when it stops, its request log to
# DIR/requests.tsv. Sets web_pid and web_dns; returns 1 (with a message)
# if it does not become ready within 60 s.
wire_start_web() {
	local d=$1 tw=$2 i
	shift 2
	mkdir -p "$d"
	"$tw" "$@" --seeds-out "$d/seeds.txt" --config-out "$d/web.json" --ready-file "$d/ready" \
		--log "$d/requests.tsv" >"$d/testweb.out" 2>&1 &
	web_pid=$!
	for i in $(seq 1 600); do
		[ -f "$d/ready" ] && break
		kill -0 "$web_pid" 2>/dev/null || { cat "$d/testweb.out" >&2; echo "the test web did not start" >&2; web_pid=; return 1; }
		sleep 0.1
	done
	[ -f "$d/ready" ] || { echo "the test web did not become ready in 60 s" >&2; return 1; }
	web_dns=$(sed -n 's/^dns=//p' "$d/ready")
}

# wire_stop_web DIR: stops the test web of wire_start_web, which then
# writes DIR/requests.tsv; returns 1 if it wrote none.
wire_stop_web() {
	kill -TERM "$web_pid" 2>/dev/null
	wait "$web_pid" 2>/dev/null
	web_pid=
	[ -f "$1/requests.tsv" ] || { echo "the test web wrote no request log in $1" >&2; return 1; }
}

# wire_bounded LIMIT LOG CMD...: runs CMD in its own process group,
# output to LOG; LIMIT seconds after its start it gets SIGINT (and 90 s
# later SIGKILL). Sets job_pid while it runs (a caller's exit trap kills
# its group), then run_rc, run_start (RFC 3339), run_end (when it ended
# or was sent SIGINT) and run_stopped (1 if it was).
wire_bounded() {
	local lim=$1 log=$2 t0 el
	shift 2
	run_start=$(wire_now)
	t0=$(wire_secs)
	run_stopped=0
	run_end=
	set -m
	"$@" >"$log" 2>&1 &
	job_pid=$!
	set +m
	while kill -0 "$job_pid" 2>/dev/null; do
		el=$(wire_since "$t0")
		if [ "$run_stopped" = 0 ] && awk -v e="$el" -v l="$lim" 'BEGIN {exit !(e >= l)}'; then
			run_end=$(wire_now)
			run_stopped=1
			kill -INT -- "-$job_pid" 2>/dev/null
		elif [ "$run_stopped" = 1 ] && awk -v e="$el" -v l="$lim" 'BEGIN {exit !(e >= l + 90)}'; then
			kill -KILL -- "-$job_pid" 2>/dev/null
		fi
		sleep 0.2
	done
	wait "$job_pid"
	run_rc=$?
	job_pid=
	[ -n "$run_end" ] || run_end=$(wire_now)
}
