package longtest

import (
	"strings"
	"testing"
)

func TestNeed(t *testing.T) {
	for _, c := range []struct {
		name string
		env  Env
		skip bool
	}{
		{"default suite", Env{}, true},
		{"default suite in CI", Env{Installable: true}, true}, // CI runs the long suite on its own
		{"long suite", Env{Long: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			skip, msg := c.env.need("renders the report")
			if skip != c.skip {
				t.Fatalf("skip = %v, want %v (%q)", skip, c.skip, msg)
			}
			if skip && (!strings.Contains(msg, "renders the report") || !strings.Contains(msg, "scripts/test.sh --long") || !strings.Contains(msg, EnvLong+"=1")) {
				t.Errorf("the skip does not say what the test does and how to run it: %q", msg)
			}
		})
	}
}

func TestTool(t *testing.T) {
	for _, c := range []struct {
		name        string
		env         Env
		found       bool
		fail, skips bool
	}{
		{"installed", Env{Long: true}, true, false, false},
		{"installed, CI", Env{Long: true, Installable: true}, true, false, false},
		{"missing", Env{Long: true}, false, false, true},
		// The issue: CI as root on Debian could have installed it, so a
		// skip there would hide a test that never ran.
		{"missing, CI as root on Debian", Env{Long: true, Installable: true}, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fail, msg := c.env.tool("chromium", "chromium", c.found)
			if fail != c.fail || (msg != "") != (c.fail || c.skips) {
				t.Fatalf("fail = %v, message %q; want fail %v, skip %v", fail, msg, c.fail, c.skips)
			}
			if msg != "" && !strings.Contains(msg, "apt-get install chromium") {
				t.Errorf("the message does not say how to install it: %q", msg)
			}
		})
	}
}

func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		name string
		env  Env
		fail bool
	}{
		{"long suite", Env{Long: true}, false},
		// As for Tool: CI as root on Debian must get it, not skip.
		{"CI as root on Debian", Env{Long: true, Installable: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fail, msg := c.env.unavailable("the npm packages", "npm ci: registry unreachable")
			if fail != c.fail {
				t.Fatalf("fail = %v, want %v (%q)", fail, c.fail, msg)
			}
			if !strings.Contains(msg, "the npm packages") || !strings.Contains(msg, "registry unreachable") {
				t.Errorf("the message does not say what is missing and why: %q", msg)
			}
		})
	}
}

func TestFromOS(t *testing.T) {
	for _, c := range []struct {
		value string
		long  bool
		err   bool
	}{
		{"", false, false},
		{"0", false, false},
		{"1", true, false},
		{"yes", false, true},
		{"true", false, true},
	} {
		t.Run(c.value, func(t *testing.T) {
			t.Setenv(EnvLong, c.value)
			e, err := FromOS()
			if (err != nil) != c.err || e.Long != c.long {
				t.Fatalf("%s=%q: %+v, %v", EnvLong, c.value, e, err)
			}
			if err != nil && !strings.Contains(err.Error(), EnvLong+`="`+c.value+`"`) {
				t.Errorf("the error does not name the variable and its value: %v", err)
			}
		})
	}
	// Outside CI nothing is installable, whoever runs the tests.
	t.Setenv(EnvLong, "")
	t.Setenv("CI", "")
	if e, err := FromOS(); err != nil || e.Installable {
		t.Errorf("without CI=true: %+v, %v", e, err)
	}
}
