#!/usr/bin/env bash
# bench-sitemaps.sh [HOSTS [MAX_PAGES]]
#
# What sitemaps bring and cost (issue 19, docs/sitemaps.md "Measured"):
#
#  1. the cost of reading sitemaps: pkg/sitemap's Parse on a 50,000-entry
#     sitemap (9.5 MB) against encoding/xml's decoder alone on the same
#     file, the two timed in turn in each iteration (a shared machine's
#     load weighs on both), and Parse on its gzip form (go test -bench,
#     MB/s of uncompressed XML);
#  2. the crawl: the test web with sitemaps (HOSTS in-scope hosts, default
#     100, largest site MAX_PAGES pages, default 200), crawled to the end
#     (or BENCH_LIMIT seconds, default 300) by scripts/crawl.sh at
#     harvester.wait 0 from 10 seeds, once with sitemaps (seeder.sitemaps
#     and seeder.sitemap_probe on) and once without (seeder.sitemaps off):
#     the coverage of the pages only sitemaps list, and the time to 50, 90
#     and 99 % of the pages links reach, from the web's first request.
#
# The crawl part is the Go test TestBenchSitemaps in scripts/ (run only
# with WIRE_BENCH_SITEMAPS=1); it builds the binaries itself. Loopback
# only. BENCH_RUNS="parse crawl" (default both) picks the parts.
# Exit codes: 0 done, 1 a part failed, 2 usage.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -le 2 ] || { echo "usage: $0 [HOSTS [MAX_PAGES]]" >&2; exit 2; }
hosts=${1:-100}
maxpages=${2:-200}
for v in "$hosts" "$maxpages"; do
	case $v in '' | *[!0-9]*) echo "usage: $0 [HOSTS [MAX_PAGES]]" >&2; exit 2 ;; esac
done
runs=${BENCH_RUNS:-parse crawl}
status=0
cd "$WIRE_ROOT" || exit 1

if [[ " $runs " == *" parse "* ]]; then
	echo "== reading sitemaps: pkg/sitemap against encoding/xml's decoder alone (the two timed in turn)"
	go test ./pkg/sitemap -run '^$' -bench 'BenchmarkParseVsDecoder$|BenchmarkParseGzip$' -benchtime "${BENCH_TIME:-10x}" |
		awk '/^Benchmark/ { for (i = 2; i < NF; i++) if ($(i+1) ~ /MB\/s$|parse\/decoder/) printf "%-14s %8s\n", $(i+1) == "MB/s" ? "gzip-MB/s" : $(i+1), $i }' || status=1
fi

if [[ " $runs " == *" crawl "* ]]; then
	echo "== the crawl, with and without sitemaps"
	WIRE_BENCH_SITEMAPS=1 BENCH_HOSTS=$hosts BENCH_MAX_PAGES=$maxpages \
		go test ./scripts -run '^TestBenchSitemaps$' -count=1 -timeout 60m -v |
		grep -v '^=== RUN\|^--- PASS\|^PASS\|^ok ' || status=1
fi
exit $status
