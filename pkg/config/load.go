package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
)

// ErrInvalid marks a configuration that could not be loaded or validated.
var ErrInvalid = errors.New("invalid configuration")

// Sources are the layers Load combines, from weakest to strongest after the
// defaults: the file, the environment, then explicit overrides (flags).
type Sources struct {
	// File is the TOML file to read; empty means none. A missing file is an
	// error unless FileOptional is set.
	File         string
	FileOptional bool
	// LookupEnv reads an environment variable; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// NoEnv disables environment variables altogether.
	NoEnv bool
	// Overrides maps section.key to a value given on the command line.
	Overrides map[string]string
}

// Load builds the configuration: defaults, then the file, then the
// environment, then the overrides, and validates the result. Unknown keys
// and values of the wrong type are errors naming the file and the key.
func Load(src Sources) (Config, error) {
	c := Defaults()
	if src.File != "" {
		data, err := os.ReadFile(src.File)
		switch {
		case err == nil:
			if err := decodeInto(&c, data, src.File); err != nil {
				return Config{}, err
			}
		case errors.Is(err, os.ErrNotExist) && src.FileOptional:
		default:
			return Config{}, fmt.Errorf("%w: read config: %w", ErrInvalid, err)
		}
	}
	if !src.NoEnv {
		lookup := src.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		for _, f := range Fields() {
			if v, ok := lookup(f.Env); ok {
				if err := f.Set(&c, v); err != nil {
					return Config{}, fmt.Errorf("%w: environment %s: %w", ErrInvalid, f.Env, err)
				}
			}
		}
	}
	for key, v := range src.Overrides {
		f, ok := FieldByKey(key)
		if !ok {
			return Config{}, fmt.Errorf("%w: unknown setting %q", ErrInvalid, key)
		}
		if err := f.Set(&c, v); err != nil {
			return Config{}, fmt.Errorf("%w: flag --%s: %w", ErrInvalid, f.Flag, err)
		}
	}
	if err := c.Validate(); err != nil {
		where := "configuration"
		if src.File != "" {
			where = src.File
		}
		return Config{}, fmt.Errorf("%w: %s: %w", ErrInvalid, where, err)
	}
	return c, nil
}

// Parse decodes a TOML document over the defaults and validates it; name is
// used in error messages.
func Parse(data []byte, name string) (Config, error) {
	c := Defaults()
	if err := decodeInto(&c, data, name); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	return c, nil
}

func decodeInto(c *Config, data []byte, name string) error {
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(c)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			if perr.LastKey != "" {
				return fmt.Errorf("%w: %s: line %d: %s: %s", ErrInvalid, name, perr.Position.Line, perr.LastKey, perr.Message)
			}
			return fmt.Errorf("%w: %s: line %d: %s", ErrInvalid, name, perr.Position.Line, perr.Message)
		}
		return fmt.Errorf("%w: %s: %w", ErrInvalid, name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("%w: %s: unknown setting %s", ErrInvalid, name, strings.Join(keys, ", "))
	}
	return nil
}

// Render writes c as a commented TOML file: each table and each setting
// preceded by its documentation. Parse(Render(c)) == c.
func Render(c Config) []byte {
	var b bytes.Buffer
	b.WriteString("# WIRE crawler configuration.\n")
	b.WriteString("# Every setting can also be given as a flag (--section-key) or an\n")
	b.WriteString("# environment variable (WIRE_SECTION_KEY); flags win over the\n")
	b.WriteString("# environment, which wins over this file. See docs/config.md.\n")
	section := ""
	for _, f := range Fields() {
		if f.Section != section {
			section = f.Section
			fmt.Fprintf(&b, "\n# %s\n[%s]\n", SectionDoc(section), section)
		}
		fmt.Fprintf(&b, "# %s\n%s = %s\n", f.Doc, f.Name, f.tomlValue(&c))
	}
	return b.Bytes()
}

// Reference writes the Markdown reference of every setting with its
// default, flag and environment variable.
func Reference() []byte {
	var b bytes.Buffer
	d := Defaults()
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("Generated from `pkg/config` by `go test ./pkg/config -update`; do not edit by hand.\n\n")
	b.WriteString("Each setting is read, strongest first, from a flag, an environment variable, the collection's `wire.toml`, or the default. Unknown keys and values of the wrong type are errors.\n")
	section := ""
	for _, f := range Fields() {
		if f.Section != section {
			section = f.Section
			fmt.Fprintf(&b, "\n## [%s]\n\n%s\n\n| key | default | flag | environment | meaning |\n|---|---|---|---|---|\n", section, SectionDoc(section))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `--%s` | `%s` | %s |\n", f.Name, f.tomlValue(&d), f.Flag, f.Env, f.Doc)
	}
	return b.Bytes()
}
