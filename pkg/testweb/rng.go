package testweb

import (
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Stream tags keep the random streams used for different purposes
// independent, so that e.g. changing how a body is written never changes
// which kind a page has.
const (
	tagHosts uint64 = iota + 1
	tagSite
	tagOOS
	tagKind
	tagPath
	tagRedirect
	tagBody
	tagTitle
	tagRobotsErr
	tagGarbage
	tagAppendix
	tagTiming
	tagCrawlDelay
	tagBig
	tagAlias
	tagAliasLink
	tagChange     // a page's change model (change.go)
	tagVersion    // the text and links of a page's version
	tagValidators // a site's validator policy (serve.go)
	tagEncoding   // a site's content codings
	tagChunked    // whether a site chunks its answers
)

const golden = 0x9e3779b97f4a7c15

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// rng is a tiny deterministic generator (splitmix64). Its output depends
// only on the values it was seeded with, never on the Go version.
type rng struct{ s uint64 }

// newRNG derives a generator from a sequence of values.
func newRNG(a, b, c uint64) rng {
	s := mix(a + golden)
	s = mix(s ^ (b + golden))
	s = mix(s ^ (c + golden))
	return rng{s: s}
}

// next returns 64 pseudo-random bits.
func (r *rng) next() uint64 {
	r.s += golden
	return mix(r.s)
}

// intn returns a value in [0, n); 0 when n <= 1.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// between returns a value in [lo, hi].
func (r *rng) between(lo, hi int) int {
	return lo + r.intn(hi-lo+1)
}

// float returns a value in [0, 1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) / (1 << 53)
}

// normal returns a standard normal deviate (Box-Muller).
func (r *rng) normal() float64 {
	u1 := 1 - r.float() // (0, 1]
	u2 := r.float()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// chance returns true with probability p.
func (r *rng) chance(p float64) bool {
	return r.float() < p
}

// pick returns a random element of words.
func (r *rng) pick(words []string) string {
	return words[r.intn(len(words))]
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	c, n := utf8.DecodeRuneInString(s)
	if c == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(c)) + s[n:]
}
