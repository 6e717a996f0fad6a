// Package config holds the crawl configuration shared by the four stages:
// its defaults, its strict TOML file, and the one loader that layers
// flags over environment variables over the file over the defaults.
//
// Every setting is a leaf field of Config with a `toml` tag (its key inside
// its section) and a `doc` tag (one sentence for users). From these tags the
// package derives the flag name (--section-key), the environment variable
// (WIRE_SECTION_KEY), the commented sample file and the reference in
// docs/config.md, so a setting is declared exactly once.
package config

import (
	"errors"
	"fmt"
)

// FileName is the name of the config file inside a collection directory.
const FileName = "wire.toml"

// EnvPrefix starts the name of every environment variable the loader reads.
const EnvPrefix = "WIRE_"

// Config is the whole configuration of a crawl.
type Config struct {
	Crawl     Crawl     `toml:"crawl" doc:"Who the crawler is and what it crawls."`
	Scope     Scope     `toml:"scope" doc:"Which URLs belong to the crawl (applied by the seeder)."`
	Manager   Manager   `toml:"manager" doc:"Long-term scheduling: the value function and the batch limits."`
	Harvester Harvester `toml:"harvester" doc:"Short-term scheduling and network transfer."`
	Gatherer  Gatherer  `toml:"gatherer" doc:"Parsing and the text store."`
	Seeder    Seeder    `toml:"seeder" doc:"URL resolution and frontier growth."`
	// Collection and Metrics are operations settings (docs/operations.md).
	Collection Collection `toml:"collection" doc:"The collection directory: the free space it must keep."`
	Metrics    Metrics    `toml:"metrics" doc:"Prometheus metrics of every stage run."`
}

// Defaults returns the configuration used where nothing else is set. The
// values follow the papers (Baeza-Yates et al. 2005, section 4): 25,000
// pages per site, depth 5 for dynamic and 15 for static pages.
func Defaults() Config {
	return Config{
		Crawl:      defaultCrawl(),
		Scope:      defaultScope(),
		Manager:    defaultManager(),
		Harvester:  defaultHarvester(),
		Gatherer:   defaultGatherer(),
		Seeder:     defaultSeeder(),
		Collection: defaultCollection(),
		Metrics:    defaultMetrics(),
	}
}

// Validate reports every setting that is out of range, all at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	// One check for every float setting, whatever its source (TOML reads
	// nan and inf): NaN passes every range check written as x < lo ||
	// x > hi, so the range checks only run on finite numbers.
	for _, f := range Fields() {
		if f.Kind == "float" && !f.finite(c) {
			bad(f.Key, "must be a finite number, got %s", f.Get(c))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	c.Crawl.validate(bad)
	c.Scope.validate(bad)
	c.Manager.validate(bad)
	c.Harvester.validate(bad)
	c.Gatherer.validate(bad)
	c.Seeder.validate(bad)
	c.Collection.validate(bad)
	c.Metrics.validate(bad)
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Sample returns the configuration written to the repository's sample
// collection/wire.toml: the defaults, with the crawl's contact details
// pointing at a placeholder the operator must change.
func Sample() Config {
	return Defaults()
}
