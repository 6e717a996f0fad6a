package langid

import "strings"

// Declared returns the language of a declared language tag (BCP 47, as
// in <html lang> or Content-Language: "es-CL", "zh_TW", "EN"), named as
// the detector names languages: its primary subtag in lower case, a
// deprecated code replaced by the current one (iw is he). It returns ""
// for an empty tag and for the tags that name no language: und
// (undetermined), mul (several), zxx (no linguistic content), and
// private use (x-...) or grandfathered (i-...) tags.
func Declared(tag string) string {
	tag = strings.TrimSpace(tag)
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	tag = strings.ToLower(tag)
	switch tag {
	case "und", "mul", "zxx", "x", "i":
		return ""
	}
	if l, ok := deprecated[tag]; ok {
		return l
	}
	return tag
}

// deprecated are the ISO 639 codes replaced by others, which pages
// still declare.
var deprecated = map[string]string{"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}

// macrolanguage names, for Agree, the language a detector tells for
// the languages it does not tell apart: Norwegian for Bokmål (the model's)
// and Nynorsk, Chinese for Mandarin, Cantonese and the other Chinese
// languages a tag may name.
var macrolanguage = map[string]string{"nb": "no", "nn": "no", "cmn": "zh", "yue": "zh", "wuu": "zh", "hak": "zh", "nan": "zh", "gan": "zh", "hsn": "zh"}

// Agree compares a page's declared language tag with the language a
// detector told from its text (an ISO 639 code, or Unknown): known is
// false when there is nothing to compare (no language declared, the
// detected one empty or Unknown); else agree tells whether they name
// the same language, Norwegian written in Bokmål or Nynorsk counting as
// one, and so the Chinese languages.
func Agree(declared, detected string) (agree, known bool) {
	d := Declared(declared)
	if d == "" || detected == "" || detected == Unknown {
		return false, false
	}
	norm := func(l string) string {
		if m, ok := macrolanguage[l]; ok {
			return m
		}
		return l
	}
	return norm(d) == norm(detected), true
}
