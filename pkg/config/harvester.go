package config

import (
	"mime"
	"strings"
	"time"

	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// Rankings returns the server rankings of the harvester's two-level
// scheduler (Cao, Jiang and Singh, §4), the names accepted by
// harvester.ranking.
func Rankings() []string {
	return []string{"fifo", "performance", "quality", "crawl-ability", "value"}
}

// The values of harvester.warc_mode: how response records hold what the
// server sent (docs/harvester.md, "How responses are stored").
const (
	// WARCModeRaw stores each response as the server sent it: status
	// line and header fields as received (names' case, order), the body
	// with its content coding; chunked bodies de-chunked.
	WARCModeRaw = "raw"
	// WARCModeDecoded stores bodies decoded (gzip, br), their
	// Content-Encoding renamed X-Wire-Decoded-Content-Encoding, and the
	// headers as net/http parsed them (canonical names, sorted).
	WARCModeDecoded = "decoded"
)

// WARCModes returns the values harvester.warc_mode accepts.
func WARCModes() []string { return []string{WARCModeRaw, WARCModeDecoded} }

// Harvester holds the politeness rules and network limits of the harvester.
type Harvester struct {
	Connections           int      `toml:"connections" doc:"Simultaneous connections overall; each is held by one host, and a host never has two. A harvester following the batches (run --follow) shares them among the batches it harvests at once, the older batch first."`
	ConnectionsPerIP      int      `toml:"connections_per_ip" doc:"Simultaneous connections to one IP address (virtual hosts often share a server); 0 means no cap."`
	AddressWait           Duration `toml:"address_wait" doc:"Shortest time between the starts of two requests to one IP address, whatever the host names: a shared server hosting many sites is not asked by all of them at once. 0 turns the floor off."`
	Ranking               string   `toml:"ranking" doc:"Server ranking of the two-level scheduler: fifo, performance (R = P/T), quality (best URL), crawl-ability (C = AQ/T) or value (best next URL, with the value clock that releases the batch best first)."`
	ValueClock            float64  `toml:"value_clock" doc:"Value ranking: the share of the batch's predicted remaining time by which its value clock releases the last URL, between 0 (exclusive) and 1; lower releases sooner (less waiting, less order), higher keeps the manager's order longer."`
	RequestsPerConnection int      `toml:"requests_per_connection" doc:"URLs a host fetches in a row once it holds a connection (the paper's P), until the harvester has learned how many its server serves per connection."`
	Wait                  Duration `toml:"wait" doc:"Time to wait between two requests to the same host; with wait_factor, the floor of the adaptive wait."`
	WaitFactor            float64  `toml:"wait_factor" doc:"0 for a fixed wait; otherwise the wait is this multiple of the host's last response time, between wait and max_wait."`
	MaxWait               Duration `toml:"max_wait" doc:"Ceiling of the adaptive wait (wait_factor > 0)."`
	MaxCrawlDelay         Duration `toml:"max_crawl_delay" doc:"A robots.txt Crawl-delay longer than this is cut to it."`
	MaxIdle               Duration `toml:"max_idle" doc:"A host keeps its connection (and its place among the connections) over a wait up to this long; a longer wait closes the connection and sends the host back to the server queue."`
	MaxRetryAfter         Duration `toml:"max_retry_after" doc:"A 429 or 503 with Retry-After holds the host back that long; a host asking for longer is given up for the batch."`
	MaxFailures           int      `toml:"max_failures" doc:"Consecutive failures (5xx, timeouts, connection errors) after which a host is given up for the batch."`
	MaxStreaming          int      `toml:"max_streaming" doc:"Page responses in a row cut at max_body_bytes or by min_transfer_rate (the count goes on across batches) after which a host is given up for the batch as streaming; the seeder flags its sites and the manager then schedules only a probe URL of them until one answers whole."`
	ConnectTimeout        Duration `toml:"connect_timeout" doc:"Time limit to open a connection (TCP, and the TLS handshake)."`
	FirstByteTimeout      Duration `toml:"first_byte_timeout" doc:"Time limit from sending a request to the first byte of its response."`
	ReadTimeout           Duration `toml:"read_timeout" doc:"Time limit between two reads of one response."`
	TotalTimeout          Duration `toml:"total_timeout" doc:"Time limit for a whole request, body included."`
	MinTransferRate       int64    `toml:"min_transfer_rate" doc:"Bytes per second below which a response is cut, measured over 5 s windows after its first byte; 0 turns the check off."`
	MaxBodyBytes          int64    `toml:"max_body_bytes" doc:"Bodies are cut after this many (decoded) bytes and marked truncated."`
	MaxRobotsBytes        int64    `toml:"max_robots_bytes" doc:"robots.txt files are read up to this many bytes."`
	MaxSitemapBytes       int64    `toml:"max_sitemap_bytes" doc:"Sitemaps (batch entries of kind sitemap, docs/sitemaps.md) are read up to this many bytes, of any media type; the protocol's limit is 50,000,000 uncompressed. Each connection may hold one such body in memory."`
	AcceptMIME            []string `toml:"accept_mime" doc:"Media types (type/subtype or type/*) whose bodies are downloaded; responses of other types are recorded without their body. Empty accepts every type."`
	AllowPrivate          bool     `toml:"allow_private" doc:"Allow loopback, private and link-local addresses (only for tests and the demo)."`
	CAFile                string   `toml:"ca_file" doc:"PEM file of the certificate authorities a server's certificate is checked against; empty uses the system's. The check never stops a fetch (an archival crawl takes what servers send): its verdict is recorded with the response (WARC metadata tlsCertValid, tlsCertProblem)."`
	DNSServer             string   `toml:"dns_server" doc:"DNS server as host:port; empty uses the system resolver."`
	DNSTimeout            Duration `toml:"dns_timeout" doc:"Time limit for one DNS lookup."`
	DNSCacheTime          Duration `toml:"dns_cache_time" doc:"How long an answer of the system resolver (dns_server empty), which gives no TTL, is kept in the harvester's cache."`
	DNSMinTTL             Duration `toml:"dns_min_ttl" doc:"An answer of dns_server is kept for its TTL, but at least this long."`
	DNSMaxTTL             Duration `toml:"dns_max_ttl" doc:"An answer of dns_server is kept for its TTL, but at most this long."`
	DNSNegativeTime       Duration `toml:"dns_negative_time" doc:"How long a failed lookup (no such name, no address, SERVFAIL, no answer) is kept before the name is asked again."`
	DNSLookups            int      `toml:"dns_lookups" doc:"Simultaneous DNS lookups; the harvester also resolves at most this many servers ahead of its free connections."`
	OutageHosts           int      `toml:"outage_hosts" doc:"A network outage stops the harvest (exit code 5, nothing counted against the web) when this many host names in a row fail their DNS lookup for the resolver's fault (refused, no answer, SERVFAIL; NXDOMAIN is an answer) with no lookup answered in between, or fail to connect for lack of a route with no connection made in between; a batch of fewer hosts needs them all (at least 2). 0 turns the detection off."`
	WARCMaxBytes          int64    `toml:"warc_max_bytes" doc:"A new WARC file is started once the current one is this large."`
	WARCMode              string   `toml:"warc_mode" doc:"How response records hold what servers sent: raw (as received: the status line and header fields with their names' case and order, the body with its content coding, gzip or br, which the gatherer decodes; a chunked body de-chunked) or decoded (bodies decoded by the harvester, Content-Encoding renamed X-Wire-Decoded-Content-Encoding, header names made canonical and sorted: the records of harvests before issue 37). Raw records are what replay tools and other archives expect: their payload digests are those of the same resource elsewhere. max_body_bytes counts decoded bytes either way."`
	WARCPrefix            string   `toml:"warc_prefix" doc:"First part of the WARC file names, PREFIX-YYYYMMDDhhmmss-BATCH-sIofN-SERIAL.warc.gz (the harvest's start, the batch, the shard, the file's number): 1 to 64 letters, digits, '.', '_' or '-' (not first). Give each crawl its own (an institution's, a country's) so that its files keep unique names in archives that gather many crawls."`
	StopTimeout           Duration `toml:"stop_timeout" doc:"On SIGINT or SIGTERM, requests in flight get this long to finish before they are abandoned."`
	BatchDeadline         Duration `toml:"batch_deadline" doc:"A harvest ends this long after it started: URLs not requested by then are logged deferred and go back to the frontier unharmed. 0: twice the batch's manager.batch_duration (in its header), or no deadline for a batch without one."`
	TailFraction          float64  `toml:"tail_fraction" doc:"The straggling tail of a harvest begins when the hosts that still have URLs left are at most this fraction of the batch's hosts; 0 turns the tail rule off."`
	TailFactor            float64  `toml:"tail_factor" doc:"Once the tail has begun, the harvest ends after this multiple of the time it took to reach the tail (at least tail_min); URLs not requested by then are deferred to the next batch."`
	TailMin               Duration `toml:"tail_min" doc:"The shortest tail: a harvest never ends by the tail rule less than this long after its tail began."`
}

func defaultHarvester() Harvester {
	return Harvester{
		Connections:           500,
		ConnectionsPerIP:      8,
		AddressWait:           Duration(250 * time.Millisecond),
		ValueClock:            0.5,
		Ranking:               "value",
		RequestsPerConnection: 50,
		Wait:                  Duration(15 * time.Second),
		WaitFactor:            0,
		MaxWait:               Duration(60 * time.Second),
		MaxCrawlDelay:         Duration(60 * time.Second),
		MaxIdle:               Duration(5 * time.Second),
		MaxRetryAfter:         Duration(10 * time.Minute),
		MaxFailures:           3,
		MaxStreaming:          3,
		ConnectTimeout:        Duration(10 * time.Second),
		FirstByteTimeout:      Duration(20 * time.Second),
		ReadTimeout:           Duration(20 * time.Second),
		TotalTimeout:          Duration(60 * time.Second),
		MinTransferRate:       512,
		MaxBodyBytes:          2 << 20,
		MaxRobotsBytes:        500 << 10,
		MaxSitemapBytes:       50_000_000,
		AcceptMIME:            []string{"text/html", "application/xhtml+xml", "text/plain", "text/xml", "application/xml", "application/pdf"},
		AllowPrivate:          false,
		DNSServer:             "",
		DNSTimeout:            Duration(5 * time.Second),
		DNSCacheTime:          Duration(time.Hour),
		DNSMinTTL:             Duration(time.Minute),
		DNSMaxTTL:             Duration(time.Hour),
		DNSNegativeTime:       Duration(5 * time.Minute),
		DNSLookups:            32,
		OutageHosts:           10,
		WARCMaxBytes:          1 << 30,
		WARCMode:              WARCModeRaw,
		WARCPrefix:            warcio.DefaultPrefix,
		StopTimeout:           Duration(10 * time.Second),
		BatchDeadline:         0,
		TailFraction:          0.1,
		TailFactor:            0.25,
		TailMin:               Duration(500 * time.Millisecond),
	}
}

// DeadlineFor is how long a harvest of a batch planned for
// batchDuration (its header's manager.batch_duration; 0 if none) may
// run: batch_deadline, or when that is 0 twice batchDuration; 0 means no
// deadline. The harvester ends a batch by it, and the manager never
// fills a batch past it.
func (c *Harvester) DeadlineFor(batchDuration time.Duration) time.Duration {
	if d := c.BatchDeadline.D(); d > 0 {
		return d
	}
	return 2 * max(batchDuration, 0)
}

// validate reports the settings of the section that are out of range.
func (c *Harvester) validate(bad func(key, format string, args ...any)) {
	if c.Connections < 1 || c.Connections > 10000 {
		bad("harvester.connections", "must be between 1 and 10000, got %d", c.Connections)
	}
	if c.AddressWait < 0 {
		bad("harvester.address_wait", "must not be negative (0 turns the floor off)")
	}
	if c.ConnectionsPerIP < 0 {
		bad("harvester.connections_per_ip", "must not be negative (0 means no cap)")
	}
	if !contains(Rankings(), c.Ranking) {
		bad("harvester.ranking", "must be one of %s, got %s", strings.Join(Rankings(), ", "), excerpt.Quote(c.Ranking))
	}
	if !(c.ValueClock > 0 && c.ValueClock <= 1) {
		bad("harvester.value_clock", "must be above 0 and at most 1, got %g", c.ValueClock)
	}
	if c.RequestsPerConnection < 1 {
		bad("harvester.requests_per_connection", "must be at least 1, got %d", c.RequestsPerConnection)
	}
	if c.Wait < 0 {
		bad("harvester.wait", "must not be negative")
	}
	if c.WaitFactor < 0 || c.WaitFactor > 1000 {
		bad("harvester.wait_factor", "must be between 0 and 1000, got %g", c.WaitFactor)
	}
	if c.WaitFactor > 0 && c.MaxWait < c.Wait {
		bad("harvester.max_wait", "must not be shorter than harvester.wait (%s), got %s", c.Wait, c.MaxWait)
	}
	for key, d := range map[string]Duration{"harvester.max_crawl_delay": c.MaxCrawlDelay, "harvester.max_idle": c.MaxIdle, "harvester.max_retry_after": c.MaxRetryAfter} {
		if d < 0 {
			bad(key, "must not be negative")
		}
	}
	if c.MaxFailures < 1 {
		bad("harvester.max_failures", "must be at least 1, got %d", c.MaxFailures)
	}
	if c.MaxStreaming < 1 {
		bad("harvester.max_streaming", "must be at least 1, got %d", c.MaxStreaming)
	}
	for key, d := range map[string]Duration{"harvester.connect_timeout": c.ConnectTimeout, "harvester.first_byte_timeout": c.FirstByteTimeout,
		"harvester.read_timeout": c.ReadTimeout, "harvester.total_timeout": c.TotalTimeout, "harvester.dns_timeout": c.DNSTimeout, "harvester.stop_timeout": c.StopTimeout} {
		if d <= 0 {
			bad(key, "must be positive")
		}
	}
	if c.DNSCacheTime < 0 {
		bad("harvester.dns_cache_time", "must not be negative")
	}
	if c.DNSMinTTL < 0 || c.DNSNegativeTime < 0 {
		bad("harvester.dns_min_ttl", "dns_min_ttl and dns_negative_time must not be negative")
	}
	if c.DNSMaxTTL <= 0 || c.DNSMaxTTL < c.DNSMinTTL {
		bad("harvester.dns_max_ttl", "must be positive and at least dns_min_ttl (%s), got %s", c.DNSMinTTL, c.DNSMaxTTL)
	}
	if c.MinTransferRate < 0 {
		bad("harvester.min_transfer_rate", "must not be negative (0 turns the check off)")
	}
	if c.MaxBodyBytes < 1024 {
		bad("harvester.max_body_bytes", "must be at least 1024, got %d", c.MaxBodyBytes)
	}
	if c.MaxSitemapBytes < 1024 {
		bad("harvester.max_sitemap_bytes", "must be at least 1024, got %d", c.MaxSitemapBytes)
	}
	if c.MaxRobotsBytes < 1024 {
		bad("harvester.max_robots_bytes", "must be at least 1024, got %d", c.MaxRobotsBytes)
	}
	for _, m := range c.AcceptMIME {
		if !validMIMEPattern(m) {
			bad("harvester.accept_mime", "want type/subtype or type/*, got %s", excerpt.Quote(m))
		}
	}
	if s := c.DNSServer; s != "" && !strings.Contains(s, ":") {
		bad("harvester.dns_server", "want host:port, got %s", excerpt.Quote(s))
	}
	if c.OutageHosts < 0 {
		bad("harvester.outage_hosts", "must not be negative (0 turns the detection off), got %d", c.OutageHosts)
	}
	if c.DNSLookups < 1 || c.DNSLookups > 1000 {
		bad("harvester.dns_lookups", "must be between 1 and 1000, got %d", c.DNSLookups)
	}
	if c.BatchDeadline < 0 {
		bad("harvester.batch_deadline", "must not be negative (0: twice the batch's batch_duration)")
	}
	if c.TailFraction < 0 || c.TailFraction >= 1 {
		bad("harvester.tail_fraction", "must be at least 0 and below 1 (0 turns the tail rule off), got %g", c.TailFraction)
	}
	if c.TailFactor < 0 || c.TailFactor > 1000 {
		bad("harvester.tail_factor", "must be between 0 and 1000, got %g", c.TailFactor)
	}
	if c.TailMin < 0 {
		bad("harvester.tail_min", "must not be negative")
	}
	if c.WARCMaxBytes < 1024 {
		bad("harvester.warc_max_bytes", "must be at least 1024, got %d", c.WARCMaxBytes)
	}
	if !contains(WARCModes(), c.WARCMode) {
		bad("harvester.warc_mode", "must be one of %s, got %s", strings.Join(WARCModes(), ", "), excerpt.Quote(c.WARCMode))
	}
	if err := warcio.CheckPrefix(c.WARCPrefix); err != nil {
		bad("harvester.warc_prefix", "%v, in %s", err, excerpt.Quote(c.WARCPrefix))
	}
}

// validMIMEPattern accepts "type/subtype" and "type/*" in lower case.
func validMIMEPattern(p string) bool {
	typ, sub, ok := strings.Cut(p, "/")
	if !ok || typ == "" || sub == "" || typ == "*" || p != strings.ToLower(p) {
		return false
	}
	if sub == "*" {
		p = typ + "/x"
	}
	mt, params, err := mime.ParseMediaType(p)
	return err == nil && len(params) == 0 && mt == p
}
