package simhash

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// words makes a text of n words drawn from a vocabulary of 5,000, seeded.
func words(seed uint64, n int) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%x", r.IntN(5000))
	}
	return out
}

// kana makes a text of n characters drawn from hiragana, seeded.
func kana(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 3))
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(rune(0x3041 + r.IntN(80)))
	}
	return b.String()
}

func TestSum(t *testing.T) {
	base := words(1, 600)
	text := strings.Join(base, " ")
	dated := "Actualizado el 27 de noviembre de 2026\n" + text + "\nVisitas: 1234"
	dated2 := "Actualizado el 28 de noviembre de 2026\n" + text + "\nVisitas: 1299"
	printer := "Versión para imprimir\n" + text
	changed := append([]string(nil), base...)
	for i := 0; i < 200; i++ {
		changed[i*3] = "x" + changed[i*3]
	}
	tests := []struct {
		name string
		a, b string
		near bool
	}{
		{"same", text, text, true},
		{"case and punctuation", text, strings.ToUpper(strings.ReplaceAll(text, " ", ", ")), true},
		{"a date and a counter", dated, dated2, true},
		{"printer version", text, printer, true},
		{"another page", text, strings.Join(words(2, 600), " "), false},
		{"a third of the words changed", text, strings.Join(changed, " "), false},
	}
	for _, tt := range tests {
		d := Hamming(Sum(tt.a), Sum(tt.b))
		if (d <= Distance) != tt.near {
			t.Errorf("%s: distance %d, near-duplicate %v", tt.name, d, tt.near)
		}
	}
	if Sum("") != 0 || Sum(" ,. ") != 0 {
		t.Error("empty text: fingerprint not 0")
	}
	if Sum("hola") == 0 || Sum("hola mundo") == Sum("mundo hola") {
		t.Error("short texts")
	}
	// Scripts without spaces: every character a word.
	ja, ja2 := kana(1, 800), kana(2, 800)
	if d := Hamming(Sum(ja), Sum("印刷"+ja)); d > Distance {
		t.Errorf("Japanese text and its printer version: distance %d", d)
	}
	if d := Hamming(Sum(ja), Sum(ja2)); d <= Distance {
		t.Errorf("two Japanese texts: distance %d", d)
	}
}

func TestGroups(t *testing.T) {
	a, b := Sum(strings.Join(words(1, 300), " ")), Sum(strings.Join(words(2, 300), " "))
	a1 := a ^ 1<<3 ^ 1<<40 ^ 1<<63 // distance 3: near
	a2 := a1 ^ 1<<10               // distance 1 from a1, 4 from a: joined through a1
	far := a ^ 0xf                 // distance 4 from a, 5+ from a1: its own group unless near another
	fps := []uint64{b, a, 0, a1, b, 0, a2, far}
	got := Groups(fps)
	want := []int{0, 1, 2, 1, 0, 5, 1, got[7]}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Groups = %v, want %v", got, want)
		}
	}
	if Hamming(far, a2) <= Distance != (got[7] == 1) {
		t.Errorf("far: group %d, distance to a2 %d", got[7], Hamming(far, a2))
	}
	if m := Members(got); len(m) < 2 || fmt.Sprint(m[0]) != "[0 4]" {
		t.Errorf("Members = %v", m)
	}
}

// TestIndexFindsAll: every pair within Distance is joined, checked
// against comparing all pairs, on fingerprints made close on purpose.
func TestIndexFindsAll(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var fps []uint64
	for i := 0; i < 300; i++ {
		fp := r.Uint64()
		fps = append(fps, fp)
		for k := 0; k < 3; k++ {
			c := fp
			for f := r.IntN(6); f > 0; f-- {
				c ^= 1 << r.IntN(64)
			}
			fps = append(fps, c)
		}
	}
	g := Groups(fps)
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			if Hamming(fps[i], fps[j]) <= Distance && g[i] != g[j] {
				t.Fatalf("%d and %d at distance %d not grouped", i, j, Hamming(fps[i], fps[j]))
			}
		}
	}
}

func BenchmarkSum(b *testing.B) {
	text := strings.Join(words(1, 2000), " ")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Sum(text)
	}
}

func BenchmarkGroups100k(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	fps := make([]uint64, 100000)
	for i := range fps {
		fps[i] = r.Uint64()
		if i%10 == 9 {
			fps[i] = fps[i-1] ^ 1<<r.IntN(64)
		}
	}
	for b.Loop() {
		Groups(fps)
	}
}

func TestMirrors(t *testing.T) {
	// a.cl has 4 pages; b.cl mirrors them all, c.cl copies one page, d.cl
	// has 2 pages (under minPages) both copies.
	sites := []string{"a.cl", "a.cl", "a.cl", "a.cl", "c.cl", "c.cl", "c.cl", "b.cl", "b.cl", "b.cl", "b.cl", "d.cl", "d.cl"}
	groups := []int{0, 1, 2, 3, 4, 5, 0, 0, 1, 2, 3, 1, 2}
	got := Mirrors(sites, groups, 3, 0.8)
	if len(got) != 1 || got[0] != (Mirror{Site: "b.cl", Of: "a.cl", Pages: 4, Shared: 4}) {
		t.Errorf("Mirrors = %+v", got)
	}
}

func TestTable(t *testing.T) {
	tb := NewTable()
	tb.Add(5, 0xff00)
	tb.Add(3, 0xff03) // distance 2 from 0xff00
	tb.Add(9, 0xff01) // distance 1
	tb.Add(2, 0xf0f0f0f0)
	tb.Add(7, 0)
	if id, d, ok := tb.Nearest(0xff00, 5, nil); !ok || id != 9 || d != 1 {
		t.Errorf("Nearest = %d %d %v, want 9 at 1", id, d, ok)
	}
	if id, _, ok := tb.Nearest(0xff00, 5, func(id, _ uint64) bool { return id != 9 }); !ok || id != 3 {
		t.Errorf("Nearest with keep = %d %v, want 3", id, ok)
	}
	if _, _, ok := tb.Nearest(0x0f0f, 0, nil); ok {
		t.Error("a far fingerprint found a near one")
	}
	if _, _, ok := tb.Nearest(0, 0, nil); ok || tb.Len() != 4 {
		t.Error("fingerprint 0")
	}
}

// FuzzSum: any text (page text is outside input) gives a fingerprint
// without panicking, the same one twice, the same as the plain
// implementation of the definition (refSum), and 0 only for a text
// without a word of letters.
func FuzzSum(f *testing.F) {
	for _, s := range []string{"", "hola mundo", "12 34 5", "画像の一部", "a\xffb c", strings.Repeat("x ", 100), "Ελληνικά кириллица ‘quoted’ — done…", "\xc3\xa9t\xc3 \xdf\xbf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := Sum(s)
		if b := Sum(s); a != b {
			t.Fatalf("Sum(%q) = %x then %x", s, a, b)
		}
		if r := refSum(s); a != r {
			t.Fatalf("Sum(%q) = %x, the reference %x", s, a, r)
		}
		if a == 0 && strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0 {
			t.Fatalf("Sum(%q) = 0 for a text with letters", s)
		}
	})
}
