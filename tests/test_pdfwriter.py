"""Sanity tests for tests/pdfwriter.py, checked with pdfminer.six's low-level parser.

The writer builds every fixture in the suite, so it must itself be proven to
emit what pdfminer (our parsing layer) reads back: correct xref offsets,
page-tree inheritance, filters, and all three Standard-handler encryptions.
"""

from __future__ import annotations

import io
import re
from typing import Any, Literal

import pytest
from pdfminer.cmapdb import CMapParser, FileUnicodeMap
from pdfminer.pdfdocument import PDFDocument, PDFPasswordIncorrect
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import PDFStream, resolve1
from pdfminer.psparser import LIT

from tests.pdfwriter import HexStr, Name, PdfWriter, Raw, Ref, tounicode_cmap


def _open(data: bytes, password: str = "") -> tuple[PDFDocument, list[PDFPage]]:
    doc = PDFDocument(PDFParser(io.BytesIO(data)), password=password)
    return doc, list(PDFPage.create_pages(doc))


def _content(page: PDFPage) -> bytes:
    return b"".join(resolve1(s).get_data() for s in page.contents)


def test_serialiser_values() -> None:
    w = PdfWriter()
    assert w.serialize(Name("F1")) == b"/F1"
    assert w.serialize(Name("A B/(x)#")) == b"/A#20B#2F#28x#29#23"
    assert w.serialize(b"a(b)c\\d\re") == b"(a\\(b\\)c\\\\d\\re)"
    assert w.serialize(HexStr(b"\x00\xff")) == b"<00FF>"
    assert w.serialize([1, -2.5, 0.001, 1e-7, 3.0, -0.0, True, None]) == \
        b"[1 -2.5 0.001 0.0000001 3 0 true null]"
    assert w.serialize({"Type": Name("Page"), "K": [Ref(3)], "R": Raw(b"<<>>")}) == \
        b"<</Type /Page /K [3 0 R] /R <<>>>>"
    with pytest.raises(TypeError):
        w.serialize("ambiguous")


def test_xref_offsets_and_trailer() -> None:
    w = PdfWriter()
    w.set_info({"Title": b"T(1)"})
    w.add_page(b"BT ET")
    w.add_page([b"q", b"Q"])
    data = w.to_bytes()
    assert data.startswith(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n") and data.endswith(b"%%EOF\n")
    startxref = int(re.search(rb"startxref\n(\d+)\n", data).group(1))  # type: ignore[union-attr]
    assert data[startxref:startxref + 5] == b"xref\n"
    entries = re.findall(rb"(\d{10}) (\d{5}) ([nf]) \n", data[startxref:])
    assert len(entries[0][0] + b" " + entries[0][1] + b" f \n") == 20
    for num, (off, _, kind) in enumerate(entries):
        if kind == b"n":
            assert data[int(off):].startswith(b"%d 0 obj\n" % num)
    assert b"/Size %d" % len(entries) in data
    doc, pages = _open(data)
    assert len(pages) == 2
    assert resolve1(doc.info[0]["Title"]) == b"T(1)"
    assert [len(p.contents) for p in pages] == [1, 2]
    assert _content(pages[1]) == b"qQ"


def test_page_tree_inheritance_and_nesting() -> None:
    w = PdfWriter(pages_attrs={"MediaBox": [0, 0, 500, 700], "CropBox": [10, 10, 490, 690],
                               "Rotate": 90})
    w.add_page(b"", media_box=None)  # inherits everything from /Pages
    w.add_page(b"", media_box=(0, 0, 200, 200), crop_box=(5, 5, 100, 100), rotate=0)
    w.page_group("g1", {"CropBox": [20, 20, 300, 300]})  # kid #3 of the root
    w.add_page(b"", media_box=None, parent="g1")  # CropBox from g1, MediaBox from root
    w.add_page(b"", media_box=None, parent="g2")  # group created lazily, no own attrs
    doc, pages = _open(w.to_bytes())
    assert len(pages) == 4
    assert [p.mediabox for p in pages] == [(0, 0, 500, 700), (0, 0, 200, 200),
                                           (0, 0, 500, 700), (0, 0, 500, 700)]
    assert [p.cropbox for p in pages] == [(10, 10, 490, 690), (5, 5, 100, 100),
                                          (20, 20, 300, 300), (10, 10, 490, 690)]
    assert [p.rotate for p in pages] == [90, 0, 90, 90]
    root = resolve1(doc.catalog["Pages"])
    assert root["Count"] == 4 and len(root["Kids"]) == 4
    g1 = resolve1(root["Kids"][2])
    assert g1["Type"] is LIT("Pages") and g1["Count"] == 1
    assert resolve1(g1["Kids"][0])["Parent"].objid == root["Kids"][2].objid


@pytest.mark.parametrize("filt", [None, "FlateDecode", "ASCIIHexDecode", "ASCII85Decode",
                                  ["ASCII85Decode", "FlateDecode"],
                                  ["ASCIIHexDecode", "ASCII85Decode", "FlateDecode"]])
def test_stream_filters_round_trip(filt: Any) -> None:
    payload = bytes(range(256)) + b"BT /F1 12 Tf (Hello) Tj ET\n" + b"\x00" * 40
    w = PdfWriter()
    ref = w.add_stream(payload, {"Type": Name("Test")}, filter=filt)
    w.add_page(payload, filter=filt)
    doc, pages = _open(w.to_bytes())
    stream = doc.getobj(ref.num)
    assert isinstance(stream, PDFStream)
    assert stream.get_data() == payload
    assert _content(pages[0]) == payload
    if filt is not None:
        names = [filt] if isinstance(filt, str) else filt
        assert [f.name for f, _ in stream.get_filters()] == names
        assert stream.get_rawdata() != payload


def test_verbatim_length_and_filter_escape_hatches() -> None:
    w = PdfWriter()
    ref = w.add_stream(b"not flate", {"Filter": Name("FlateDecode"), "Length": 3})
    data = w.to_bytes()
    assert b"/Filter /FlateDecode /Length 3>>\nstream\nnot flate\nendstream" in data
    assert ref.num == 3


@pytest.mark.parametrize("method", ["RC4-40", "RC4-128", "AES-128"])
def test_encryption_round_trip(method: Literal["RC4-40", "RC4-128", "AES-128"]) -> None:
    content = b"BT /F1 12 Tf 72 700 Td (Secret \\(text\\)) Tj ET"
    tu = tounicode_cmap([(b"\x01", "A")])
    w = PdfWriter()
    font = w.type0_font("Test", to_unicode=tu, ordering=("Adobe", "Japan1", 6))
    w.set_info({"Title": b"Confidential", "Subject": HexStr(b"\x00\x01hex")})
    w.add_page([content, b"% second"], resources={"Font": {"F1": font}})
    enc_ref = w.encrypt("user", "owner", method=method, permissions=-44)
    data = w.to_bytes()
    assert data == w.to_bytes()  # deterministic, even with AES IVs
    assert b"Secret" not in data and b"Confidential" not in data and b"Japan1" not in data
    expect_v = {"RC4-40": (1, 2), "RC4-128": (2, 3), "AES-128": (4, 4)}[method]
    for pw in ("user", "owner"):
        doc, pages = _open(data, pw)
        assert doc.encryption is not None
        enc = resolve1(doc.encryption[1])
        assert (enc["V"], enc["R"], enc["P"]) == (*expect_v, -44)
        assert doc.xrefs[0].get_trailer()["Encrypt"].objid == enc_ref.num
        assert _content(pages[0]) == content + b"% second"
        assert resolve1(doc.info[0]["Title"]) == b"Confidential"
        assert resolve1(doc.info[0]["Subject"]) == b"\x00\x01hex"
        f = resolve1(pages[0].resources["Font"])["F1"]
        cid = resolve1(resolve1(resolve1(f)["DescendantFonts"])[0])
        assert resolve1(cid["CIDSystemInfo"])["Ordering"] == b"Japan1"
        assert resolve1(resolve1(f)["ToUnicode"]).get_data() == tu
        if method == "AES-128":
            assert resolve1(enc["CF"])["StdCF"]["CFM"] is LIT("AESV2")
    with pytest.raises(PDFPasswordIncorrect):
        _open(data, "wrong")


def test_empty_user_password_opens_without_password() -> None:
    w = PdfWriter()
    w.add_page(b"BT (x) Tj ET")
    w.encrypt("", "owner", method="AES-128")
    _, pages = _open(w.to_bytes())
    assert _content(pages[0]) == b"BT (x) Tj ET"


def test_tounicode_cmap_wrong_counts_and_raw_destinations() -> None:
    prog = tounicode_cmap(
        [(b"\x01", "A"), (b"\x02", b"\xd8\x3d\xde\x00"), (b"\x03", b"\x00f\x00i")],
        bfranges=[(b"\x10", b"\x12", "a"), (b"\x20", b"\x21", ["X", b"\x00Y\x00Z"])],
        raw_counts={"bfchar": 2})
    assert b"2 beginbfchar\n<01> <0041>\n<02> <D83DDE00>\n<03> <00660069>\nendbfchar" in prog
    assert b"<20> <21> [<0058> <0059005A>]" in prog
    cmap = FileUnicodeMap()
    CMapParser(cmap, io.BytesIO(prog)).run()
    got = {code: cmap.get_unichr(code) for code in (1, 2, 3, 0x10, 0x12, 0x20, 0x21)}
    assert got == {1: "A", 2: "\U0001f600", 3: "fi", 0x10: "a", 0x12: "c", 0x20: "X", 0x21: "YZ"}


def test_fonts_and_self_referencing_form() -> None:
    w = PdfWriter()
    std = w.standard_font("Times-Roman", {"BaseEncoding": "WinAnsiEncoding",
                                          "Differences": [128, "Euro"]})
    tt = w.simple_font("TrueType", "Foo", 32, [250, 0], font_file=b"\x00\x01\x00\x00fake",
                       descriptor={"Ascent": 0, "FontBBox": (0, 0, 0, 0)})
    t1 = w.simple_font("Type1", "Bar", 65, [500], font_file=b"%!PS clear eexec\r\nBINARY")
    cmap = b"%!PS-Adobe-3.0 Resource-CMap\n...custom program...\n"
    t0 = w.type0_font("Baz", encoding=cmap, cid_subtype="CIDFontType0", w=[1, [500, 600]],
                      dw2=(880, -1000), w2=[1, 1, -500, 250, 880], cmap_name="My-V", wmode=1)
    t3 = w.type3_font({"a": b"1000 0 0 0 750 750 d1 0 0 750 750 re f"}, [97, "a"], 97, [1000])
    form = w.reserve()
    w.form_xobject(b"/Fm0 Do", bbox=None, resources={"XObject": {"Fm0": form}}, ref=form)
    w.add_page(b"/Fm0 Do", resources={"Font": {"F1": std, "F2": tt, "F3": t1, "F4": t0, "F5": t3},
                                      "XObject": {"Fm0": form}})
    _doc, pages = _open(w.to_bytes())
    fonts = {k: resolve1(v) for k, v in resolve1(pages[0].resources["Font"]).items()}
    assert "Widths" not in fonts["F1"] and "FontDescriptor" not in fonts["F1"]
    assert resolve1(fonts["F1"]["Encoding"])["Differences"] == [128, LIT("Euro")]
    assert fonts["F2"]["LastChar"] == 33
    desc = resolve1(fonts["F2"]["FontDescriptor"])
    assert desc["Ascent"] == 0 and desc["FontBBox"] == [0, 0, 0, 0]
    ff2 = resolve1(desc["FontFile2"])
    assert ff2.get_data() == b"\x00\x01\x00\x00fake" and ff2["Length1"] == 8
    ff = resolve1(resolve1(fonts["F3"]["FontDescriptor"])["FontFile"])
    assert (ff["Length1"], ff["Length2"], ff["Length3"]) == (18, 6, 0)
    enc = resolve1(fonts["F4"]["Encoding"])
    assert enc.get_data() == cmap and enc["CMapName"] is LIT("My-V") and enc["WMode"] == 1
    cid = resolve1(fonts["F4"]["DescendantFonts"][0])
    assert cid["Subtype"] is LIT("CIDFontType0") and "CIDToGIDMap" not in cid
    assert cid["W"] == [1, [500, 600]] and cid["DW2"] == [880, -1000]
    assert resolve1(fonts["F5"]["CharProcs"]["a"]).get_data().endswith(b"re f")
    xo = resolve1(pages[0].resources["XObject"])["Fm0"]
    fm = resolve1(xo)
    assert "BBox" not in fm and resolve1(fm["Resources"])["XObject"]["Fm0"].objid == xo.objid


def test_unset_reserved_object_is_an_error() -> None:
    w = PdfWriter()
    w.reserve()
    with pytest.raises(ValueError, match="never set"):
        w.to_bytes()
