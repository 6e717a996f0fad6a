#!/usr/bin/env bash
# test-deps.sh: installs what the tests use beyond Go, before they run
# (scripts/test.sh calls it; no test installs software itself):
#   chromium  renders the HTML report headless (scripts/ops_report_test.go)
#   parallel  runs harvester shards over "machines" (ops_machines_test.go)
#   rsync     copies batches between them (the same test)
# Installing needs root, apt-get and the package archive; where any is
# missing it says so and goes on (exit 0): those tests then skip, saying
# why. WIRE_TEST_DEPS=0 skips this step.
set -uo pipefail
[ "${WIRE_TEST_DEPS:-1}" = 0 ] && exit 0
missing=()
for p in chromium parallel rsync; do
	command -v "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0
say() { echo "test-deps.sh: $*" >&2; }
if ! command -v apt-get >/dev/null 2>&1; then
	say "${missing[*]} not installed and there is no apt-get: the tests that use them will skip"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	say "${missing[*]} not installed and only root can install them (apt-get install -y ${missing[*]}): the tests that use them will skip"
	exit 0
fi
say "installing Debian's ${missing[*]} (for the report rendering and shard tests)"
export DEBIAN_FRONTEND=noninteractive
if ! timeout 300 apt-get update >/dev/null 2>&1; then
	say "the package archive is unreachable: the tests that use ${missing[*]} will skip"
	exit 0
fi
for p in "${missing[@]}"; do
	timeout 900 apt-get install -y --no-install-recommends "$p" >/dev/null 2>&1 || say "apt-get install $p failed: the tests that use it will skip"
done
exit 0
