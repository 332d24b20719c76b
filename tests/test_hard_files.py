"""R17 hard files: encryption, not-a-PDF input, inline images whose data contains
"EI", unknown fonts, bad operators, corrupt streams, image-only pages. Damage
loses only what it damages, and what was skipped is reported in page.problems.
"""
from __future__ import annotations

import base64
import re
import zlib
from pathlib import Path

import pytest

from pdfindex import pipeline
from tests.builders import font_resources, mono_font, one_font_pdf, text_line
from tests.pdfwriter import Name, PdfWriter

METHODS = ["RC4-40", "RC4-128", "AES-128"]
SECRET = text_line(72, 700, b"(Secret text) Tj") + text_line(72, 680, b"[(second)-400(line)] TJ")


def _encrypted(method: str, user: str = "userpw", owner: str = "ownerpw") -> bytes:
    w = PdfWriter()
    w.encrypt(user, owner, method=method)  # type: ignore[arg-type]
    return one_font_pdf(SECRET, writer=w)


# ---- encryption ------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("password", ["userpw", "ownerpw"])
def test_encrypted_file_opens_with_user_or_owner_password(method: str, password: str) -> None:
    doc = pipeline.extract(_encrypted(method), password=password)
    assert doc.encrypted
    assert doc.pages[0].text == "Secret text\nsecond line"
    assert doc.pages[0].problems == []


@pytest.mark.parametrize("method", METHODS)
def test_empty_user_password_opens_without_a_password(method: str) -> None:
    doc = pipeline.extract(_encrypted(method, user=""))
    assert doc.encrypted
    assert doc.pages[0].text == "Secret text\nsecond line"


@pytest.mark.parametrize("method", METHODS)
def test_missing_password_is_a_password_error_naming_the_file(method: str, tmp_path: Path) -> None:
    path = tmp_path / "locked-report.pdf"
    path.write_bytes(_encrypted(method))
    with pytest.raises(pipeline.PasswordError) as info:
        pipeline.extract(path)
    assert info.value.missing is True
    assert "locked-report.pdf" in str(info.value)
    assert isinstance(info.value, pipeline.ExtractionError)


@pytest.mark.parametrize("method", METHODS)
def test_wrong_password_is_a_password_error_not_missing(method: str, tmp_path: Path) -> None:
    path = tmp_path / "locked.pdf"
    path.write_bytes(_encrypted(method))
    with pytest.raises(pipeline.PasswordError) as info:
        pipeline.extract(path, password="not-the-password")
    assert info.value.missing is False
    assert "locked.pdf" in str(info.value)


# ---- not a PDF ---------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    b"Hello, this is a plain text file.\n",
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64)),
    b"PK\x03\x04" + b"\x00" * 100,
    b"",
])
def test_not_a_pdf_raises_not_a_pdf_error(data: bytes, tmp_path: Path) -> None:
    with pytest.raises(pipeline.NotAPdfError):
        pipeline.extract(data)
    path = tmp_path / "notes.pdf"
    path.write_bytes(data)
    with pytest.raises(pipeline.NotAPdfError) as info:
        pipeline.extract(path)
    assert "notes.pdf" in str(info.value)


def test_header_only_is_not_a_pdf() -> None:
    with pytest.raises(pipeline.NotAPdfError):
        pipeline.extract(b"%PDF-1.7\n%%EOF\n")


# ---- inline images whose data contains "EI" --------------------------------------

BEFORE = text_line(72, 700, b"(Before image) Tj")
AFTER = text_line(72, 600, b"(After image) Tj")
# Bytes that would read as a text-showing operation if the image ended too early.
DECOY = b"BT /F1 10 Tf 72 500 Td (INVENTED) Tj ET"


def _inline_page(image: bytes) -> pipeline.Page:
    content = BEFORE + b"q\n" + image + b"\nQ\n" + AFTER  # no cm: a decoy would be visible
    return pipeline.extract(one_font_pdf(content)).pages[0]


def _assert_text_once(page: pipeline.Page) -> None:
    assert page.text == "Before image\nAfter image"
    assert page.quality.glyphs == len("Before image") + len("After image")
    assert "INVENTED" not in page.text


def test_inline_image_with_length_and_ei_inside_data() -> None:
    data = b"\x80\x81EI \x82\x83EI\n\x84" + b"EI " + DECOY + b"\nEI\n\xfe\xff"
    image = b"BI /W 4 /H 4 /BPC 8 /CS /G /F /Fl /L %d ID " % len(data) + data + b" EI"
    _assert_text_once(_inline_page(image))


def test_inline_image_raw_data_length_from_geometry() -> None:
    # No filter: W × H × components × BPC gives 2 × 40 × 1 × 8 bits = 80 bytes.
    data = (b"\x00\x01EI \x02\x03EI\n\x04" + b"EI " + DECOY).ljust(80, b"\xaa")
    assert len(data) == 80
    image = b"BI /W 2 /H 40 /BPC 8 /CS /G ID " + data + b"\nEI"
    _assert_text_once(_inline_page(image))


def test_inline_image_rgb_raw_data_length_from_geometry() -> None:
    data = (b"EI\n\xff\x00EI \x10" + b"EI\n" + DECOY).ljust(3 * 4 * 5, b"\x7f")
    image = b"BI /W 4 /H 5 /BPC 8 /CS /RGB ID " + data + b" EI"
    _assert_text_once(_inline_page(image))


def test_inline_image_flate_data_containing_ei_end_is_searched() -> None:
    # A stored (level 0) deflate stream keeps the raw bytes, so the filtered data
    # really contains "EI " and "EI\n" followed by more binary data.
    raw = b"\x90\x91EI \x92\x93\x94EI\n\x95\x96\x97" * 4 + bytes(range(128, 256))
    data = zlib.compress(raw, 0)
    assert b"EI " in data and b"EI\n" in data
    image = b"BI /W 8 /H 8 /BPC 8 /CS /G /F /Fl ID " + data + b"\nEI"
    _assert_text_once(_inline_page(image))


def test_inline_image_ascii_hex_filter() -> None:
    data = bytes(range(256)).hex().upper().encode() + b">"
    image = b"BI /W 16 /H 16 /BPC 8 /CS /G /F /AHx ID " + data + b"\nEI"
    _assert_text_once(_inline_page(image))


def test_inline_image_ascii85_data_containing_ei_end_is_searched() -> None:
    # ASCII85 data is printable and may contain whitespace anywhere: here the
    # encoded data has "EI " and "EI\n" inside (whitespace is ignored by the
    # decoder), followed by more printable data; only "~>" ends it.
    encoded = base64.a85encode(b"\x10\xd7\x3e\x00" * 2, adobe=False)
    data = b"EI EI\n" + encoded + b"~>"
    base64.a85decode(data[:-2].replace(b" ", b"").replace(b"\n", b""), adobe=False)  # valid
    image = b"BI /W 4 /H 3 /BPC 8 /CS /G /F /A85 ID " + data + b"\nEI"
    page = _inline_page(image)
    _assert_text_once(page)
    assert page.problems == []  # a valid image: nothing was skipped


def test_inline_image_ascii85_data_that_reads_like_content_invents_no_text() -> None:
    # Every character of "EI BT /F1 ... (INVENTED) Tj ET" is a valid ASCII85 digit
    # ('!'..'u') or ignored whitespace: this is one valid ASCII85 stream.
    data = b"EI " + DECOY + b"\n~>"
    base64.a85decode(data[:-2].replace(b" ", b"").replace(b"\n", b""), adobe=False)  # valid
    image = b"BI /W 5 /H 5 /BPC 8 /CS /G /F /A85 ID " + data + b"\nEI"
    page = _inline_page(image)
    assert "INVENTED" not in page.text
    _assert_text_once(page)


# ---- damaged fonts and operators ---------------------------------------------------

def test_unknown_font_resource_loses_only_its_own_text() -> None:
    content = (text_line(72, 700, b"(Good text) Tj")
               + b"BT /F9 10 Tf 72 680 Td (Lost) Tj ET\n"
               + text_line(72, 660, b"(More good) Tj"))
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    lines = [line.strip() for line in page.text.split("\n") if line.strip()]
    assert lines == ["Good text", "More good"]
    assert page.quality.unresolved == len("Lost")
    assert page.quality.glyphs == len("Good text") + len("Lost") + len("More good")
    assert any("F9" in p for p in page.problems)


def test_unknown_font_mid_line_keeps_surrounding_text() -> None:
    content = b"BT /F1 10 Tf 72 700 Td (abc) Tj /F9 10 Tf (xyz) Tj /F1 10 Tf (def) Tj ET"
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    # R6: the unresolved glyphs stand as a space; nothing like "(cid:..)" appears.
    assert page.text.split() == ["abc", "def"]
    assert page.quality.unresolved == 3
    assert any("F9" in p for p in page.problems)


def test_operator_with_wrong_operand_types_is_skipped() -> None:
    content = (b"BT /F1 10 Tf 72 700 Td (Before) Tj (abc) 12 Tf "
               b"0 -20 Td (After) Tj ET")
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    assert page.text == "Before\nAfter"
    assert any("Tf" in p for p in page.problems)


def test_operator_with_too_few_operands_is_skipped() -> None:
    content = b"BT /F1 10 Tf 72 700 Td (Before) Tj -20 Td 0 -20 Td (After) Tj ET"
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    assert page.text == "Before\nAfter"
    assert any("Td" in p for p in page.problems)


def test_show_operator_without_operand_and_bad_cm_are_skipped() -> None:
    content = (b"BT /F1 10 Tf 72 700 Td (Before) Tj Tj ET 1 0 0 cm (x) 0 0 1 0 0 cm "
               b"BT /F1 10 Tf 72 680 Td (After) Tj ET")
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    assert page.text == "Before\nAfter"
    assert any("Tj" in p for p in page.problems)
    assert any("cm" in p for p in page.problems)


def test_tj_with_a_number_instead_of_an_array() -> None:
    content = b"BT /F1 10 Tf 72 700 Td (Before) Tj 5 TJ 0 -20 Td (After) Tj ET"
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    assert page.text == "Before\nAfter"
    assert any("TJ" in p for p in page.problems)


def test_font_resource_that_is_not_a_font_dictionary() -> None:
    w = PdfWriter()
    good = mono_font(w)
    bad = w.add(42)
    content = (text_line(72, 700, b"(Good) Tj") + b"BT /F2 10 Tf 72 680 Td (Gone) Tj ET\n"
               + text_line(72, 660, b"(Still good) Tj"))
    w.add_page(content, resources={"Font": {"F1": good, "F2": bad}})
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert [ln for ln in page.text.split("\n") if ln.strip()] == ["Good", "Still good"]
    assert page.quality.unresolved == len("Gone")
    assert any("F2" in p for p in page.problems)


# ---- damaged streams -----------------------------------------------------------

def _three_pages(middle: bytes | list[bytes]) -> bytes:
    w = PdfWriter()
    res = font_resources(mono_font(w))
    w.add_page(text_line(72, 700, b"(Page one) Tj"), resources=res)
    if isinstance(middle, list):
        w.add_page(middle, resources=res)  # type: ignore[arg-type]
    else:
        w.add_page(w.add_stream(middle, {"Filter": Name("FlateDecode")}), resources=res)
    w.add_page(text_line(72, 700, b"(Page three) Tj"), resources=res)
    return w.to_bytes()


@pytest.mark.parametrize("garbage", [
    b"this is not deflate data at all \x00\x01\x02",
    zlib.compress(text_line(72, 700, b"(Lost page) Tj"))[:-30] + b"\xde\xad\xbe\xef" * 8,
])
def test_corrupt_flate_content_on_one_page_does_not_stop_other_pages(garbage: bytes) -> None:
    doc = pipeline.extract(_three_pages(garbage))
    assert doc.page_count == 3
    assert doc.pages[0].text == "Page one"
    assert doc.pages[2].text == "Page three"
    assert "INVENTED" not in doc.pages[1].text
    assert doc.pages[1].problems  # the damage is reported
    assert doc.pages[0].problems == [] and doc.pages[2].problems == []


def test_corrupt_stream_in_contents_array_loses_only_that_stream() -> None:
    w = PdfWriter()
    res = font_resources(mono_font(w))
    good1 = w.add_stream(text_line(72, 700, b"(First part) Tj"))
    bad = w.add_stream(b"\x00garbage\xff" * 4, {"Filter": Name("FlateDecode")})
    good2 = w.add_stream(text_line(72, 680, b"(Last part) Tj"))
    w.add_page([good1, bad, good2], resources=res)
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert page.text == "First part\nLast part"
    assert page.problems


# ---- damaged file structure ----------------------------------------------------------

def _two_pages() -> bytes:
    w = PdfWriter()
    res = font_resources(mono_font(w))
    w.add_page(text_line(72, 700, b"(Page one) Tj"), resources=res)
    w.add_page(text_line(72, 700, b"(Page two) Tj"), resources=res)
    return w.to_bytes()


@pytest.mark.parametrize("damage", ["startxref", "shifted"])
def test_broken_xref_is_recovered(damage: str) -> None:
    data = _two_pages()
    if damage == "startxref":  # startxref points nowhere
        data = re.sub(rb"startxref\n\d+", b"startxref\n999999", data)
    else:  # junk after the header: every xref offset is off by 18 bytes
        data = data.replace(b"\n", b"\n% junk junk junk\n", 1)
    assert [p.text for p in pipeline.extract(data).pages] == ["Page one", "Page two"]


def test_file_truncated_before_xref_still_extracts() -> None:
    data = _two_pages()
    data = data[:data.index(b"xref\n")]
    assert [p.text for p in pipeline.extract(data).pages] == ["Page one", "Page two"]


def test_unbalanced_delimiters_and_unknown_operators_lose_only_themselves() -> None:
    content = (text_line(72, 700, b"(Before) Tj")
               + b"] >> foo 1 2 bar\n"
               + text_line(72, 680, b"(Middle) Tj")
               + text_line(72, 660, b"(After) Tj"))
    page = pipeline.extract(one_font_pdf(content)).pages[0]
    assert page.text == "Before\nMiddle\nAfter"
    problems = " | ".join(page.problems)
    assert "]" in problems and ">>" in problems
    assert "foo" in problems and "bar" in problems


# ---- pages without text ------------------------------------------------------------

@pytest.mark.parametrize("content", [
    b"q 0.5 g 72 72 468 648 re f Q",
    b"q 200 0 0 100 72 600 cm BI /W 2 /H 2 /BPC 8 /CS /G ID \x00\xff\xff\x00 EI Q",
    b"",
    None,
])
def test_page_without_text_operators_is_empty_and_needs_ocr(content: bytes | None) -> None:
    page = pipeline.extract(one_font_pdf(content)).pages[0]  # type: ignore[arg-type]
    assert page.text == ""
    assert page.quality.glyphs == 0
    assert page.quality.coverage is None
    assert page.quality.needs_ocr is True


def test_image_xobject_page_needs_ocr() -> None:
    w = PdfWriter()
    img = w.add_stream(b"\x80" * 16, {"Type": Name("XObject"), "Subtype": Name("Image"), "Width": 4,
                                       "Height": 4, "ColorSpace": Name("DeviceGray"),
                                       "BitsPerComponent": 8})
    w.add_page(b"q 612 0 0 792 0 0 cm /Im1 Do Q", resources={"XObject": {"Im1": img}})
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert page.text == "" and page.quality.needs_ocr is True and page.quality.coverage is None


# ---- everything skipped is reported ------------------------------------------------

def test_every_skipped_thing_is_reported() -> None:
    w = PdfWriter()
    res = font_resources(mono_font(w))
    s1 = w.add_stream(b"BT /F1 10 Tf 72 700 Td (Kept one) Tj /F7 10 Tf (zz) Tj ET\n"
                      b"BT /F1 10 Tf 72 680 Td (abc) 12 Tf (Kept two) Tj ET\n"
                      b"BT /F1 10 Tf 72 660 Td 5 Tc Tc Tz (Kept three) Tj ET\n")
    s2 = w.add_stream(b"not flate", {"Filter": Name("FlateDecode")})
    w.add_page([s1, s2], resources=res)
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert [ln for ln in page.text.split("\n") if ln.strip()] == ["Kept one", "Kept two", "Kept three"]
    problems = " | ".join(page.problems)
    assert "F7" in problems  # unknown font
    assert "Tf" in problems  # wrong operand type
    assert "Tz" in problems or "Tc" in problems  # too few operands
    assert len(page.problems) >= 4  # ... and the unreadable second stream


def test_truncated_flate_keeps_everything_before_the_cut() -> None:
    # An interrupted download cuts a large content stream: what was decoded before
    # the cut is kept (pdfminer.six's own salvage was quadratic and kept nothing).
    from pdfindex.pipeline.streams import salvage_flate

    lines = b"".join(b"BT /F1 10 Tf 72 %d Td (Line %d) Tj ET\n" % (700 - i % 600, i) for i in range(20000))
    packed = zlib.compress(lines)
    salvaged = salvage_flate(packed[: len(packed) // 2])
    assert len(salvaged) > len(lines) // 3
    assert lines.startswith(salvaged)
    assert salvage_flate(packed) == lines
