package extract

import (
	"strings"
)

// Robots holds the indexing directives of a page, from
// <meta name="robots"> or the X-Robots-Tag header.
type Robots struct {
	NoIndex  bool // do not index the page's text
	NoFollow bool // do not follow the page's links
}

// Merge returns the directives of r and o together.
func (r Robots) Merge(o Robots) Robots {
	return Robots{NoIndex: r.NoIndex || o.NoIndex, NoFollow: r.NoFollow || o.NoFollow}
}

// ParseRobots reads a comma-separated list of directives, as in the
// content of <meta name="robots">: noindex, nofollow, and none (both).
// Unknown directives (index, follow, noarchive, max-snippet:...) are
// ignored.
func ParseRobots(content string) Robots {
	var r Robots
	for _, d := range strings.FieldsFunc(content, func(c rune) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' }) {
		switch strings.ToLower(d) {
		case "noindex":
			r.NoIndex = true
		case "nofollow":
			r.NoFollow = true
		case "none":
			r.NoIndex, r.NoFollow = true, true
		}
	}
	return r
}

// ParseRobotsHeader reads the values of X-Robots-Tag headers. A value may
// start with a user agent token and a colon ("otherbot: noindex"); it then
// applies only when the token is agent (compared case-insensitively).
// Directives with a value of their own (unavailable_after: DATE,
// max-snippet: N) are not mistaken for user agents.
func ParseRobotsHeader(values []string, agent string) Robots {
	var r Robots
	for _, v := range values {
		if name, rest, ok := strings.Cut(v, ":"); ok {
			name = strings.TrimSpace(name)
			if name != "" && !strings.ContainsAny(name, " ,") && !isValuedDirective(name) {
				if !strings.EqualFold(name, agent) {
					continue
				}
				v = rest
			}
		}
		r = r.Merge(ParseRobots(v))
	}
	return r
}

func isValuedDirective(name string) bool {
	switch strings.ToLower(name) {
	case "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview":
		return true
	}
	return false
}

// parseRefresh extracts the URL of a <meta http-equiv="refresh"> content
// value ("0; url=/next"), following the WHATWG "shared declarative refresh
// steps" (HTML §7.11.1). It returns "" when the value only reloads the
// page itself or cannot be read.
func parseRefresh(content string) string {
	s := strings.TrimLeft(content, " \t\n\f\r")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && !strings.HasPrefix(s, ".") {
		return ""
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	s = strings.TrimLeft(s[i:], " \t\n\f\r")
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
	} else if s != "" {
		return "" // junk after the delay
	}
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimLeft(s[3:], " \t\n\f\r")
		if strings.HasPrefix(rest, "=") {
			s = strings.TrimLeft(rest[1:], " \t\n\f\r")
		}
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	return strings.TrimSpace(s)
}
