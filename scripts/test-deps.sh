#!/usr/bin/env bash
# test-deps.sh [--long]: installs what the tests use beyond Go, before
# they run (scripts/test.sh calls it; no test installs software itself):
#   libbrotli-dev  the brotli decoder's C library and headers, which a
#             build with cgo links (pkg/contentcoding/brotli_cgo.go; in
#             both modes: every build needs it)
#   parallel  runs harvester shards over "machines" (ops_machines_test.go)
#   rsync     copies batches between them (the same test)
# and with --long, for the long suite (scripts/test.sh --long):
#   chromium  renders the HTML report headless (scripts/ops_report_test.go)
#             and replays a crawl's WACZ in ReplayWeb.page (scripts/archtools_test.go)
#   node, npm run warcio.js and puppeteer-core, which that test installs
#             from the npm registry (Debian's nodejs and npm packages)
# Installing needs root, apt-get and the package archive; where any is
# missing it says so and goes on (exit 0): those tests then skip, saying
# why (in CI as root on Debian they fail instead: pkg/longtest.Tool), and
# without libbrotli-dev scripts/test.sh builds with -tags nocbrotli
# (the pure-Go brotli decoder).
# WIRE_TEST_DEPS=0 skips this step.
set -uo pipefail
[ "${WIRE_TEST_DEPS:-1}" = 0 ] && exit 0
# PROGRAM:PACKAGE, the Debian package that has the program, or
# /FILE:PACKAGE, the package that has the file.
brotli=/usr/include/brotli/decode.h:libbrotli-dev
want=("$brotli" parallel:parallel rsync:rsync)
case "${1:-}" in
'') ;;
--long) want=("$brotli" chromium:chromium node:nodejs npm:npm) ;;
*) echo "usage: $0 [--long]" >&2; exit 2 ;;
esac
missing=()
for w in "${want[@]}"; do
	case $w in
	/*) [ -e "${w%%:*}" ] || missing+=("${w#*:}") ;;
	*) command -v "${w%%:*}" >/dev/null 2>&1 || missing+=("${w#*:}") ;;
	esac
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
say "installing Debian's ${missing[*]} (for the tests that use them)"
export DEBIAN_FRONTEND=noninteractive
if ! timeout 300 apt-get update >/dev/null 2>&1; then
	say "the package archive is unreachable: the tests that use ${missing[*]} will skip"
	exit 0
fi
for p in "${missing[@]}"; do
	timeout 900 apt-get install -y --no-install-recommends "$p" >/dev/null 2>&1 || say "apt-get install $p failed: the tests that use it will skip"
done
exit 0
