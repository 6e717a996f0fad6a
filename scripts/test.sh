#!/usr/bin/env bash
# test.sh: the project's test command (CI runs exactly this).
# gofmt check, go vet, the test dependencies (scripts/test-deps.sh:
# chromium for the report rendering test, where it can be installed),
# then every test, including the end-to-end crawl of the test web through
# the real binaries and scripts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt: these files need formatting:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
scripts/test-deps.sh
go test -count=1 -timeout 20m "$@" ./...
