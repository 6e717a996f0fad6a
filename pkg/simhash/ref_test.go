package simhash

// The simhash as first written (3260cf9, a6d9ef7): FNV-1a over each
// word's bytes, a loop over the shingle's words. Sum must give the same
// fingerprint for every text (fingerprints are stored in graph.db and
// compared across runs): TestSumSameAsReference and FuzzSum check it.

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// refSum is Sum as first written.
func refSum(text string) uint64 {
	var a refSummer
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	// letters tells whether the word being read has a letter: words of
	// digits alone (dates, counters, prices, times) are left out, so that
	// a page that differs only in them has the same fingerprint.
	h, in, letters := uint64(offset), false, false
	for i := 0; i < len(text) && a.n < MaxShingles; {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if c|0x20 >= 'a' && c|0x20 <= 'z' || c >= '0' && c <= '9' {
				h = (h ^ uint64(c|0x20)) * prime // digits have bit 5 set already
				in = true
				letters = letters || c > '9'
				continue
			}
			if in && letters {
				a.word(h)
			}
			h, in, letters = offset, false, false
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		switch {
		case r >= 0x0e00 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Hangul):
			if in && letters {
				a.word(h)
			}
			a.word((offset ^ uint64(r)) * prime)
			h, in, letters = offset, false, false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			r = unicode.ToLower(r)
			for k := 0; k < size; k++ { // the rune's bytes, as in the ASCII case
				h = (h ^ uint64(byte(r>>(8*k)))) * prime
			}
			in = true
			letters = letters || !unicode.IsDigit(r)
		default:
			if in && letters {
				a.word(h)
			}
			h, in, letters = offset, false, false
		}
	}
	if in && letters {
		a.word(h)
	}
	return a.sum()
}

// refSummer adds up the shingles of a text.
type refSummer struct {
	acc    [8]uint64 // per byte of the hash, eight lanes of byte counters
	counts [64]int
	inAcc  int // shingles in acc (flushed before a lane can overflow)
	n      int // shingles
	w      [Shingle]uint64
	nw     int // words
}

func (a *refSummer) word(h uint64) {
	a.w[a.nw%Shingle] = h
	a.nw++
	if a.nw >= Shingle {
		a.add(refShingle(a.w, a.nw))
	}
}

func (a *refSummer) add(h uint64) {
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

func (a *refSummer) flush() {
	for k := range a.acc {
		for j := 0; j < 8; j++ {
			a.counts[8*k+j] += int(a.acc[k] >> (8 * j) & 0xff)
		}
		a.acc[k] = 0
	}
	a.inAcc = 0
}

func (a *refSummer) sum() uint64 {
	if a.nw > 0 && a.nw < Shingle {
		a.add(refShingle(a.w, a.nw)) // a short text: the shingle of its words
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

// shingle hashes the last Shingle words (fewer when nw < Shingle), in
// order, with a 64-bit finaliser (MurmurHash3's fmix64) so that every
// bit is as likely set as not.
func refShingle(w [Shingle]uint64, nw int) uint64 {
	var h uint64
	k := min(nw, Shingle)
	for j := nw - k; j < nw; j++ {
		h = bits.RotateLeft64(h, 23) ^ w[j%Shingle]
		h *= 0x9e3779b97f4a7c15
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
