"""R3 box height: ascent-to-descent in user space, from the font descriptor's
Ascent/Descent, else the FontBBox, else the standard-14 metrics, else the documented
default (params), through font size, text matrix and CTM. Thresholds follow this
height, never the Tf operand.

The test line: mono-width glyphs (0.5 em) kerned apart by 30/1000 em inside words
and by 300/1000 em between them. At 12 pt that is 0.36 and 3.6 units; with a sane
box height (about one em, 12 units) the R11 threshold is about 1.8 units, so only
the 300 gap is a word space. A zero height would split every kerned pair, a huge
one would swallow the word space.
"""
from __future__ import annotations

from typing import Any

import pytest

from pdfindex import pipeline
from tests.builders import mono_font, page_of
from tests.pdfwriter import PdfWriter

LINE = b"[(H) -30 (e) -30 (llo) -300 (w) -30 (orld)] TJ"
WORDS = "Hello world"
SIZE = 12


def _line_page(w: PdfWriter, font: Any, state: bytes = b"BT /F1 12 Tf 72 700 Td") -> pipeline.Page:
    return page_of(state + b" " + LINE + b" ET", {"F1": font}, w=w)


def _heights(page: pipeline.Page) -> set[float]:
    return {round(g.height, 6) for g in page.glyphs}


def test_height_from_descriptor_ascent_descent() -> None:
    # Ascent/Descent give 1.0 em; the FontBBox (2.0 em) must not be used.
    w = PdfWriter()
    font = mono_font(w, descriptor={"Ascent": 700, "Descent": -300, "FontBBox": [0, -500, 1000, 1500]})
    page = _line_page(w, font)
    assert page.text == WORDS
    assert _heights(page) == {12.0}
    g = page.glyphs[0]
    # Box: descent at the origin, ascent above it (R1).
    assert g.quad[1] == pytest.approx(700 - 3.6)
    assert g.quad[5] == pytest.approx(700 + 8.4)
    assert g.quad[7] == pytest.approx(700 + 8.4)


@pytest.mark.parametrize("descriptor", [
    {"Ascent": None, "Descent": None},  # missing
    {"Ascent": 0, "Descent": 0},  # zero: the reported bug
    {"Ascent": 0},  # zero ascent only
    {"Ascent": 50000, "Descent": -200},  # absurd
    {"Ascent": 1, "Descent": -1},  # degenerate (0.002 em)
], ids=["missing", "zero", "zero-ascent", "absurd", "tiny"])
def test_unusable_ascent_descent_fall_back_to_fontbbox(descriptor: dict[str, Any]) -> None:
    # FontBBox y range -250..1000: 1.25 em, 15 units at 12 pt.
    w = PdfWriter()
    font = mono_font(w, descriptor={**descriptor, "FontBBox": [0, -250, 1000, 1000]})
    page = _line_page(w, font)
    assert page.text == WORDS
    assert _heights(page) == {15.0}


def test_fontbbox_wins_over_standard14_metrics() -> None:
    # Chain order: the font's own FontBBox comes before the standard-14 metrics.
    w = PdfWriter()
    font = w.simple_font("Type1", base_font="Helvetica", first_char=0, widths=[500] * 256,
                         descriptor={"Ascent": 0, "Descent": 0, "FontBBox": [0, -250, 1000, 1000]})
    page = _line_page(w, font)
    assert page.text == WORDS
    assert _heights(page) == {15.0}


@pytest.mark.parametrize(("base_font", "ascent", "descent"), [
    ("Helvetica", 718, -207),  # Helvetica.afm Ascender / Descender
    ("Times-Roman", 683, -217),  # Times-Roman.afm
])
def test_standard14_font_without_descriptor_uses_its_metrics(base_font: str, ascent: int, descent: int) -> None:
    w = PdfWriter()
    page = _line_page(w, w.standard_font(base_font))
    assert page.text == WORDS
    expected = (ascent - descent) / 1000 * SIZE
    assert all(g.height == pytest.approx(expected) for g in page.glyphs)
    g = page.glyphs[0]
    assert g.quad[1] == pytest.approx(700 + descent / 1000 * SIZE)
    assert g.quad[7] == pytest.approx(700 + ascent / 1000 * SIZE)


def test_standard14_metrics_when_descriptor_has_neither_ascent_nor_bbox() -> None:
    w = PdfWriter()
    font = w.simple_font("Type1", base_font="Helvetica", first_char=0, widths=[500] * 256,
                         descriptor={"Ascent": None, "Descent": None, "FontBBox": None})
    page = _line_page(w, font)
    assert page.text == WORDS
    assert all(g.height == pytest.approx((718 + 207) / 1000 * SIZE) for g in page.glyphs)


@pytest.mark.parametrize("descriptor", [
    {"Ascent": 0, "Descent": 0, "FontBBox": [0, 0, 0, 0]},
    {"Ascent": None, "Descent": None, "FontBBox": None},
    {"Ascent": 50000, "Descent": -50000, "FontBBox": [0, -90000, 1000, 90000]},
], ids=["zeros", "missing", "absurd"])
def test_documented_default_when_nothing_is_usable(descriptor: dict[str, Any]) -> None:
    # Not a standard-14 font: the last resort is params' default ascent/descent.
    w = PdfWriter()
    font = mono_font(w, base_font="NoSuchFont", descriptor=descriptor)
    page = _line_page(w, font)
    p = pipeline.DEFAULT_PARAMS
    assert page.text == WORDS
    assert all(g.height == pytest.approx((p.default_ascent - p.default_descent) * SIZE) for g in page.glyphs)


def test_font_without_any_descriptor_still_has_sane_height() -> None:
    # A TrueType font with /Widths but no FontDescriptor at all.
    w = PdfWriter()
    font = w.simple_font("TrueType", base_font="NoSuchFont", first_char=0, widths=[500] * 256)
    page = _line_page(w, font)
    assert page.text == WORDS
    assert all(g.height > 0 for g in page.glyphs)


def test_one_tf_with_size_in_text_matrix_equals_real_tf() -> None:
    # Word exports: "1 Tf" and the size in the text matrix.
    w1 = PdfWriter()
    word = _line_page(w1, mono_font(w1), b"BT /F1 1 Tf 12 0 0 12 72 700 Tm")
    w2 = PdfWriter()
    plain = _line_page(w2, mono_font(w2), b"BT /F1 12 Tf 72 700 Td")
    assert word.text == plain.text == WORDS
    assert len(word.glyphs) == len(plain.glyphs) == len("Helloworld")
    for a, b in zip(word.glyphs, plain.glyphs, strict=False):
        assert a.text == b.text
        assert a.size == pytest.approx(12.0) and b.size == pytest.approx(12.0)
        assert a.height == pytest.approx(12.0) and b.height == pytest.approx(12.0)
        assert (a.ox, a.oy, a.gx, a.ex) == pytest.approx((b.ox, b.oy, b.gx, b.ex))
        assert a.quad == pytest.approx(b.quad)


def test_height_scales_with_text_matrix() -> None:
    w = PdfWriter()
    page = _line_page(w, mono_font(w), b"BT /F1 1 Tf 24 0 0 24 72 700 Tm")
    assert page.text == WORDS
    assert _heights(page) == {24.0}
    assert {round(g.size, 6) for g in page.glyphs} == {24.0}
    # Advance 0.5 em at 24 units.
    assert page.glyphs[0].gx - page.glyphs[0].ox == pytest.approx(12.0)


def test_height_scales_with_ctm() -> None:
    # 6 pt text drawn at twice the scale is 12 units high, and spaced like 12 pt text.
    w = PdfWriter()
    page = _line_page(w, mono_font(w), b"2 0 0 2 0 0 cm BT /F1 6 Tf 36 350 Td")
    assert page.text == WORDS
    assert _heights(page) == {12.0}
    assert page.glyphs[0].origin == pytest.approx((72.0, 700.0))


def test_height_follows_vertical_scale_only() -> None:
    # Text matrix 12 wide, 24 high: the box height is 24 units (the y scale), the
    # advance 6 units (the x scale).
    w = PdfWriter()
    page = page_of(b"BT /F1 1 Tf 12 0 0 24 72 700 Tm (ab) Tj ET", {"F1": mono_font(w)}, w=w)
    g = page.glyphs[0]
    assert g.height == pytest.approx(24.0)
    assert g.gx - g.ox == pytest.approx(6.0)
    assert g.quad[1] == pytest.approx(700 - 0.2 * 24)
    assert g.quad[7] == pytest.approx(700 + 0.8 * 24)


def test_rotated_text_matrix_keeps_height() -> None:
    # 90° text: the height is measured across the (vertical) baseline.
    w = PdfWriter()
    page = _line_page(w, mono_font(w), b"BT /F1 1 Tf 0 12 -12 0 300 300 Tm")
    assert page.text == WORDS
    assert _heights(page) == {12.0}
    assert page.glyphs[0].direction == pytest.approx((0.0, 1.0))


def test_type3_height_from_fontbbox_through_font_matrix() -> None:
    # FontMatrix 0.01: glyph space is 100 units per em. FontBBox y -25..100 is
    # 1.25 em (not 0.125 em as a /1000 reading would make it).
    w = PdfWriter()
    procs = {name: b"50 0 0 0 50 100 d1 0 0 50 100 re f" for name in ("H", "e", "l", "o", "w", "r", "d")}
    diffs: list[Any] = []
    for ch in sorted(set("Helloworld")):
        diffs += [ord(ch), ch]
    font = w.type3_font(procs, diffs, first_char=0, widths=[50] * 256,
                        font_matrix=(0.01, 0, 0, 0.01, 0, 0), font_bbox=(0, -25, 100, 100))
    page = _line_page(w, font)
    assert page.text == WORDS
    assert _heights(page) == {15.0}
