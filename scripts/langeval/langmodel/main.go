// Command langmodel writes pkg/langid's language model: the unigram,
// bigram and trigram probabilities of lingua-go's models
// (github.com/pemistahl/lingua-go, Apache License 2.0) for a set of
// languages, as langid.WriteModel writes them (pkg/langid/model.go has
// the format). The probabilities are lingua's, unchanged but for
// rounding their logarithms to 1/2048.
//
//	cd scripts/langeval && go run ./langmodel -out ../../pkg/langid/model.bin
//
// pkg/langid runs it through go generate. The languages are those of
// -langs (ISO 639-1 codes); the models are read from the lingua-go module
// this module requires (its directory as `go list -m` gives it). A
// language's script is that of most letters of its unigram model.
package main

import (
	"archive/zip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/pemistahl/lingua-go"
	"github.com/pemistahl/lingua-go/serialization"
	"github.com/wirecrawl/wire/pkg/langid"
	"google.golang.org/protobuf/proto"
)

// Languages is the default set: pkg/langid's default languages and a few
// a Spanish-speaking national web may see (Catalan, Basque).
const languages = "es,en,pt,fr,de,it,nl,sv,da,nb,fi,pl,cs,hu,ro,ru,uk,el,tr,ar,he,ja,ko,zh,hi,eo,ca,eu"

// scripts are the scripts a language can be written in, as pkg/langid
// names them (Kana stands for Japanese, written in Han and kana).
var scripts = []string{"Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Han", "Hangul", "Devanagari", "Thai", "Armenian", "Georgian", "Bengali", "Gujarati", "Gurmukhi", "Tamil", "Telugu"}

func main() {
	out := flag.String("out", "model.bin", "file to write")
	dir := flag.String("dir", "", "lingua-go's language-models directory (default: that of the required module)")
	langs := flag.String("langs", languages, "comma-separated ISO 639-1 codes")
	flag.Parse()
	if *dir == "" {
		b, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pemistahl/lingua-go").Output()
		if err != nil {
			fail(fmt.Errorf("find lingua-go: %w", err))
		}
		*dir = filepath.Join(strings.TrimSpace(string(b)), "language-models")
	}
	codes := strings.Split(*langs, ",")
	ngrams := map[string][]langid.ModelProb{}
	var langsOut []langid.ModelLanguage
	for i, code := range codes {
		l := lingua.GetLanguageFromIsoCode639_1(lingua.GetIsoCode639_1FromValue(code))
		if l == lingua.Unknown {
			fail(fmt.Errorf("lingua does not know %q", code))
		}
		counts := map[string]int{}
		for n, name := range []string{"unigrams", "bigrams", "trigrams"} {
			m, err := read(filepath.Join(*dir, code, name+".pb.bin.zip"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // lingua tells some languages by their script alone
			} else if err != nil {
				fail(err)
			}
			for _, set := range m.NgramSets {
				for _, g := range set.Ngrams {
					r := []rune(g)
					if len(r) != n+1 {
						fail(fmt.Errorf("%s %s: n-gram %q", code, name, g))
					}
					ngrams[g] = append(ngrams[g], langid.ModelProb{Language: i, P: set.Probability})
					if n == 0 {
						for _, s := range scripts {
							if unicode.Is(unicode.Scripts[s], r[0]) {
								counts[s]++
							}
						}
					}
				}
			}
		}
		script := ""
		for _, s := range scripts {
			if script == "" || counts[s] > counts[script] {
				script = s
			}
		}
		if code == "ja" {
			script = "Kana"
		}
		langsOut = append(langsOut, langid.ModelLanguage{Code: code, Script: script})
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	if err := langid.WriteModel(f, langsOut, ngrams); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "%s: %d languages, %d n-grams\n", *out, len(codes), len(ngrams))
}

func read(path string) (*serialization.SerializableLanguageModel, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("open model: %w", err)
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		return nil, fmt.Errorf("%s: %d files", path, len(zr.File))
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", path, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read model %s: %w", path, err)
	}
	var m serialization.SerializableLanguageModel
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode model %s: %w", path, err)
	}
	return &m, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "langmodel:", err)
	os.Exit(1)
}
