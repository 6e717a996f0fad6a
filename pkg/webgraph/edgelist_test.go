package webgraph

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestReadSmall(t *testing.T) {
	g, err := ReadFile("testdata/small.graph")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.N() != 5 || g.Sites() != 2 || g.Links.Edges() != 5 || len(g.Seeds) != 1 {
		t.Fatalf("got %+v", g.Stats())
	}
	idx := g.Index()
	out := func(name string) []string {
		var s []string
		for _, t := range g.Links.Out(int(idx[name])) {
			s = append(s, g.Names[t])
		}
		return s
	}
	// The repeated link and the self-link are dropped.
	if got := out("http://a.cl/"); !slices.Equal(got, []string{"http://a.cl/x", "http://a.cl/y"}) {
		t.Errorf("out-links of a.cl/: %v", got)
	}
	if got := out("http://a.cl/x"); !slices.Equal(got, []string{"http://b.cl/"}) {
		t.Errorf("out-links of a.cl/x: %v", got)
	}
	if g.SiteNames[g.Site[idx["http://b.cl/z"]]] != "http://b.cl" {
		t.Errorf("b.cl/z declared after its link is on %q", g.SiteNames[g.Site[idx["http://b.cl/z"]]])
	}
}

func TestWriteGolden(t *testing.T) {
	g, err := ReadFile("testdata/small.graph")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, g); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "small.golden")
	if *update {
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("Write differs from %s:\n%s", golden, buf.String())
	}
	// Round trip: what Write writes, Read reads back the same.
	g2, err := Read(bytes.NewReader(buf.Bytes()), "golden")
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, g, g2)
}

func TestReadGzip(t *testing.T) {
	data, err := os.ReadFile("testdata/small.graph")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	g, err := Read(&buf, "small.graph.gz")
	if err != nil {
		t.Fatal(err)
	}
	if g.N() != 5 || g.Links.Edges() != 5 {
		t.Fatalf("got %+v", g.Stats())
	}
}

func TestReadBad(t *testing.T) {
	const head = "# wire-graph 1\n"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty file"},
		{"no magic", "p a s\n", "first line"},
		{"version 2", "# wire-graph 2\n", "unsupported version"},
		{"unknown record", head + "x a b\n", `unknown record "x"`},
		{"page without site", head + "p a\n", "wants 3 fields, got 2"},
		{"link with 3 names", head + "l a b c\n", "wants 3 fields"},
		{"seed with 2 names", head + "s a b\n", "wants 2 fields, got 3"},
		{"page on two sites", head + "p a s1\np a s2\n", "declared on sites"},
		{"undeclared link target", head + "p a s\nl a b\n", `page has no site: "b"`},
		{"undeclared seed", head + "s a\n", "page has no site"},
		{"control character", head + "p a\x01 s\n", "control character"},
		{"long name", head + "p " + strings.Repeat("x", MaxName+1) + " s\n", "longer than"},
		{"long line", head + "p a " + strings.Repeat("x", MaxLine) + "\n", "line longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in), "in")
			if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrFormat with %q", err, tt.want)
			}
		})
	}
	// The line number is in the message.
	_, err := Read(strings.NewReader(head+"# ok\n\np a s\nq\n"), "in")
	if err == nil || !strings.HasPrefix(err.Error(), "in:5:") {
		t.Errorf("got %v, want an error at in:5", err)
	}
}

func TestReadCRLF(t *testing.T) {
	g, err := Read(strings.NewReader("# wire-graph 1\r\np a s\r\np b s\r\nl a b\r\ns a\r\n"), "crlf")
	if err != nil {
		t.Fatal(err)
	}
	if g.Names[1] != "b" || g.Links.Edges() != 1 || g.SiteNames[0] != "s" {
		t.Fatalf("CR kept in names: %q %q", g.Names, g.SiteNames)
	}
}

func TestWriteRefusesUnwritableNames(t *testing.T) {
	b := NewBuilder()
	b.Page("a b", "s")
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(&bytes.Buffer{}, g); err == nil {
		t.Fatal("a name with a space was written")
	}
}

// assertSame fails unless two graphs have the same pages, sites, links
// and seeds by name.
func assertSame(t *testing.T, a, b *Graph) {
	t.Helper()
	if a.N() != b.N() || a.Links.Edges() != b.Links.Edges() || len(a.Seeds) != len(b.Seeds) {
		t.Fatalf("sizes differ: %+v / %+v", a.Stats(), b.Stats())
	}
	idx := b.Index()
	for p, name := range a.Names {
		q, ok := idx[name]
		if !ok {
			t.Fatalf("page %q missing", name)
		}
		if a.SiteNames[a.Site[p]] != b.SiteNames[b.Site[q]] {
			t.Fatalf("page %q: site %q / %q", name, a.SiteNames[a.Site[p]], b.SiteNames[b.Site[q]])
		}
		var x, y []string
		for _, t := range a.Links.Out(p) {
			x = append(x, a.Names[t])
		}
		for _, t := range b.Links.Out(int(q)) {
			y = append(y, b.Names[t])
		}
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			t.Fatalf("page %q: links %v / %v", name, x, y)
		}
	}
	for i, s := range a.Seeds {
		if a.Names[s] != b.Names[b.Seeds[i]] {
			t.Fatalf("seed %d: %q / %q", i, a.Names[s], b.Names[b.Seeds[i]])
		}
	}
}

// FuzzRead checks that the reader never panics, that whatever it accepts
// is a valid graph, and that writing it and reading it back gives the
// same graph.
func FuzzRead(f *testing.F) {
	for _, file := range []string{"testdata/small.graph", "testdata/small.golden"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("# wire-graph 1\np a s\nl a a\ns a\ns a\n"))
	f.Add([]byte("# wire-graph 1\n\x1f\x8b"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("accepted an invalid graph: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, g); err != nil {
			// Names with spaces cannot come from the reader.
			t.Fatalf("cannot write what was read: %v", err)
		}
		g2, err := Read(&buf, "rewritten")
		if err != nil {
			t.Fatalf("cannot read what was written: %v\n%s", err, buf.String())
		}
		assertSame(t, g, g2)
	})
}
