package urlnorm

import (
	"net/url"
	"sort"
	"strings"
)

// SURT returns the key under which CDX(J) indexes file a URL: the Sort-
// friendly URI Reordering Transform as pywb and OpenWayback write it
// (the Python surt library's defaults), so that the captures of a host,
// then of a path, sort together and an index is searched by binary
// search. http://www.Example.com:80/A/b/?y=2&x=1#f becomes
// com,example)/a/b?x=1&y=2:
//
//   - the scheme is left out; a URL that is not http or https is kept as
//     it is (dns:, mailto: …), as the surt library does;
//   - the host is lower-cased, trailing dots and a leading www, www1, …
//     label are dropped, and its labels are reversed and joined by
//     commas (IPv4 addresses too; an IPv6 literal keeps its brackets);
//   - the port is kept unless it is the scheme's default; user
//     information and the fragment are dropped;
//   - the path and query are lower-cased, one trailing slash is dropped
//     from a path longer than "/", an empty query is dropped and the
//     query's arguments are sorted (by name, then value);
//   - bytes a CDXJ line cannot hold in its key (space and control
//     characters) and non-ASCII bytes are percent-encoded (lower-case
//     hex), so the key is ASCII without white space.
//
// Left out of the surt library's canonicalisation: repeated unescaping,
// dotted-path and IP-format normalisation (the crawler's URLs are
// normalised already) and the stripping of session ids. A URL that does
// not parse gives itself, lower-cased and escaped.
func SURT(raw string) string {
	raw = strings.TrimSpace(dropTabsNewlines(raw))
	scheme, _, ok := strings.Cut(raw, ":")
	if !ok || (!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https")) {
		return escapeKey(raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return escapeKey(strings.ToLower(raw))
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(surtHost(u.Hostname()))
	if port := u.Port(); port != "" && !(u.Scheme == "http" && port == "80") && !(u.Scheme == "https" && port == "443") {
		b.WriteString(":" + port)
	}
	b.WriteString(")")
	path := strings.ToLower(u.EscapedPath())
	switch {
	case path == "":
		path = "/"
	case len(path) > 1 && strings.HasSuffix(path, "/"):
		path = path[:len(path)-1]
	}
	b.WriteString(path)
	if q := strings.ToLower(u.RawQuery); q != "" {
		b.WriteString("?" + sortQuery(q))
	}
	return escapeKey(b.String())
}

// dropTabsNewlines is s without its tabs, CRs and LFs, byte for byte
// otherwise. (A strings.Replacer made per call cost the harvester's
// index about 5 µs a URL in building its tables.)
func dropTabsNewlines(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\r' && c != '\n' {
			b = append(b, c)
		}
	}
	return string(b)
}

// surtHost is the host part of a SURT key: lower case, without trailing
// dots or a leading www label, labels reversed and joined by commas.
func surtHost(host string) string {
	host = strings.TrimRight(strings.ToLower(host), ".")
	if strings.Contains(host, ":") {
		return "[" + host + "]" // IPv6 literal
	}
	if strings.HasPrefix(host, "www") {
		i := 3
		for i < len(host) && host[i] >= '0' && host[i] <= '9' {
			i++
		}
		if i < len(host)-1 && host[i] == '.' {
			host = host[i+1:]
		}
	}
	labels := strings.Split(host, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.Join(labels, ",")
}

// sortQuery sorts the arguments of a query as the surt library does: by
// name, then by value, an argument without '=' before one with it.
func sortQuery(q string) string {
	args := strings.Split(q, "&")
	sort.SliceStable(args, func(i, j int) bool {
		ni, vi, hasI := strings.Cut(args[i], "=")
		nj, vj, hasJ := strings.Cut(args[j], "=")
		if ni != nj {
			return ni < nj
		}
		if hasI != hasJ {
			return !hasI
		}
		return vi < vj
	})
	return strings.Join(args, "&")
}

// escapeKey percent-encodes the bytes a CDXJ key cannot hold: space,
// control characters, DEL and non-ASCII bytes.
func escapeKey(s string) string {
	const hex = "0123456789abcdef"
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
