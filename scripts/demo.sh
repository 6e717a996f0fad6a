#!/usr/bin/env bash
# demo.sh [DIR]
#
# Crawls the bundled synthetic test web on loopback, start to finish:
# builds the binaries, starts the test web (HTTP and DNS on 127.0.0.1),
# creates a collection in DIR (default: a fresh collection/demo-TIME in
# the repository) from the sample config with the settings the test web
# needs, crawls it for a few cycles, prints a summary, stops the test web
# and leaves the collection for inspection.
#
# The test web is the heterogeneous one (testweb --heterogeneous), which
# behaves like a real web in time: a few slow hosts (200 ms to 1 s per
# response), Crawl-delays of 2-5 s on 3% of the sites, a handful of big
# sites, bare names redirecting to www names (see pkg/testweb), served
# on several loopback addresses (about one per 8 hosts; a bare name on
# its site's address) as virtual hosts share servers, and mostly HTTPS
# (testweb --https-share 0.85: plain HTTP answering 301 to HTTPS, a few
# sites on both schemes or HTTPS-only, expired, wrong-name and
# self-signed certificates, TLS 1.2- or 1.3-only servers; the harvester
# trusts the test web's CA, copied into the collection as
# testweb-ca.pem, and records each certificate's verdict). The harvester gets
# at most 4 requests in flight per address and starts two requests to
# one address at least 25 ms apart. After the crawl the test web's
# request log is audited by server (crawlcheck politeness, see
# docs/harvester.md "Politeness by server"); its table is printed.
# Half the sites are subdomains of a few registrable domains
# (testweb --subdomain-share 0.5: fisica3.uni1.cl, volcan7.hosting1.cl
# ...), each domain on several addresses, some holding several of its
# sites, a Crawl-delay site sharing its address with a sibling, as
# universities and hosting providers have them.
#
# Environment: DEMO_HOSTS (test web hosts, default 200), DEMO_CYCLES
# (default 4), DEMO_WAIT (wait between requests to one host, default
# 200ms), DEMO_BATCH (batch size, default 3000), DEMO_ADDRESSES (loopback
# addresses of the test web, default DEMO_HOSTS/8), DEMO_PER_IP (4),
# DEMO_ADDRESS_WAIT (25ms), DEMO_WEB_FLAGS (further testweb flags,
# default --heterogeneous; empty for the uniform web), DEMO_HTTPS (share of
# the sites served over TLS, default 0.85; 0 for plain HTTP only),
# DEMO_SUBDOMAINS (share of the sites renamed as subdomains, default 0.5;
# 0 for none, as with a single address).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -le 1 ] || { echo "usage: $0 [DIR]" >&2; exit 2; }
dir=${1:-$WIRE_ROOT/collection/demo-$(date -u +%Y%m%d-%H%M%S)}
hosts=${DEMO_HOSTS:-200}
cycles=${DEMO_CYCLES:-4}
wait=${DEMO_WAIT:-200ms}
batchsize=${DEMO_BATCH:-3000}
webflags=${DEMO_WEB_FLAGS---heterogeneous}
addresses=${DEMO_ADDRESSES:-$((hosts / 8 > 1 ? hosts / 8 : 1))}
perip=${DEMO_PER_IP:-4}
addrwait=${DEMO_ADDRESS_WAIT:-25ms}
https_share=${DEMO_HTTPS:-0.85}
subdomains=${DEMO_SUBDOMAINS:-0.5}
if [ -e "$dir/FORMAT" ]; then
	echo "demo.sh: $dir already holds a collection; give a new directory" >&2
	exit 2
fi

wire_log "building binaries into $WIRE_BIN"
wire_build
work=$(mktemp -d)

tlsflags=()
case $https_share in
0 | 0.0 | 0.00 | "") ;;
*) tlsflags=(--https-share "$https_share" --ca-out "$work/ca.pem") ;;
esac

subflags=()
case $subdomains in
0 | 0.0 | 0.00 | "") ;;
*) [ "$addresses" -gt 1 ] && subflags=(--subdomain-share "$subdomains") ;;
esac

web_pid=
cleanup() {
	if [ -n "$web_pid" ]; then
		kill "$web_pid" 2>/dev/null || true
		wait "$web_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$WIRE_ROOT" && go build -o "$work/" ./scripts/crawlcheck)

wire_log "starting the test web ($hosts hosts on $addresses addresses) on loopback"
# shellcheck disable=SC2086 # DEMO_WEB_FLAGS is a list of flags
"$WIRE_BIN/testweb" --hosts "$hosts" --seed 1 --seeds 20 --seeds-out "$work/seeds.txt" $webflags \
	--addresses "$addresses" --config-out "$work/web.json" --log "$work/requests.tsv" "${tlsflags[@]}" "${subflags[@]}" \
	--ready-file "$work/ready" >"$work/testweb.out" 2>&1 &
web_pid=$!
for _ in $(seq 1 300); do
	[ -f "$work/ready" ] && break
	kill -0 "$web_pid" 2>/dev/null || { cat "$work/testweb.out" >&2; echo "demo.sh: the test web did not start" >&2; exit 1; }
	sleep 0.1
done
[ -f "$work/ready" ] || { echo "demo.sh: the test web did not become ready in 30 s" >&2; exit 1; }
dns=$(sed -n 's/^dns=//p' "$work/ready")
http=$(sed -n 's/^http=//p' "$work/ready")
https=$(sed -n 's/^https=//p' "$work/ready")
wire_log "test web: http=$http${https:+ https=$https} dns=$dns"

mkdir -p "$(dirname "$dir")"
caflags=()
if [ -f "$work/ca.pem" ]; then
	mkdir -p "$dir"
	cp "$work/ca.pem" "$dir/testweb-ca.pem"
	caflags=(--harvester-ca-file "$dir/testweb-ca.pem")
fi
"$WIRE_BIN/seeder" init --collection "$dir" "${caflags[@]}" \
	--config "$WIRE_ROOT/collection/wire.toml" \
	--harvester-allow-private --harvester-dns-server "$dns" \
	--harvester-wait "$wait" --harvester-connections 100 --harvester-connections-per-ip "$perip" \
	--harvester-address-wait "$addrwait" \
	--manager-batch-size "$batchsize" --manager-batch-duration 20s --scope-domains cl
cp "$work/seeds.txt" "$dir/seeds.txt"
"$WIRE_BIN/seeder" add --collection "$dir" "$dir/seeds.txt"

start=$(date +%s.%N)
"$WIRE_ROOT/scripts/crawl.sh" "$dir" "$cycles"
end=$(date +%s.%N)
# The test web writes its request log when it stops.
kill -TERM "$web_pid" 2>/dev/null || true
wait "$web_pid" 2>/dev/null || true
web_pid=

echo
echo "== demo summary: $dir"
"$WIRE_BIN/seeder" stats --collection "$dir"
fetched=$(cat "$dir"/batches/*/harvest/fetch.log 2>/dev/null | awk -F'\t' '!/^#/ && $3 > 0 {n++} END {print n+0}')
# Errors: HTTP status >= 400, or no response for a reason other than robots.txt.
errors=$(cat "$dir"/batches/*/harvest/fetch.log 2>/dev/null | awk -F'\t' '!/^#/ && ($3 >= 400 || ($12 != "-" && $12 != "robots")) {n++} END {print n+0}')
awk -v f="$fetched" -v e="$errors" -v s="$start" -v t="$end" 'BEGIN {
	printf "pages fetched: %d, errors (HTTP >= 400 or no response): %d, wall time %.1f s, %.1f pages/s\n", f, e, t - s, f / (t - s)
}'
echo
echo "== politeness audit by server (the test web's request log)"
"$work/crawlcheck" politeness --log "$work/requests.tsv" --web "$work/web.json" --collection "$dir" --label demo 2>&1 |
	grep -v '^PROBLEM' || echo "demo.sh: the audit found politeness violations (see above)"
echo "try:  $WIRE_BIN/manager show --collection $dir 1"
echo "      $WIRE_BIN/gatherer cat --collection $dir $(head -1 "$dir/seeds.txt")"
