#!/usr/bin/env bash
# test.sh: the project's test command (CI runs exactly this).
# gofmt check, go vet, the test dependencies (scripts/test-deps.sh:
# chromium for the report rendering test, where it can be installed),
# then every test, including the end-to-end crawl of the test web through
# the real binaries and scripts, then the race detector on the packages
# with concurrent code.
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
# The race detector on the packages with concurrent code (the seeder's
# and the harvester's concurrent bbolt writers and connections, the
# gatherer's workers, the fetch client's timers); about 4 minutes here.
go test -race -count=1 -timeout 20m "$@" ./pkg/linkgraph ./pkg/seeder ./pkg/harvester ./pkg/gatherer ./pkg/fetch
