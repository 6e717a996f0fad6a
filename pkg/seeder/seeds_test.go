package seeder

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/linkgraph"
)

const seedList = `# Chilean universities
http://www.uchile.cl/

  https://WWW.PUC.CL:443/inicio/../  
ftp://ftp.uchile.cl/
http://www.uchile.com/
http://www.uchile.cl/#top
   # indented comment
http://[::1]/
http://www.usach.cl/logo.gif
not a url at all
http://www.udec.cl/a
`

func TestAddSeeds(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	var problems bytes.Buffer
	s, err := AddSeeds(SeedOptions{Collection: col, Config: cfg}, strings.NewReader(seedList), "seeds.txt", &problems)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems := `seeds.txt:5: scheme: "ftp://ftp.uchile.cl/"
seeds.txt:6: out-of-scope: "http://www.uchile.com/"
seeds.txt:9: ip-host: "http://[::1]/"
seeds.txt:10: extension: "http://www.usach.cl/logo.gif"
seeds.txt:11: scheme: "not a url at all"
`
	if problems.String() != wantProblems {
		t.Errorf("problems\n%s\nwant\n%s", problems.String(), wantProblems)
	}
	if s.Lines != 9 || s.Added != 3 || s.Known != 1 || s.NewSites != 3 {
		t.Errorf("summary %+v", s)
	}
	if !reflect.DeepEqual(s.Rejected, map[string]int{"scheme": 2, "out-of-scope": 1, "ip-host": 1, "extension": 1}) {
		t.Errorf("rejected %v", s.Rejected)
	}
	g := readGraph(t, col)
	for _, u := range []string{"http://www.uchile.cl/", "https://www.puc.cl/", "http://www.udec.cl/a"} {
		d := g.doc(t, u)
		if d.Depth != 0 || d.State != linkgraph.StatePending || d.Found != 0 {
			t.Errorf("%s: %+v", u, d)
		}
	}
	if len(g.docs) != 3 {
		t.Errorf("%d docs, want 3", len(g.docs))
	}

	// Adding the same list again adds nothing.
	problems.Reset()
	s, err = AddSeeds(SeedOptions{Collection: col, Config: cfg}, strings.NewReader(seedList), "seeds.txt", &problems)
	if err != nil {
		t.Fatal(err)
	}
	if s.Added != 0 || s.Known != 4 || s.NewSites != 0 {
		t.Errorf("second add %+v", s)
	}
	if after := readGraph(t, col); !reflect.DeepEqual(g, after) {
		t.Error("second add changed graph.db")
	}
}

func TestAddSeedsSiteCap(t *testing.T) {
	cfg := testConfig()
	cfg.Scope.MaxPagesPerSite = 2
	col := newCollection(t, cfg)
	var problems bytes.Buffer
	s, err := AddSeeds(SeedOptions{Collection: col, Config: cfg}, strings.NewReader("http://a.cl/1\nhttp://a.cl/2\nhttp://a.cl/3\nhttp://b.cl/\n"), "s", &problems)
	if err != nil {
		t.Fatal(err)
	}
	if s.Added != 3 || s.Rejected[ReasonSiteCap] != 1 || problems.String() != "s:3: site-cap: \"http://a.cl/3\"\n" {
		t.Errorf("summary %+v, problems %q", s, problems.String())
	}
}

// A list that cannot be read adds nothing, not even its first lines.
func TestAddSeedsReadError(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	r := iotest.DataErrReader(iotest.TimeoutReader(strings.NewReader("http://a.cl/\nhttp://b.cl/\n")))
	_, err := AddSeeds(SeedOptions{Collection: col, Config: cfg}, r, "s", &bytes.Buffer{})
	if err == nil {
		t.Fatal("read error not reported")
	}
	if g := readGraph(t, col); len(g.docs) != 0 {
		t.Errorf("%d docs added from an unreadable list", len(g.docs))
	}
}

func TestInitRefusesExisting(t *testing.T) {
	cfg := testConfig()
	col := newCollection(t, cfg)
	if _, err := Init(col.Dir, cfg); !errors.Is(err, collection.ErrExists) {
		t.Errorf("second init: %v, want ErrExists", err)
	}
}

// FuzzCleanAnchor checks the fast path of cleanAnchor against the slow
// one: strings.Fields, joined, cut at MaxAnchorBytes.
func FuzzCleanAnchor(f *testing.F) {
	for _, s := range []string{"Página  uno", " a", "a ", "a\tb", "año\u00a0nuevo", "ok text", "", "\xff", strings.Repeat("x", 101)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slow := strings.Join(strings.Fields(s), " ")
		if len(slow) > MaxAnchorBytes {
			return // cut: covered by the slow path itself
		}
		if got := cleanAnchor(s); got != slow {
			t.Fatalf("cleanAnchor(%q) = %q, want %q", s, got, slow)
		}
	})
}

// FuzzReadSeedLines checks the seed list reader (what `seeder add` reads
// from users' files) against a reference built on strings.Split: the same
// lines, with the same numbers, whatever the input; the same again when
// the file arrives one byte at a time; and nothing at all, with the read
// error, when the reader fails part way.
func FuzzReadSeedLines(f *testing.F) {
	for _, s := range []string{
		seedList,
		"\ufeffhttp://www.uchile.cl/\r\nhttps://www.puc.cl/\r\n",
		"\ufeff# Chilean sites, exported from a spreadsheet\nhttp://a.cl/\n",
		"http://a.cl/\n\ufeffhttp://b.cl/\n", // a byte order mark after line 1 is not one
		"  \ufeffhttp://a.cl/",
		"\xef\xbbhttp://a.cl/",                                   // torn byte order mark
		"\xff\xfeh\x00t\x00t\x00p\x00:\x00/\x00/\x00a\x00\n\x00", // UTF-16
		"",
		"\n\n\n",
		"#only a comment",
		"http://a.cl/ # not a comment\n",
		"\thttp://a.cl/\t\r\n\v\f\n",
		"http://a.cl/\u00a0\u2003\n\u0085#nel-indented comment\n",
		"http://a.cl/\rhttp://b.cl/\r",
		"http://a.cl/" + strings.Repeat("x", 5000) + "\nhttp://b.cl/",
		"http://a.cl/\x00\xff\n",
	} {
		f.Add(s, uint16(len(s)/2))
	}
	errBoom := errors.New("disk gone")
	f.Fuzz(func(t *testing.T, content string, cut uint16) {
		var want []seedLine
		for i, text := range strings.Split(content, "\n") {
			if i == 0 {
				text = strings.TrimPrefix(text, "\ufeff")
			}
			if u := strings.TrimSpace(text); u != "" && !strings.HasPrefix(u, "#") {
				want = append(want, seedLine{i + 1, u})
			}
		}
		got, err := readSeedLines(strings.NewReader(content), "seeds.txt")
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("readSeedLines(%q)\n got %+v\nwant %+v", content, got, want)
		}
		for i, l := range got {
			if l.url == "" || l.url != strings.TrimSpace(l.url) || strings.ContainsRune(l.url, '\n') || l.url[0] == '#' ||
				(i > 0 && l.n <= got[i-1].n) {
				t.Fatalf("bad line %d: %+v", i, l)
			}
		}
		slow, err := readSeedLines(iotest.OneByteReader(strings.NewReader(content)), "seeds.txt")
		if err != nil || !reflect.DeepEqual(slow, want) {
			t.Fatalf("one byte at a time: %+v, %v; want %+v", slow, err, want)
		}
		k := int(cut) % (len(content) + 1)
		failing := io.MultiReader(strings.NewReader(content[:k]), iotest.ErrReader(errBoom))
		if lines, err := readSeedLines(failing, "seeds.txt"); !errors.Is(err, errBoom) || lines != nil {
			t.Fatalf("reader failing after %d bytes: %+v, %v", k, lines, err)
		}
	})
}
