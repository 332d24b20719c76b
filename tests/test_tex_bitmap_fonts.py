"""pdfTeX's bitmap (PK) Type 3 fonts, glyphs named only after their codes (/a28 at 28):
the codes a font uses tell its TeX encoding (T1 or OT1), and its ligatures and
accented letters are read through it (issue 11). Fonts that do not tell keep the
WinAnsi reading. Byte-built fonts, real extraction."""
from __future__ import annotations

import pytest

from pdfindex import pipeline
from tests.builders import font_resources
from tests.pdfwriter import PdfWriter

PROC = b"500 0 0 0 500 700 d1 0 0 500 700 re f"


def _pk_font(w: PdfWriter, codes: set[int]):  # type: ignore[no-untyped-def]
    """A PK-style Type 3 font: a glyph for each code, named after it."""
    low, high = min(codes), max(codes)
    differences: list[object] = []
    for code in sorted(codes):
        differences += [code, f"a{code}"]
    return w.type3_font({f"a{c}": PROC for c in codes}, differences, first_char=low,
                        widths=[500] * (high - low + 1), font_matrix=(0.01, 0, 0, 0.01, 0, 0))


def _text(words: list[bytes], extra_codes: set[int] = frozenset()) -> str:  # type: ignore[assignment]
    w = PdfWriter()
    codes = {b for word in words for b in word} | set(extra_codes)
    font = _pk_font(w, codes)
    content = b"".join(b"BT /F1 10 Tf 72 %d Td (%s) Tj ET\n" % (700 - 20 * i, word.replace(b"\\", b"\\\\")
                       .replace(b"(", b"\\(").replace(b")", b"\\)")) for i, word in enumerate(words))
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes()).pages[0].text


def test_a_t1_font_reads_ligatures_and_accented_letters() -> None:
    words = [b"o\x1bice", b"\x1cnal", b"\x1dow", b"co\x1e", b"wa\x1fe", b"caf\xe9", b"na\xefve", b"\xbf\x31",
             b"\xa3esk\xfd"]
    assert _text(words).split("\n") == ["office", "final", "flow", "coffi", "waffle", "café", "naïve", "£1",
                                         "český"]


def test_t1_letters_only_above_127_still_tell() -> None:
    assert _text([b"Montr\xe9al", b"gar\xe7on", b"\xa8\xf3d\xbc"]).split("\n") == ["Montréal", "garçon", "ĺódĳ"]


def test_an_ot1_font_reads_its_ligatures_and_greek_capitals() -> None:
    words = [b"o\x0bice,", b"\x0cnal.", b"\x0dow", b"\x02eta \x0a"]
    assert _text(words).split("\n") == ["office,", "final.", "flow", "Θeta Ω"]


@pytest.mark.parametrize(("words", "why"), [
    ([b"\x0b\x0c\x0d", b"xy"], "a math font: too few letters"),
    ([b"o\x0bice", b"co\x1e"], "ligatures of both encodings"),
    ([b"o\x0bice"], "OT1 ligatures but neither comma nor full stop (math italic has alpha at 11)"),
])
def test_fonts_that_do_not_tell_keep_the_winansi_reading(words: list[bytes], why: str) -> None:
    w = PdfWriter()
    font = _pk_font(w, {b for word in words for b in word})
    w.add_page(b"BT /F1 10 Tf 72 700 Td (%s) Tj ET" % words[0], resources=font_resources(font))
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert "ff" not in page.text and "fi" not in page.text, why
