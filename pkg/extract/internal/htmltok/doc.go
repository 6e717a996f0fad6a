// Package htmltok is the gatherer's copy of the tokenizer of
// golang.org/x/net/html v0.62.0 (html/token.go; the LICENSE file of this
// directory is x/net's). It tokenizes exactly as upstream
// does (token_test.go compares both on the extractor's fixtures and under
// fuzzing: token types, raw bytes, text, tag names, attributes), and
// differs only in how it reads and what it allocates:
//
//   - It reads a document held in memory (New takes a []byte) in place.
//     Upstream reads an io.Reader into a buffer of its own, through a
//     readByte that checks for a refill at every byte and cannot be
//     inlined; that alone made it about half as fast on real pages.
//   - It never modifies the document: Text copies a text that needs
//     converting (carriage returns, NULs, character references) before
//     converting it; upstream converts in its buffer.
//   - It finds duplicate attributes by comparing bytes (a map beyond 16
//     attributes of one tag) instead of a lower-cased string copy and a
//     map entry for every attribute, and names raw-text elements without
//     lower-casing a copy.
//   - Attr gives an attribute's raw key and value; TagAttr (which decodes
//     character references in attribute mode, with x/net's unexported
//     entity table), Token, SetMaxBuf, Buffered and NewTokenizerFragment
//     are left out. A caller that needs a decoded value tokenizes the
//     tag's Raw bytes with upstream's tokenizer.
//
// When golang.org/x/net is upgraded, compare html/token.go with the
// version named above and carry its changes over;
// TestSameTokens fails if the two tokenizers part ways on the fixtures.
package htmltok
