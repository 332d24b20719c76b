"""R8 q/Q and the text state; text operators (§9.3, §9.4); R1 glyph record fields
and token indexes; widths of the font kinds.

Geometry: the mono font (tests/builders.py) advances 0.5 em per code and its box
spans descent -0.2 em to ascent 0.8 em. At 10 pt a glyph is 5 units wide.
"""
from __future__ import annotations

from typing import Any

import pytest

from pdfindex import pipeline
from tests.builders import mono_font, page_of
from tests.pdfwriter import PdfWriter, cid_cmap, tounicode_cmap

REMAP = {"Differences": [65, "Z"]}  # code 65 ("A") reads as "Z"


def _mono_page(content: bytes, w: PdfWriter | None = None, **font_kw: Any) -> pipeline.Page:
    w = w if w is not None else PdfWriter()
    return page_of(content, {"F1": mono_font(w, **font_kw)}, w=w)


# ---- R8: q/Q save and restore the text state ------------------------------------------

def test_font_chosen_inside_q_does_not_leak_after_Q() -> None:
    w = PdfWriter()
    fonts = {"F1": mono_font(w), "F2": mono_font(w, encoding=REMAP)}
    content = (b"BT /F1 10 Tf ET\n"
               b"q BT /F2 20 Tf 72 700 Td (A) Tj ET Q\n"
               b"BT 72 650 Td (A) Tj ET")
    page = page_of(content, fonts, w=w)
    assert [g.text for g in page.glyphs] == ["Z", "A"]
    assert [g.font for g in page.glyphs] == ["F2", "F1"]
    assert [g.size for g in page.glyphs] == [20.0, 10.0]
    assert page.text == "Z\nA"


def test_font_inside_nested_q_restores_level_by_level() -> None:
    w = PdfWriter()
    fonts = {"F1": mono_font(w), "F2": mono_font(w, encoding=REMAP)}
    content = (b"BT /F1 10 Tf ET q BT /F2 10 Tf ET q BT /F1 10 Tf ET Q "
               b"BT 72 700 Td (A) Tj ET Q BT 72 650 Td (A) Tj ET")
    page = page_of(content, fonts, w=w)
    assert [g.text for g in page.glyphs] == ["Z", "A"]


def test_text_state_parameters_are_restored_by_Q() -> None:
    # Outside: Tc 1, Tw 2, Tz 80, TL 12, Ts 3, Tr 2, size 10. Inside q: all changed.
    content = (b"BT /F1 10 Tf 1 Tc 2 Tw 80 Tz 12 TL 3 Ts 2 Tr ET\n"
               b"q BT /F1 20 Tf 5 Tc 7 Tw 50 Tz 30 TL 9 Ts 0 Tr 300 300 Td (x) Tj ET Q\n"
               b"BT 100 500 Td (a b) Tj T* (c) Tj ET")
    page = _mono_page(content)
    a, space, b, c = page.glyphs[1:]
    assert page.glyphs[0].size == 20.0 and page.glyphs[0].rise == pytest.approx(9.0)
    assert a.size == 10.0
    # Tz 80 and Tc 1: "a" advances (5 + 1) × 0.8; the space (5 + 1 + 2) × 0.8.
    assert a.ex - a.ox == pytest.approx(4.8)
    assert a.gx - a.ox == pytest.approx(4.0)
    assert space.ex - space.ox == pytest.approx(6.4)
    assert b.ox == pytest.approx(100 + 4.8 + 6.4)
    assert {g.rise for g in (a, space, b, c)} == {3.0}
    assert {g.render_mode for g in (a, space, b, c)} == {2}
    # TL 12: T* goes 12 down (baselines compared through the glyph boxes' bottoms,
    # which carry the same rise).
    assert a.quad[1] - c.quad[1] == pytest.approx(12.0)
    assert c.ox == pytest.approx(100.0)


def test_Q_does_not_restore_the_text_matrix() -> None:
    # The text matrix is not part of the graphics state (§9.4.1): after Q the pen
    # stays where the string inside q left it.
    content = b"BT /F1 10 Tf 72 700 Td q (ab) Tj Q (c) Tj ET"
    page = _mono_page(content)
    assert page.glyphs[2].ox == pytest.approx(82.0)
    assert page.text == "abc"


# ---- text positioning and showing operators ------------------------------------------

def test_tstar_quote_and_doublequote() -> None:
    content = b"BT /F1 10 Tf 15 TL 100 700 Td (a) Tj T* (b) Tj (c) ' 4 1 (d e) \" (fg) Tj ET"
    page = _mono_page(content)
    g = page.glyphs
    assert [x.text for x in g] == list("abcd efg")
    assert [c for x in g[:4] for c in x.origin] == pytest.approx([100, 700, 100, 685, 100, 670, 100, 655])
    # " set Tw 4 and Tc 1: d advances 5 + 1, the space 5 + 1 + 4.
    _d, space, e, f, gg = g[3:]
    assert space.ox == pytest.approx(106.0)
    assert e.ox == pytest.approx(116.0)
    # ...and they stay set after it.
    assert f.ox == pytest.approx(122.0)
    assert gg.ox == pytest.approx(128.0)
    assert page.text == "a\nb\nc\nd efg"


def test_TD_sets_the_leading() -> None:
    content = b"BT /F1 10 Tf 100 700 Td 0 -20 TD (a) Tj T* (b) Tj T* (c) Tj ET"
    page = _mono_page(content)
    assert [c for g in page.glyphs for c in g.origin] == pytest.approx([100, 680, 100, 660, 100, 640])


def test_Td_is_relative_to_the_line_start_not_the_pen() -> None:
    content = b"BT /F1 10 Tf 100 700 Td (abcd) Tj 0 -20 Td (e) Tj ET"
    page = _mono_page(content)
    assert page.glyphs[4].origin == pytest.approx((100, 680))


def test_tz_scales_glyph_end_and_pen_advance() -> None:
    page = _mono_page(b"BT /F1 10 Tf 50 Tz 100 700 Td (ab) Tj ET")
    a, b = page.glyphs
    assert a.gx - a.ox == pytest.approx(2.5)
    assert a.ex - a.ox == pytest.approx(2.5)
    assert b.ox == pytest.approx(102.5)
    assert a.quad[2] - a.quad[0] == pytest.approx(2.5)  # the box is as wide as the glyph
    page = _mono_page(b"BT /F1 10 Tf 200 Tz 2 Tc 100 700 Td (ab) Tj ET")
    a, b = page.glyphs
    assert a.gx - a.ox == pytest.approx(10.0)
    assert a.ex - a.ox == pytest.approx(14.0)
    assert b.ox == pytest.approx(114.0)


def test_tz_scales_tj_adjustments() -> None:
    page = _mono_page(b"BT /F1 10 Tf 50 Tz 100 700 Td [(a) -1000 (b)] TJ ET")
    # a: 2.5; the -1000 adjustment: 10 × 0.5 = 5.
    assert page.glyphs[1].ox == pytest.approx(107.5)


def test_tw_applies_to_single_byte_code_32_only_in_simple_font() -> None:
    page = _mono_page(b"BT /F1 10 Tf 5 Tw 100 700 Td (a b) Tj ET")
    a, space, b = page.glyphs
    assert a.ex - a.ox == pytest.approx(5.0)  # no Tw on "a"
    assert space.ex - space.ox == pytest.approx(10.0)
    assert space.gx - space.ox == pytest.approx(5.0)  # glyph end: no Tw
    assert b.ox == pytest.approx(115.0)


def test_tw_not_applied_to_two_byte_code_0x0020() -> None:
    w = PdfWriter()
    font = w.type0_font(encoding="Identity-H", dw=500)
    page = page_of(b"BT /F1 10 Tf 5 Tw 100 700 Td <004100200042> Tj ET", {"F1": font}, w=w)
    _a, sp, b = page.glyphs
    assert (sp.code, sp.nbytes) == (0x20, 2)
    assert sp.ex - sp.ox == pytest.approx(5.0)
    assert b.ox == pytest.approx(110.0)


def test_tw_applied_to_one_byte_code_32_in_composite_font() -> None:
    # §9.3.3: a composite font whose CMap defines 32 as a single-byte code.
    w = PdfWriter()
    enc = cid_cmap("OneByte", codespace=[(b"\x00", b"\xff")], cidranges=[(b"\x00", b"\xff", 0)])
    font = w.type0_font(encoding=enc, cmap_name="OneByte", dw=500)
    page = page_of(b"BT /F1 10 Tf 5 Tw 100 700 Td <412042> Tj ET", {"F1": font}, w=w)
    a, sp, b = page.glyphs
    assert (sp.code, sp.nbytes) == (32, 1)
    assert a.ex - a.ox == pytest.approx(5.0)
    assert sp.ex - sp.ox == pytest.approx(10.0)
    assert b.ox == pytest.approx(115.0)


# ---- R1: glyph record fields ----------------------------------------------------------

def test_glyph_record_fields() -> None:
    # Size 10, Tc 1, Tw 3, Tz 200, text matrix translated to (50, 400).
    page = _mono_page(b"BT /F1 10 Tf 1 Tc 3 Tw 200 Tz 1 0 0 1 50 400 Tm (a b) Tj ET")
    a, sp, b = page.glyphs
    assert (a.text, a.code, a.nbytes, a.font, a.size) == ("a", 0x61, 1, "F1", 10.0)
    assert (a.direction, a.vertical, a.render_mode) == ((1.0, 0.0), False, 0)
    assert a.origin == pytest.approx((50.0, 400.0))
    # Baseline end: (0.5·10 + 1)·2 = 12; glyph end: 0.5·10·2 = 10.
    assert a.end == pytest.approx((62.0, 400.0))
    assert a.glyph_end == pytest.approx((60.0, 400.0))
    # Box: descent (-2) to ascent (+8), from the origin to the glyph end.
    assert a.quad == pytest.approx((50, 398, 60, 398, 60, 408, 50, 408))
    assert a.height == pytest.approx(10.0)
    # The space: (5 + 1 + 3)·2 = 18 of displacement, 10 of glyph.
    assert sp.origin == pytest.approx((62.0, 400.0))
    assert sp.end == pytest.approx((80.0, 400.0))
    assert sp.glyph_end == pytest.approx((72.0, 400.0))
    assert b.origin == pytest.approx((80.0, 400.0))


def test_glyph_record_fields_rotated() -> None:
    # Text matrix rotated 90° (baseline upwards), size 10, Tc 2.
    page = _mono_page(b"BT /F1 10 Tf 2 Tc 0 1 -1 0 300 200 Tm (ab) Tj ET")
    a, b = page.glyphs
    assert a.direction == pytest.approx((0.0, 1.0))
    assert a.origin == pytest.approx((300.0, 200.0))
    assert a.glyph_end == pytest.approx((300.0, 205.0))
    assert a.end == pytest.approx((300.0, 207.0))
    assert b.origin == pytest.approx((300.0, 207.0))
    # Ascent lies to the left of an upward baseline: x from 300 + 2 down to 300 - 8.
    assert a.quad == pytest.approx((302, 200, 302, 205, 292, 205, 292, 200))


# ---- R1: token indexes ----------------------------------------------------------------

def test_token_index_points_to_the_showing_operand() -> None:
    tokens = [b"BT", b"/F1", b"10", b"Tf", b"14", b"TL", b"72", b"700", b"Td",
              b"(AB)", b"Tj",
              b"/P", b"<</MCID 0>>", b"BDC",
              b"(CD)", b"Tj",
              b"EMC",
              b"[(E) 120 (F)]", b"TJ",
              b"(G)", b"'",
              b"1", b"0.5", b"(H)", b'"',
              b"ET"]
    page = _mono_page(b" ".join(tokens))
    by_text = {g.text: g.token for g in page.glyphs}
    assert set(by_text) == set("ABCDEFGH")
    for text, token in by_text.items():
        assert tokens[token].startswith((b"(", b"[")) and text.encode() in tokens[token]
    assert by_text["A"] == by_text["B"] == 9
    assert by_text["C"] == by_text["D"] == 14
    assert by_text["E"] == by_text["F"] == 17  # an array counts as one object
    assert by_text["G"] == 19
    assert by_text["H"] == 23


@pytest.mark.parametrize("actual", [b"(x)", b"()"], ids=["replacement", "empty"])
def test_page_glyphs_keep_every_glyph_inside_actualtext_spans(actual: bytes) -> None:
    # R2: page glyphs are every glyph the page stream draws, nothing filtered, so a
    # redaction can find "cde" by its token whatever text stands for it.
    content = (b"BT /F1 10 Tf 72 700 Td (ab) Tj /Span <</ActualText " + actual
               + b">> BDC (cde) Tj EMC (fg) Tj ET")
    page = _mono_page(content)
    assert [g.code for g in page.glyphs] == [ord(c) for c in "abcdefg"]
    assert [g.token for g in page.glyphs] == [7] * 2 + [12] * 3 + [15] * 2


def test_token_index_counts_across_content_streams() -> None:
    # A /Contents array is one stream for tokens (§7.8.2).
    w = PdfWriter()
    page = page_of([b"BT /F1 10 Tf 72 700 Td", b"(AB) Tj", b"(CD) Tj ET"], {"F1": mono_font(w)}, w=w)
    assert [g.token for g in page.glyphs] == [7, 7, 9, 9]
    assert page.text == "ABCD"


def test_two_tj_operators_have_different_tokens() -> None:
    page = _mono_page(b"BT /F1 10 Tf 72 700 Td (one) Tj ( two) Tj ET")
    tokens = [g.token for g in page.glyphs]
    assert tokens == [7] * 3 + [9] * 4


# ---- widths of the font kinds -----------------------------------------------------------

def test_standard14_without_widths_uses_afm_metrics() -> None:
    w = PdfWriter()
    page = page_of(b"BT /F1 10 Tf 72 700 Td (Wi ) Tj ET", {"F1": w.standard_font("Helvetica")}, w=w)
    big_w, i, sp = page.glyphs
    # Helvetica.afm: W 944, i 222, space 278.
    assert big_w.gx - big_w.ox == pytest.approx(9.44)
    assert i.gx - i.ox == pytest.approx(2.22)
    assert sp.gx - sp.ox == pytest.approx(2.78)
    assert i.ox == pytest.approx(72 + 9.44)


def test_standard14_symbol_widths_from_metrics() -> None:
    # Symbol.afm: alpha 631, beta 549.
    w = PdfWriter()
    page = page_of(b"BT /F1 10 Tf 72 700 Td (ab) Tj ET", {"F1": w.standard_font("Symbol")}, w=w)
    alpha, beta = page.glyphs
    assert (alpha.text, beta.text) == ("α", "β")
    assert alpha.gx - alpha.ox == pytest.approx(6.31)
    assert beta.gx - beta.ox == pytest.approx(5.49)


def test_standard14_width_comes_from_the_glyph_not_the_tounicode_text() -> None:
    # Times-Roman without /Widths, StandardEncoding 0xAE is the fi ligature
    # (Times-Roman.afm: fi 556, A 722). A ToUnicode that spells it "fi" changes the
    # text, not the glyph drawn, so not its width.
    w = PdfWriter()
    tu = w.add_stream(tounicode_cmap([(b"\xae", b"\x00f\x00i")]))
    font = w.standard_font("Times-Roman", font_attrs={"ToUnicode": tu})
    page = page_of(b"BT /F1 10 Tf 72 700 Td <AE41> Tj ET", {"F1": font}, w=w)
    fi, a = page.glyphs
    assert fi.text == "fi"
    assert fi.gx - fi.ox == pytest.approx(5.56)
    assert a.ox == pytest.approx(77.56)
    assert a.gx - a.ox == pytest.approx(7.22)


def test_truetype_widths_array_is_used() -> None:
    # /Widths beat any metrics the base font name might suggest.
    w = PdfWriter()
    font = w.simple_font("TrueType", base_font="Arial", first_char=87, widths=[700, 300], descriptor={})
    page = page_of(b"BT /F1 10 Tf 72 700 Td (WX) Tj ET", {"F1": font}, w=w)
    big_w, x = page.glyphs
    assert big_w.gx - big_w.ox == pytest.approx(7.0)
    assert x.gx - x.ox == pytest.approx(3.0)
    assert x.ox == pytest.approx(79.0)


def test_cid_font_widths_from_w_array_and_dw() -> None:
    # W: CIDs 65-66 listed one by one (600, 700), 70-72 as a range (300); others DW 900.
    w = PdfWriter()
    font = w.type0_font(encoding="Identity-H", dw=900, w=[65, [600, 700], 70, 72, 300])
    page = page_of(b"BT /F1 10 Tf 100 700 Td <0041004200430046004800490047> Tj ET", {"F1": font}, w=w)
    advances = [round(g.gx - g.ox, 6) for g in page.glyphs]
    assert advances == [6.0, 7.0, 9.0, 3.0, 3.0, 9.0, 3.0]
    assert page.glyphs[-1].ox == pytest.approx(100 + sum(advances[:-1]))


@pytest.mark.parametrize(("matrix", "width"), [
    ((0.01, 0, 0, 0.01, 0, 0), 50),  # 100 glyph units per em: 50 is half an em
    ((0.002, 0, 0, 0.002, 0, 0), 250),
    ((0.001, 0, 0, 0.001, 0, 0), 500),
])
def test_type3_advance_is_widths_times_font_matrix(matrix: tuple[float, ...], width: int) -> None:
    w = PdfWriter()
    proc = b"%d 0 d0" % width
    font = w.type3_font({"a": proc, "b": proc}, [97, "a", "b"], first_char=97, widths=[width, 2 * width],
                        font_matrix=matrix, font_bbox=(0, 0, 1 / matrix[0], 1 / matrix[0]))
    page = page_of(b"BT /F1 10 Tf 72 700 Td (ab) Tj ET", {"F1": font}, w=w)
    a, b = page.glyphs
    assert a.gx - a.ox == pytest.approx(width * matrix[0] * 10)  # 5
    assert b.gx - b.ox == pytest.approx(2 * width * matrix[0] * 10)  # 10
    assert b.ox == pytest.approx(77.0)
    assert page.text == "ab"
