package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"testing"
	"time"
)

// benchSitemap is a urlset of n entries with every field, as sites write
// them (about 190 bytes an entry).
func benchSitemap(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>http://www.example.cl/section-%d/page-%d.html</loc><lastmod>2026-11-%02dT10:%02d:00+00:00</lastmod><changefreq>weekly</changefreq><priority>0.5</priority></url>\n", i%50, i, 1+i%28, i%60)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

// BenchmarkParse reads a 50,000-entry sitemap with Parse (scope rule on);
// compare its MB/s with BenchmarkDecoderOnly's.
func BenchmarkParse(b *testing.B) {
	data := benchSitemap(MaxURLs)
	base, _ := url.Parse("http://www.example.cl/sitemap.xml")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Parse(bytes.NewReader(data), Options{Base: base}, func(Entry) error { return nil })
		if err != nil || res.Entries != MaxURLs {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkParseGzip is BenchmarkParse on the gzip form (MB/s of the
// uncompressed size).
func BenchmarkParseGzip(b *testing.B) {
	data := benchSitemap(MaxURLs)
	z := gz(b, data)
	base, _ := url.Parse("http://www.example.cl/sitemap.xml")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(z), Options{Base: base}, func(Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecoderOnly is the floor: encoding/xml's Decoder.Token over the
// same file, doing nothing with the tokens.
func BenchmarkDecoderOnly(b *testing.B) {
	data := benchSitemap(MaxURLs)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkParseVsDecoder times the decoder alone and Parse in turn on the
// same file, iteration by iteration, so that a shared machine's load
// weighs on both alike; it reports both speeds and Parse's share of the
// decoder's speed.
func BenchmarkParseVsDecoder(b *testing.B) {
	data := benchSitemap(MaxURLs)
	base, _ := url.Parse("http://www.example.cl/sitemap.xml")
	var dec, par time.Duration
	for b.Loop() {
		t0 := time.Now()
		d := xml.NewDecoder(bytes.NewReader(data))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if _, err := Parse(bytes.NewReader(data), Options{Base: base}, func(Entry) error { return nil }); err != nil {
			b.Fatal(err)
		}
		dec, par = dec+t1.Sub(t0), par+time.Since(t1)
	}
	mb := float64(len(data)) * float64(b.N) / 1e6
	b.ReportMetric(mb/dec.Seconds(), "decoder-MB/s")
	b.ReportMetric(mb/par.Seconds(), "parse-MB/s")
	b.ReportMetric(dec.Seconds()/par.Seconds(), "parse/decoder")
}
