package config

import (
	"slices"
	"strings"

	"golang.org/x/net/html/charset"

	"github.com/wirecrawl/wire/pkg/excerpt"
	"github.com/wirecrawl/wire/pkg/langid"
)

// Gatherer holds the settings of parsing and the text store.
type Gatherer struct {
	Workers         int      `toml:"workers" doc:"Parsing goroutines; 0 uses every core."`
	TextMode        string   `toml:"text_mode" doc:"What the text store keeps of each page (its representational quality): full (the whole text), summary (the first summary_words words) or none (only links, anchors and metadata)."`
	SummaryWords    int      `toml:"summary_words" doc:"Words kept per page when text_mode is summary."`
	FallbackCharset string   `toml:"fallback_charset" doc:"Encoding of a page that declares none, is not UTF-8 and whose encoding detection is unsure (a WHATWG label: windows-1252, windows-1253 for Greek, shift_jis, ...)."`
	InflightBytes   int64    `toml:"inflight_bytes" doc:"Response bytes the parsing pipeline holds at once (read, being parsed or waiting to be written); a larger page still goes through, alone."`
	LanguageSample  int      `toml:"language_sample" doc:"Bytes of running text a page's language is told from (docs/gatherer.md, Language); 0 turns language detection off."`
	Languages       []string `toml:"languages" doc:"Languages the detector chooses among, as ISO 639-1 codes; empty means every language of the detector's model (28, docs/gatherer.md, Language). The default is the languages a national web of the Americas or Europe sees most."`
}

func defaultGatherer() Gatherer {
	return Gatherer{
		Workers:         0,
		TextMode:        "full",
		SummaryWords:    200,
		FallbackCharset: "windows-1252",
		InflightBytes:   64 << 20,
		LanguageSample:  langid.DefaultSampleBytes,
		Languages:       slices.Clone(langid.DefaultLanguages),
	}
}

// validate reports the settings of the section that are out of range.
func (c *Gatherer) validate(bad func(key, format string, args ...any)) {
	if c.Workers < 0 {
		bad("gatherer.workers", "must not be negative")
	}
	if !contains([]string{"full", "summary", "none"}, c.TextMode) {
		bad("gatherer.text_mode", "want full, summary or none, got %s", excerpt.Quote(c.TextMode))
	}
	if c.SummaryWords < 1 {
		bad("gatherer.summary_words", "must be at least 1")
	}
	if enc, name := charset.Lookup(c.FallbackCharset); enc == nil || name == "replacement" || name == "utf-16be" || name == "utf-16le" || name == "x-user-defined" {
		bad("gatherer.fallback_charset", "want an encoding label of the WHATWG Encoding Standard that can decode a page, got %s", excerpt.Quote(c.FallbackCharset))
	}
	if c.LanguageSample < 0 {
		bad("gatherer.language_sample", "must not be negative")
	}
	if _, unknown := langid.New(0, c.Languages); len(unknown) > 0 {
		bad("gatherer.languages", "codes the detector does not know: %s", excerpt.Quote(strings.Join(unknown, " ")))
	}
	if c.InflightBytes < 1<<20 {
		bad("gatherer.inflight_bytes", "must be at least 1048576 (1 MiB), got %d", c.InflightBytes)
	}
}
