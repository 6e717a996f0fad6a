package gatherer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/wirecrawl/wire/pkg/collection"
	"github.com/wirecrawl/wire/pkg/parsed"
)

// ErrNoDoc means no docs.jsonl searched has a record for the URL or doc
// id.
var ErrNoDoc = errors.New("no document record")

// FindDoc looks for the record of url (or, when url is "", of docID) in
// the parsed/docs.jsonl of each batch directory in turn and returns the
// first found with the file it came from. Batches without parsed output
// are skipped. Lines are first matched as bytes, so only candidate lines
// are decoded.
func FindDoc(batchDirs []string, url string, docID uint64) (*parsed.Doc, string, error) {
	var needle []byte
	if url != "" {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as parsed.Writer writes
		if err := enc.Encode(url); err != nil {
			return nil, "", err
		}
		needle = append([]byte(`"url":`), bytes.TrimSpace(buf.Bytes())...)
	} else {
		needle = []byte(`"docid":` + strconv.FormatUint(docID, 10) + `,`)
	}
	for _, dir := range batchDirs {
		path := filepath.Join(dir, collection.ParsedDir, parsed.DocsFile)
		d, err := findIn(path, needle, url, docID)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if d != nil {
			return d, path, nil
		}
	}
	what := url
	if what == "" {
		what = "doc " + strconv.FormatUint(docID, 10)
	}
	return nil, "", fmt.Errorf("%s: %w", what, ErrNoDoc)
}

func findIn(path string, needle []byte, url string, docID uint64) (*parsed.Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256*1024)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && bytes.Contains(line, needle) {
			d, derr := parsed.DecodeLine(string(bytes.TrimRight(line, "\r\n")), path, n)
			if derr != nil {
				return nil, derr
			}
			if (url != "" && d.URL == url) || (url == "" && d.DocID == docID) {
				return d, nil
			}
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
}
