package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirecrawl/wire/pkg/excerpt"
)

// Duration is a time.Duration written as a Go duration string ("15s",
// "250ms", "168h") in TOML, flags and environment variables.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d as a Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration string such as "15s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("want a duration such as 15s or 250ms: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Field describes one setting: where it lives and how users name it.
type Field struct {
	Key     string // section.key, as in the TOML file, e.g. "harvester.wait"
	Section string // TOML table, e.g. "harvester"
	Name    string // key inside the table, e.g. "wait"
	Flag    string // command-line flag without dashes, e.g. "harvester-wait"
	Env     string // environment variable, e.g. "WIRE_HARVESTER_WAIT"
	Doc     string // one sentence for users
	Kind    string // "string", "int", "float", "bool", "duration" or "list"
	index   []int
}

var durationType = reflect.TypeOf(Duration(0))

// Fields lists every setting of Config in declaration order: a new
// slice each call, which the caller may keep or change.
func Fields() []Field { return slices.Clone(fieldList()) }

// fieldList is the list Fields copies, worked out once per process: it
// depends on Config's type alone. Worked out by reflection at every call,
// it took about a quarter of the CPU of a stage's start (five calls:
// flags, overrides, environment, validation; docs/harvester.md,
// "Figures").
var fieldList = sync.OnceValue(listFields)

// listFields works the settings out from Config's type.
func listFields() []Field {
	var out []Field
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		sec := ct.Field(i)
		secName := tagName(sec)
		for j := 0; j < sec.Type.NumField(); j++ {
			f := sec.Type.Field(j)
			name := tagName(f)
			out = append(out, Field{
				Key:     secName + "." + name,
				Section: secName,
				Name:    name,
				Flag:    strings.ReplaceAll(secName+"-"+name, "_", "-"),
				Env:     EnvPrefix + strings.ToUpper(secName+"_"+name),
				Doc:     f.Tag.Get("doc"),
				Kind:    kindOf(f.Type),
				index:   []int{i, j},
			})
		}
	}
	return out
}

// SectionDoc returns the doc tag of a TOML table of Config.
func SectionDoc(section string) string {
	ct := reflect.TypeOf(Config{})
	for i := 0; i < ct.NumField(); i++ {
		if tagName(ct.Field(i)) == section {
			return ct.Field(i).Tag.Get("doc")
		}
	}
	return ""
}

// FieldByKey finds a setting by its section.key name.
func FieldByKey(key string) (Field, bool) {
	for _, f := range Fields() {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return name
}

func kindOf(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		return "int"
	case t.Kind() == reflect.Float64:
		return "float"
	case t.Kind() == reflect.Bool:
		return "bool"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "list"
	}
	panic("config: unsupported field type " + t.String())
}

// Set parses value as the setting f and stores it in c. Lists are
// comma-separated.
func (f Field) Set(c *Config, value string) error {
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.index)
	value = strings.TrimSpace(value)
	switch f.Kind {
	case "duration":
		var d Duration
		if err := d.UnmarshalText([]byte(value)); err != nil {
			return fmt.Errorf("%s: %w", f.Key, err)
		}
		v.SetInt(int64(d))
	case "string":
		v.SetString(value)
	case "int":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: want a whole number, got %s", f.Key, excerpt.Quote(value))
		}
		v.SetInt(n)
	case "float":
		x, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%s: want a number, got %s", f.Key, excerpt.Quote(value))
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: want a finite number, got %s", f.Key, excerpt.Quote(value))
		}
		v.SetFloat(x)
	case "bool":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s: want true or false, got %s", f.Key, excerpt.Quote(value))
		}
		v.SetBool(b)
	case "list":
		var items []string
		for _, s := range strings.Split(value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		v.Set(reflect.ValueOf(items))
	}
	return nil
}

// finite reports whether the setting f of c, a float, is a finite number.
func (f Field) finite(c *Config) bool {
	x := reflect.ValueOf(c).Elem().FieldByIndex(f.index).Float()
	return !math.IsNaN(x) && !math.IsInf(x, 0)
}

// Get formats the setting f of c as a flag or environment value would be
// written.
func (f Field) Get(c *Config) string {
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.index)
	switch f.Kind {
	case "duration":
		return Duration(v.Int()).String()
	case "list":
		return strings.Join(v.Interface().([]string), ",")
	default:
		return fmt.Sprint(v.Interface())
	}
}

// tomlValue formats the setting f of c as a TOML value.
func (f Field) tomlValue(c *Config) string {
	v := reflect.ValueOf(c).Elem().FieldByIndex(f.index)
	switch f.Kind {
	case "duration":
		return strconv.Quote(Duration(v.Int()).String())
	case "string":
		return strconv.Quote(v.String())
	case "float":
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case "list":
		items := v.Interface().([]string)
		q := make([]string, len(items))
		for i, s := range items {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	default:
		return fmt.Sprint(v.Interface())
	}
}
