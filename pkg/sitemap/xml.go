package sitemap

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// maxField is the longest text of one field (loc, lastmod, ...) kept;
// longer text makes the field invalid without being held in memory twice.
const maxField = 4 * MaxLocBytes

// shape says where a kind of file keeps its entries.
type shape struct {
	kind  Kind
	entry string // element of one entry
	depth int    // its depth below the root (root = 0)
}

var shapes = map[string]shape{
	"urlset":       {URLSet, "url", 1},
	"sitemapindex": {Index, "sitemap", 1},
	"rss":          {RSS, "item", 2},
	"feed":         {Atom, "entry", 1},
}

// parseXML reads an XML sitemap or feed. The decoder is strict and knows
// only XML's five built-in entities: a DTD is skipped, never applied, so
// entity expansion ("billion laughs") is an error at the first use.
func (p *parser) parseXML(br *bufio.Reader) error {
	d := xml.NewDecoder(br)
	d.Strict = true
	d.Entity = nil
	d.CharsetReader = charsetReader
	var sh shape
	var space string
	for sh.kind == Unknown {
		tok, err := d.Token()
		if err != nil {
			return p.xmlErr(err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			s, known := shapes[se.Name.Local]
			if !known {
				p.res.Reason = fmt.Sprintf("xml: root element <%s> is not a sitemap", cut(se.Name.Local))
				return nil
			}
			sh, space = s, se.Name.Space
		}
	}
	p.res.Kind = sh.kind
	if sh.kind == Index {
		p.lim.MaxURLs = min(p.lim.MaxURLs, MaxSitemaps)
	}
	depth := 0 // below the root
	in := false
	var field string // direct child of the entry being read
	var text []byte
	var e Entry
	var bad bool // a field of the entry was too long
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return p.xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case !in && depth == sh.depth && t.Name.Local == sh.entry:
				in, e, bad = true, Entry{Sitemap: sh.kind == Index, Priority: -1}, false
			case in && depth == sh.depth+1 && t.Name.Space == space:
				field, text = t.Name.Local, text[:0]
				if sh.kind == Atom && field == "link" {
					atomLink(t, &e)
				}
			}
		case xml.CharData:
			if field != "" {
				if len(text)+len(t) > maxField {
					bad = true
				} else {
					text = append(text, t...)
				}
			}
		case xml.EndElement:
			if in && depth == sh.depth+1 && field != "" {
				if !bad {
					setField(sh.kind, field, strings.TrimSpace(string(text)), &e)
				}
				field = ""
			}
			if in && depth == sh.depth && t.Name.Local == sh.entry {
				in = false
				if bad || e.Loc == "" {
					p.res.Invalid++
				} else if err := p.emit(e); err != nil {
					return err
				}
			}
			depth--
		}
	}
}

// xmlErr records a decoding error as the file's reason (it is not an
// error of Parse unless the reader failed).
func (p *parser) xmlErr(err error) error {
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	if p.src.err != nil && p.src.err != io.EOF && errors.Is(err, p.src.err) {
		return err
	}
	if err == io.EOF {
		p.res.Reason = "xml: no root element"
	} else {
		p.res.Reason = "xml: " + cut(strings.TrimPrefix(err.Error(), "XML syntax error on "))
	}
	return nil
}

// setField stores one field's text in the entry.
func setField(k Kind, name, s string, e *Entry) {
	switch k {
	case URLSet, Index:
		switch name {
		case "loc":
			e.Loc = s
		case "lastmod":
			e.LastMod, _ = ParseTime(s)
		case "changefreq":
			if c := strings.ToLower(s); validFreq[c] {
				e.ChangeFreq = c
			}
		case "priority":
			if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f <= 1 {
				e.Priority = f
			}
		}
	case RSS:
		switch name {
		case "link":
			e.Loc = s
		case "pubDate":
			e.LastMod, _ = ParseTime(s)
		}
	case Atom:
		if name == "updated" || (name == "published" && e.LastMod.IsZero()) {
			e.LastMod, _ = ParseTime(s)
		}
	}
}

// atomLink takes an Atom <link href>: the first one without rel or with
// rel="alternate".
func atomLink(t xml.StartElement, e *Entry) {
	var href, rel string
	for _, a := range t.Attr {
		switch a.Name.Local {
		case "href":
			href = a.Value
		case "rel":
			rel = a.Value
		}
	}
	if e.Loc == "" && (rel == "" || rel == "alternate") {
		e.Loc = strings.TrimSpace(href)
	}
}

var validFreq = map[string]bool{
	"always": true, "hourly": true, "daily": true, "weekly": true,
	"monthly": true, "yearly": true, "never": true,
}

// charsetReader accepts the encodings a sitemap may declare: the protocol
// says UTF-8; US-ASCII is a subset, and ISO-8859-1 is decoded byte by
// byte.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "latin1", "latin-1":
		return &latin1Reader{r: bufio.NewReader(in)}, nil
	}
	return nil, fmt.Errorf("encoding %q not supported (sitemaps are UTF-8)", cut(label))
}

// latin1Reader decodes ISO-8859-1 into UTF-8.
type latin1Reader struct {
	r   *bufio.Reader
	buf []byte
}

func (l *latin1Reader) Read(b []byte) (int, error) {
	if len(l.buf) == 0 {
		c, err := l.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if c < 0x80 {
			l.buf = append(l.buf[:0], c)
		} else {
			l.buf = append(l.buf[:0], 0xC0|c>>6, 0x80|c&0x3F)
		}
	}
	n := copy(b, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// cut shortens outside text before it goes into a reason.
func cut(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// ParseTime reads a W3C datetime (https://www.w3.org/TR/NOTE-datetime) in
// any of its six forms — YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mmTZD,
// YYYY-MM-DDThh:mm:ssTZD, YYYY-MM-DDThh:mm:ss.sTZD — and, because real
// sitemaps and feeds write them, a time without TZD (taken as UTC), a
// space for the T, and the RFC 1123 / RFC 822 dates of RSS. The result is
// in UTC.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	// The usual forms first, chosen by length, so that a date costs one
	// parse (a failed time.Parse allocates its error).
	switch {
	case len(s) == 10:
		if t, err := time.Parse("2006-01-02", s); err == nil {
			return t.UTC(), nil
		}
	case len(s) >= 20 && s[10] == 'T':
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t.UTC(), nil
		}
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if len(s) > 10 && s[10] == ' ' {
		return ParseTime(s[:10] + "T" + s[11:])
	}
	return time.Time{}, fmt.Errorf("not a W3C datetime: %q", cut(s))
}

var timeLayouts = []string{
	"2006",
	"2006-01",
	"2006-01-02",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05Z0700",
	time.RFC1123Z,
	time.RFC1123,
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05 -0700",
	time.RFC822Z,
	time.RFC822,
}
