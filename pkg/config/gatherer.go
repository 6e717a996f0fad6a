package config

// Gatherer holds the settings of parsing and the text store.
type Gatherer struct {
	Workers      int    `toml:"workers" doc:"Parsing goroutines; 0 uses every core."`
	TextMode     string `toml:"text_mode" doc:"What the text store keeps of each page: full, summary or none."`
	SummaryWords int    `toml:"summary_words" doc:"Words kept per page when text_mode is summary."`
}

func defaultGatherer() Gatherer {
	return Gatherer{
		Workers:      0,
		TextMode:     "full",
		SummaryWords: 200,
	}
}

// validate reports the settings of the section that are out of range.
func (c *Gatherer) validate(bad func(key, format string, args ...any)) {
	if c.Workers < 0 {
		bad("gatherer.workers", "must not be negative")
	}
	if !contains([]string{"full", "summary", "none"}, c.TextMode) {
		bad("gatherer.text_mode", "want full, summary or none, got %q", c.TextMode)
	}
	if c.SummaryWords < 1 {
		bad("gatherer.summary_words", "must be at least 1")
	}
}
