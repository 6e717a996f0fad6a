package testweb

import (
	"bytes"
	"compress/gzip"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/brotli"
)

// This file is what a site tells about its answers and how it sends
// them: validators (Last-Modified, ETag, 304 Not Modified; Config.Change,
// HonestShare, LyingShare), content codings (gzip, br; CompressShare) and
// chunked transfer coding (ChunkedShare). Each is drawn per site from its
// own stream. A site without any of them is served as before they existed
// (writeResponse with an empty extraHeader).

// brotliLevel is the brotli quality of compressed answers: what servers
// use for dynamic pages (nginx's brotli module and Apache's mod_brotli
// default to 6 and 5; 4 to 6 are common).
const brotliLevel = 5

// ValidatorPolicy is what a site tells about the age of its answers.
type ValidatorPolicy uint8

// The validator policies.
const (
	// ValidatorsOff: the web has no validators (Config.Change,
	// HonestShare and LyingShare all off); sitemaps keep their drawn
	// dates.
	ValidatorsOff ValidatorPolicy = iota
	// ValidatorsHonest: a true Last-Modified and a strong ETag with every
	// 200, 304 Not Modified for a matching If-None-Match or a
	// If-Modified-Since not before the content's change, and true
	// sitemap lastmods.
	ValidatorsHonest
	// ValidatorsNone: neither Last-Modified nor ETag, never 304, no
	// sitemap lastmod.
	ValidatorsNone
	// ValidatorsLying: "Last-Modified: <the time of the request>" on
	// every answer, no ETag, never 304, and every sitemap lastmod the
	// time of the request.
	ValidatorsLying
)

// String names the policy: "off", "honest", "none" or "lying".
func (p ValidatorPolicy) String() string {
	switch p {
	case ValidatorsHonest:
		return "honest"
	case ValidatorsNone:
		return "none"
	case ValidatorsLying:
		return "lying"
	}
	return "off"
}

// codingSet is the content codings a site answers with.
type codingSet uint8

const (
	codingsNone codingSet = iota // identity only
	codingsGzip                  // gzip
	codingsBr                    // br
	codingsBoth                  // br, else gzip
)

// preference lists the codings of the set, the preferred first.
func (c codingSet) preference() []string {
	switch c {
	case codingsGzip:
		return []string{"gzip"}
	case codingsBr:
		return []string{"br"}
	case codingsBoth:
		return []string{"br", "gzip"}
	}
	return nil
}

// extraHeader is what the validators and codings add to an answer; the
// zero value adds nothing.
type extraHeader struct {
	lastModified string // Last-Modified value
	etag         string // ETag value, quoted
	coding       string // Content-Encoding of the body: "gzip", "br" or "" (identity)
	vary         bool   // Vary: Accept-Encoding
	chunked      bool   // chunked transfer coding, no Content-Length
	conditional  bool   // the request carried If-None-Match or If-Modified-Since
}

// buildServing draws each site's validator policy (with a time origin:
// honest with probability HonestShare, lying with LyingShare, else
// none), content codings (with probability CompressShare: gzip half the
// time, br a quarter, both a quarter) and chunking (ChunkedShare), each
// from a stream of its own.
func (w *Web) buildServing() {
	c := &w.cfg
	for si := range w.sites {
		s := &w.sites[si]
		if c.timed() {
			r := newRNG(uint64(c.Seed), tagValidators, uint64(si))
			switch x := r.float(); {
			case x < c.HonestShare:
				s.validators = ValidatorsHonest
			case x < c.HonestShare+c.LyingShare:
				s.validators = ValidatorsLying
			default:
				s.validators = ValidatorsNone
			}
		}
		if c.CompressShare > 0 {
			r := newRNG(uint64(c.Seed), tagEncoding, uint64(si))
			if r.chance(c.CompressShare) {
				switch x := r.float(); {
				case x < 0.5:
					s.codings = codingsGzip
				case x < 0.75:
					s.codings = codingsBr
				default:
					s.codings = codingsBoth
				}
			}
		}
		if c.ChunkedShare > 0 {
			r := newRNG(uint64(c.Seed), tagChunked, uint64(si))
			s.chunked = r.chance(c.ChunkedShare)
		}
	}
}

// Validators returns the validator policy of host (a site's name or
// alias); ValidatorsOff for a web without validators and for names that
// are no site of the web (hostile hosts included).
func (w *Web) Validators(host string) ValidatorPolicy {
	si, _, ok := w.siteOf(canonicalHost(host))
	if !ok {
		return ValidatorsOff
	}
	return w.sites[si].validators
}

// Encodings returns the content codings host compresses its text answers
// with (Config.CompressShare), the preferred first: nil, ["gzip"],
// ["br"] or ["br" "gzip"].
func (w *Web) Encodings(host string) []string {
	si, _, ok := w.siteOf(canonicalHost(host))
	if !ok {
		return nil
	}
	return w.sites[si].codings.preference()
}

// Chunked reports whether host sends its answers with chunked transfer
// coding (Config.ChunkedShare).
func (w *Web) Chunked(host string) bool {
	si, _, ok := w.siteOf(canonicalHost(host))
	return ok && w.sites[si].chunked
}

// lastMod is the sitemap lastmod of page i of site si at time at by the
// site's policy (W3C datetime to the second, UTC): the time the live
// version appeared (honest), the time of the request (lying) or "" (no
// lastmod); since is the time the live version appeared, for an honest
// site.
func (w *Web) lastMod(si, i int, at time.Time) (lastmod string, since time.Time) {
	switch w.sites[si].validators {
	case ValidatorsHonest:
		_, since = w.versionAt(w.changeOf(si, i), at)
		return since.UTC().Format(time.RFC3339), since
	case ValidatorsLying:
		return at.UTC().Format(time.RFC3339), time.Time{}
	}
	return "", time.Time{}
}

// decorate applies site si's validator policy and content coding to
// resp, its answer to req at time now: the validators of an honest 200
// (and a 304 when the request's conditions say the client's copy is the
// live one), a lying site's Last-Modified, the coding Accept-Encoding
// allows, and the chunking.
func (w *Web) decorate(req *http.Request, si int, resp response, now time.Time) response {
	s := &w.sites[si]
	x := &resp.header
	x.conditional = len(req.Header.Values("If-None-Match")) > 0 || len(req.Header.Values("If-Modified-Since")) > 0
	x.chunked = s.chunked
	var tag string
	notModified := false
	switch s.validators {
	case ValidatorsHonest:
		if resp.status != http.StatusOK {
			break
		}
		mod := resp.modified
		if mod.IsZero() {
			mod = w.cfg.TimeOrigin
		}
		if mod.After(now) {
			mod = now // an origin ahead of the clock: never a date in the future
		}
		x.lastModified = mod.UTC().Format(http.TimeFormat)
		tag = bodyTag(resp.body)
		notModified = unchangedFor(req, tag, mod)
	case ValidatorsLying:
		x.lastModified = now.UTC().Format(http.TimeFormat)
	}
	if prefs := s.codings.preference(); prefs != nil && compressible(resp.ctype) {
		x.vary = true
		x.coding = negotiate(req.Header.Values("Accept-Encoding"), prefs)
	}
	if tag != "" {
		x.etag = `"` + codedTag(tag, x.coding) + `"`
	}
	if notModified {
		resp.status, resp.body = http.StatusNotModified, nil
		return resp
	}
	if x.coding != "" {
		resp.body = w.encode(x.coding, resp.body)
	}
	return resp
}

// compressible reports whether answers of media type ctype are
// compressed: text, and XML sitemaps (not PDF, images or gzip files).
func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, mimeXML)
}

// bodyTag is the opaque part of the strong ETag of an identity body: 16
// hex digits of its FNV-1a hash, so that every version (and every side
// of a site served on both schemes) has its own.
func bodyTag(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return strconv.FormatUint(h.Sum64()|1<<63, 16)
}

// codedTag is the opaque tag of the body tag in content coding coding: a
// coded representation is another representation, with a tag of its own
// (RFC 9110 §8.8.3), the tag and "-gzip" or "-br" as Apache's
// mod_deflate makes it.
func codedTag(tag, coding string) string {
	if coding == "" {
		return tag
	}
	return tag + "-" + coding
}

// unchangedFor evaluates the conditions of a GET or HEAD (RFC 9110
// §13.2.2) against the live representation (opaque tag tag, whatever its
// coding, changed at mod): with If-None-Match, whether one of its
// entity-tags (compared weakly, §8.8.3.2) or "*" matches; without it,
// whether If-Modified-Since is a valid date not before mod (to the
// second). True means 304 Not Modified.
func unchangedFor(req *http.Request, tag string, mod time.Time) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return false
	}
	if inm := req.Header.Values("If-None-Match"); len(inm) > 0 {
		tags, star := parseETags(inm)
		if star {
			return true
		}
		for _, t := range tags {
			if t == tag || strings.HasPrefix(t, tag+"-") && (t[len(tag)+1:] == "gzip" || t[len(tag)+1:] == "br") {
				return true
			}
		}
		return false
	}
	ims := req.Header.Values("If-Modified-Since")
	if len(ims) != 1 {
		return false // none, or several: §13.1.3 says to ignore it
	}
	since, err := http.ParseTime(ims[0])
	if err != nil {
		return false
	}
	return !mod.Truncate(time.Second).After(since)
}

// parseETags reads If-None-Match field values (RFC 9110 §13.1.2: "*" or
// a list of entity-tags, §8.8.3) into the opaque tags, without W/ and
// quotes, and star for "*". A value is read up to its first malformed
// member; what came before counts.
func parseETags(values []string) (tags []string, star bool) {
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] == '*' {
				star = true
				v = v[1:]
				continue
			}
			v = strings.TrimPrefix(v, "W/")
			if v == "" || v[0] != '"' {
				break
			}
			end := strings.IndexByte(v[1:], '"')
			if end < 0 {
				break
			}
			tags = append(tags, v[1:1+end])
			v = v[2+end:]
		}
	}
	return tags, star
}

// parseAcceptEncoding reads Accept-Encoding field values (RFC 9110
// §12.5.3) into the weight of each coding named, in lower case ("*" for
// the others). A member whose coding is not a token or whose q is not a
// number from 0 to 1 is skipped; a coding named twice keeps its first
// weight.
func parseAcceptEncoding(values []string) map[string]float64 {
	out := map[string]float64{}
	for _, v := range values {
		for _, member := range strings.Split(v, ",") {
			params := strings.Split(member, ";")
			coding := strings.ToLower(strings.TrimSpace(params[0]))
			if !isToken(coding) {
				continue
			}
			q, ok := 1.0, true
			for _, p := range params[1:] {
				k, val, _ := strings.Cut(p, "=")
				if !strings.EqualFold(strings.TrimSpace(k), "q") {
					continue
				}
				f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
					ok = false
				}
				q = f
			}
			if _, seen := out[coding]; ok && !seen {
				out[coding] = q
			}
		}
	}
	return out
}

// isToken reports whether s is a non-empty RFC 9110 token (§5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// negotiate picks the content coding of an answer from the request's
// Accept-Encoding values and the site's codings (preferred first): the
// coding of highest weight above 0 (named, as x-gzip for gzip, or by
// "*"; the site's preference among equals), unless "identity" is named
// with more weight; "" (identity) without Accept-Encoding, as servers
// do, although RFC 9110 §12.5.3 allows any coding then.
func negotiate(values, prefs []string) string {
	if len(values) == 0 {
		return ""
	}
	weights := parseAcceptEncoding(values)
	weight := func(coding string) (float64, bool) {
		if q, ok := weights[coding]; ok {
			return q, true
		}
		if coding == "gzip" {
			if q, ok := weights["x-gzip"]; ok {
				return q, true
			}
		}
		q, ok := weights["*"]
		return q, ok
	}
	best, bestQ := "", 0.0
	for _, c := range prefs {
		if q, ok := weight(c); ok && q > bestQ {
			best, bestQ = c, q
		}
	}
	if q, named := weights["identity"]; best == "" || named && q > bestQ {
		return ""
	}
	return best
}

// encode compresses body in content coding coding ("gzip" or "br"),
// with a writer of the web's pools (a new one allocates hundreds of KB of
// tables: pooled, a page costs a tenth of the time). The output is that of
// a new writer: deterministic.
func (w *Web) encode(coding string, body []byte) []byte {
	var b bytes.Buffer
	if coding == "gzip" {
		zw, _ := w.gzipWriters.Get().(*gzip.Writer)
		if zw == nil {
			zw = gzip.NewWriter(&b)
		} else {
			zw.Reset(&b)
		}
		zw.Write(body) //nolint:errcheck // bytes.Buffer
		zw.Close()     //nolint:errcheck // bytes.Buffer
		w.gzipWriters.Put(zw)
		return b.Bytes()
	}
	bw, _ := w.brWriters.Get().(*brotli.Writer)
	if bw == nil {
		bw = brotli.NewWriterLevel(&b, brotliLevel)
	} else {
		bw.Reset(&b)
	}
	bw.Write(body) //nolint:errcheck // bytes.Buffer
	bw.Close()     //nolint:errcheck // bytes.Buffer
	w.brWriters.Put(bw)
	return b.Bytes()
}

// writeChunked writes body with chunked transfer coding: the header is
// flushed before any byte (so the server cannot compute a length) and
// the body goes in two chunks.
func writeChunked(rw http.ResponseWriter, body []byte) {
	f, _ := rw.(http.Flusher)
	flush := func() {
		if f != nil {
			f.Flush()
		}
	}
	flush()
	half := len(body) / 2
	if _, err := rw.Write(body[:half]); err != nil {
		return
	}
	flush()
	_, _ = rw.Write(body[half:])
}
