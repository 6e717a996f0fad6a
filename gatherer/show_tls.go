package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/fetchlog"
	"github.com/wirecrawl/wire/pkg/parsed"
	"github.com/wirecrawl/wire/pkg/warcio"
)

// writeTLS prints the TLS facts the harvester recorded for d (the WARC
// metadata record after its response: protocol, cipher, whether the
// certificate was valid for the name and why not), found through the
// fetch log of the batch whose docs.jsonl (docsPath) holds d. It prints
// nothing for a page fetched over plain HTTP, or when the harvest is
// gone.
func writeTLS(w io.Writer, docsPath string, d *parsed.Doc) {
	if !strings.HasPrefix(d.URL, "https:") {
		return
	}
	harvest := filepath.Join(filepath.Dir(filepath.Dir(docsPath)), collection.HarvestDir)
	recs, err := fetchlog.ReadFile(filepath.Join(harvest, fetchlog.LogFile))
	if err != nil {
		return
	}
	for _, r := range recs {
		if r.DocID != d.DocID || r.URL != d.URL || r.WARC == "" {
			continue
		}
		fields, err := warcio.ReadMetadata(filepath.Join(harvest, r.WARC), r.Offset+r.Length)
		if err != nil {
			fmt.Fprintf(w, "  tls        (no metadata record: %v)\n", err)
			return
		}
		v := map[string]string{}
		for _, f := range fields {
			v[f.Name] = f.Value
		}
		if v[warcio.MetaTLSProtocol] == "" {
			return
		}
		line := v[warcio.MetaTLSProtocol] + " " + v[warcio.MetaTLSCipher]
		if v[warcio.MetaTLSResumed] == "true" {
			line += " (resumed)"
		}
		fmt.Fprintf(w, "  tls        %s\n", line)
		if v[warcio.MetaTLSCertValid] == "true" {
			fmt.Fprintf(w, "  cert       valid for the name\n")
		} else {
			fmt.Fprintf(w, "  cert       NOT valid: %s\n", v[warcio.MetaTLSCertProblem])
		}
		return
	}
}
