package langid

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDetectCJK: pages in Chinese, Japanese or Korean whose Latin-script
// code, commands, menu names or file names outnumber their CJK letters
// are told by the script of their running text (issue 37: "a Japanese
// chapter whose code samples are in Latin script was called English"),
// and pages in a Latin-script language with CJK names stay in it.
func TestDetectCJK(t *testing.T) {
	d, _ := New(0, DefaultLanguages)
	tests := []struct {
		name, text, want string
	}{
		{"Chinese prose, shell commands (issue 37)", "以下是用不同的工具压缩和解压缩整个目录中的内容。\n$ tar -cvJf archive.tar.xz ./source\n$ tar -xvJf archive.tar.xz\n$ find ./source -xdev -print0 | cpio -ov --null > archive.cpio; xz archive.cpio\n$ zcat archive.cpio.xz | cpio -i\n或者，如下所示。\n$ find ./source -xdev -print0 | tar -cvJf archive.tar.xz --null -F -", "zh"},
		{"Japanese prose, a configuration file with English comments", "設定ファイルの例を以下に示します。\nset autoindent \" Copy indent from current line\nset smartindent \" More than autoindent\nset backspace=indent,eol,start \" Back space through everything\nset laststatus=2 \" Always show status line\nset nosmarttab \" Tab key always inserts blanks\nこの設定はユーザーのホームディレクトリーに置きます。", "ja"},
		{"Korean prose, package names and versions", "다음은 데비안에서 사용할 수 있는 도구의 목록입니다.\nnetwork-manager V:363, I:428 14803 NetworkManager daemon\nifupdown V:586, I:983 199 standard tool to bring up and down the network\nisc-dhcp-client V:218, I:981 2857 DHCP client\niproute2 V:709, I:958 3514 ip(8), tc(8) and other tools\n자세한 내용은 각 패키지의 문서를 참고하세요.", "ko"},
		{"Japanese menus left in English", "フィルターの一覧\n3.2. Focus Blur\n3.3. Gaussian Blur\n3.4. Lens Blur\n3.5. Mean Curvature Blur\n3.6. Median Blur\n3.8. Selective Gaussian Blur\n3.10. Circular Motion Blur\n3.11. Linear Motion Blur\n3.12. Zoom Motion Blur\n3.13. Tileable Blur\n4.2. Antialias\n4.3. Deinterlace\n4.4. High Pass\n4.5. Noise Reduction\n4.6. Red Eye Removal\n4.7. Symmetric Nearest Neighbor\nこのメニューには画像をぼかすフィルターが集められています。", "ja"},
		{"Chinese, names of people", "本手册的作者和贡献者\nAlexandre Prokoudine , Aliya Rahmani , Anders Jonsson , Andre Klapper , Andrew Pitonyak , Axel Wernicke\n翻译者名单如下，感谢他们的工作。\nAdolf Gerold (German) , Alan Mortensen (Danish) , Albin Bernharsson (Swedish) , Alessandro Falappa (Italian) , Alex Muñoz (Spanish)\nAryeom Han , Jakub Steiner , Øyvind Kolås , Róman Joost , Daniel Egger , Daniel Hornung , Calum Mackay", "zh"},
		{"Japanese written mostly in kanji, a little kana", "本章では、第一に基本設定、第二に応用設定、第三に運用管理上の注意事項を説明する。\n基本設定: systemctl enable --now ssh.service\n応用設定: /etc/ssh/sshd_config.d/local.conf", "ja"},
		{"Chinese without kana", "本章说明基本设置、高级设置以及运行管理中的注意事项。\n基本设置: systemctl enable --now ssh.service\n高级设置: /etc/ssh/sshd_config.d/local.conf", "zh"},
		{"English with Japanese names", "Nintendo (任天堂) was founded in Kyoto (京都) in 1889 as a maker of playing cards, and it moved into electronic games in the 1970s. Its headquarters are still in the city, a short walk from the station, and the company keeps a museum of its early products there.", "en"},
		{"Spanish with a language menu", "English | Español | 日本語 | 中文 | 한국어\nLa Municipalidad informa a los vecinos que el servicio de recolección de basura funcionará con normalidad durante el fin de semana largo.", "es"},
	}
	for _, tt := range tests {
		if got, conf := d.Detect(tt.text); got != tt.want {
			t.Errorf("%s: Detect = %s (%d), want %s", tt.name, got, conf, tt.want)
		}
	}
}

// TestProseWord: which tokens are words of running text.
func TestProseWord(t *testing.T) {
	tests := []struct {
		tok          string
		script       int
		capital, yes bool
	}{
		{"word", latin, false, true},
		{"(word),", latin, false, true},
		{"«Wort».", latin, true, true},
		{"don't", latin, false, true},
		{"open-source", latin, false, true},
		{"cafe\u0301", latin, false, true}, // a combining accent
		{"слово", cyrillic, false, true},
		{"Λέξη", greek, true, true},
		{"-cvJf", -1, false, false},
		{"archive.tar.xz", -1, false, false},
		{"/etc/hosts", -1, false, false},
		{"ipv6", -1, false, false},
		{"mdns4_minimal", -1, false, false},
		{"word-", -1, false, false},
		{"a--b", -1, false, false},
		{"wordслово", -1, false, false},
		{"debianという", -1, false, false},
		{"日本語", -1, false, false},
		{"$", -1, false, false},
		{"", -1, false, false},
	}
	for _, tt := range tests {
		script, capital, ok := proseWord(tt.tok)
		if script != tt.script || capital != tt.capital || ok != tt.yes {
			t.Errorf("proseWord(%q) = %d, %v, %v; want %d, %v, %v", tt.tok, script, capital, ok, tt.script, tt.capital, tt.yes)
		}
	}
}

// TestCountCJK: how the lines of a sample count (cjk.go).
func TestCountCJK(t *testing.T) {
	tests := []struct {
		line                       string
		han, kana, hangul, latinWs int
	}{
		{"以下是用不同的工具压缩和解压缩整个目录中的内容。", 23, 0, 0, 0},                                                // a CJK line
		{"GNOME デスクトップで使用されうる GUI 通信プロトコル:", 4, 16, 0, 0},                                        // names in a CJK line
		{"$ tar -cvJf archive.tar.xz ./source", 0, 0, 0, 0},                                      // code
		{"3.3. Gaussian Blur", 0, 0, 0, 0},                                                       // a menu item
		{"Alexandre Prokoudine , Aliya Rahmani , Anders Jonsson", 0, 0, 0, 0},                    // names
		{"Nintendo (任天堂) was founded in Kyoto in 1889 as a maker of playing cards", 0, 0, 0, 12}, // a name in running text
		{"1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms", 0, 0, 0, 7},
		{"다음은 데비안에서 사용할 수 있는 도구의 목록입니다.", 0, 0, 22, 0},
	}
	for _, tt := range tests {
		c := countCJK(tt.line)
		if c.letters[han] != tt.han || c.letters[kana] != tt.kana || c.letters[hangul] != tt.hangul || c.prose[latin] != tt.latinWs {
			t.Errorf("countCJK(%q): Han %d, kana %d, Hangul %d, Latin words %d; want %d, %d, %d, %d", tt.line,
				c.letters[han], c.letters[kana], c.letters[hangul], c.prose[latin], tt.han, tt.kana, tt.hangul, tt.latinWs)
		}
	}
}

// TestCJK: on the pages of testdata/cjk (README.md there) the detector is
// right on 95 % or more, the target of issue 37, and on every page of
// the control kind (Latin-script pages with CJK names). It logs every
// miss and the share right per language and kind.
func TestCJK(t *testing.T) {
	d, _ := New(0, DefaultLanguages)
	names, _ := filepath.Glob("testdata/cjk/*.txt")
	if len(names) < 150 {
		t.Fatalf("%d texts in testdata/cjk", len(names))
	}
	total, right := 0, 0
	by := map[string][2]int{} // LANG-KIND: right, total
	for _, name := range names {
		parts := strings.SplitN(filepath.Base(name), "-", 3)
		want, kind := parts[0], parts[1]
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, conf := d.Detect(string(b))
		total++
		c := by[want+"-"+kind]
		c[1]++
		if got == want {
			right++
			c[0]++
		} else {
			t.Logf("%s: %s (confidence %d)", name, got, conf)
			if kind == "control" {
				t.Errorf("%s: %s, a control page must stay %s", name, got, want)
			}
		}
		by[want+"-"+kind] = c
	}
	var keys []string
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d/%d, ", k, by[k][0], by[k][1])
	}
	t.Logf("%d of %d texts right (%.1f %%); by language and kind: %s", right, total, 100*float64(right)/float64(total), b.String())
	if right*100 < 95*total {
		t.Errorf("%d of %d texts right, under 95 %%", right, total)
	}
}

// TestDeclared: the language of a declared tag, and whether it agrees
// with a detected one.
func TestDeclared(t *testing.T) {
	tests := []struct {
		tag, detected, lang string
		agree, known        bool
	}{
		{"es-CL", "es", "es", true, true},
		{"EN", "en", "en", true, true},
		{" zh_TW ", "zh", "zh", true, true},
		{"zh-Hant-TW", "ja", "zh", false, true},
		{"en", "ja", "en", false, true},
		{"iw", "he", "he", true, true},
		{"nn-NO", "nb", "nn", true, true},
		{"no", "nb", "no", true, true},
		{"cmn-Hans", "zh", "cmn", true, true},
		{"es", Unknown, "es", false, false},
		{"es", "", "es", false, false},
		{"", "es", "", false, false},
		{"und", "es", "", false, false},
		{"x-klingon", "es", "", false, false},
	}
	for _, tt := range tests {
		if got := Declared(tt.tag); got != tt.lang {
			t.Errorf("Declared(%q) = %q, want %q", tt.tag, got, tt.lang)
		}
		if agree, known := Agree(tt.tag, tt.detected); agree != tt.agree || known != tt.known {
			t.Errorf("Agree(%q, %q) = %v, %v; want %v, %v", tt.tag, tt.detected, agree, known, tt.agree, tt.known)
		}
	}
}
