package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files and generated docs")

func TestDefaultsValid(t *testing.T) {
	c := Defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestRenderParseRoundTrip checks that the commented file written by
// Render reads back to the same configuration.
func TestRenderParseRoundTrip(t *testing.T) {
	c := Defaults()
	c.Harvester.Wait = Duration(250 * time.Millisecond)
	c.Scope.Domains = []string{"cl", "gob.cl"}
	c.Manager.Alpha = 0.5
	got, err := Parse(Render(c), "rendered")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, c)
	}
}

// TestGolden keeps the committed sample config and the config reference in
// step with the code (go test ./pkg/config -update rewrites them).
func TestGolden(t *testing.T) {
	for _, g := range []struct {
		path string
		data []byte
	}{
		{"../../collection/wire.toml", Render(Sample())},
		{"../../docs/config.md", Reference()},
	} {
		if *update {
			if err := os.WriteFile(g.path, g.data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g.path)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != string(g.data) {
			t.Errorf("%s is out of date: run go test ./pkg/config -update", g.path)
		}
	}
}

func TestGoodFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.good.toml")
	if len(files) == 0 {
		t.Fatal("no good files")
	}
	for _, f := range files {
		if _, err := Load(Sources{File: f, NoEnv: true}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestBadFiles checks each bad file fails with an error naming the file
// and the problem (the expected words are on the file's first line).
func TestBadFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.bad.toml")
	if len(files) == 0 {
		t.Fatal("no bad files")
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		first, _, _ := strings.Cut(string(data), "\n")
		want := strings.TrimSpace(strings.TrimPrefix(first, "# want:"))
		_, err := Load(Sources{File: f, NoEnv: true})
		if err == nil {
			t.Errorf("%s: loaded without error", f)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q, want ErrInvalid naming the file and %q", f, err, want)
		}
	}
}

func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "wire.toml")
	os.WriteFile(file, []byte("[harvester]\nwait = \"3s\"\nconnections = 7\n[manager]\nbatch_size = 11\n"), 0o644)
	env := map[string]string{"WIRE_HARVESTER_WAIT": "2s", "WIRE_MANAGER_BATCH_SIZE": "12"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := Load(Sources{File: file, LookupEnv: lookup, Overrides: map[string]string{"harvester.wait": "1s"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Harvester.Wait.D() != time.Second {
		t.Errorf("flag should win: wait %v", c.Harvester.Wait)
	}
	if c.Manager.BatchSize != 12 {
		t.Errorf("env should win over file: batch_size %d", c.Manager.BatchSize)
	}
	if c.Harvester.Connections != 7 {
		t.Errorf("file should win over default: connections %d", c.Harvester.Connections)
	}
	if c.Manager.Strategy != Defaults().Manager.Strategy {
		t.Errorf("default lost: %q", c.Manager.Strategy)
	}
}

func TestBadEnvAndFlag(t *testing.T) {
	lookup := func(k string) (string, bool) {
		if k == "WIRE_HARVESTER_CONNECTIONS" {
			return "many", true
		}
		return "", false
	}
	if _, err := Load(Sources{LookupEnv: lookup}); err == nil || !strings.Contains(err.Error(), "WIRE_HARVESTER_CONNECTIONS") {
		t.Errorf("bad env value: %v", err)
	}
	if _, err := Load(Sources{NoEnv: true, Overrides: map[string]string{"harvester.wait": "soon"}}); err == nil || !strings.Contains(err.Error(), "--harvester-wait") {
		t.Errorf("bad flag value: %v", err)
	}
	if _, err := Load(Sources{File: "testdata/missing.toml", NoEnv: true}); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := Load(Sources{File: "testdata/missing.toml", FileOptional: true, NoEnv: true}); err != nil {
		t.Errorf("optional missing file: %v", err)
	}
}

func TestFieldsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Fields() {
		if f.Doc == "" {
			t.Errorf("%s has no doc tag", f.Key)
		}
		if seen[f.Flag] {
			t.Errorf("flag %s twice", f.Flag)
		}
		seen[f.Flag] = true
	}
}

// FuzzParse checks that no config file crashes the loader and that any
// accepted file renders and parses back to itself.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.toml")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Add(Render(Defaults()))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		c2, err := Parse(Render(c), "rendered")
		if err != nil {
			t.Fatalf("rendered config does not parse: %v", err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the config")
		}
	})
}

// TestNonFinite: NaN and ±Inf are rejected for every float setting,
// from the file, the environment and a flag, with an error naming the
// key (NaN passed the range checks and reached the batch's scores).
func TestNonFinite(t *testing.T) {
	n := 0
	for _, f := range Fields() {
		if f.Kind != "float" {
			continue
		}
		n++
		for _, v := range []string{"nan", "NaN", "inf", "+Inf", "-inf"} {
			file := filepath.Join(t.TempDir(), "wire.toml")
			os.WriteFile(file, []byte(fmt.Sprintf("[%s]\n%s = %s\n", f.Section, f.Name, strings.ToLower(v))), 0o644)
			_, err := Load(Sources{File: file, NoEnv: true})
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), f.Key+": must be a finite number") {
				t.Errorf("file %s = %s: %v", f.Key, v, err)
			}
			lookup := func(k string) (string, bool) { return v, k == f.Env }
			_, err = Load(Sources{LookupEnv: lookup})
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), f.Env) || !strings.Contains(err.Error(), f.Key+": want a finite number") {
				t.Errorf("environment %s=%s: %v", f.Env, v, err)
			}
			_, err = Load(Sources{NoEnv: true, Overrides: map[string]string{f.Key: v}})
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--"+f.Flag) || !strings.Contains(err.Error(), f.Key+": want a finite number") {
				t.Errorf("flag --%s %s: %v", f.Flag, v, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no float settings")
	}
	// A long bad value is echoed cut.
	_, err := Load(Sources{NoEnv: true, Overrides: map[string]string{"manager.alpha": strings.Repeat("9", 1<<20) + "x"}})
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("long value: error of %d bytes", len(fmt.Sprint(err)))
	}
}

// TestTimeScale: manager.time_scale from each source, the min_revisit it
// gives (issue 35: s = 1/1440 turns min_revisit's week into 7 minutes),
// and bad values refused with the key and the value named.
func TestTimeScale(t *testing.T) {
	for _, tt := range []struct {
		name    string
		src     Sources
		revisit time.Duration
		bad     string // words of the error; "" for none
	}{
		{"default", Sources{NoEnv: true}, 7 * 24 * time.Hour, ""},
		{"file", Sources{File: "testdata/time-scale.good.toml", NoEnv: true}, 7 * time.Minute, ""},
		{"environment", Sources{LookupEnv: func(k string) (string, bool) { return "0.5", k == "WIRE_MANAGER_TIME_SCALE" }}, 84 * time.Hour, ""},
		{"flag", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "0.000694444444444444"}}, 7 * time.Minute, ""},
		{"zero", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "0"}}, 0, "manager.time_scale: must be between 1e-05 and 1 (1/1440 = 0.000694444444444444 turns a day into a minute), got 0"},
		{"negative", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "-1"}}, 0, "manager.time_scale: must be between 1e-05 and 1"},
		{"stretched", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "1440"}}, 0, "got 1440"},
		{"too small", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "1e-6"}}, 0, "got 1e-06"},
		{"a fraction is not a number", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "1/1440"}}, 0, `--manager-time-scale: manager.time_scale: want a number, got "1/1440"`},
		{"nan", Sources{NoEnv: true, Overrides: map[string]string{"manager.time_scale": "nan"}}, 0, "manager.time_scale: want a finite number"},
	} {
		c, err := Load(tt.src)
		switch {
		case tt.bad == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.bad == "" && c.Manager.Revisit() != tt.revisit:
			t.Errorf("%s: time_scale %g gives min_revisit %s, want %s", tt.name, c.Manager.TimeScale, c.Manager.Revisit(), tt.revisit)
		case tt.bad != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.bad)):
			t.Errorf("%s: error %v, want ErrInvalid with %q", tt.name, err, tt.bad)
		}
	}
}
