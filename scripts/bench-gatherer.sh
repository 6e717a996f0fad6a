#!/bin/sh
# bench-gatherer.sh: how fast the gatherer parses, against the raw
# throughput of golang.org/x/net/html's tokenizer alone (the limit of this
# design), in one run on the same corpus of real HTML
# (pkg/extract/testdata/pages: 20 pages from 8 generators, 1.1 MB).
#
#   scripts/bench-gatherer.sh            # 5 rounds of each benchmark
#   COUNT=9 BENCHTIME=3s scripts/bench-gatherer.sh
#
# It prints, for each benchmark, the median over COUNT rounds of MB/s
# (wall clock) and of MB/cpu-s (megabytes per second of CPU time, which
# other jobs on a shared machine disturb less), and the gatherer's share
# of the tokenizer's throughput on the same number of cores. The target
# is 50 % or more. The benchmarks are Go benchmarks:
#
#   BenchmarkTokenizerOnly, BenchmarkTokenizerParallel  (pkg/extract)
#   BenchmarkHtmltokOnly                                (pkg/extract)
#   BenchmarkExtract, BenchmarkExtractParallel          (pkg/extract)
#   BenchmarkGather, BenchmarkGatherLarge               (pkg/gatherer)
#   BenchmarkGatherNoLanguage                            (pkg/gatherer)
#   BenchmarkGatherRaw, BenchmarkGatherRawBrotli        (pkg/gatherer)
#
# The reference stays x/net/html's tokenizer reading from an io.Reader,
# as the issue states it. The extractor runs its own copy of that
# tokenizer (pkg/extract/internal/htmltok: same tokens, read in place);
# its row says how much faster than the reference it is on its own.
#
# BenchmarkGather is the whole stage (WARC reads, charset decoding,
# parsing on every core, docs.jsonl, the text segment, fsyncs) over the
# corpus ten times under different host names (11 MB);
# BenchmarkGatherLarge over the corpus forty times (44 MB), where the
# costs of a run that do not grow with the batch weigh a quarter as much.
# BenchmarkGatherNoLanguage is BenchmarkGather with language detection
# off (what detection costs is the difference; scripts/bench-language.sh
# measures it alone, in more rounds). BenchmarkGatherRaw is
# BenchmarkGather on records as a raw harvest stores them
# (harvester.warc_mode raw, the default): each page gzip-compressed (level
# 6) under Content-Encoding: gzip, which the gatherer decodes;
# BenchmarkGatherRawBrotli the same with br (level 5). Their MB are of the
# decoded HTML, and their rows are given as a share of BenchmarkGather's,
# run in the same round right before them, so that decoded and raw
# records alternate (the target: within 10 %,
# docs/harvester.md "How responses are stored"). The brotli decoder is
# the build's (printed at the top): libbrotlidec with cgo, the default;
# GOFLAGS=-tags=nocbrotli measures the pure-Go one. They run with the garbage collector
# set as the gatherer command sets it (GOGC=400 unless GOGC is set:
# gatherer.TuneGC).
#
# The machine may be shared: each round runs every benchmark once, one
# after the other, so that the tokenizer and the gatherer see the same
# load, and the medians are over the rounds. Each share is given twice:
# the ratio of the two medians, and the median of the ratios within each
# round (which a change of load between rounds disturbs less).
set -eu
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-2s}
GATHERTIME=${GATHERTIME:-20x}
LARGETIME=${LARGETIME:-5x}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/extract.test" ./pkg/extract
go test -c -o "$tmp/gatherer.test" ./pkg/gatherer
: > "$tmp/out.txt"
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
for i in $(seq "$COUNT"); do
	(cd pkg/extract && "$tmp/extract.test" -test.run XXX -test.benchtime "$BENCHTIME" \
		-test.bench 'Benchmark(TokenizerOnly|TokenizerParallel|HtmltokOnly|Extract|ExtractParallel)$') >> "$tmp/out.txt"
	(cd pkg/gatherer && "$tmp/gatherer.test" -test.run XXX -test.bench 'BenchmarkGather$' -test.benchtime "$GATHERTIME") >> "$tmp/out.txt"
	(cd pkg/gatherer && "$tmp/gatherer.test" -test.run XXX -test.bench 'BenchmarkGatherRaw$' -test.benchtime "$GATHERTIME") >> "$tmp/out.txt"
	(cd pkg/gatherer && "$tmp/gatherer.test" -test.run XXX -test.bench 'BenchmarkGatherRawBrotli$' -test.benchtime "$GATHERTIME") >> "$tmp/out.txt"
	(cd pkg/gatherer && "$tmp/gatherer.test" -test.run XXX -test.bench 'BenchmarkGatherLarge$' -test.benchtime "$LARGETIME") >> "$tmp/out.txt"
	(cd pkg/gatherer && "$tmp/gatherer.test" -test.run XXX -test.bench 'BenchmarkGatherNoLanguage$' -test.benchtime "$GATHERTIME") >> "$tmp/out.txt"
done

corpus=$(cat pkg/extract/testdata/pages/*.html | wc -c)
pages=$(ls pkg/extract/testdata/pages/*.html | wc -l)
procs=$(go env GOMAXPROCS 2>/dev/null || true)
[ -n "$procs" ] || procs=$(getconf _NPROCESSORS_ONLN)
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')

awk -v corpus="$corpus" -v pages="$pages" -v procs="$procs" -v load="$load0 at the start, $load at the end" -v count="$COUNT" '
function medianOf(s,    n, i, j, t, a) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
	if (n == 0) return 0
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function median(name, col) { return medianOf(vals[name, col]) }
# perRound is the median over the rounds of the ratio of name to ref in
# the same round (the k-th figure of each).
function perRound(name, ref, col,    n, m, k, a, b, s) {
	n = split(vals[name, col], a, " "); m = split(vals[ref, col], b, " ")
	s = ""
	for (k = 1; k <= n && k <= m; k++) if (b[k] > 0) s = s " " a[k] / b[k]
	return medianOf(s)
}
/brotli decoder: / { brlib = $0; sub(/.*brotli decoder: /, "", brlib) }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	for (i = 2; i <= NF; i++) {
		if ($i == "MB/s") vals[name, "wall"] = vals[name, "wall"] " " $(i-1)
		if ($i == "MB/cpu-s") vals[name, "cpu"] = vals[name, "cpu"] " " $(i-1)
	}
}
function row(label, name, ref,    w, c, rw, rc) {
	w = median(name, "wall"); c = median(name, "cpu")
	if (ref == "") { printf "%-50s %8.1f %9.1f\n", label, w, c; return }
	rw = median(ref, "wall"); rc = median(ref, "cpu")
	printf "%-50s %8.1f %9.1f   %3.0f %% %8.0f %%    %3.0f %% %8.0f %%\n", label, w, c, 100*w/rw, 100*c/rc, 100*perRound(name, ref, "wall"), 100*perRound(name, ref, "cpu")
}
END {
	printf "corpus: %d real pages, %.2f MB (pkg/extract/testdata/pages); %d cores; load average %s; median of %d rounds\n", pages, corpus/1e6, procs, load, count
	printf "brotli decoder: %s\n\n", brlib
	printf "%-50s %8s %9s   %s\n", "", "", "", "share of the tokenizer (MB/s, MB/cpu-s):"
	printf "%-50s %8s %9s   %s\n", "", "MB/s", "MB/cpu-s", "of the medians       per round (median)"
	row("x/net/html tokenizer alone, one goroutine", "TokenizerOnly", "")
	row("htmltok, the extractor copy, alone, one goroutine", "HtmltokOnly", "TokenizerOnly")
	row("extraction (charset, text, links), one goroutine", "Extract", "TokenizerOnly")
	row("x/net/html tokenizer alone, every core", "TokenizerParallel", "")
	row("extraction, every core", "ExtractParallel", "TokenizerParallel")
	row("gatherer: the whole stage, every core, 11 MB", "Gather", "TokenizerParallel")
	row("gatherer: the whole stage, every core, 44 MB", "GatherLarge", "TokenizerParallel")
	row("gatherer, language detection off, 11 MB", "GatherNoLanguage", "TokenizerParallel")
	row("gatherer, raw records (gzip), 11 MB", "GatherRaw", "TokenizerParallel")
	row("gatherer, raw records (br), 11 MB", "GatherRawBrotli", "TokenizerParallel")
	printf "\ntarget: the gatherer at 50 %% or more of the tokenizer alone\n"
	printf "\n%-50s %8s %9s   %s\n", "", "", "", "share of the gatherer on decoded records (11 MB):"
	row("raw records, gzip", "GatherRaw", "Gather")
	row("raw records, br", "GatherRawBrotli", "Gather")
	printf "\ntarget: raw records within 10 %% of decoded ones (MB/cpu-s)\n"
}' "$tmp/out.txt"
