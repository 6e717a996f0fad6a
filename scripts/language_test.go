package scripts_test

// The detected language shown (issue 37), through the real binaries: the
// harvester fetches pages from a server on loopback, the gatherer gathers
// them, and `gatherer show` and `gatherer cat --lang` print the language
// each page declares beside the one told from its text, marking a
// disagreement.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirecrawl/wire/pkg/batch"
	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/config"
	"github.com/wirecrawl/wire/pkg/urlnorm"
)

// languagePages are the test's pages: a Japanese page with Latin-script
// shell commands that declares English (the case), a Spanish page
// that declares Spanish of Chile, and an English page that declares
// nothing.
var languagePages = map[string]string{
	"/ja": `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>パッケージの作成</title></head><body>
<h1>パッケージの作成</h1>
<p>ソースパッケージからバイナリーパッケージを作るには、次のコマンドを実行します。</p>
<pre>$ apt-get source hello
$ cd hello-2.10
$ dpkg-buildpackage -us -uc -b
$ sudo dpkg -i ../hello_2.10-3_amd64.deb
$ lintian -i -I --show-overrides ../hello_2.10-3_amd64.changes
</pre>
<p>ビルドに失敗したときは、ログを確認してください。</p>
</body></html>`,
	"/es": `<!DOCTYPE html><html lang="es-CL"><head><meta charset="utf-8"><title>Recolección de basura</title></head><body>
<p>La Municipalidad informa a los vecinos que el servicio de recolección de basura funcionará con normalidad durante el fin de semana largo, y que los puntos limpios abrirán en su horario habitual.</p>
</body></html>`,
	"/none": `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Garbage collection</title></head><body>
<p>The municipality informs residents that the garbage collection service will work normally during the long weekend, and that the recycling points will open at their usual hours.</p>
</body></html>`,
}

func TestGathererShowLanguage(t *testing.T) {
	// Beside the package's other tests: most of their time is waits on
	// servers and subprocesses, not CPU.
	t.Parallel()
	bin := stageBinaries(t)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := languagePages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(body))
	}))
	defer srv.Close()

	// A collection whose batch 1 holds the three pages.
	cfg := config.Defaults()
	cfg.Harvester.AllowPrivate = true
	dir := filepath.Join(t.TempDir(), "col")
	col, err := collection.Create(dir, config.Render(cfg))
	if err != nil {
		t.Fatal(err)
	}
	b := col.Batch(1)
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var entries []batch.Entry
	for i, path := range []string{"/ja", "/es", "/none"} {
		u, err := cfg.Scope.Normalizer().Normalize(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, batch.Entry{DocID: uint64(i + 1), Site: urlnorm.SiteKey(u), Score: 1, Kind: batch.KindNew, URL: u})
	}
	err = collection.WriteAtomic(b.File(), func(w io.Writer) error {
		return batch.Write(w, batch.Header{Batch: 1, Created: time.Now(), Strategy: "breadth-first", Counts: map[string]int{"urls": len(entries)}}, entries)
	})
	if err != nil {
		t.Fatal(err)
	}

	run(t, nil, filepath.Join(bin, "harvester"), "run", "--collection", dir, "--quiet", "--harvester-wait", "0s", "--harvester-address-wait", "0s")
	run(t, nil, filepath.Join(bin, "gatherer"), "run", "--collection", dir, "--quiet")

	for _, tt := range []struct{ doc, want string }{
		{"1", "declared en, detected ja (confidence "}, // and then ": disagree"
		{"2", "declared es-CL, detected es (confidence "},
		{"3", "declared none, detected en (confidence "},
	} {
		out := run(t, nil, filepath.Join(bin, "gatherer"), "show", "--collection", dir, tt.doc)
		t.Logf("gatherer show %s:\n%s", tt.doc, out)
		line := lineWith(out, "lang         ")
		if !strings.Contains(line, tt.want) {
			t.Errorf("show %s: %q, want %q in it:\n%s", tt.doc, line, tt.want, out)
		}
		mark := map[string]string{"1": ": disagree", "2": ": agree", "3": ")"}[tt.doc]
		if !strings.HasSuffix(line, mark) {
			t.Errorf("show %s: %q does not end in %q", tt.doc, line, mark)
		}
		if rec := lineWith(out, "  lang       "); strings.TrimPrefix(rec, "  lang       ") != strings.TrimPrefix(line, "lang         ") {
			t.Errorf("show %s: the record's language line %q is not the entry's %q", tt.doc, rec, line)
		}
	}

	// cat: the text alone on standard output; with --lang, the languages
	// on standard error.
	cmd := exec.Command(filepath.Join(bin, "gatherer"), "cat", "--collection", dir, "--lang", "1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cat --lang: %v\n%s", err, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "パッケージの作成\n") || strings.Contains(stdout.String(), "detected") {
		t.Errorf("cat --lang: standard output %q", stdout.String())
	}
	if got := stderr.String(); !strings.Contains(got, ": lang declared en, detected ja (confidence ") || !strings.HasSuffix(got, ": disagree\n") {
		t.Errorf("cat --lang: standard error %q", got)
	}
}

// lineWith returns the first line of s that starts with prefix, or "".
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
