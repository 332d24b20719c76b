"""Simple-font encodings and glyph names (R4 steps 2 and 4).

Glyph names go through the Adobe Glyph List (pdfminer.six's copy), with the AGL
specification's rules for ``uniXXXX``, ``uXXXX[XX]``, ``a_b`` ligatures and
``.suffix`` variants. Base encodings come from pdfminer.six's latin tables; the
built-in encodings of Symbol and ZapfDingbats, which pdfminer.six does not carry,
are here.
"""
from __future__ import annotations

import re
from functools import lru_cache

from pdfminer.encodingdb import EncodingDB
from pdfminer.glyphlist import glyphname2unicode

_UNI = re.compile(r"^uni((?:[0-9A-F]{4})+)$")
_U = re.compile(r"^u([0-9A-F]{4,6})$")

# Names TeX fonts use that the AGL lacks.
_EXTRA_NAMES = {
    "dotlessj": "\u0237",
    "ff": "\ufb00", "ffi": "\ufb03", "ffl": "\ufb04",
    "visiblespace": "\u2423",
    "perthousandzero": "\u2030",
    "cwm": "",
}


@lru_cache(maxsize=8192)
def glyph_name_to_unicode(name: str) -> str | None:
    """Unicode text of a glyph name, or None when the name says nothing
    (``g123``, ``cid42``, ``a0`` from bitmap fonts)."""
    if not name:
        return None
    base = name.split(".", 1)[0]
    if not base:
        return None
    if "_" in base:
        parts = [glyph_name_to_unicode(p) for p in base.split("_")]
        if any(p is None for p in parts):
            return None
        return "".join(p for p in parts if p)
    text = glyphname2unicode.get(base) or _EXTRA_NAMES.get(base)
    if text is not None:
        return text
    m = _UNI.match(base)
    if m:
        hexs = m.group(1)
        chars = [int(hexs[i:i + 4], 16) for i in range(0, len(hexs), 4)]
        if all(not 0xD800 <= c <= 0xDFFF for c in chars):
            return "".join(map(chr, chars))
        return None
    m = _U.match(base)
    if m:
        cp = int(m.group(1), 16)
        if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)
    return None


def base_encoding(name: str) -> dict[int, str] | None:
    """Code → Unicode of a named simple encoding (StandardEncoding, MacRomanEncoding,
    WinAnsiEncoding, PDFDocEncoding), or None for an unknown name."""
    return EncodingDB.encodings.get(name)


STANDARD = EncodingDB.encodings["StandardEncoding"]
WIN_ANSI = EncodingDB.encodings["WinAnsiEncoding"]
MAC_ROMAN = EncodingDB.encodings["MacRomanEncoding"]

_SYMBOL_LOW = (
    " !\u2200#\u2203%&\u220b()\u2217+,\u2212./0123456789:;<=>?"
    "\u2245\u0391\u0392\u03a7\u0394\u0395\u03a6\u0393\u0397\u0399\u03d1\u039a\u039b\u039c\u039d\u039f"
    "\u03a0\u0398\u03a1\u03a3\u03a4\u03a5\u03c2\u03a9\u039e\u03a8\u0396[\u2234]\u22a5_"
    "\uf8e5\u03b1\u03b2\u03c7\u03b4\u03b5\u03c6\u03b3\u03b7\u03b9\u03d5\u03ba\u03bb\u03bc\u03bd\u03bf"
    "\u03c0\u03b8\u03c1\u03c3\u03c4\u03c5\u03d6\u03c9\u03be\u03c8\u03b6{|}\u223c"
)
_SYMBOL_HIGH = (
    "\u20ac\u03d2\u2032\u2264\u2044\u221e\u0192\u2663\u2666\u2665\u2660\u2194\u2190\u2191\u2192\u2193"
    "\u00b0\u00b1\u2033\u2265\u00d7\u221d\u2202\u2022\u00f7\u2260\u2261\u2248\u2026\u23d0\u23af\u21b5"
    "\u2135\u2111\u211c\u2118\u2297\u2295\u2205\u2229\u222a\u2283\u2287\u2284\u2282\u2286\u2208\u2209"
    "\u2220\u2207\u00ae\u00a9\u2122\u220f\u221a\u22c5\u00ac\u2227\u2228\u21d4\u21d0\u21d1\u21d2\u21d3"
    "\u25ca\u2329\u00ae\u00a9\u2122\u2211"
)
#: Built-in encoding of the standard Symbol font (bracket pieces left unmapped).
SYMBOL: dict[int, str] = {
    **{0x20 + i: ch for i, ch in enumerate(_SYMBOL_LOW) if ch != "\uf8e5"},
    **{0xA0 + i: ch for i, ch in enumerate(_SYMBOL_HIGH)},
    0xF1: "\u232a", 0xF2: "\u222b",
}

_DINGBAT_EXCEPTIONS = {
    0x25: "\u260e", 0x2A: "\u261b", 0x2B: "\u261e", 0x48: "\u2605", 0x6C: "\u25cf",
    0x6E: "\u25a0", 0x73: "\u25b2", 0x74: "\u25bc", 0x75: "\u25c6", 0x77: "\u25d7",
}
#: Built-in encoding of ZapfDingbats: codes 0x21-0x7E follow the Dingbats block in
#: order, except the few glyphs Unicode placed elsewhere.
ZAPF_DINGBATS: dict[int, str] = {
    0x20: " ",
    **{c: _DINGBAT_EXCEPTIONS.get(c, chr(0x2701 + c - 0x21)) for c in range(0x21, 0x7F)},
}

_TYPE1_ENCODING = re.compile(rb"dup\s+(\d+)\s*/([^\s/\[\]{}()<>]+)\s+put")


def type1_builtin_encoding(font_program: bytes) -> dict[int, str]:
    """Code → glyph name from the clear-text header of an embedded Type 1 font
    (pdfTeX's OT1 fonts rely on it and carry no /Encoding or ToUnicode)."""
    head = font_program[:65536]
    if b"/Encoding" not in head or b"StandardEncoding def" in head:
        return {}
    return {int(code): name.decode("latin-1") for code, name in _TYPE1_ENCODING.findall(head) if int(code) < 256}
