package langid

import (
	"bytes"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestModel: the embedded model reads, knows the default languages and
// holds n-grams for the languages that share a script.
func TestModel(t *testing.T) {
	m, err := parseModel(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.codes, Languages()) {
		t.Errorf("codes %v, Languages %v", m.codes, Languages())
	}
	for _, code := range DefaultLanguages {
		if !slices.Contains(m.codes, code) {
			t.Errorf("default language %s not in the model", code)
		}
	}
	if n := len(m.tri.entries) / entryBytes; n < 100000 {
		t.Errorf("%d trigram entries", n)
	}
	es := slices.Index(m.codes, "es")
	if !hasLang(m.tri.lookup(gramKey("que")), es) || !hasLang(m.low.lookup(gramKey("ñ")), es) || !hasLang(m.low.lookup(gramKey("ll")), es) {
		t.Errorf("que, ñ or ll not in the Spanish model")
	}
	if m.tri.lookup(gramKey("aжq")) != "" {
		t.Errorf("aжq in the model")
	}
	for i, sn := range m.scripts {
		if !slices.Contains(scriptNames[:], sn) || sn == "" {
			t.Errorf("%s: script %q, which Detect does not tell", m.codes[i], sn)
		}
	}
	if m.scripts[slices.Index(m.codes, "ru")] != "Cyrillic" || m.scripts[slices.Index(m.codes, "ja")] != "Kana" || m.scripts[es] != "Latin" {
		t.Errorf("scripts %v", m.scripts)
	}
}

func hasLang(entries string, l int) bool {
	for i := 0; i < len(entries); i += entryBytes {
		if int(entries[i]) == l {
			return true
		}
	}
	return false
}

// TestWriteModel: a model written reads back the same, probabilities
// rounded; bad input is refused, and a damaged file is an error, not a
// panic.
func TestWriteModel(t *testing.T) {
	langs := []ModelLanguage{{"es", "Latin"}, {"en", "Latin"}, {"ru", "Cyrillic"}}
	ngrams := map[string][]ModelProb{
		"que": {{0, 0.01}, {1, 0.0001}},
		"the": {{1, 0.02}},
		"qu":  {{0, 0.1}, {1, 0.05}},
		"q":   {{0, 0.001}, {1, 0.0005}},
		"при": {{2, 0.003}},
	}
	for i := range 300 { // enough for the table to probe
		ngrams[string([]rune{'a' + rune(i%26), 'a' + rune(i/26), 'z'})] = []ModelProb{{i % 3, 0.5}}
	}
	var buf bytes.Buffer
	if err := WriteModel(&buf, langs, ngrams); err != nil {
		t.Fatal(err)
	}
	m, err := parseModel(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	for g, ps := range ngrams {
		tb := &m.low
		if len([]rune(g)) == 3 {
			tb = &m.tri
		}
		e := tb.lookup(gramKey(g))
		if len(e) != entryBytes*len(ps) {
			t.Fatalf("%s: %d bytes of entries, want %d", g, len(e), entryBytes*len(ps))
		}
		for i, p := range ps {
			q := int(e[entryBytes*i+1]) | int(e[entryBytes*i+2])<<8
			if int(e[entryBytes*i]) != p.Language || math.Abs(float64(q)/qScale+math.Log(p.P)) > 1.0/qScale {
				t.Errorf("%s: entry %d: language %d, q %d; want %d, %g", g, i, e[entryBytes*i], q, p.Language, p.P)
			}
		}
	}
	if m.tri.lookup(gramKey("xyz")) != "" || m.low.lookup(gramKey("x")) != "" {
		t.Errorf("absent n-grams found")
	}
	for _, bad := range []struct {
		langs  []ModelLanguage
		ngrams map[string][]ModelProb
	}{
		{nil, ngrams},
		{[]ModelLanguage{{"es", ""}}, ngrams},
		{[]ModelLanguage{{"e s", "Latin"}}, ngrams},
		{langs, map[string][]ModelProb{"abcd": {{0, 0.1}}}},
		{langs, map[string][]ModelProb{"": {{0, 0.1}}}},
		{langs, map[string][]ModelProb{"abc": nil}},
		{langs, map[string][]ModelProb{"abc": {{3, 0.1}}}},
		{langs, map[string][]ModelProb{"abc": {{0, 0}}}},
		{langs, map[string][]ModelProb{"abc": {{0, 1.5}}}},
	} {
		if err := WriteModel(io.Discard, bad.langs, bad.ngrams); err == nil {
			t.Errorf("WriteModel(%v, %v): no error", bad.langs, bad.ngrams)
		}
	}
	good := buf.String()
	head := len(magic + "\nes Latin,en Latin,ru Cyrillic\n")
	for _, b := range []string{
		"",
		"langid1\nes Latin\n",
		"langid2\nes\n",
		"langid2\nes Latin",
		good[:head],
		good[:head+6],
		good[:len(good)-1],
		good + "x",
		good[:head] + "\x1f" + good[head+1:], // 2^31 slots
	} {
		if _, err := parseModel(b); err == nil {
			t.Errorf("parseModel(%q...): no error", b[:min(len(b), 40)])
		}
	}
	// An entry's language out of range.
	bad := []byte(good)
	bad[len(bad)-entryBytes] = 7
	if _, err := parseModel(string(bad)); err == nil || !strings.Contains(err.Error(), "language 7") {
		t.Errorf("language 7 of 3: %v", err)
	}
}

// TestScripts: a language alone in its script is told by the script; the
// others by their trigrams.
func TestScripts(t *testing.T) {
	d, _ := New(0, nil)
	tests := []struct{ text, want string }{
		{"Το GIMP είναι ένα πρόγραμμα επεξεργασίας εικόνας που διανέμεται ελεύθερα για εργασίες όπως ρετουσάρισμα φωτογραφιών", "el"},
		{"このダイアログでは画像のレイヤーを管理します。レイヤーの順番を変えたり、新しいレイヤーを作成したりできます。", "ja"},
		{"这个对话框用于管理图像的图层。您可以改变图层的顺序，也可以创建新的图层和删除不需要的图层。", "zh"},
		{"이 대화 상자는 이미지의 레이어를 관리합니다. 레이어의 순서를 바꾸거나 새 레이어를 만들 수 있습니다.", "ko"},
		{"Этот диалог позволяет управлять слоями изображения: менять их порядок, создавать новые слои и удалять ненужные.", "ru"},
		{"Цей діалог дозволяє керувати шарами зображення: змінювати їхній порядок, створювати нові шари та видаляти непотрібні.", "uk"},
		{"Aquest diàleg permet gestionar les capes de la imatge: canviar-ne l'ordre, crear capes noves i esborrar les que no calen.", "ca"},
		{"Este diálogo permite gestionar las capas de la imagen: cambiar su orden, crear capas nuevas y borrar las que no hacen falta.", "es"},
	}
	for _, tt := range tests {
		if got, conf := d.Detect(tt.text); got != tt.want {
			t.Errorf("Detect(%q) = %s (%d), want %s", tt.text, got, conf, tt.want)
		}
	}
	// A script none of the languages is written in.
	d, _ = New(0, []string{"es", "en"})
	if got, _ := d.Detect(tests[0].text); got != Unknown {
		t.Errorf("Greek among es, en: %s", got)
	}
}

// BenchmarkParseModel: what loading the model costs, once a process.
func BenchmarkParseModel(b *testing.B) {
	for b.Loop() {
		parseModel(modelFile)
	}
}
