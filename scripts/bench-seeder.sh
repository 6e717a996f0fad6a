#!/bin/sh
# bench-seeder.sh: links/s and peak memory of "seeder run" taking in a
# generated batch of 100,000 fetched pages with 2 million links
# (pkg/seeder/internal/benchgen: 2,000 sites, a quarter of the internal
# targets already known, some links out of scope or not normal), against
# a plain bbolt load of the same keys and values into the same graph.db in
# one transaction (pkg/seeder/internal/benchtool plain: the storage limit
# of this design). The issue's targets: at least 50 % of the plain load's
# links/s, and the batch in under 60 s. The plain load uses bbolt's default
# page fill; a second one ("plain, id fill") fills the pages of the buckets
# keyed by id as the seeder does (benchtool plain -fill 0.9, linkgraph's
# idFill), the same layout as the seeder's, and its ratio is printed too.
#
#   scripts/bench-seeder.sh
#   ROUNDS=5 scripts/bench-seeder.sh
#   PAGES=20000 LINKS=20 scripts/bench-seeder.sh
#   SEEDER_FLAGS="--seeder-new-links-per-page=8" scripts/bench-seeder.sh
#
# The batch is generated once; each of ROUNDS rounds (3 by default) runs
# the seeder on a fresh copy of the collection, then the two plain loads
# of what that run wrote, so that a round's three figures are measured
# within seconds of each other. On a shared machine whose speed moves by
# half within minutes (docs/seeder.md), only such ratios mean anything:
# the script prints each round and the medians of the rounds' ratios.
#
# Each measured command is a child process; "wall s" and "cpu s" of the
# plain load are those of its transaction alone (the tool first reads
# what to load from the seeder's graph.db); "peak RSS" is the VmHWM
# (graph.db's mapped file pages included), "anon" the largest RssAnon
# seen while polling /proc every 50 ms (heap and stacks). The machine's
# load average is printed too: on a shared machine the wall times move
# with it, the CPU times (user+sys) much less.
set -eu
cd "$(dirname "$0")/.."
PAGES=${PAGES:-100000}
LINKS=${LINKS:-20}
SEEDER_FLAGS=${SEEDER_FLAGS:-}
ROUNDS=${ROUNDS:-3}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/bench-seeder.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

go build -o "$DIR/bin/" ./seeder ./pkg/seeder/internal/benchtool
"$DIR/bin/benchtool" gen -pages "$PAGES" -links "$LINKS" "$DIR/col" >"$DIR/gen.out"
links=$(sed -n 's/.* \([0-9]*\) links$/\1/p' "$DIR/gen.out")

# cputime: the user+sys seconds of the shell's finished children so far
# (times must run in this shell, not in a command substitution).
cputime() {
	times >"$DIR/times"
	awk 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.2f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2]
	}' "$DIR/times"
}

# measure NAME CMD...: runs CMD, prints "wall cpu hwm_kb anon_kb" into $DIR/NAME.m
measure() {
	name=$1
	shift
	cputime >"$DIR/cpu0"
	cpu0=$(cat "$DIR/cpu0")
	start=$(date +%s.%N)
	"$@" >"$DIR/$name.out" 2>"$DIR/$name.err" &
	pid=$!
	hwm=0
	anon=0
	while kill -0 "$pid" 2>/dev/null; do
		if [ -r "/proc/$pid/status" ]; then
			h=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
			a=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
			[ "${h:-0}" -gt "$hwm" ] && hwm=$h
			[ "${a:-0}" -gt "$anon" ] && anon=$a
		fi
		sleep 0.05
	done
	if ! wait "$pid"; then
		echo "bench-seeder: $name failed:" >&2
		cat "$DIR/$name.err" >&2
		exit 1
	fi
	end=$(date +%s.%N)
	cputime >"$DIR/cpu1"
	cpu=$(echo "$(cat "$DIR/cpu1") - $cpu0" | bc)
	echo "$(echo "$end - $start" | bc) $cpu $hwm $anon" >"$DIR/$name.m"
}

printf "batch: %d pages, %d links; %d rounds\n" "$PAGES" "$links" "$ROUNDS"
printf "%-6s %-18s %9s %12s %10s %14s %12s %8s\n" "round" "" "wall s" "links/s" "cpu s" "peak RSS MiB" "anon MiB" "load"
: >"$DIR/rounds"
round=1
while [ "$round" -le "$ROUNDS" ]; do
	rm -rf "$DIR/run" "$DIR/plain.db"
	cp -r "$DIR/col" "$DIR/run"
	load=$(cut -d' ' -f1 /proc/loadavg)
	# shellcheck disable=SC2086
	measure seeder "$DIR/bin/seeder" run --collection "$DIR/run" --quiet $SEEDER_FLAGS
	measure plain "$DIR/bin/benchtool" plain "$DIR/col.before.db" "$DIR/run/graph.db" "$DIR/plain.db"
	rm -f "$DIR/plain.db"
	measure plainfill "$DIR/bin/benchtool" plain -fill 0.9 "$DIR/col.before.db" "$DIR/run/graph.db" "$DIR/plain.db"
	plain_s=$(sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$DIR/plain.out")
	plain_cpu=$(sed -n 's/.* cpu \([0-9.]*\) s,.*/\1/p' "$DIR/plain.out")
	fill_s=$(sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$DIR/plainfill.out")
	fill_cpu=$(sed -n 's/.* cpu \([0-9.]*\) s,.*/\1/p' "$DIR/plainfill.out")
	read -r s_wall s_cpu s_hwm s_anon <"$DIR/seeder.m"
	read -r p_wall p_cpu p_hwm p_anon <"$DIR/plain.m"
	read -r f_wall f_cpu f_hwm f_anon <"$DIR/plainfill.m"
	awk -v r="$round" -v links="$links" -v sw="$s_wall" -v sc="$s_cpu" -v sh="$s_hwm" -v sa="$s_anon" \
		-v ps="$plain_s" -v pc="$plain_cpu" -v ph="$p_hwm" -v pa="$p_anon" \
		-v fs="$fill_s" -v fc="$fill_cpu" -v fh="$f_hwm" -v fa="$f_anon" -v load="$load" 'BEGIN {
		printf "%-6s %-18s %9.2f %12.0f %10.2f %14.0f %12.0f %8s\n", r, "seeder run", sw, links / sw, sc, sh / 1024, sa / 1024, load
		printf "%-6s %-18s %9.2f %12.0f %10.2f %14.0f %12.0f\n", r, "plain bbolt load", ps, links / ps, pc, ph / 1024, pa / 1024
		printf "%-6s %-18s %9.2f %12.0f %10.2f %14.0f %12.0f\n", r, "plain, id fill 0.9", fs, links / fs, fc, fh / 1024, fa / 1024
	}'
	echo "$s_wall $s_cpu $plain_s $plain_cpu $fill_s $fill_cpu $s_hwm" >>"$DIR/rounds"
	round=$((round + 1))
done
# The medians of the rounds' ratios (and of the seeder's time and peak).
sort_median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
ratio=$(awk '{print 100 * $3 / $1}' "$DIR/rounds" | sort_median)
ratio_cpu=$(awk '{print 100 * $4 / $2}' "$DIR/rounds" | sort_median)
ratio_fill=$(awk '{print 100 * $5 / $1}' "$DIR/rounds" | sort_median)
ratio_fill_cpu=$(awk '{print 100 * $6 / $2}' "$DIR/rounds" | sort_median)
wall=$(awk '{print $1}' "$DIR/rounds" | sort_median)
hwm=$(awk '{print $7}' "$DIR/rounds" | sort_median)
all=$(awk '{printf "%s%.0f", (NR > 1 ? ", " : ""), 100 * $3 / $1}' "$DIR/rounds")
awk -v r="$ratio" -v rc="$ratio_cpu" -v rf="$ratio_fill" -v rfc="$ratio_fill_cpu" -v w="$wall" -v h="$hwm" -v all="$all" 'BEGIN {
	printf "seeder / plain: %.0f %% of the links/s (median of the rounds: %s %%; target >= 50 %%), %.0f %% of the links per cpu second; batch in %.1f s (median; target < 60 s), peak RSS %.0f MiB\n", r, all, rc, w, h / 1024
	printf "seeder / plain with the seeder\047s page fill: %.0f %% of the links/s, %.0f %% of the links per cpu second\n", rf, rfc
}'
sed -n '1,9p' "$DIR/seeder.out"
