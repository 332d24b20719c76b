"""R14 order: reading-flow text keeps content stream order (forms spliced in at
their Do); no multi-column or top-down sorting. A /Contents array is one
stream (§7.8.2): it may be split anywhere between tokens.
"""
from __future__ import annotations

import zlib

from pdfindex import pipeline
from tests.builders import font_resources, mono_font, one_font_pdf, text_line
from tests.pdfwriter import Name, PdfWriter


def _text(content: bytes | list[bytes]) -> str:
    return pipeline.extract(one_font_pdf(content)).pages[0].text


def test_text_drawn_bottom_up_comes_out_in_stream_order() -> None:
    content = (text_line(72, 100, b"(First drawn lowest) Tj")
               + text_line(72, 400, b"(Second drawn middle) Tj")
               + text_line(72, 700, b"(Third drawn top) Tj"))
    assert _text(content) == "First drawn lowest\nSecond drawn middle\nThird drawn top"


def test_text_drawn_right_to_left_on_one_baseline_keeps_stream_order() -> None:
    # Three words on one baseline drawn from the right: stream order, not x order.
    content = (text_line(400, 500, b"(alpha) Tj") + text_line(250, 500, b"(beta) Tj")
               + text_line(100, 500, b"(gamma) Tj"))
    assert _text(content).split() == ["alpha", "beta", "gamma"]


def _column(x: int, words: list[bytes]) -> bytes:
    return b"".join(text_line(x, 700 - 14 * i, b"(%s) Tj" % word) for i, word in enumerate(words))


LEFT_COL = [b"Left one", b"Left two", b"Left three"]
RIGHT_COL = [b"Right one", b"Right two", b"Right three"]


def test_two_columns_drawn_column_by_column_keep_that_order() -> None:
    text = _text(_column(72, LEFT_COL) + _column(320, RIGHT_COL))
    assert text == "Left one\nLeft two\nLeft three\nRight one\nRight two\nRight three"


def test_two_columns_drawn_right_column_first_keep_that_order() -> None:
    text = _text(_column(320, RIGHT_COL) + _column(72, LEFT_COL))
    assert text == "Right one\nRight two\nRight three\nLeft one\nLeft two\nLeft three"


def test_form_text_is_spliced_in_at_its_do() -> None:
    w = PdfWriter()
    font = mono_font(w)
    form = w.form_xobject(text_line(72, 300, b"(From the form) Tj"), resources=font_resources(font))
    content = (text_line(72, 700, b"(Before the form) Tj") + b"/Fm1 Do\n"
               + text_line(72, 600, b"(After the form) Tj"))
    res = font_resources(font)
    res["XObject"] = {"Fm1": form}
    w.add_page(content, resources=res)
    text = pipeline.extract(w.to_bytes()).pages[0].text
    assert text == "Before the form\nFrom the form\nAfter the form"


# ---- /Contents arrays ------------------------------------------------------------

ONE = (b"BT /F1 10 Tf 14 TL 72 700 Td (Hello) Tj ( World) Tj T* (Second line) Tj "
       b"T* [(Third)-400(line)] TJ ET")
ONE_TEXT = "Hello World\nSecond line\nThird line"


def test_single_stream_reference() -> None:
    assert _text(ONE) == ONE_TEXT


def test_contents_split_between_operators_reads_as_one_stream() -> None:
    parts = [b"BT /F1 10 Tf 14 TL 72 700 Td (Hello) Tj",
             b"( World) Tj T* (Second line) Tj",
             b"T* [(Third)-400(line)] TJ ET"]
    assert _text(parts) == ONE_TEXT


def test_contents_split_between_operands_and_their_operator() -> None:
    # Streams end after the operands; the operator opens the next stream. The
    # font set in stream 1 is still in force in stream 3 (one text object).
    parts = [b"BT /F1 10", b"Tf 14 TL 72 700", b"Td (Hello) Tj ( World)",
             b"Tj T* (Second line) Tj T* [(Third)-400(line)]", b"TJ ET"]
    assert _text(parts) == ONE_TEXT


def test_contents_split_without_whitespace_at_the_boundary() -> None:
    # No trailing/leading whitespace: the stream boundary itself separates tokens.
    parts = [b"BT/F1 10 Tf 14 TL 72 700 Td(Hello)Tj", b"( World)Tj T*(Second line)Tj",
             b"T*[(Third)-400(line)]TJ ET"]
    assert _text(parts) == ONE_TEXT


def test_contents_array_with_mixed_filters_and_an_empty_stream() -> None:
    w = PdfWriter()
    res = font_resources(mono_font(w))
    s1 = w.add_stream(b"BT /F1 10 Tf 14 TL 72 700 Td (Hello) Tj", filter="FlateDecode")
    s2 = w.add_stream(b"")
    s3 = w.add_stream(b"( World) Tj T* (Second line) Tj", filter="ASCIIHexDecode")
    s4 = w.add_stream(zlib.compress(b"T* [(Third)-400(line)] TJ ET"),
                      {"Filter": Name("FlateDecode")})
    w.add_page([s1, s2, s3, s4], resources=res)
    assert pipeline.extract(w.to_bytes()).pages[0].text == ONE_TEXT


def test_graphics_state_carries_across_streams() -> None:
    # q in one stream, Q in another: the 10 pt size saved by q comes back after Q.
    parts = [b"BT /F1 10 Tf 72 700 Td (Saved) Tj ET q",
             b"BT /F1 30 Tf 72 650 Td (Other) Tj ET",
             b"Q BT 72 600 Td (Restored) Tj ET"]
    page = pipeline.extract(one_font_pdf(parts), keep_glyphs=True).pages[0]
    assert page.text == "Saved\nOther\nRestored"
    assert [g.size for g in page.glyphs if g.text == "R"] == [10]
