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

// Version is the fingerprint scheme Sum computes. Fingerprints of two
// versions are unrelated 64-bit values and are never compared: the
// collection records the version of each stored fingerprint (docs.jsonl
// by its format version, graph.db's doc records, the seeder's table), and
// readers set aside those of another version (docs/gatherer.md,
// "Near-duplicates"). Version 1 (2026-11-20 to 2026-11-27) hashed words
// with FNV-1a byte by byte; version 2 folds a word's bytes by rotation
// and XOR and mixes it once.
const Version = 2

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

// The multipliers of a word's hash (word); a shingle's finaliser is
// MurmurHash3's (fmix).
const (
	lengthMul = 0xc2b2ae3d27d4eb4f // spreads a word's length in bytes
	wordMul   = 0x87c37b91114253d5 // mixes a word's bytes once, at its end
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
// letter, digit or nonspacing mark, the two bytes of its lower case's
// code point, low byte first, added to the word (lo, hi), and seen 0x40
// (a letter or mark) or 1 (a digit); seen 0 for any other rune, which
// ends a word.
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
// (runs of letters, digits and nonspacing marks with at least one letter
// or mark, folded to lower case; each character of scripts written
// without spaces is a word; numbers alone are left out, so that dates,
// counters and times do not count) is hashed to 64 bits, and bit i of
// the result is set when more than half of the shingles have it set. A
// text of fewer than Shingle words has one shingle, of its words after
// zero hashes; an empty text has fingerprint 0.
//
// A word is a string of bytes: an ASCII letter lowered, a digit, and for
// any other character the low bytes of its lower case's code point, as
// many as the character has in UTF-8 (so a word has as many bytes as its
// text). Its bytes are folded into 64 bits, each step a rotation by 7
// bits and an XOR of the byte (no loss for words of up to nine ASCII
// bytes), then mixed once with its length (word); a shingle's hash is its
// three words' hashes rotated by different amounts and XORed, through
// MurmurHash3's finaliser (shingle). This is version 2 of the fingerprint
// (Version); the tests keep a plain implementation of the definition
// (refSum) and pin fingerprints of it (TestSumKnown).
//
// Blocks of eight ASCII bytes are read without a branch on their bytes
// (block): a byte loop that branches at every end of a word mispredicts
// about once a word, which is most of its cost on text with short words,
// menus and punctuation. The hashes of words and shingles and the counts
// of bits are done 64 words at a time (summer.words).
func Sum(text string) uint64 {
	var a summer
	// The word being read: its bytes folded into v, n of them, and seen
	// the OR of its bytes (ASCII letters lowered, digits): 0 outside a
	// word, bit 0x40 set once the word has a letter (a non-ASCII letter
	// sets it too). Words of digits alone (dates, counters, prices,
	// times) are left out, so that a page that differs only in them has
	// the same fingerprint.
	var v, n, seen uint64
	slow := 0 // the slow path below goes on to here before blocks are tried again
	for i := 0; i < len(text); {
		if i >= slow && i+8 <= len(text) {
			if le64(text[i:i+8])&high8 == 0 {
				// Eight ASCII bytes, without a branch on them.
				v, n, seen = a.block(text[i:i+8], v, n, seen)
				i += 8
				if a.nb >= 64 {
					if a.words(); a.done() {
						return a.sum()
					}
				}
				continue
			}
			slow = i + 8
		}
		c := wordByte[text[i]]
		i++
		if c-1 < 0x7f { // an ASCII letter or digit
			v = bits.RotateLeft64(v, 7) ^ uint64(c)
			n++
			seen |= uint64(c)
			continue
		}
		if c == 0 { // an ASCII separator
			if seen&0x40 != 0 {
				if a.add(v, n); a.done() {
					return a.sum()
				}
			}
			v, n, seen = 0, 0, 0
			continue
		}
		if b := text[i-1]; b >= 0xc2 && b <= 0xdf && i < len(text) && text[i]&0xc0 == 0x80 {
			// A rune of two bytes (U+0080 to U+07FF: Latin letters with
			// accents, Greek, Cyrillic, Armenian, Hebrew, Arabic...)
			// through its row of twoByte.
			t := twoByte[int(b&0x1f)<<6|int(text[i]&0x3f)]
			i++
			if t.seen != 0 {
				v = bits.RotateLeft64(bits.RotateLeft64(v, 7)^uint64(t.lo), 7) ^ uint64(t.hi)
				n += 2
				seen |= uint64(t.seen)
				continue
			}
			if seen&0x40 != 0 {
				if a.add(v, n); a.done() {
					return a.sum()
				}
			}
			v, n, seen = 0, 0, 0
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i-1:])
		i += size - 1
		switch {
		case r >= 0x2000 && r <= 0x206f:
			// General Punctuation (quotes, dashes, ellipsis, spaces of
			// every width): no letter, digit or mark, so a separator
			// (TestPunctuation), told without the Unicode tables.
		case r >= 0x0e00 && spaceless(r):
			if seen&0x40 != 0 {
				a.add(v, n)
			}
			a.add(foldBytes(0, r, size), uint64(size))
			if a.done() {
				return a.sum()
			}
			v, n, seen = 0, 0, 0
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			r = unicode.ToLower(r)
			v = foldBytes(v, r, size)
			n += uint64(size)
			if unicode.IsDigit(r) {
				seen |= 1
			} else {
				seen |= 0x40
			}
			continue
		}
		if seen&0x40 != 0 { // a separator
			if a.add(v, n); a.done() {
				return a.sum()
			}
		}
		v, n, seen = 0, 0, 0
	}
	if seen&0x40 != 0 {
		a.add(v, n)
	}
	return a.sum()
}

// block reads eight ASCII bytes x (little-endian) into the word being
// read (v, n and seen as in Sum), without a branch on them: at each byte
// the word read so far is written to the batch, which keeps it (nb
// grows) only at the separator that ends a word with a letter.
func (a *summer) block(b string, v, n, seen uint64) (uint64, uint64, uint64) {
	nb := a.nb
	_ = b[7]
	v, n, seen, nb = step(&a.raw, b[0], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[1], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[2], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[3], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[4], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[5], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[6], v, n, seen, nb)
	v, n, seen, nb = step(&a.raw, b[7], v, n, seen, nb)
	a.nb = nb
	return v, n, seen
}

// step is block's work for one byte b.
func step(raw *[128]rawWord, b byte, v, n, seen uint64, nb int) (uint64, uint64, uint64, int) {
	c := uint64(wordByte[b])
	in := (c + 0x7f) >> 7 // 1 for a letter or digit, 0 for a separator
	raw[nb&127] = rawWord{v, n}
	nb += int((1 - in) & (seen >> 6))
	m := -in
	return (bits.RotateLeft64(v, 7) ^ c) & m, (n + 1) & m, (seen | c) & m, nb
}

// high8 has the high bit of every byte set: a word of eight bytes with
// none of them set is ASCII.
const high8 = 0x8080808080808080

// le64 reads eight bytes as a little-endian word.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// foldBytes folds the low size bytes of r, low byte first, into v.
func foldBytes(v uint64, r rune, size int) uint64 {
	for k := 0; k < size; k++ {
		v = bits.RotateLeft64(v, 7) ^ uint64(byte(r>>(8*k)))
	}
	return v
}

// word is the hash of a word of n bytes folded into v.
func word(v, n uint64) uint64 {
	h := (v ^ n*lengthMul) * wordMul
	return h ^ h>>32
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

// rawWord is a word as Sum reads it: its bytes folded into v, n of them.
type rawWord struct{ v, n uint64 }

// summer adds up the shingles of a text. Words are kept in batches of
// 64 and their shingles hashed and counted together, in a loop without
// calls or branches that depend on the text. The bits of the shingles'
// hashes are counted by position with carry-save adders (Harley and
// Seal's population count, by position): sixteen hashes at a time go
// into ones, twos, fours and eights, a vertical counter of four bits per
// position, and what carries out of it, the sixteens, into byte lanes.
type summer struct {
	raw [128]rawWord   // the batch's words as Sum reads them
	w   [2 + 64]uint64 // the last two words of the batch before, then the batch's words' hashes
	nb  int            // words in the batch
	nw  int            // words of the batches before

	pend                     [16]uint64 // shingles not yet counted
	np                       int        // shingles in pend
	ones, twos, fours, eight uint64     // the vertical counter
	acc                      [8]uint64  // the sixteens: per byte of the hash, eight lanes of byte counters
	inAcc                    int        // sixteens in acc (flushed before a lane can overflow)
	counts                   [64]int    // sixteens flushed from acc
	n                        int        // shingles
}

// done tells whether the text's shingles are counted to MaxShingles,
// past which Sum stops.
func (a *summer) done() bool { return a.nw >= MaxShingles+Shingle-1 }

// add adds a word of n bytes folded into v; words runs when the batch
// holds 64.
func (a *summer) add(v, n uint64) {
	a.raw[a.nb&127] = rawWord{v, n}
	a.nb++
	if a.nb == 64 {
		a.words()
	}
}

// words hashes the batch's words, then hashes and counts the shingles
// that end in them, up to MaxShingles. The code is written for shingles
// of 3 words (Shingle).
func (a *summer) words() {
	nb := min(a.nb, 64, MaxShingles+Shingle-1-a.nw)
	for j := range nb {
		a.w[2+j] = word(a.raw[j].v, a.raw[j].n)
	}
	j := 0
	if a.nw < Shingle-1 { // the text's first words end no shingle
		j = min(Shingle-1-a.nw, nb)
	}
	for ; j < nb; j++ {
		a.pend[a.np&15] = shingle(a.w[j], a.w[j+1], a.w[j+2])
		a.n++
		if a.np++; a.np == 16 {
			a.count()
		}
	}
	a.w[0], a.w[1] = a.w[nb], a.w[nb+1]
	a.nw += nb
	// Words past the 64 of the batch (the last block of eight bytes
	// adds up to four) start the next one.
	rest := a.nb - nb
	if a.nw >= MaxShingles+Shingle-1 {
		rest = 0
	}
	for k := range rest {
		a.raw[k] = a.raw[nb+k]
	}
	a.nb = rest
}

// csa is a carry-save adder: the carry and the sum of three words' bits,
// position by position.
func csa(a, b, c uint64) (carry, sum uint64) {
	u := a ^ b
	return a&b | u&c, u ^ c
}

// count adds the sixteen hashes of pend.
func (a *summer) count() {
	b := &a.pend
	ones, twos, fours, eight := a.ones, a.twos, a.fours, a.eight
	var twosA, twosB, foursA, foursB, eightA, eightB, sixteens uint64
	twosA, ones = csa(ones, b[0], b[1])
	twosB, ones = csa(ones, b[2], b[3])
	foursA, twos = csa(twos, twosA, twosB)
	twosA, ones = csa(ones, b[4], b[5])
	twosB, ones = csa(ones, b[6], b[7])
	foursB, twos = csa(twos, twosA, twosB)
	eightA, fours = csa(fours, foursA, foursB)
	twosA, ones = csa(ones, b[8], b[9])
	twosB, ones = csa(ones, b[10], b[11])
	foursA, twos = csa(twos, twosA, twosB)
	twosA, ones = csa(ones, b[12], b[13])
	twosB, ones = csa(ones, b[14], b[15])
	foursB, twos = csa(twos, twosA, twosB)
	eightB, fours = csa(fours, foursA, foursB)
	sixteens, eight = csa(eight, eightA, eightB)
	a.ones, a.twos, a.fours, a.eight = ones, twos, fours, eight
	a.np = 0
	a.acc[0] += lanes[sixteens&0xff]
	a.acc[1] += lanes[sixteens>>8&0xff]
	a.acc[2] += lanes[sixteens>>16&0xff]
	a.acc[3] += lanes[sixteens>>24&0xff]
	a.acc[4] += lanes[sixteens>>32&0xff]
	a.acc[5] += lanes[sixteens>>40&0xff]
	a.acc[6] += lanes[sixteens>>48&0xff]
	a.acc[7] += lanes[sixteens>>56]
	if a.inAcc++; a.inAcc == 255 {
		a.flush()
	}
}

// flush moves the lanes of acc into counts.
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
	if nw := a.nw + a.nb; nw > 0 && nw < Shingle { // a short text: the shingle of its words after zero hashes
		var w [Shingle]uint64
		for j := range nw {
			w[Shingle-nw+j] = word(a.raw[j].v, a.raw[j].n)
		}
		a.pend[0], a.np, a.n = shingle(w[0], w[1], w[2]), 1, 1
	} else {
		for a.nb > 0 && !a.done() {
			a.words()
		}
	}
	if a.n == 0 {
		return 0
	}
	a.flush()
	var out uint64
	for i := range a.counts {
		c := 16*a.counts[i] + int(a.ones>>i&1) + 2*int(a.twos>>i&1) + 4*int(a.fours>>i&1) + 8*int(a.eight>>i&1)
		for _, h := range a.pend[:a.np] {
			c += int(h >> i & 1)
		}
		if 2*c > a.n {
			out |= 1 << i
		}
	}
	return out
}

// shingle hashes three words in order: their hashes rotated by different
// amounts and XORed, through a 64-bit finaliser (fmix) so that every bit
// is as likely set as not.
func shingle(w0, w1, w2 uint64) uint64 {
	return fmix(bits.RotateLeft64(w0, 42) ^ bits.RotateLeft64(w1, 21) ^ w2)
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
