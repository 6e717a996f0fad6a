#!/bin/sh
# Regenerates the charset fixtures from the UTF-8 texts in src/ with
# iconv(1). Run from this directory: sh make.sh
# Each page is named for its encoding and for how (or whether) the
# encoding is declared; the Content-Type header that goes with it is in
# the test table of extract_test.go.
set -e
# page TEXT HEAD-EXTRA LANG: src/TEXT holds the title, the heading, the
# paragraph and the link text, one a line.
page() {
	printf '<!DOCTYPE html>\n<html lang="%s">\n<head>\n%b<title>%s</title>\n</head>\n<body>\n<h1>%s</h1>\n<p>%s</p>\n<p><a href="/next.html">%s</a></p>\n</body>\n</html>\n' \
		"$3" "$2" "$(sed -n 1p "src/$1")" "$(sed -n 2p "src/$1")" "$(sed -n 3p "src/$1")" "$(sed -n 4p "src/$1")"
}
enc() { iconv -f UTF-8 -t "$1"; }

# ISO-8859-1, declared only by the HTTP header.
page es.txt '' es | enc ISO-8859-1 > latin1-header.html
# windows-1252 (curly quotes, en dash, euro sign), declared by <meta charset>.
page fr.txt '<meta charset="windows-1252">\n' fr | enc WINDOWS-1252 > cp1252-meta-charset.html
# Shift_JIS, declared by <meta http-equiv=Content-Type>.
page ja.txt '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">\n' ja | enc SHIFT_JIS > sjis-http-equiv.html
# KOI8-R, declared only by the HTTP header.
page ru.txt '' ru | enc KOI8-R > koi8r-header.html
# EUC-KR, declared only by the HTTP header.
page ko.txt '' ko | enc EUC-KR > euckr-header.html
# GB2312, declared by <meta charset> (WHATWG reads it as GBK).
page zh.txt '<meta charset="gb2312">\n' zh | enc GB2312 > gb2312-meta-charset.html
# UTF-8 with a byte order mark; the header wrongly says ISO-8859-1.
{ printf '\357\273\277'; page fr.txt '' fr; } > utf8-bom.html
# UTF-16LE with a byte order mark.
{ printf '\377\376'; page ru.txt '' ru | enc UTF-16LE; } > utf16le-bom.html
# UTF-8, not declared anywhere.
page ja.txt '' ja > utf8-undeclared.html
# ISO-8859-1, not declared anywhere (detected: windows-1252).
page es.txt '' es | enc ISO-8859-1 > latin1-undeclared.html
# KOI8-R bytes; the header says koi8-r and a <meta> wrongly says
# windows-1252: the header wins.
page ru.txt '<meta charset="windows-1252">\n' ru | enc KOI8-R > koi8r-header-beats-meta.html
# windows-1252 bytes whose <meta charset> comes after the first 1024
# bytes: too late to count, so detection decides.
{ printf '<!DOCTYPE html>\n<!-- %s -->\n' "$(head -c 1100 /dev/zero | tr '\0' 'x')"; page fr.txt '<meta charset="windows-1252">\n' fr; } | enc WINDOWS-1252 > cp1252-meta-too-late.html
# ISO-8859-1 bytes declared as UTF-8 by the header: decoded as UTF-8 with
# replacement characters, as browsers do.
page es.txt '' es | enc ISO-8859-1 > latin1-declared-utf8.html
# Legacy encodings not declared anywhere: detected from the bytes.
page ja.txt '' ja | enc SHIFT_JIS > sjis-undeclared.html
page ja.txt '' ja | enc EUC-JP > eucjp-undeclared.html
page ru.txt '' ru | enc KOI8-R > koi8r-undeclared.html
page ru.txt '' ru | enc WINDOWS-1251 > cp1251-undeclared.html
page ko.txt '' ko | enc EUC-KR > euckr-undeclared.html
page zh.txt '' zh | enc GB2312 > gb2312-undeclared.html
# Mixed: a UTF-8 page with one paragraph pasted in as ISO-8859-1 bytes and
# no declaration. Not valid UTF-8, so detection decides for the whole page.
{ page fr.txt '' fr | sed '$d' | sed '$d'; page es.txt '' es | enc ISO-8859-1 | sed -n '/<p>/p' | head -1; printf '</body>\n</html>\n'; } > mixed-utf8-latin1-undeclared.html
