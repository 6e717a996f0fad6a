// Package simhash computes similarity fingerprints of page texts and
// groups pages whose fingerprints are close: near-duplicates (a page with
// a changing date or counter, a printer-friendly copy, a mirror).
//
// The fingerprint is Charikar's simhash, 64 bits, over shingles of
// Shingle consecutive words (Manku, Jain and Das Sarma, "Detecting
// near-duplicates for web crawling", WWW 2007: 64-bit simhash, pages at
// Hamming distance 3 or less are near-duplicates, found through tables
// keyed by blocks of the fingerprint). Why simhash rather than minhash:
// one 64-bit word per page, which the document record and the link graph
// hold at no cost, and a distance (bits that differ) that banded tables
// search in one pass; minhash estimates the Jaccard similarity better over
// its whole range, but needs a hundred or more values per page (hundreds
// of bytes) and as many hash computations per shingle, and a crawler only
// cares about the near-identical end of that range. The docs are in
// docs/gatherer.md ("Near-duplicates") and docs/seeder.md.
package simhash

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Shingle is the number of consecutive words hashed together.
const Shingle = 3

// MaxShingles bounds the work on a very long text: shingles past it are
// not counted (a page's first 20,000 words or so decide its fingerprint).
const MaxShingles = 20000

// Distance is the Hamming distance under which two fingerprints are
// near-duplicates (inclusive).
const Distance = 3

// lanes[b] has byte j set to bit j of b: adding lanes of eight bytes of a
// hash counts eight bit positions at once (SWAR).
var lanes = func() (t [256]uint64) {
	for b := range t {
		for j := 0; j < 8; j++ {
			t[b] |= uint64(b>>j&1) << (8 * j)
		}
	}
	return t
}()

// FNV-1a's constants (each word's hash), and the multiplier that mixes
// a shingle's words.
const (
	offset = 14695981039346656037
	prime  = 1099511628211
	mixer  = 0x9e3779b97f4a7c15
)

// wordByte[c] is, for an ASCII letter c, its lower case; for a digit, c;
// 0 for any other ASCII byte (a separator); 0x80 for the bytes of
// multibyte UTF-8 sequences (and invalid bytes), which Sum decodes.
var wordByte = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= 0x80:
			t[c] = 0x80
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = byte(c)
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) | 0x20
		}
	}
	return t
}()

// runeClass is what Sum does with a rune of two bytes in UTF-8: for a
// letter, digit or nonspacing mark, the two bytes (little-endian) of its
// lower case hashed into the word, and seen 0x40 (a letter) or 1 (a
// digit); seen 0 for any other rune, which ends a word.
type runeClass struct{ lo, hi, seen byte }

// twoByte is the runeClass of every rune from U+0000 to U+07FF (Sum looks
// up those of two bytes), told by the same unicode functions as the
// general path of Sum.
var twoByte = func() (t [0x800]runeClass) {
	for r := range rune(len(t)) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
			continue
		}
		l := unicode.ToLower(r)
		t[r] = runeClass{lo: byte(l), hi: byte(l >> 8), seen: 0x40}
		if unicode.IsDigit(l) {
			t[r].seen = 1
		}
	}
	return t
}()

// Sum returns the simhash of text: every shingle of Shingle words
// (runs of letters and digits with at least one letter, ASCII letters
// folded to lower case; each character of scripts written without spaces
// is a word; numbers alone are left out, so that dates, counters and
// times do not count) is hashed to 64 bits, and
// bit i of the result is set when more than half of the shingles have it
// set. A text of fewer than Shingle words has the shingle of its words; an
// empty text has fingerprint 0.
//
// Each word is hashed once (FNV-1a over its bytes, ASCII letters lowered,
// other letters as the low bytes of their lower case's code point,
// as many as the letter has bytes in UTF-8), and a
// shingle's hash is mixed from its words' hashes (shingle). The
// fingerprints are those of the first implementation, which the tests
// keep (refSum); they are stored in graph.db, so a change of them is a
// change of format.
func Sum(text string) uint64 {
	var a summer
	// seen is the OR of the word's bytes so far (ASCII letters lowered,
	// digits): 0 outside a word, bit 0x40 set once the word has a letter
	// (a non-ASCII letter sets it too). Words of digits alone (dates,
	// counters, prices, times) are left out, so that a page that differs
	// only in them has the same fingerprint.
	h, seen := uint64(offset), byte(0)
	for i := 0; i < len(text); {
		v := wordByte[text[i]]
		i++
		if v-1 < 0x7f { // an ASCII letter or digit: the common case
			h = (h ^ uint64(v)) * prime
			seen |= v
			continue
		}
		if v == 0 { // an ASCII separator
			if a.end(h, seen) {
				return a.sum()
			}
			h, seen = offset, 0
			continue
		}
		if c := text[i-1]; c >= 0xc2 && c <= 0xdf && i < len(text) && text[i]&0xc0 == 0x80 {
			// A rune of two bytes (U+0080 to U+07FF: Latin letters with
			// accents, Greek, Cyrillic, Armenian, Hebrew, Arabic...)
			// through its row of twoByte.
			t := twoByte[int(c&0x1f)<<6|int(text[i]&0x3f)]
			i++
			if t.seen != 0 {
				h = (h ^ uint64(t.lo)) * prime
				h = (h ^ uint64(t.hi)) * prime
				seen |= t.seen
				continue
			}
			if a.end(h, seen) {
				return a.sum()
			}
			h, seen = offset, 0
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i-1:])
		i += size - 1
		switch {
		case r >= 0x2000 && r <= 0x206f:
			// General Punctuation (quotes, dashes, ellipsis, spaces of
			// every width): no letter, digit or mark, so a separator
			// (TestPunctuation), told without the Unicode tables.
			if a.end(h, seen) {
				return a.sum()
			}
			h, seen = offset, 0
		case r >= 0x0e00 && spaceless(r):
			if seen&0x40 != 0 {
				a.word(h)
			}
			a.word((offset ^ uint64(r)) * prime)
			h, seen = offset, 0
			if a.n >= MaxShingles {
				return a.sum()
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			r = unicode.ToLower(r)
			for k := 0; k < size; k++ { // the rune's bytes, as in the ASCII case
				h = (h ^ uint64(byte(r>>(8*k)))) * prime
			}
			if unicode.IsDigit(r) {
				seen |= 1
			} else {
				seen |= 0x40
			}
		default:
			if a.end(h, seen) {
				return a.sum()
			}
			h, seen = offset, 0
		}
	}
	if seen&0x40 != 0 {
		a.word(h)
	}
	return a.sum()
}

// spaceless tells whether r (U+0E00 or above) is of a script written
// without spaces between words (Han, Hiragana, Katakana, Thai, Hangul),
// whose characters are words each: the blocks wholly of these scripts
// are told by their bounds, the rest through the Unicode tables
// (TestSpaceless checks the bounds against them).
func spaceless(r rune) bool {
	switch {
	case r >= 0x4e00 && r <= 0x9fff, // CJK Unified Ideographs
		r >= 0x3041 && r <= 0x3096, // Hiragana
		r >= 0x30a1 && r <= 0x30fa, // Katakana
		r >= 0xac00 && r <= 0xd7a3: // Hangul Syllables
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Hangul)
}

// summer adds up the shingles of a text.
type summer struct {
	acc    [8]uint64 // per byte of the hash, eight lanes of byte counters
	counts [64]int
	inAcc  int    // shingles in acc (flushed before a lane can overflow)
	n      int    // shingles
	w0, w1 uint64 // the hashes of the two words before, w1 the last
	nw     int    // words
}

// end ends a word of hash h whose bytes OR to seen: a word with a letter
// is added (word). It reports whether the text's shingles are counted to
// MaxShingles, past which Sum stops.
func (a *summer) end(h uint64, seen byte) bool {
	if seen&0x40 != 0 {
		a.word(h)
	}
	return a.n >= MaxShingles
}

// word adds the shingle that ends with the word of hash h. The code is
// written for shingles of 3 words (Shingle); refSum, in the tests, is
// written for any.
func (a *summer) word(h uint64) {
	if a.nw >= Shingle-1 {
		a.add(shingle(a.w0, a.w1, h))
	}
	a.w0, a.w1 = a.w1, h
	a.nw++
}

func (a *summer) add(h uint64) {
	a.acc[0] += lanes[h&0xff]
	a.acc[1] += lanes[h>>8&0xff]
	a.acc[2] += lanes[h>>16&0xff]
	a.acc[3] += lanes[h>>24&0xff]
	a.acc[4] += lanes[h>>32&0xff]
	a.acc[5] += lanes[h>>40&0xff]
	a.acc[6] += lanes[h>>48&0xff]
	a.acc[7] += lanes[h>>56]
	a.n++
	if a.inAcc++; a.inAcc == 255 {
		a.flush()
	}
}

func (a *summer) flush() {
	for k := range a.acc {
		for j := 0; j < 8; j++ {
			a.counts[8*k+j] += int(a.acc[k] >> (8 * j) & 0xff)
		}
		a.acc[k] = 0
	}
	a.inAcc = 0
}

func (a *summer) sum() uint64 {
	switch a.nw { // a short text: the shingle of its words
	case 1:
		a.add(fmix(a.w1 * mixer))
	case 2:
		a.add(fmix((bits.RotateLeft64(a.w0*mixer, 23) ^ a.w1) * mixer))
	}
	if a.n == 0 {
		return 0
	}
	a.flush()
	var out uint64
	for i, c := range a.counts {
		if 2*c > a.n {
			out |= 1 << i
		}
	}
	return out
}

// shingle hashes three words in order, each step a rotation, the next
// word and a multiplication, with a 64-bit finaliser (fmix) so that every
// bit is as likely set as not.
func shingle(w0, w1, w2 uint64) uint64 {
	h := bits.RotateLeft64(w0*mixer, 23) ^ w1
	h = bits.RotateLeft64(h*mixer, 23) ^ w2
	return fmix(h * mixer)
}

// fmix is MurmurHash3's 64-bit finaliser.
func fmix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Hamming is the number of bits in which a and b differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }
