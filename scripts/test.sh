#!/usr/bin/env bash
# test.sh [--long] [GO TEST FLAGS]: the project's test commands.
#
# scripts/test.sh, the README's test command, for every change (a few
# minutes; figures in the README, "Tests"): the gofmt check, what the
# build and the tests use beyond Go (scripts/test-deps.sh: the brotli
# decoder's C library, GNU parallel and rsync for the harvester-shard
# example, where it can install them), go vet, then
# go test ./...: every package's own tests, the end-to-end crawl of the
# test web through the real binaries and scripts (TestCrawlCycleEndToEnd),
# TestCrawlScript, TestOperations, TestMetrics, and scripts/faulttest's
# environment faults and endless host.
#
# scripts/test.sh --long, the long suite: what the default command leaves
# out because it takes minutes, or minutes of installing: the race
# detector on the packages with concurrent code, the fault run
# (scripts/faulttest TestCrawlSurvivesKills), the report rendered in
# headless Chromium (TestOperations/report/chromium), a crawl's archive
# read by warcio.js and replayed in ReplayWeb.page (TestArchiveTools,
# which installs their npm packages itself), partitioned crawls
# (TestPartitions) and one through scripts/slurm/ on a Slurm cluster the
# test starts on loopback (TestSlurm); scripts/test-deps.sh --long
# installs chromium, nodejs, npm, slurm-wlm and munge where it can. Its tests call pkg/longtest.Need
# and skip, saying so, unless WIRE_TEST_LONG=1, which --long sets.
#
# CI (.ci/run) runs both: scripts/test.sh, then scripts/test.sh --long.
# GO TEST FLAGS (-v, -run …) go to every go test run.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The long suite's tests (those that call longtest.Need): a package and
# the -run pattern that selects them, one pair a line. pkg/longtest's
# TestLongSuiteListsEveryGatedTest checks this list against the calls.
long_tests=(
	"./scripts/faulttest ^TestCrawlSurvivesKills$"
	"./scripts ^TestOperations$/^report$/^chromium$"
	"./scripts ^TestArchiveTools$"
	"./scripts ^TestPartitions$"
	"./scripts ^TestSlurm$"
	"./scripts ^TestBenchPartitions$"
)
# The race detector's packages: the seeder's and the harvester's
# concurrent bbolt writers and connections, the gatherer's workers, the
# fetch client's timers.
race_packages=(./pkg/linkgraph ./pkg/seeder ./pkg/harvester ./pkg/gatherer ./pkg/fetch)

long=0
if [ "${1:-}" = --long ]; then
	long=1
	shift
fi

if [ $long = 1 ]; then
	# Every part runs, and the end says which failed: one CI run reports
	# them all.
	scripts/test-deps.sh --long
	wire_brotli_or_purego test.sh
	failed=()
	for entry in "${long_tests[@]}"; do
		read -r pkg run <<<"$entry"
		WIRE_TEST_LONG=1 go test -count=1 -timeout 20m -run "$run" "$@" "$pkg" || failed+=("$pkg -run '$run'")
	done
	go test -race -count=1 -timeout 20m "$@" "${race_packages[@]}" || failed+=("-race ${race_packages[*]}")
	if [ ${#failed[@]} -gt 0 ]; then
		echo "test.sh --long: failed: $(printf '%s; ' "${failed[@]}")" >&2
		exit 1
	fi
	exit 0
fi

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt: these files need formatting:" >&2
	echo "$unformatted" >&2
	exit 1
fi
scripts/test-deps.sh
wire_brotli_or_purego test.sh
go vet ./...
# ./scripts first: its tests take the longest (over two minutes of crawls
# through the binaries), and go test starts packages in the order given,
# so it runs beside the rest instead of after it.
go test -count=1 -timeout 20m "$@" ./scripts ./...
