"""R9 Form XObjects: text spliced in at the Do, form /Matrix × CTM, resources
borrowed from the drawing stream, nesting, cycle detection, the 12-level depth
limit, no clipping by /BBox; R1/R2: form glyphs carry token -1 and are not page
glyphs, while being page text.

Geometry: the mono font (tests/builders.py) advances 0.5 em per glyph, its box
spans -0.2 em .. 0.8 em.
"""
from __future__ import annotations

from typing import Any

import pytest

from pdfindex import pipeline
from tests.builders import all_glyphs, mono_font, one_page_pdf, page_of
from tests.pdfwriter import PdfWriter

REMAP = {"Differences": [65, "Z"]}  # code 65 ("A") reads as "Z"


def _fonts(w: PdfWriter) -> dict[str, Any]:
    return {"Font": {"F1": mono_font(w)}}


def test_form_text_is_spliced_at_the_do() -> None:
    # The form's text sits highest on the page but is drawn between the other two:
    # content order wins (R9, R14).
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"BT /F1 12 Tf 72 700 Td (Inside) Tj ET", resources=res)
    content = (b"BT /F1 12 Tf 72 500 Td (Before) Tj ET\n/Fm Do\n"
               b"BT /F1 12 Tf 72 300 Td (After) Tj ET")
    page = page_of(content, res["Font"], {"Fm": form}, w=w)
    assert page.text == "Before\nInside\nAfter"


def test_form_text_joins_the_line_it_is_drawn_on() -> None:
    # Spliced glyph by glyph, not appended as a block: a form drawing the middle
    # word of a line reads as part of that line.
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"BT /F1 10 Tf 110 700 Td (middle) Tj ET", resources=res)
    content = b"BT /F1 10 Tf 72 700 Td (start) Tj ET /Fm Do BT /F1 10 Tf 150 700 Td (end) Tj ET"
    page = page_of(content, res["Font"], {"Fm": form}, w=w)
    assert page.text == "start middle end"


def test_form_matrix_then_ctm() -> None:
    # Text space (10, 20) → form Matrix (translate 100, 50) → (110, 70) → CTM
    # (scale 2) → (220, 140). The other order would give (120, 90).
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"BT /F1 10 Tf 10 20 Td (X) Tj ET", matrix=(1, 0, 0, 1, 100, 50), resources=res)
    data = one_page_pdf(b"q 2 0 0 2 0 0 cm /Fm Do Q", res["Font"], {"Fm": form}, w=w,
                        crop_box=(200, 120, 260, 180))
    glyphs, _ = all_glyphs(data)
    (g,) = glyphs
    assert g.origin == pytest.approx((220.0, 140.0))
    assert g.size == pytest.approx(20.0)
    assert g.height == pytest.approx(20.0)
    assert g.glyph_end == pytest.approx((230.0, 140.0))
    # Through the public API: the glyph's centre (225, 146) is inside the CropBox.
    assert pipeline.extract(data).pages[0].text == "X"


def test_rotating_form_matrix() -> None:
    # Matrix rotates 90° and moves to (300, 100): text space (10, 0) → (300, 110),
    # and the baseline runs upwards.
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"BT /F1 10 Tf 10 0 Td (ab) Tj ET", matrix=(0, 1, -1, 0, 300, 100), resources=res)
    glyphs, _ = all_glyphs(one_page_pdf(b"/Fm Do", res["Font"], {"Fm": form}, w=w))
    a, b = glyphs
    assert a.origin == pytest.approx((300.0, 110.0))
    assert b.origin == pytest.approx((300.0, 115.0))
    assert a.direction == pytest.approx((0.0, 1.0))


def test_form_without_resources_borrows_page_fonts() -> None:
    # The page's /F1 remaps A to Z: "Z" can only come from the page's font.
    w = PdfWriter()
    form = w.form_xobject(b"BT /F1 12 Tf 72 700 Td (A) Tj ET")
    page = page_of(b"/Fm Do", {"F1": mono_font(w, encoding=REMAP)}, {"Fm": form}, w=w)
    assert page.text == "Z"
    assert page.quality.unresolved == 0
    assert not any("F1" in p for p in page.problems)


def test_nested_form_without_resources_borrows_from_the_form_drawing_it() -> None:
    # §7.8.3: the resources of the stream that draws it, i.e. the outer form's, not
    # the page's. Page /F1 is plain, the outer form's /F1 remaps A to Z.
    w = PdfWriter()
    inner = w.form_xobject(b"BT /F1 12 Tf 72 600 Td (A) Tj ET")
    outer = w.form_xobject(b"BT /F1 12 Tf 72 700 Td (A) Tj ET /In Do",
                           resources={"Font": {"F1": mono_font(w, encoding=REMAP)}, "XObject": {"In": inner}})
    page = page_of(b"BT /F1 12 Tf 72 750 Td (A) Tj ET /Out Do", {"F1": mono_font(w)}, {"Out": outer}, w=w)
    assert page.text == "A\nZ\nZ"


def test_form_resources_do_not_leak_to_the_page() -> None:
    # After the Do the page's own resources apply again.
    w = PdfWriter()
    form = w.form_xobject(b"BT /F1 12 Tf 72 700 Td (A) Tj ET", resources={"Font": {"F1": mono_font(w, encoding=REMAP)}})
    page = page_of(b"/Fm Do BT /F1 12 Tf 72 650 Td (A) Tj ET", {"F1": mono_font(w)}, {"Fm": form}, w=w)
    assert page.text == "Z\nA"


def test_nested_forms_compose_matrices() -> None:
    # Inner /Matrix translates (10, 20), outer scales by 2: text space (5, 5) →
    # inner (15, 25) → outer (30, 50). The other order would give (20, 30).
    w = PdfWriter()
    res = _fonts(w)
    inner = w.form_xobject(b"BT /F1 10 Tf 5 5 Td (I) Tj ET", matrix=(1, 0, 0, 1, 10, 20), resources=res)
    outer = w.form_xobject(b"BT /F1 10 Tf 100 300 Td (O) Tj ET /In Do", matrix=(2, 0, 0, 2, 0, 0),
                           resources={**res, "XObject": {"In": inner}})
    data = one_page_pdf(b"/Out Do", res["Font"], {"Out": outer}, w=w)
    glyphs, problems = all_glyphs(data)
    o, i = glyphs
    assert (o.text, i.text) == ("O", "I")
    assert o.origin == pytest.approx((200.0, 600.0))
    assert i.origin == pytest.approx((30.0, 50.0))
    assert i.size == pytest.approx(20.0)
    assert problems == []
    assert pipeline.extract(data).pages[0].text == "O\nI"


def test_self_drawing_form_terminates_once() -> None:
    w = PdfWriter()
    res = _fonts(w)
    ref = w.reserve()
    w.form_xobject(b"BT /F1 12 Tf 72 700 Td (Loop) Tj ET /Fm Do", ref=ref,
                   resources={**res, "XObject": {"Fm": ref}})
    page = page_of(b"/Fm Do", res["Font"], {"Fm": ref}, w=w)
    assert page.text == "Loop"
    assert page.quality.glyphs == 4
    assert any("Fm" in p for p in page.problems)


def test_mutually_drawing_forms_terminate() -> None:
    w = PdfWriter()
    res = _fonts(w)
    a, b = w.reserve(), w.reserve()
    w.form_xobject(b"BT /F1 12 Tf 72 700 Td (Alpha) Tj ET /B Do", ref=a, resources={**res, "XObject": {"B": b}})
    w.form_xobject(b"BT /F1 12 Tf 72 650 Td (Beta) Tj ET /A Do", ref=b, resources={**res, "XObject": {"A": a}})
    page = page_of(b"/A Do", res["Font"], {"A": a}, w=w)
    assert page.text == "Alpha\nBeta"
    assert page.problems  # the cycle is reported


def test_same_form_drawn_twice_is_not_a_cycle() -> None:
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"BT /F1 12 Tf 72 700 Td (Stamp) Tj ET", resources=res)
    page = page_of(b"/Fm Do q 1 0 0 1 0 -100 cm /Fm Do Q", res["Font"], {"Fm": form}, w=w)
    assert page.text == "Stamp\nStamp"
    assert page.problems == []


def test_depth_limit_is_twelve_levels() -> None:
    # A chain of 14 distinct forms, each drawing "LevelK" then the next one.
    w = PdfWriter()
    res = _fonts(w)
    refs = [w.reserve() for _ in range(14)]
    for k, ref in enumerate(refs, 1):
        xobjects = {"Next": refs[k]} if k < len(refs) else {}
        w.form_xobject(b"BT /F1 10 Tf 72 %d Td (Level%d) Tj ET /Next Do" % (760 - 20 * k, k), ref=ref,
                       resources={**res, "XObject": xobjects})
    page = page_of(b"/Next Do", res["Font"], {"Next": refs[0]}, w=w)
    assert page.text.split("\n") == [f"Level{k}" for k in range(1, 13)]
    assert page.problems  # the skipped level is reported


def test_text_outside_the_form_bbox_is_not_clipped() -> None:
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"BT /F1 12 Tf 300 400 Td (Unclipped) Tj ET", bbox=(0, 0, 1, 1), resources=res)
    page = page_of(b"/Fm Do", res["Font"], {"Fm": form}, w=w)
    assert page.text == "Unclipped"


def test_form_glyphs_have_token_minus_one_and_are_not_page_glyphs() -> None:
    w = PdfWriter()
    res = _fonts(w)
    inner = w.form_xobject(b"BT /F1 12 Tf 72 600 Td (Deep) Tj ET", resources=res)
    form = w.form_xobject(b"BT /F1 12 Tf 72 650 Td (Form) Tj ET /In Do", resources={**res, "XObject": {"In": inner}})
    tokens = [b"BT", b"/F1", b"12", b"Tf", b"72", b"700", b"Td", b"(Page)", b"Tj", b"ET",
              b"/Fm", b"Do",
              b"BT", b"/F1", b"12", b"Tf", b"72", b"550", b"Td", b"(After)", b"Tj", b"ET"]
    data = one_page_pdf(b" ".join(tokens), res["Font"], {"Fm": form}, w=w)
    page = pipeline.extract(data, keep_glyphs=True).pages[0]
    assert page.text == "Page\nForm\nDeep\nAfter"
    # R2: page glyphs are the page stream's own, tokens pointing into it.
    assert "".join(g.text for g in page.glyphs) == "PageAfter"
    assert {g.token for g in page.glyphs[:4]} == {7}
    assert {g.token for g in page.glyphs[4:]} == {19}
    assert tokens[7] == b"(Page)" and tokens[19] == b"(After)"
    # R1: glyphs drawn inside forms (nested too) carry token -1.
    glyphs, _ = all_glyphs(data)
    assert [(g.text, g.token) for g in glyphs] == (
        [(c, 7) for c in "Page"] + [(c, -1) for c in "FormDeep"] + [(c, 19) for c in "After"])


def test_text_state_at_the_do_is_inherited_by_the_form() -> None:
    # The form sets no font and has no font resources: it shows with the page's
    # /F1 at 10 pt and Tc 3, all set before the Do.
    w = PdfWriter()
    form = w.form_xobject(b"BT 100 500 Td (AB) Tj ET", resources={"ProcSet": []})
    data = one_page_pdf(b"BT /F1 10 Tf 3 Tc 2 Tr ET /Fm Do", {"F1": mono_font(w, encoding=REMAP)}, {"Fm": form}, w=w)
    glyphs, problems = all_glyphs(data)
    a, b = glyphs
    assert (a.text, b.text) == ("Z", "B")
    assert (a.font, a.size, a.render_mode) == ("F1", 10.0, 2)
    assert b.ox - a.ox == pytest.approx(5.0 + 3.0)
    assert problems == []


def test_form_text_state_changes_do_not_leak_out() -> None:
    w = PdfWriter()
    fonts = {"F1": mono_font(w), "F2": mono_font(w, encoding=REMAP)}
    form = w.form_xobject(b"BT /F2 20 Tf 9 Tc 100 600 Td (A) Tj ET", resources={"Font": fonts})
    content = b"BT /F1 10 Tf ET /Fm Do BT 100 500 Td (AB) Tj ET"
    page = page_of(content, fonts, {"Fm": form}, w=w)
    assert page.text == "Z\nAB"
    a, b = page.glyphs
    assert (a.font, a.size) == ("F1", 10.0)
    assert b.ox - a.ox == pytest.approx(5.0)


def test_form_ctm_changes_do_not_leak_out() -> None:
    # The form scales by 3 inside its own content; the page text after the Do keeps
    # the page's CTM.
    w = PdfWriter()
    res = _fonts(w)
    form = w.form_xobject(b"3 0 0 3 0 0 cm BT /F1 10 Tf 10 200 Td (big) Tj ET", resources=res)
    page = page_of(b"/Fm Do BT /F1 10 Tf 72 300 Td (small) Tj ET", res["Font"], {"Fm": form}, w=w)
    assert page.text == "big\nsmall"
    assert {g.size for g in page.glyphs} == {10.0}
    assert page.glyphs[0].origin == pytest.approx((72.0, 300.0))
