package faulttest

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/fetch"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/testweb"
)

// CAFlags writes the certificate authority of an HTTPS test web to
// dir/testweb-ca.pem and returns the seeder init flags that make the
// harvester trust it; none for a web without HTTPS.
func CAFlags(web *testweb.Web, dir string) ([]string, error) {
	pem := web.CACertPEM()
	if pem == nil {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write the test web's CA: %w", err)
	}
	path := filepath.Join(dir, "testweb-ca.pem")
	if err := os.WriteFile(path, pem, 0o644); err != nil {
		return nil, fmt.Errorf("write the test web's CA: %w", err)
	}
	return []string{"--harvester-ca-file", path}, nil
}

// tlsSlack is what a connection to a hostile TLS host may outlive the
// connect time limit by (the server notices the client's hang-up at its
// next read or write: the dripping host's next byte).
const tlsSlack = 2 * time.Second

// HostileTLS is what a crawl did with the hostile TLS hosts.
type HostileTLS struct {
	// Lines counts their fetch log lines, Kinds them by error kind
	// (the scheme-loop host's by status).
	Lines int
	Kinds map[string]int
	// Conns counts their connections, LongestConn the longest one.
	Conns       int
	LongestConn time.Duration
}

// CheckHostileTLS reads the fetch logs of the collection col and the test
// web's connection records: every URL of a host that stalls, drips or
// garbles its handshake is logged as a tls error, and none of their
// connections lasted longer than the connect time limit (plus tlsSlack);
// the scheme-loop host's URLs are logged as redirects, never fetched
// without end. It returns the figures and the problems found (none for a
// web without hostile TLS hosts).
func CheckHostileTLS(col string, web *testweb.Web, hc config.Harvester) (HostileTLS, []string) {
	out := HostileTLS{Kinds: map[string]int{}}
	var problems []string
	kinds := map[string]testweb.HostileKind{}
	for _, h := range web.HostileHosts() {
		switch h.Kind {
		case testweb.HostileTLSStall, testweb.HostileTLSDrip, testweb.HostileTLSGarbage, testweb.HostileSchemeLoop:
			kinds[h.Name] = h.Kind
		}
	}
	if len(kinds) == 0 {
		return out, nil
	}
	dirs, err := batchDirs(col)
	if err != nil {
		return out, []string{err.Error()}
	}
	for _, dir := range dirs {
		recs, err := fetchlog.ReadFile(filepath.Join(dir, collection.HarvestDir, fetchlog.LogFile))
		if err != nil {
			continue // not harvested
		}
		for _, r := range recs {
			u, err := url.Parse(r.URL)
			if err != nil {
				continue
			}
			kind, ok := kinds[u.Hostname()]
			if !ok {
				continue
			}
			out.Lines++
			if kind == testweb.HostileSchemeLoop {
				label := fmt.Sprint(r.Status)
				if r.Err != "" {
					label = fetch.KindOf(r.Err)
				}
				out.Kinds["scheme-loop "+label]++
				if k := fetch.KindOf(r.Err); r.Status != 301 && k != "deferred" && k != "robots" {
					problems = append(problems, fmt.Sprintf("%s logged %d %q, want a 301", r.URL, r.Status, r.Err))
				}
				continue
			}
			k := fetch.KindOf(r.Err)
			out.Kinds[k]++
			if k != string(fetch.KindTLS) && k != "deferred" {
				problems = append(problems, fmt.Sprintf("%s (%s) logged %d %q, want a tls error", r.URL, kind, r.Status, r.Err))
			}
		}
	}
	limit := hc.ConnectTimeout.D() + tlsSlack
	for _, c := range web.Conns() {
		kind, ok := kinds[c.Host]
		if !ok || !c.TLS || kind == testweb.HostileSchemeLoop {
			continue
		}
		out.Conns++
		d := c.Closed.Sub(c.Opened)
		if c.Closed.IsZero() {
			d = time.Since(c.Opened)
		}
		out.LongestConn = max(out.LongestConn, d)
		if d > limit {
			problems = append(problems, fmt.Sprintf("connection %d to %s (%s) lasted %v, more than connect_timeout %v", c.ID, c.Host, kind, d.Round(time.Millisecond), hc.ConnectTimeout))
		}
	}
	return out, problems
}
