"""The encodings of TeX's text fonts, for pdfTeX's bitmap (PK) Type 3 fonts.

When no Type 1 version of a TeX font is installed, pdfTeX embeds the bitmaps mktexpk
made, as a Type 3 font whose glyphs are named only after their codes (/a28 at 28): no
glyph name says what a code draws, and reading the codes as WinAnsi (poppler's way,
and ours before) loses every ligature and accent below 128 (0.68-0.72 on
latex__t1_bitmap for every extractor compared). The font does tell which encoding it
was made in by the codes it uses: T1 (Cork) puts accented letters at 128-255 and the
ligatures at 27-31; OT1 (TeX's original) uses nothing above 127 and has the
ligatures at 11-15. ``tex_encoding`` decides from the codes a font names, and says
nothing when they do not tell (then WinAnsi stays, as before).
"""
from __future__ import annotations

from collections.abc import Collection

_ASCII = {code: chr(code) for code in range(33, 127)}

#: T1 (Cork), codes to text. 23 (the compound word mark, zero-width) and 24 (the
#: small zero that makes ‰ after %) have no text of their own; 127 is TeX's hyphen
#: character.
T1: dict[int, str] = {
    **dict(enumerate("`´ˆ˜¨˝˚ˇ˘¯˙¸˛‚‹›“”„«»–—")),
    23: "", 24: "", 25: "ı", 26: "ȷ", 27: "ff", 28: "fi", 29: "fl", 30: "ffi", 31: "ffl", 32: "␣",
    **_ASCII, 39: "’", 96: "‘", 127: "-",
    **dict(enumerate("ĂĄĆČĎĚĘĞĹĽŁŃŇŊŐŔŘŚŠŞŤŢŰŮŸŹŽŻĲİđ§ăąćčďěęğĺľłńňŋőŕřśšşťţűůÿźžżĳ¡¿£", 128)),
    **{code: chr(code) for code in range(192, 256)}, 215: "Œ", 223: "SS", 247: "œ", 255: "ß",
}

#: OT1, codes to text. 32 is the bar that makes ł and Ł with an l; the accents
#: (18-24, 94, 95, 125-127) are placed over a letter, which R5's composition joins.
OT1: dict[int, str] = {
    **dict(enumerate("ΓΔΘΛΞΠΣΥΦΨΩ")),
    11: "ff", 12: "fi", 13: "fl", 14: "ffi", 15: "ffl", 16: "ı", 17: "ȷ",
    **dict(enumerate("`´ˇ˘¯˚¸ßæœøÆŒØ", 18)), 32: "",
    **_ASCII, 34: "”", 39: "’", 60: "¡", 62: "¿", 92: "“", 94: "ˆ", 95: "˙", 96: "‘",
    123: "–", 124: "—", 125: "˝", 126: "˜", 127: "¨",
}

_LOWER = range(97, 123)


def tex_encoding(codes: Collection[int]) -> dict[int, str] | None:
    """T1 or OT1 for a pdfTeX bitmap font naming these ``codes``, or None when they
    do not tell: a text font (at least three lowercase letters) with a code above
    127 is T1; one with ligatures at 27-31 and none at 11-15 is T1, the other way
    round (with a comma or a full stop, which math fonts lack) OT1."""
    if sum(1 for c in codes if c in _LOWER) < 3:
        return None  # a math or symbol font, or too little to tell
    if any(c >= 128 for c in codes):
        return T1
    t1_ligatures = any(27 <= c <= 31 for c in codes)
    ot1_ligatures = any(11 <= c <= 15 for c in codes)
    if t1_ligatures and not ot1_ligatures:
        return T1
    if ot1_ligatures and not t1_ligatures and (44 in codes or 46 in codes):
        return OT1
    return None
