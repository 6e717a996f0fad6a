// Command testweb serves the deterministic synthetic web of package
// pkg/testweb on loopback addresses until it receives SIGINT or SIGTERM.
//
//	go run ./scripts/testweb --hosts 200 --seed 1 --http 127.0.0.1:0 --dns 127.0.0.1:0 \
//	    --seeds-out seeds.txt --seeds 20 --ready-file ready.txt --log requests.tsv
//
// --pages N scales the site sizes to about N pages in all, --heavy-pages
// gives page sizes a heavy tail and --hostile adds the hostile hosts (see
// the package documentation of pkg/testweb): the scale run of
// scripts/bench-crawl.sh uses all three.
//
// --heterogeneous serves the web that behaves like a real one in time
// (testweb.Config.Heterogeneous): per-host heavy-tailed response times
// with a few slow hosts, Crawl-delay on a few percent of the sites of
// every size, a handful of big sites, and bare names (X for www.X) that
// redirect to their site. Its tunables, each 0 for the default and
// refused without --heterogeneous: --response-median (2ms),
// --slow-fraction (0.02; negative: none), --slow-min and --slow-max
// (200ms, 1s), --crawl-delay-fraction (0.03; negative: none),
// --crawl-delay-min and --crawl-delay-max (2s, 5s; whole seconds),
// --crawl-delay-max-pages (0: sites of every size; N: the Crawl-delay
// sites, as many, are drawn among the sites of at most N pages only, so
// that no site holds a crawl up for long: scripts/bench-timeline.sh's
// BENCH_CRAWL_DELAY_MAX_PAGES), --big-sites (5; negative: none) and
// --alias-fraction (1/3; negative: none). The demo, the end-to-end test
// and scripts/bench-crawl.sh use it.
//
// --subdomain-share F renames a fraction F of the in-scope sites as
// subdomains of a few registrable domains (testweb.Config.SubdomainShare:
// fisica3.uni1.cl, volcan7.hosting1.cl ...; --subdomain-domains of them,
// default max(2, hosts/100)), each domain on several of the --addresses
// (2 or more needed), some addresses holding several of its sites, and
// with --heterogeneous a Crawl-delay site sharing its address with a
// sibling while the domain's other addresses are fast. Off (0) the web is
// byte for byte the web of before the flag.
//
// --https-share F serves a fraction F of the sites over TLS (the HTTPS web
// of pkg/testweb: most answer 301 to HTTPS on plain HTTP, a few serve
// both schemes, a few are HTTPS-only; --trouble-fraction of the in-scope
// ones have expired, wrong-name or self-signed certificates, need SNI, or
// speak only TLS 1.2 or 1.3), on the TLS address --https (default
// 127.0.0.1:0); --ca-out writes the certificate of the CA that signs
// them, for a client's trust store. The ready file then has a third
// line, "https=127.0.0.1:PORT". With --hostile the HTTPS web adds the
// hostile TLS hosts (tls-stall, tls-drip, tls-garbage, scheme-loop).
//
// --change serves a web whose pages change (testweb.Config.Change,
// docs/testweb.md): a share --change-share (0.7; negative: none) of the
// HTML pages change as Poisson processes, each of its own mean interval
// drawn log-uniformly between --change-interval-min and
// --change-interval-max (30s and 50m; whole seconds), each version adding
// a paragraph and, on a share --change-link-share (0.5) of them, links.
// Versions count from --time-origin (RFC 3339; default: when the web is
// built, written into --config-out so that testweb.New rebuilds the same
// versions). With --change every site gets a validator policy: a share
// --honest-share (0.6) sends a true Last-Modified and ETag and answers
// conditional requests with 304, --lying-share (0.2) sends
// "Last-Modified: now" with every answer, the others send no validators;
// their sitemaps' lastmod are true, now, or absent alike. Without
// --change, --honest-share and --lying-share give the validators to a web
// whose pages never change. --compress-share F makes a fraction F of the
// sites answer with gzip or br when the request's Accept-Encoding allows,
// and --chunked-share F a fraction F send chunked answers without
// Content-Length. All off (0), the web is byte for byte the web of before
// the flags.
//
// Once listening it writes the seed URLs (one per line) to --seeds-out,
// the effective configuration as JSON (testweb.Config, with the actual
// listen addresses, so that testweb.New rebuilds the same web with the
// same URLs) to --config-out, then "http=127.0.0.1:PORT\ndns=127.0.0.1:PORT\n"
// to --ready-file (atomically: a temporary file renamed into place) and
// to stdout. On
// SIGINT or SIGTERM it stops and, with --log, writes the request log as
// TSV without a header line, one request per line in arrival order:
// connection id, host, path, status, start (RFC 3339 with nanoseconds),
// end, and the local IP address that answered (with --addresses N > 1,
// the host's address; logs written before this field existed have the
// first six only, and crawlcheck reads both), "tls" or "tcp", and a
// ninth field "cond" on the lines of conditional requests only
// (If-None-Match or If-Modified-Since; crawlcheck freshness counts
// them). Listen addresses must be
// IPv4 loopback addresses (127.0.0.0/8).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/wirecrawl/wire/pkg/command"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// main runs the command the way the crawler's binaries do
// (command.Main: SIGINT and SIGTERM cancel it, errors exit non-zero).
func main() {
	command.Main(newApp(os.Stdout))
}

// options are the command-line settings.
type options struct {
	cfg       testweb.Config
	seedsOut  string
	seeds     int
	readyFile string
	logFile   string
	configOut string
	caOut     string
}

// newApp builds the command; it serves until the context of RunContext is
// cancelled.
func newApp(stdout io.Writer) *cli.App {
	return &cli.App{
		Name:            "testweb",
		Usage:           "serve the synthetic test web (HTTP and DNS) on loopback",
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "hosts", Value: testweb.DefaultHosts, Usage: "number of in-scope hosts"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "generator seed (same seed, same web)"},
			&cli.StringFlag{Name: "suffix", Value: testweb.DefaultSuffix, Usage: "national suffix of in-scope hosts"},
			&cli.IntFlag{Name: "max-pages", Value: testweb.DefaultMaxPages, Usage: "pages of the largest site"},
			&cli.IntFlag{Name: "out-of-scope", Value: testweb.DefaultOutOfScope, Usage: "number of out-of-scope hosts (-1 for none)"},
			&cli.StringFlag{Name: "http", Value: testweb.DefaultAddr, Usage: "HTTP listen address (127.0.0.0/8 only)"},
			&cli.StringFlag{Name: "dns", Value: testweb.DefaultAddr, Usage: "DNS listen address, UDP and TCP (127.0.0.0/8 only)"},
			&cli.DurationFlag{Name: "latency", Usage: "artificial delay before every HTTP response"},
			&cli.IntFlag{Name: "addresses", Value: 1, Usage: "spread the hosts over this many loopback addresses (127.0.0.1 and 127.77.X.Y), as virtual hosts share servers"},
			&cli.IntFlag{Name: "pages", Usage: "scale site sizes to about this many pages in all (0: unscaled)"},
			&cli.BoolFlag{Name: "heavy-pages", Usage: "heavy-tailed page sizes (5% of pages carry a long appendix)"},
			&cli.BoolFlag{Name: "hostile", Usage: "add the hostile hosts (drip, endless, gzip bomb, loops, traps, resets, DNS failures)"},
			&cli.BoolFlag{Name: "heterogeneous", Usage: "a web that behaves like a real one in time: heavy-tailed response times, slow hosts, Crawl-delays, big sites, bare-name aliases"},
			&cli.DurationFlag{Name: "response-median", Usage: "with --heterogeneous: median response time of ordinary hosts (0: 2ms)"},
			&cli.Float64Flag{Name: "slow-fraction", Usage: "with --heterogeneous: fraction of in-scope hosts that are slow (0: 0.02; negative: none)"},
			&cli.DurationFlag{Name: "slow-min", Usage: "with --heterogeneous: least response time of a slow host (0: 200ms)"},
			&cli.DurationFlag{Name: "slow-max", Usage: "with --heterogeneous: greatest response time of a slow host (0: 1s)"},
			&cli.Float64Flag{Name: "crawl-delay-fraction", Usage: "with --heterogeneous: fraction of in-scope sites with a Crawl-delay, of every size (0: 0.03; negative: none)"},
			&cli.DurationFlag{Name: "crawl-delay-min", Usage: "with --heterogeneous: least Crawl-delay, whole seconds (0: 2s)"},
			&cli.DurationFlag{Name: "crawl-delay-max", Usage: "with --heterogeneous: greatest Crawl-delay, whole seconds (0: 5s)"},
			&cli.IntFlag{Name: "crawl-delay-max-pages", Usage: "with --heterogeneous: draw the Crawl-delay sites (as many) only among sites of at most this many pages (0: sites of every size)"},
			&cli.IntFlag{Name: "big-sites", Usage: "with --heterogeneous: sites of max-pages/4 to max-pages pages (0: 5; negative: none)"},
			&cli.Float64Flag{Name: "alias-fraction", Usage: "with --heterogeneous: fraction of www.X sites also answering (301) on X (0: 1/3; negative: none)"},
			&cli.Float64Flag{Name: "subdomain-share", Usage: "fraction of in-scope sites renamed as subdomains of a few registrable domains (uni1.cl, hosting1.cl ...), on several addresses; needs --addresses 2 or more (0: none)"},
			&cli.IntFlag{Name: "subdomain-domains", Usage: "with --subdomain-share: number of registrable domains holding them (0: max(2, hosts/100))"},
			&cli.Float64Flag{Name: "https-share", Usage: "fraction of the sites served over TLS, with a CA made at start (0: plain HTTP only)"},
			&cli.StringFlag{Name: "https", Usage: "with --https-share: TLS listen address (127.0.0.0/8 only; default 127.0.0.1:0)"},
			&cli.Float64Flag{Name: "trouble-fraction", Usage: "with --https-share: fraction of in-scope HTTPS sites with TLS trouble (0: 0.12; negative: none)"},
			&cli.StringFlag{Name: "ca-out", Usage: "with --https-share: write the CA certificate (PEM) here once listening"},
			&cli.BoolFlag{Name: "change", Usage: "pages that change as Poisson processes, and validators (honest, none, lying) per site"},
			&cli.Float64Flag{Name: "change-share", Usage: "with --change: fraction of the HTML pages that change (0: 0.7; negative: none)"},
			&cli.DurationFlag{Name: "change-interval-min", Usage: "with --change: shortest mean interval between two changes of a page, whole seconds (0: 30s)"},
			&cli.DurationFlag{Name: "change-interval-max", Usage: "with --change: longest mean interval between two changes of a page, whole seconds (0: 50m)"},
			&cli.Float64Flag{Name: "change-link-share", Usage: "with --change: fraction of the changing pages whose links change too (0: 0.5; negative: none)"},
			&cli.StringFlag{Name: "time-origin", Usage: "with --change or validators: time (RFC 3339) from which versions count (default: when the web is built)"},
			&cli.Float64Flag{Name: "honest-share", Usage: "fraction of the sites with true Last-Modified and ETag, answering 304 (with --change 0: 0.6; negative: none)"},
			&cli.Float64Flag{Name: "lying-share", Usage: "fraction of the sites sending Last-Modified: now on every answer (with --change 0: 0.2; negative: none)"},
			&cli.Float64Flag{Name: "compress-share", Usage: "fraction of the sites answering gzip or br when Accept-Encoding allows (0: none)"},
			&cli.Float64Flag{Name: "chunked-share", Usage: "fraction of the sites sending chunked answers without Content-Length (0: none)"},
			&cli.StringFlag{Name: "config-out", Usage: "write the effective configuration (JSON, actual addresses) here once listening"},
			&cli.StringFlag{Name: "seeds-out", Usage: "write seed URLs (one per line) to this file"},
			&cli.IntFlag{Name: "seeds", Value: 20, Usage: "number of seed URLs (biggest sites first)"},
			&cli.StringFlag{Name: "ready-file", Usage: "write http=ADDR and dns=ADDR lines here once listening"},
			&cli.StringFlag{Name: "log", Usage: "on exit, write the request log as TSV: conn, host, path, status, start, end, address, tls or tcp, and cond on conditional requests"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("unexpected arguments: %v", c.Args().Slice())
			}
			var origin time.Time
			if v := c.String("time-origin"); v != "" {
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return fmt.Errorf("--time-origin %q: not an RFC 3339 time such as 2026-12-01T00:00:00Z: %w", v, err)
				}
				origin = t
			}
			opts := options{
				cfg: testweb.Config{
					Seed:       c.Int64("seed"),
					Hosts:      c.Int("hosts"),
					Suffix:     c.String("suffix"),
					MaxPages:   c.Int("max-pages"),
					OutOfScope: c.Int("out-of-scope"),
					HTTPAddr:   c.String("http"),
					DNSAddr:    c.String("dns"),
					Latency:    c.Duration("latency"),
					Addresses:  c.Int("addresses"),
					Pages:      c.Int("pages"),
					HeavyPages: c.Bool("heavy-pages"),
					Hostile:    c.Bool("hostile"),

					Heterogeneous:      c.Bool("heterogeneous"),
					ResponseMedian:     c.Duration("response-median"),
					SlowFraction:       c.Float64("slow-fraction"),
					SlowMin:            c.Duration("slow-min"),
					SlowMax:            c.Duration("slow-max"),
					CrawlDelayFraction: c.Float64("crawl-delay-fraction"),
					CrawlDelayMin:      c.Duration("crawl-delay-min"),
					CrawlDelayMax:      c.Duration("crawl-delay-max"),
					CrawlDelayMaxPages: c.Int("crawl-delay-max-pages"),
					BigSites:           c.Int("big-sites"),
					AliasFraction:      c.Float64("alias-fraction"),

					SubdomainShare:   c.Float64("subdomain-share"),
					SubdomainDomains: c.Int("subdomain-domains"),

					HTTPSShare:      c.Float64("https-share"),
					HTTPSAddr:       c.String("https"),
					TroubleFraction: c.Float64("trouble-fraction"),

					Change:            c.Bool("change"),
					ChangeShare:       c.Float64("change-share"),
					ChangeIntervalMin: c.Duration("change-interval-min"),
					ChangeIntervalMax: c.Duration("change-interval-max"),
					ChangeLinkShare:   c.Float64("change-link-share"),
					TimeOrigin:        origin,
					HonestShare:       c.Float64("honest-share"),
					LyingShare:        c.Float64("lying-share"),
					CompressShare:     c.Float64("compress-share"),
					ChunkedShare:      c.Float64("chunked-share"),
				},
				caOut:     c.String("ca-out"),
				configOut: c.String("config-out"),
				seedsOut:  c.String("seeds-out"),
				seeds:     c.Int("seeds"),
				readyFile: c.String("ready-file"),
				logFile:   c.String("log"),
			}
			return run(c.Context, opts, stdout)
		},
	}
}

// run serves the web until ctx is done.
func run(ctx context.Context, opts options, stdout io.Writer) (err error) {
	if opts.cfg.HTTPAddr == "" || opts.cfg.DNSAddr == "" {
		return fmt.Errorf("--http and --dns must not be empty")
	}
	if err := testweb.CheckLoopback(opts.cfg.HTTPAddr); err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	if err := testweb.CheckLoopback(opts.cfg.DNSAddr); err != nil {
		return fmt.Errorf("--dns: %w", err)
	}
	if opts.seeds < 0 {
		return fmt.Errorf("--seeds must not be negative, got %d", opts.seeds)
	}
	w, err := testweb.New(opts.cfg)
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			if cerr := w.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()

	if opts.seedsOut != "" {
		text := strings.Join(w.SeedURLs(opts.seeds), "\n")
		if text != "" {
			text += "\n"
		}
		if err := writeAtomic(opts.seedsOut, []byte(text)); err != nil {
			return fmt.Errorf("writing seeds: %w", err)
		}
	}
	if opts.configOut != "" {
		cfg := opts.cfg
		cfg.HTTPAddr, cfg.DNSAddr, cfg.HTTPSAddr = w.HTTPAddr(), w.DNSAddr(), w.HTTPSAddr()
		cfg.TimeOrigin = w.Origin() // the default origin is when the web was built: the rebuilt web needs it
		data, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding configuration: %w", err)
		}
		if err := writeAtomic(opts.configOut, append(data, '\n')); err != nil {
			return fmt.Errorf("writing configuration: %w", err)
		}
	}
	if opts.caOut != "" {
		if w.CACertPEM() == nil {
			return fmt.Errorf("--ca-out needs --https-share")
		}
		if err := writeAtomic(opts.caOut, w.CACertPEM()); err != nil {
			return fmt.Errorf("writing CA certificate: %w", err)
		}
	}
	ready := "http=" + w.HTTPAddr() + "\ndns=" + w.DNSAddr() + "\n"
	if a := w.HTTPSAddr(); a != "" {
		ready += "https=" + a + "\n"
	}
	if opts.readyFile != "" {
		if err := writeAtomic(opts.readyFile, []byte(ready)); err != nil {
			return fmt.Errorf("writing ready file: %w", err)
		}
	}
	if _, err := io.WriteString(stdout, ready); err != nil {
		return fmt.Errorf("writing to stdout: %w", err)
	}

	<-ctx.Done()
	closed = true
	if err := w.Close(); err != nil {
		return err
	}
	if opts.logFile != "" {
		if err := writeAtomic(opts.logFile, requestLog(w.Requests(), w.Conns())); err != nil {
			return fmt.Errorf("writing request log: %w", err)
		}
	}
	return nil
}

// requestLog renders requests as TSV lines: conn, host, path, status,
// start, end (times in RFC 3339 with nanoseconds, UTC), address that
// answered and tls or tcp (both left out when the address is unknown),
// and "cond" on a request that carried If-None-Match or
// If-Modified-Since (left out otherwise, so that the log of a crawl
// without conditional requests is the log of before the field).
func requestLog(reqs []testweb.Request, conns []testweb.Conn) []byte {
	tls := map[uint64]bool{}
	for _, c := range conns {
		if c.TLS {
			tls[c.ID] = true
		}
	}
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString(strconv.FormatUint(r.ConnID, 10) + "\t" + r.Host + "\t" + r.Path + "\t" +
			strconv.Itoa(r.Status) + "\t" + r.Start.UTC().Format(time.RFC3339Nano) + "\t" +
			r.End.UTC().Format(time.RFC3339Nano))
		if r.Addr != "" {
			b.WriteString("\t" + r.Addr)
			if tls[r.ConnID] {
				b.WriteString("\ttls")
			} else {
				b.WriteString("\ttcp")
			}
			if r.Conditional {
				b.WriteString("\tcond")
			}
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// writeAtomic writes data to a temporary file next to path and renames it
// into place, so readers never see a partial file.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("creating temporary file for %s: %w", path, err)
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("setting mode of %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("renaming %s to %s: %w", tmp, path, err)
	}
	return nil
}
