"""R10 visible box: page text keeps only glyphs whose box centre lies inside the
CropBox clipped to the MediaBox (both inherited through the page tree); R2 page
glyphs keep everything.

Geometry (tests/builders.py mono font): a glyph at origin (x, y), size s, spans
x .. x + 0.5·s and y - 0.2·s .. y + 0.8·s, so its centre is (x + 0.25·s, y + 0.3·s).
"""
from __future__ import annotations

import pytest

from pdfindex import pipeline
from tests.builders import font_resources, mono_font, one_font_pdf, text_line
from tests.pdfwriter import PdfWriter

BODY = text_line(72, 700, b"(Body text) Tj")
SLUG = text_line(40, 10, b"(Slug line job 1234) Tj")  # below a CropBox starting at y=36
MARK = text_line(585, 400, b"(CM) Tj")  # 585..595: right of a CropBox ending at x=576
LEFT = text_line(5, 380, b"(LM) Tj")  # 5..15: left of a CropBox starting at x=36
CROP = (36, 36, 576, 756)


def _page(data: bytes, **kw: object) -> pipeline.Page:
    return pipeline.extract(data, **kw).pages[0]  # type: ignore[arg-type]


def test_slug_lines_and_marks_outside_cropbox_are_dropped() -> None:
    page = _page(one_font_pdf(SLUG + BODY + MARK + LEFT, crop_box=CROP))
    assert page.text == "Body text"
    assert page.box == CROP


def test_same_page_without_cropbox_keeps_everything_inside_mediabox() -> None:
    # Control: the marks are inside the MediaBox, so only the CropBox drops them.
    page = _page(one_font_pdf(SLUG + BODY + MARK + LEFT))
    assert page.text.split("\n") == ["Slug line job 1234", "Body text", "CM", "LM"]
    assert page.box == (0, 0, 612, 792)


def test_cropbox_inherited_from_pages_root() -> None:
    w = PdfWriter(pages_attrs={"CropBox": list(CROP)})
    page = _page(one_font_pdf(SLUG + BODY + MARK, writer=w))
    assert page.text == "Body text"
    assert page.box == CROP


def test_cropbox_inherited_from_intermediate_pages_node() -> None:
    w = PdfWriter(pages_attrs={"MediaBox": [0, 0, 612, 792]})
    w.page_group("chapter", {"CropBox": list(CROP)})
    res = font_resources(mono_font(w))
    w.add_page(SLUG + BODY, media_box=None, resources=res, parent="chapter")
    w.add_page(SLUG + BODY, media_box=None, resources=res)  # root kid: no CropBox
    doc = pipeline.extract(w.to_bytes())
    assert doc.pages[0].text == "Body text"
    assert doc.pages[0].box == CROP
    assert doc.pages[1].text == "Slug line job 1234\nBody text"
    assert doc.pages[1].box == (0, 0, 612, 792)


def test_page_cropbox_overrides_inherited_one() -> None:
    w = PdfWriter(pages_attrs={"CropBox": [0, 0, 100, 100]})
    page = _page(one_font_pdf(SLUG + BODY + MARK, writer=w, crop_box=CROP))
    assert page.text == "Body text"
    assert page.box == CROP


def test_mediabox_inherited_from_pages_node() -> None:
    w = PdfWriter(pages_attrs={"MediaBox": [0, 0, 300, 300]})
    content = text_line(50, 250, b"(Inside) Tj") + text_line(400, 100, b"(Outside) Tj")
    page = _page(one_font_pdf(content, writer=w, media_box=None))
    assert page.text == "Inside"
    assert page.box == (0, 0, 300, 300)


def test_cropbox_larger_than_mediabox_is_clipped_to_it() -> None:
    content = (text_line(50, 250, b"(Inside) Tj")
               + text_line(350, 100, b"(Between) Tj")  # inside CropBox, outside MediaBox
               + text_line(100, -30, b"(Below) Tj"))  # likewise, under the MediaBox
    page = _page(one_font_pdf(content, media_box=(0, 0, 300, 300), crop_box=(-50, -50, 500, 500)))
    assert page.text == "Inside"
    assert page.box == (0, 0, 300, 300)


def test_box_is_intersection_of_partly_overlapping_boxes() -> None:
    content = (text_line(150, 150, b"(Kept) Tj")
               + text_line(50, 150, b"(LeftOfCrop) Tj")  # in MediaBox only
               + text_line(450, 450, b"(RightOfMedia) Tj"))  # in CropBox only
    page = _page(one_font_pdf(content, media_box=(0, 0, 400, 400), crop_box=(100, 100, 600, 600)))
    assert page.box == (100, 100, 400, 400)
    assert page.text == "Kept"


def test_inherited_mediabox_and_cropbox_intersect() -> None:
    w = PdfWriter(pages_attrs={"MediaBox": [0, 0, 400, 400], "CropBox": [100, 100, 600, 600]})
    content = text_line(150, 150, b"(Kept) Tj") + text_line(450, 450, b"(Dropped) Tj")
    page = _page(one_font_pdf(content, writer=w, media_box=None))
    assert page.box == (100, 100, 400, 400)
    assert page.text == "Kept"


def test_boxes_given_with_corners_swapped_are_normalised() -> None:
    page = _page(one_font_pdf(SLUG + BODY + MARK, media_box=(612, 792, 0, 0),
                              crop_box=(576, 756, 36, 36)))
    assert page.box == CROP
    assert page.text == "Body text"


# Size 20: a glyph spans x .. x+10 and y-4 .. y+16; centre (x+5, y+6).
# CropBox 100 100 500 700.
@pytest.mark.parametrize(("x", "y", "kept"), [
    (92, 400, False),  # box 92..102 straddles x=100, centre 97: out
    (96, 400, True),  # box 96..106, centre 101: in (origin 96 is outside!)
    (492, 400, True),  # box 492..502 straddles x=500, centre 497: in
    (496, 400, False),  # centre 501: out (origin 496 is inside!)
    (300, 96, True),  # box y 92..112 straddles y=100, centre 102: in (origin below)
    (300, 93, False),  # centre 99: out
    (300, 693, True),  # box y 689..709 straddles y=700, centre 699: in
    (300, 695, False),  # centre 701: out (origin 695 inside)
])
def test_glyph_straddling_the_edge_is_kept_iff_its_centre_is_inside(x: int, y: int, kept: bool) -> None:
    content = text_line(300, 300, b"(Ref) Tj", size=20) + text_line(x, y, b"(Q) Tj", size=20)
    page = _page(one_font_pdf(content, crop_box=(100, 100, 500, 700)))
    assert page.text == ("Ref\nQ" if kept else "Ref")


def test_box_centre_uses_the_rotated_glyph_box() -> None:
    # 90° text (direction up) at x=98: the glyph box spans x 98-16 .. 98+4 (ascent
    # to the left), centre x = 92, outside a box starting at 100; at x=110 the box
    # spans 94..114, centre 104: inside.
    content = (b"BT /F1 20 Tf 0 1 -1 0 98 300 Tm (A) Tj ET\n"
               b"BT /F1 20 Tf 0 1 -1 0 110 400 Tm (B) Tj ET\n")
    page = _page(one_font_pdf(content, crop_box=(100, 100, 500, 700)))
    assert page.text == "B"


def test_clipped_white_covered_and_invisible_text_is_kept() -> None:
    content = (
        b"q 0 0 1 1 re W n\n" + text_line(72, 700, b"(Clipped away) Tj") + b"Q\n"
        + b"q 1 g\n" + text_line(72, 680, b"(White on white) Tj") + b"Q\n"
        + b"BT /F1 10 Tf 3 Tr 72 660 Td (Invisible OCR layer) Tj ET\n"
        + b"BT /F1 10 Tf 7 Tr 72 640 Td (Clip mode) Tj ET\n"
        + text_line(72, 620, b"(Covered) Tj")
        + b"q 1 1 1 rg 0 0 612 792 re f Q\n"
    )
    page = _page(one_font_pdf(content), keep_glyphs=True)
    assert page.text.split("\n") == [
        "Clipped away", "White on white", "Invisible OCR layer", "Clip mode", "Covered"]
    modes = {g.render_mode for g in page.glyphs}
    assert {0, 3, 7} <= modes


def test_page_glyphs_keep_glyphs_outside_the_box() -> None:
    content = SLUG + BODY + MARK + text_line(-200, -200, b"(Offpage) Tj")
    page = _page(one_font_pdf(content, crop_box=CROP), keep_glyphs=True)
    assert page.text == "Body text"
    texts = "".join(g.text for g in page.glyphs)
    assert texts == "Slug line job 1234" + "Body text" + "CM" + "Offpage"
    assert len(page.glyphs) == len("Slug line job 1234Body textCMOffpage")
    # The visible subset is what the page text (and its quality) is made of.
    assert page.quality.glyphs == len("Body text")


def test_invisible_text_inside_box_but_outside_is_still_dropped() -> None:
    # A box test, not a visibility test, in both directions: render mode does not
    # rescue text outside the box.
    content = BODY + b"BT /F1 10 Tf 3 Tr 40 10 Td (Hidden slug) Tj ET\n"
    page = _page(one_font_pdf(content, crop_box=CROP))
    assert page.text == "Body text"
