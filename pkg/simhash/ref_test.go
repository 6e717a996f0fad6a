package simhash

// A plain implementation of the fingerprint's definition (Version 2):
// the text cut into words rune by rune through the unicode package, each
// word's bytes folded one by one, the shingles' bits counted one
// by one. Sum, which reads ASCII eight bytes at a time and counts bits
// with carry-save adders, must give the same fingerprint for every text:
// TestSumSameAsReference and FuzzSum check it.

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// refWords returns the hashes of the words of text, in order: runs of
// letters, digits and nonspacing marks that have a letter (or a mark),
// and each character of a script written without spaces.
func refWords(text string) []uint64 {
	var out []uint64
	var w []byte // the word's bytes
	letter := false
	end := func() {
		if letter {
			out = append(out, refWordHash(w))
		}
		w, letter = w[:0], false
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r >= 0x0e00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Hangul):
			end()
			var c []byte
			for k := 0; k < size; k++ {
				c = append(c, byte(r>>(8*k)))
			}
			out = append(out, refWordHash(c))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			r = unicode.ToLower(r)
			for k := 0; k < size; k++ { // the low bytes of the lower case, as many as r has in UTF-8
				w = append(w, byte(r>>(8*k)))
			}
			letter = letter || !unicode.IsDigit(r)
		default:
			end()
		}
	}
	end()
	return out
}

// refWordHash hashes a word's bytes: each byte folded in turn into 64
// bits (a rotation by 7 bits, an XOR), then the length mixed in and one
// multiplication.
func refWordHash(w []byte) uint64 {
	var v uint64
	for _, b := range w {
		v = v<<7 | v>>57
		v ^= uint64(b)
	}
	h := (v ^ uint64(len(w))*lengthMul) * wordMul
	return h ^ h>>32
}

// refSum is Sum as the definition states it.
func refSum(text string) uint64 {
	w := refWords(text)
	if len(w) > 0 && len(w) < Shingle {
		w = append(make([]uint64, Shingle-len(w)), w...) // a short text: its words after zero hashes
	}
	var shingles []uint64
	for i := Shingle - 1; i < len(w) && len(shingles) < MaxShingles; i++ {
		x := bits.RotateLeft64(w[i-2], 42) ^ bits.RotateLeft64(w[i-1], 21) ^ w[i]
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 33
		x *= 0xc4ceb9fe1a85ec53
		x ^= x >> 33
		shingles = append(shingles, x)
	}
	var out uint64
	for b := 0; b < 64; b++ {
		c := 0
		for _, s := range shingles {
			c += int(s >> b & 1)
		}
		if 2*c > len(shingles) {
			out |= 1 << b
		}
	}
	return out
}
