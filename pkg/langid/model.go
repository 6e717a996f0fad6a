package langid

import (
	"bufio"
	_ "embed" // the model
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:generate sh -c "cd ../../scripts/langeval && go run ./langmodel -out ../../pkg/langid/model.bin"

// modelFile is lingua-go's n-gram model of the languages a detector
// knows (scripts/langeval/langmodel writes it with WriteModel). It is
// read in place: two hash tables, looked up where they lie in the
// program's read-only data, so that loading it costs nothing and it adds
// nothing to the heap the garbage collector paces itself by.
//
//	"langid2\n"
//	CODE SCRIPT[,CODE SCRIPT...] "\n"   languages, in index order
//	two tables: trigrams, then unigrams and bigrams, each
//	  uint32 BITS, uint32 E
//	  2^BITS slots of 12 bytes: uint64 KEY (0: empty), uint32 OFFSET<<8 | COUNT
//	  E entries of 3 bytes: uint8 LANGUAGE, uint16 Q
//
// little-endian. KEY packs the n-gram's one to three (lower-case) runes,
// 21 bits each, the first highest; an n-gram is in the slot
// KEY × hashMul >> (64 − BITS), or in the next free one (linear
// probing). Its COUNT entries, from the OFFSET-th, give Q = −ln(p) × 2048
// rounded, p the n-gram's probability in the language by lingua's model.
//
//go:embed model.bin
var modelFile string

const (
	// qScale is the rounding of the model's log-probabilities.
	qScale = 2048
	// maxLanguages is the most languages a model may hold (a bit set of
	// uint64).
	maxLanguages = 64
	// hashMul spreads the keys over a table (2^64 / golden ratio).
	hashMul = 0x9e3779b97f4a7c15
	// slotBytes and entryBytes are the sizes of a table's records.
	slotBytes, entryBytes = 12, 3
	// magic opens a model file.
	magic = "langid2"
)

// model is the model file, read.
type model struct {
	codes   []string // by language index
	scripts []string // by language index: Latin, Cyrillic, Kana (Japanese), Han ...
	tri     table    // trigrams
	low     table    // unigrams and bigrams: a small table, that stays in the processor's cache
}

// table is a hash table of n-grams and their probabilities by language,
// in place in the model file.
type table struct {
	shift   uint   // 64 − BITS
	mask    uint64 // 2^BITS − 1
	slots   string
	entries string
}

// lookup returns the entries of an n-gram (3 bytes each), empty when no
// language has it.
func (t *table) lookup(key uint64) string {
	for h := key * hashMul >> t.shift; ; h = (h + 1) & t.mask {
		s := t.slots[h*slotBytes : h*slotBytes+slotBytes]
		switch k := le64(s); k {
		case key:
			v := le32(s[8:])
			return t.entries[(v>>8)*entryBytes : (v>>8+v&0xff)*entryBytes]
		case 0:
			return ""
		}
	}
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// header returns the languages of a model file and their scripts, and
// the rest of the file.
func header(b string) (codes, scripts []string, rest string, err error) {
	line, b, ok := strings.Cut(b, "\n")
	if !ok || line != magic {
		return nil, nil, "", errors.New("not a langid model")
	}
	list, b, ok := strings.Cut(b, "\n")
	if !ok {
		return nil, nil, "", errors.New("no language list")
	}
	for _, cs := range strings.Split(list, ",") {
		code, script, ok := strings.Cut(cs, " ")
		if !ok || code == "" || script == "" {
			return nil, nil, "", fmt.Errorf("language %q", cs)
		}
		codes, scripts = append(codes, code), append(scripts, script)
	}
	if len(codes) > maxLanguages {
		return nil, nil, "", fmt.Errorf("%d languages, at most %d", len(codes), maxLanguages)
	}
	return codes, scripts, b, nil
}

// parseModel reads a model file, and checks it: every slot's entries
// within the file, every entry's language one of the file's.
func parseModel(b string) (*model, error) {
	codes, scripts, b, err := header(b)
	if err != nil {
		return nil, fmt.Errorf("language model: %w", err)
	}
	m := &model{codes: codes, scripts: scripts}
	for _, t := range []*table{&m.tri, &m.low} {
		if len(b) < 8 {
			return nil, errors.New("language model: truncated")
		}
		nbits, n := le32(b), uint64(le32(b[4:]))
		b = b[8:]
		if nbits < 1 || nbits > 30 || uint64(len(b)) < slotBytes<<nbits+entryBytes*n {
			return nil, fmt.Errorf("language model: table of 2^%d slots and %d entries in %d bytes", nbits, n, len(b))
		}
		t.shift, t.mask = uint(64-nbits), 1<<nbits-1
		t.slots, b = b[:slotBytes<<nbits], b[slotBytes<<nbits:]
		t.entries, b = b[:entryBytes*n], b[entryBytes*n:]
		for i := 0; i < len(t.slots); i += slotBytes {
			v := uint64(le32(t.slots[i+8:]))
			if le64(t.slots[i:]) != 0 && (v&0xff == 0 || v>>8+v&0xff > n) {
				return nil, fmt.Errorf("language model: slot %d: entries %d+%d of %d", i/slotBytes, v>>8, v&0xff, n)
			}
		}
		for i := 0; i < len(t.entries); i += entryBytes {
			if int(t.entries[i]) >= len(codes) {
				return nil, fmt.Errorf("language model: entry %d: language %d", i/entryBytes, t.entries[i])
			}
		}
	}
	if len(b) > 0 {
		return nil, errors.New("language model: trailing bytes")
	}
	return m, nil
}

// loadModel reads the embedded model the first time it is needed, once
// a process (a few milliseconds: the tables are used where they lie).
var loadModel = sync.OnceValue(func() *model {
	m, err := parseModel(modelFile)
	if err != nil {
		panic(err) // the embedded file is checked by TestModel
	}
	return m
})

// ModelLanguage is a language of a model: its ISO 639-1 code and the
// script it is written in, as Unicode names scripts ("Latin",
// "Cyrillic", "Han" ...), or "Kana" for Japanese (Han and kana).
type ModelLanguage struct {
	Code, Script string
}

// ModelProb is the probability of an n-gram in one of a model's
// languages (its index).
type ModelProb struct {
	Language int
	P        float64
}

// WriteModel writes a model file of the languages and n-grams given: by
// n-gram (one to three letters, lower case), its probabilities in the
// languages that have it. scripts/langeval/langmodel writes model.bin
// with it from lingua-go's models.
func WriteModel(w io.Writer, langs []ModelLanguage, ngrams map[string][]ModelProb) error {
	if len(langs) == 0 || len(langs) > maxLanguages {
		return fmt.Errorf("write model: %d languages, want 1 to %d", len(langs), maxLanguages)
	}
	var list []string
	for _, l := range langs {
		if l.Code == "" || l.Script == "" || strings.ContainsAny(l.Code+l.Script, " ,\n") {
			return fmt.Errorf("write model: language %q, script %q", l.Code, l.Script)
		}
		list = append(list, l.Code+" "+l.Script)
	}
	var tri, low []string
	for g, ps := range ngrams {
		switch n := utf8.RuneCountInString(g); {
		case n < 1 || n > 3 || !utf8.ValidString(g) || len(ps) == 0 || len(ps) > maxLanguages:
			return fmt.Errorf("write model: n-gram %q with %d languages", g, len(ps))
		case n == 3:
			tri = append(tri, g)
		default:
			low = append(low, g)
		}
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(magic + "\n" + strings.Join(list, ",") + "\n")
	for _, grams := range [][]string{tri, low} {
		slices.Sort(grams) // the same file from the same models
		if err := writeTable(bw, grams, ngrams, len(langs)); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	return nil
}

// writeTable writes one table of a model file: slots for at most three
// quarters full, and the entries in the order of the n-grams.
func writeTable(w *bufio.Writer, grams []string, ngrams map[string][]ModelProb, langs int) error {
	nbits := max(1, bits.Len(uint(len(grams)*4/3)))
	slots := make([]byte, slotBytes<<nbits)
	var entries []byte
	mask := uint64(1)<<nbits - 1
	for _, g := range grams {
		k := gramKey(g)
		h := k * hashMul >> (64 - nbits)
		for ; le64(string(slots[h*slotBytes:h*slotBytes+8])) != 0; h = (h + 1) & mask {
		}
		v := uint32(len(entries)/entryBytes)<<8 | uint32(len(ngrams[g]))
		putLE(slots[h*slotBytes:], k, 8)
		putLE(slots[h*slotBytes+8:], uint64(v), 4)
		for _, p := range ngrams[g] {
			q := math.Round(-math.Log(p.P) * qScale)
			if p.Language < 0 || p.Language >= langs || !(q >= 0 && q <= math.MaxUint16) {
				return fmt.Errorf("write model: n-gram %q: language %d, probability %g", g, p.Language, p.P)
			}
			entries = append(entries, byte(p.Language), byte(uint16(q)), byte(uint16(q)>>8))
		}
	}
	if len(entries)/entryBytes >= 1<<24 {
		return fmt.Errorf("write model: %d entries", len(entries)/entryBytes)
	}
	var head [8]byte
	putLE(head[:], uint64(nbits), 4)
	putLE(head[4:], uint64(len(entries)/entryBytes), 4)
	w.Write(head[:])
	w.Write(slots)
	w.Write(entries)
	return nil
}

func putLE(b []byte, v uint64, n int) {
	for i := range n {
		b[i] = byte(v >> (8 * i))
	}
}

// gramKey packs an n-gram of one to three runes: 21 bits a rune, the
// first highest.
func gramKey(g string) uint64 {
	var k uint64
	for _, r := range g {
		k = k<<21 | uint64(r)
	}
	return k
}
