"""R7 quality score: per page glyph count, unresolved count, coverage = resolved /
total; a page without glyphs has no coverage and needs OCR. R10: invisible text
(render mode 3, the OCR layer over a scan) is still extracted and counted.
"""
from __future__ import annotations

import pytest

from pdfindex import pipeline
from tests.builders import mono_font, page_of
from tests.pdfwriter import Name, PdfWriter, Ref


def _type3_shapes(w: PdfWriter) -> Ref:
    """a→/A, b→/square, c→/triangle (names outside the glyph list), d→/B."""
    proc = b"500 0 0 0 500 700 d1 0 0 500 700 re f"
    return w.type3_font({"A": proc, "square": proc, "triangle": proc, "B": proc},
                        [97, "A", "square", "triangle", "B"], first_char=97, widths=[500] * 4)


def _image(w: PdfWriter) -> Ref:
    return w.add_stream(b"\x00\xff\xff\x00", {"Type": Name("XObject"), "Subtype": Name("Image"), "Width": 2,
                                               "Height": 2, "ColorSpace": Name("DeviceGray"),
                                               "BitsPerComponent": 8})


def test_mixed_resolved_and_unresolved_counts() -> None:
    w = PdfWriter()
    fonts = {"F1": mono_font(w), "F2": _type3_shapes(w)}
    content = (b"BT /F1 12 Tf 72 700 Td (Hello world) Tj ET\n"  # 11 resolved (space included)
               b"BT /F2 12 Tf 72 650 Td (abcd) Tj ET\n"  # 2 resolved, 2 unresolved
               b"BT /F2 12 Tf 72 600 Td (cc) Tj ET\n")  # 2 unresolved
    page = page_of(content, fonts, w=w)
    q = page.quality
    assert q.glyphs == 17
    assert q.unresolved == 4
    assert q.coverage == pytest.approx(13 / 17)
    assert q.needs_ocr is False
    assert page.text == "Hello world\nA B"


def test_unknown_font_resource_glyphs_are_counted_unresolved() -> None:
    w = PdfWriter()
    content = (b"BT /F1 12 Tf 72 700 Td (abc) Tj ET\n"
               b"BT /F9 12 Tf 72 650 Td (xyz) Tj ET\n")  # /F9 is not in the resources
    page = page_of(content, {"F1": mono_font(w)}, w=w)
    assert (page.quality.glyphs, page.quality.unresolved) == (6, 3)
    assert page.quality.coverage == pytest.approx(0.5)
    assert page.text == "abc"
    assert any("F9" in p for p in page.problems)


def test_fully_resolved_page() -> None:
    w = PdfWriter()
    page = page_of(b"BT /F1 12 Tf 72 700 Td [(Fully) -300 (decoded)] TJ ET", {"F1": mono_font(w)}, w=w)
    assert page.quality == pipeline.Quality(glyphs=12, unresolved=0, coverage=1.0, needs_ocr=False)


def test_mostly_unresolved_page_needs_ocr() -> None:
    # Beyond R7 (params.ocr_coverage): a text layer below the threshold is flagged too.
    w = PdfWriter()
    page = page_of(b"BT /F1 12 Tf 72 700 Td (abccbc) Tj ET", {"F1": _type3_shapes(w)}, w=w)
    assert (page.quality.glyphs, page.quality.unresolved) == (6, 5)
    assert page.quality.coverage == pytest.approx(1 / 6)
    assert page.quality.coverage < pipeline.DEFAULT_PARAMS.ocr_coverage
    assert page.quality.needs_ocr is True


@pytest.mark.parametrize("content", [
    b"q 100 0 0 100 0 0 cm /Im1 Do Q",  # an image XObject, the scan
    b"0 0 m 100 100 l S 10 10 50 50 re f",  # paths only
    b"q BI /W 2 /H 2 /CS /G /BPC 8 ID \x00\xff\xff\x00 EI Q",  # an inline image
    b"BT /F1 12 Tf 72 700 Td ET",  # a text object that shows nothing
    b"BT /F1 12 Tf 72 700 Td () Tj ET",  # an empty string
    b"",  # empty content stream
], ids=["image", "paths", "inline-image", "no-show", "empty-string", "empty"])
def test_page_without_glyphs_has_no_coverage_and_needs_ocr(content: bytes) -> None:
    w = PdfWriter()
    page = page_of(content, {"F1": mono_font(w)}, {"Im1": _image(w)}, w=w)
    assert page.text == ""
    assert page.quality.glyphs == 0
    assert page.quality.unresolved == 0
    assert page.quality.coverage is None
    assert page.quality.needs_ocr is True


def test_page_without_contents_entry_needs_ocr() -> None:
    w = PdfWriter()
    w.add_page(None)
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert page.text == ""
    assert page.quality.coverage is None
    assert page.quality.needs_ocr is True


@pytest.mark.parametrize("mode", [3, 7])
def test_invisible_ocr_layer_is_extracted_and_counted(mode: int) -> None:
    # A scanned page with its OCR text layer drawn invisibly on top of the image.
    w = PdfWriter()
    content = (b"q 612 0 0 792 0 0 cm /Im1 Do Q\n"
               b"BT /F1 12 Tf %d Tr 72 700 Td (Scanned words) Tj ET" % mode)
    page = page_of(content, {"F1": mono_font(w)}, {"Im1": _image(w)}, w=w)
    assert page.text == "Scanned words"
    assert page.quality.glyphs == len("Scanned words")
    assert page.quality.coverage == 1.0
    assert page.quality.needs_ocr is False
    assert {g.render_mode for g in page.glyphs} == {mode}


def test_render_mode_is_recorded_per_glyph() -> None:
    w = PdfWriter()
    page = page_of(b"BT /F1 12 Tf 72 700 Td (ab) Tj 3 Tr (cd) Tj 0 Tr (ef) Tj ET", {"F1": mono_font(w)}, w=w)
    assert [g.render_mode for g in page.glyphs] == [0, 0, 3, 3, 0, 0]
    assert page.text == "abcdef"
    assert page.quality.glyphs == 6


def test_text_drawn_only_through_a_form_counts() -> None:
    # Quality measures the page text, which includes forms (R2, R9): a page whose
    # text sits in a form is not an image scan.
    w = PdfWriter()
    f1 = mono_font(w)
    form = w.form_xobject(b"BT /F1 12 Tf 72 700 Td (Form text) Tj ET", resources={"Font": {"F1": f1}})
    page = page_of(b"/Fm Do", {"F1": f1}, {"Fm": form}, w=w)
    assert page.text == "Form text"
    assert page.quality.glyphs == len("Form text")
    assert page.quality.coverage == 1.0
    assert page.quality.needs_ocr is False


def test_quality_is_per_page() -> None:
    w = PdfWriter()
    res = {"Font": {"F1": mono_font(w), "F2": _type3_shapes(w)}}
    w.add_page(b"BT /F1 12 Tf 72 700 Td (abcd) Tj ET", resources=res)
    w.add_page(b"BT /F2 12 Tf 72 700 Td (abcd) Tj ET", resources=res)
    w.add_page(b"0 0 m 10 10 l S", resources=res)
    q1, q2, q3 = (p.quality for p in pipeline.extract(w.to_bytes()).pages)
    assert (q1.glyphs, q1.unresolved, q1.coverage) == (4, 0, 1.0)
    assert (q2.glyphs, q2.unresolved, q2.coverage) == (4, 2, 0.5)
    assert (q3.glyphs, q3.coverage, q3.needs_ocr) == (0, None, True)
