"""R4 decode chain, R5 CMap parsing, R6 unresolved glyphs.

Every font here is built so that the step under test gives a different answer from
the steps after it (a ToUnicode mapping differs from the /Encoding, a MacRoman code
differs from WinAnsi, ...), so a test passes only through the intended step.
"""
from __future__ import annotations

import gzip
import json
from importlib import resources
from typing import Any

import pytest

from pdfindex import pipeline
from tests.builders import mono_font, page_of
from tests.pdfwriter import Name, PdfWriter, Ref, cid_cmap, tounicode_cmap

GRIN = "\U0001F600"  # 😀
GRIN_UTF16 = b"\xd8\x3d\xde\x00"


def _show(w: PdfWriter, font: Ref, operand: bytes, op: bytes = b"Tj") -> pipeline.Page:
    return page_of(b"BT /F1 12 Tf 72 700 Td " + operand + b" " + op + b" ET", {"F1": font}, w=w)


def _texts(page: pipeline.Page) -> list[str]:
    return [g.text for g in page.glyphs]


# ---- R4 step 1: ToUnicode, and R5 CMap parsing --------------------------------------

def test_tounicode_wins_over_encoding_and_passes_silently_to_it() -> None:
    w = PdfWriter()
    font = mono_font(w, encoding={"BaseEncoding": "WinAnsiEncoding", "Differences": [65, "Z", "Y"]},
                     to_unicode=tounicode_cmap([(b"A", "Ж")]))
    page = _show(w, font, b"(ABC)")
    # A: ToUnicode (not the Differences' Z); B: not in ToUnicode, so the
    # Differences' Y; C: neither, so the base encoding.
    assert _texts(page) == ["Ж", "Y", "C"]
    assert page.text == "ЖYC"


@pytest.mark.parametrize("counts", [
    {"bfchar": 1, "bfrange": 1},  # too small
    {"bfchar": 0, "bfrange": 0},  # zero
    {"bfchar": 99, "bfrange": 40},  # too large
    {"codespace": 0, "bfchar": 2, "bfrange": 7},
])
def test_wrong_counts_before_sections_are_ignored(counts: dict[str, int]) -> None:
    cmap = tounicode_cmap([(b"A", "x"), (b"B", "y"), (b"C", "z")],
                          [(b"P", b"R", "p"), (b"U", b"V", "u")], raw_counts=counts)
    w = PdfWriter()
    page = _show(w, mono_font(w, to_unicode=cmap), b"(ABCPQRUV)")
    assert _texts(page) == list("xyzpqruv")


def test_surrogate_pair_destination_is_one_character() -> None:
    w = PdfWriter()
    page = _show(w, mono_font(w, to_unicode=tounicode_cmap([(b"\x01", GRIN_UTF16)])), b"<01>")
    assert _texts(page) == [GRIN]
    assert page.text == GRIN


def test_surrogate_pair_in_bfrange_increments_the_low_surrogate() -> None:
    w = PdfWriter()
    cmap = tounicode_cmap([], [(b"\x01", b"\x03", GRIN_UTF16)])
    page = _show(w, mono_font(w, to_unicode=cmap), b"<010203>")
    assert _texts(page) == ["\U0001F600", "\U0001F601", "\U0001F602"]


@pytest.mark.parametrize(("dst", "expected"), [
    (b"\x00f\x00i", "fi"),
    (b"\x00f\x00f\x00l", "ffl"),
    ("T\u0301", "T\u0301"),  # base letter + combining mark
])
def test_multi_character_destination_is_kept(dst: bytes | str, expected: str) -> None:
    w = PdfWriter()
    cmap = tounicode_cmap([(b"\x02", dst), (b"\x03", "x")])
    page = _show(w, mono_font(w, to_unicode=cmap), b"<0203>")
    assert _texts(page) == [expected, "x"]
    assert len(page.glyphs) == 2  # one glyph, several characters
    assert page.text == expected + "x"


def test_array_form_bfrange() -> None:
    w = PdfWriter()
    cmap = tounicode_cmap([], [(b"\x03", b"\x05", ["x", "y", b"\x00z\x00z"]), (b"\x10", b"\x12", "a")])
    page = _show(w, mono_font(w, to_unicode=cmap), b"<0304051011 12>")
    assert _texts(page) == ["x", "y", "zz", "a", "b", "c"]


def test_wide_bfrange_is_read_without_expanding_it() -> None:
    # The common identity ToUnicode of Type0 fonts: one range over all 65536 codes.
    w = PdfWriter()
    cmap = tounicode_cmap([], [(b"\x00\x00", b"\xff\xff", b"\x00\x00")], codespace=[(b"\x00\x00", b"\xff\xff")])
    font = w.type0_font(encoding="Identity-H", to_unicode=cmap)
    page = _show(w, font, b"<00414E2DFF21AC00>")
    assert _texts(page) == ["A", "\u4e2d", "\uff21", "\uac00"]


@pytest.mark.parametrize("filt", [
    "ASCIIHexDecode", "ASCII85Decode", "FlateDecode", ["ASCII85Decode", "FlateDecode"],
    ["ASCIIHexDecode", "FlateDecode"],
], ids=str)
def test_tounicode_stream_with_any_supported_filter(filt: Any) -> None:
    w = PdfWriter()
    cmap = tounicode_cmap([(b"A", "Ж"), (b"B", GRIN_UTF16)], [(b"a", b"c", "α")])
    page = _show(w, mono_font(w, to_unicode=cmap, to_unicode_filter=filt), b"(ABabc)")
    assert _texts(page) == ["Ж", GRIN, "α", "β", "γ"]


@pytest.mark.parametrize(("data", "extra"), [
    (b"garbage, not a CMap program", {}),
    (b"\x00\x01 not deflate data", {"Filter": Name("FlateDecode")}),
], ids=["not-a-cmap", "broken-filter"])
def test_damaged_tounicode_passes_silently_to_the_encoding(data: bytes, extra: dict[str, Any]) -> None:
    w = PdfWriter()
    font = mono_font(w, encoding={"Differences": [66, "Z"]}, font_attrs={"ToUnicode": w.add_stream(data, extra)})
    page = _show(w, font, b"(AB)")
    assert _texts(page) == ["A", "Z"]


# ---- codespace ranges of 1 to 4 bytes (embedded Type0 encoding CMap) ---------------

def _type0_embedded(w: PdfWriter, codespace: list[tuple[bytes, bytes]],
                    cidranges: list[tuple[bytes, bytes, int]],
                    bfchars: list[tuple[bytes, Any]], bfranges: list[Any] = []) -> Ref:  # noqa: B006
    enc = cid_cmap("TestMixed", codespace=codespace, cidranges=cidranges)
    return w.type0_font(encoding=enc, cmap_name="TestMixed", dw=500,
                        to_unicode=tounicode_cmap(bfchars, bfranges, codespace=codespace))


def test_codespace_one_and_two_bytes() -> None:
    w = PdfWriter()
    codespace = [(b"\x00", b"\x7f"), (b"\x80\x00", b"\xff\xff")]
    font = _type0_embedded(w, codespace, [(b"\x00", b"\x7f", 0), (b"\x80\x00", b"\x80\xff", 1000)],
                           [], [(b"A", b"Z", "A"), (b"\x80\x41", b"\x80\x43", "α")])
    page = _show(w, font, b"<418041428042>")
    assert _texts(page) == ["A", "α", "B", "β"]
    assert [g.nbytes for g in page.glyphs] == [1, 2, 1, 2]
    assert [g.code for g in page.glyphs] == [0x41, 0x8041, 0x42, 0x8042]


@pytest.mark.parametrize("n", [3, 4])
def test_codespace_with_three_and_four_byte_codes(n: int) -> None:
    w = PdfWriter()
    lead = b"\x81" + b"\x00" * (n - 2)
    codespace = [(b"\x00", b"\x7f"), (lead + b"\x00", lead + b"\xff")]
    font = _type0_embedded(w, codespace, [(b"\x00", b"\x7f", 0), (lead + b"\x00", lead + b"\xff", 700)],
                           [(b"A", "A"), (lead + b"B", "β"), (lead + b"C", "γ")])
    operand = b"<" + (b"A" + lead + b"B" + lead + b"C" + b"A").hex().encode() + b">"
    page = _show(w, font, operand)
    assert _texts(page) == ["A", "β", "γ", "A"]
    assert [g.nbytes for g in page.glyphs] == [1, n, n, 1]
    assert page.glyphs[1].code == int.from_bytes(lead + b"B", "big")


def test_bytes_matching_no_codespace_are_kept_as_unresolved_glyphs() -> None:
    w = PdfWriter()
    codespace = [(b"\x00", b"\x7f"), (b"\x80\x00", b"\x80\xff")]
    font = _type0_embedded(w, codespace, [(b"\x00", b"\x7f", 0), (b"\x80\x00", b"\x80\xff", 1000)],
                           [(b"A", "A"), (b"B", "B")])
    # 0x90 starts no codespace range: one glyph of the shortest code length.
    page = _show(w, font, b"<419042>")
    assert _texts(page) == ["A", "", "B"]
    assert page.glyphs[1].code == 0x90
    assert page.quality.glyphs == 3
    assert page.quality.unresolved == 1
    assert page.text == "A B"


def test_two_byte_codes_outside_codespace_are_counted_not_dropped() -> None:
    w = PdfWriter()
    codespace = [(b"\x00\x00", b"\x7f\xff")]
    font = _type0_embedded(w, codespace, [(b"\x00\x00", b"\x7f\xff", 0)], [],
                           [(b"\x00A", b"\x00Z", "A")])
    page = _show(w, font, b"<0041FFFF0042>")
    assert _texts(page) == ["A", "", "B"]
    assert [g.nbytes for g in page.glyphs] == [2, 2, 2]
    assert page.quality.glyphs == 3
    assert page.quality.unresolved == 1


# ---- R4 step 2 for Type0: predefined CMaps by name ------------------------------------

def _u16(s: str) -> bytes:
    return b"<" + s.encode("utf-16-be").hex().upper().encode() + b">"


@pytest.mark.parametrize(("cmap", "ordering", "text"), [
    ("UniGB-UCS2-H", ("Adobe", "GB1", 2), "中文"),
    ("UniJIS-UCS2-H", ("Adobe", "Japan1", 2), "日本"),
    ("UniKS-UCS2-H", ("Adobe", "Korea1", 1), "한글"),
])
def test_predefined_unicode_cmap_without_tounicode(cmap: str, ordering: tuple[str, str, int], text: str) -> None:
    w = PdfWriter()
    font = w.type0_font(base_font="CJK", encoding=cmap, cid_subtype="CIDFontType0", ordering=ordering)
    page = _show(w, font, _u16(text))
    assert _texts(page) == list(text)
    assert [g.nbytes for g in page.glyphs] == [2] * len(text)
    assert not any(g.vertical for g in page.glyphs)
    assert page.text == text
    assert page.quality.coverage == 1.0


def test_predefined_vertical_cmap() -> None:
    w = PdfWriter()
    font = w.type0_font(base_font="CJK", encoding="UniJIS-UCS2-V", cid_subtype="CIDFontType0",
                        ordering=("Adobe", "Japan1", 2))
    page = _show(w, font, _u16("縦書き"))
    assert _texts(page) == list("縦書き")
    assert all(g.vertical for g in page.glyphs)
    # Top to bottom: each glyph's origin below the previous one, same column.
    ys = [g.oy for g in page.glyphs]
    assert ys[0] > ys[1] > ys[2]
    assert {round(g.ox, 6) for g in page.glyphs} == {72.0}
    assert page.text == "縦書き"


@pytest.mark.parametrize(("cmap", "ordering", "codec", "text"), [
    ("90ms-RKSJ-H", "Japan1", "shift_jis", "日本語A"),
    ("GBK-EUC-H", "GB1", "gbk", "中文A"),
    ("KSCms-UHC-H", "Korea1", "cp949", "한글A"),
    ("ETen-B5-H", "CNS1", "big5", "中文A"),
])
def test_predefined_legacy_cmap_then_cid_collection(cmap: str, ordering: str, codec: str, text: str) -> None:
    # Code → CID through the named CMap (mixed one- and two-byte codes), then CID →
    # Unicode through the collection; no ToUnicode anywhere.
    w = PdfWriter()
    font = w.type0_font(base_font="CJK", encoding=cmap, cid_subtype="CIDFontType0", ordering=("Adobe", ordering, 2))
    data = text.encode(codec)
    page = _show(w, font, b"<" + data.hex().encode() + b">")
    assert _texts(page) == list(text)
    assert [g.nbytes for g in page.glyphs] == [len(ch.encode(codec)) for ch in text]
    assert page.text == text


# ---- R4 step 3: CID collections --------------------------------------------------------

def _cids_of(ordering: str, text: str) -> list[int]:
    """The smallest CID mapping to each character, from pdfminer.six's bundled data."""
    path = resources.files("pdfminer").joinpath("cmap", f"to-unicode-Adobe-{ordering}.json.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        table: dict[str, str] = json.load(fh)["CID2UNICHR_H"]
    return [min(int(cid) for cid, uni in table.items() if uni == ch) for ch in text]


@pytest.mark.parametrize(("ordering", "text"), [
    ("Japan1", "日本語"), ("GB1", "中文"), ("Korea1", "한국"), ("CNS1", "中文"),
])
def test_identity_h_font_decodes_through_cid_collection(ordering: str, text: str) -> None:
    cids = _cids_of(ordering, text)
    w = PdfWriter()
    font = w.type0_font(base_font="CIDFont", encoding="Identity-H", cid_subtype="CIDFontType0",
                        ordering=("Adobe", ordering, 4))
    page = _show(w, font, b"<" + b"".join(b"%04X" % c for c in cids) + b">")
    assert _texts(page) == list(text)
    assert [g.code for g in page.glyphs] == cids
    assert page.text == text


def _utf32_cid(ordering_cmap: str, ch: str) -> int:
    """The CID the collection's UTF-32 CMap (pdfminer.six's bundled data) gives ``ch``."""
    path = resources.files("pdfminer").joinpath("cmap", f"{ordering_cmap}.json.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        node = json.load(fh)["CODE2CID"]
    for byte in ord(ch).to_bytes(4, "big"):
        node = node[str(byte)]
    assert isinstance(node, int)
    return node


@pytest.mark.parametrize(("ordering", "cmap", "text"), [
    ("Japan1", "UniJIS-UTF32-H", "𠂢𠮷"), ("CNS1", "UniCNS-UTF32-H", "𠆤"),
])
def test_cids_outside_the_basic_plane_decode_through_the_utf32_cmap(ordering: str, cmap: str, text: str) -> None:
    """No ToUnicode, a CID of Adobe-Japan1 (CNS1) that stands for a supplementary-plane
    ideograph: the UCS-2 to-Unicode table cannot hold it (checked), the UTF-32 CMap does."""
    cids = [_utf32_cid(cmap, ch) for ch in text]
    path = resources.files("pdfminer").joinpath("cmap", f"to-unicode-Adobe-{ordering}.json.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        assert not {str(c) for c in cids} & set(json.load(fh)["CID2UNICHR_H"])
    w = PdfWriter()
    font = w.type0_font(base_font="CIDFont", encoding="Identity-H", cid_subtype="CIDFontType0",
                        ordering=("Adobe", ordering, 6))
    page = _show(w, font, b"<" + b"".join(b"%04X" % c for c in cids) + b">")
    assert _texts(page) == list(text)
    assert page.quality.unresolved == 0 and page.text == text


def test_identity_font_without_collection_is_unresolved_not_placeholder() -> None:
    # Adobe-Identity: no collection applies; the glyphs stay, unresolved (R4 step 5).
    cids = _cids_of("Japan1", "日本")
    w = PdfWriter()
    font = w.type0_font(base_font="CIDFont", encoding="Identity-H", cid_subtype="CIDFontType0")
    page = _show(w, font, b"[<%04X> -300 (\x00A) -300 <%04X>] TJ" % (cids[0], cids[1]), op=b"")
    assert _texts(page) == ["", "", ""]
    assert page.quality.glyphs == 3
    assert page.quality.unresolved == 3
    assert "cid" not in page.text
    assert page.text == ""


def _v_only_cids(ordering: str, text: str) -> list[int]:
    """CIDs of vertical-writing variants: in the collection's vertical table only."""
    path = resources.files("pdfminer").joinpath("cmap", f"to-unicode-Adobe-{ordering}.json.gz")
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    h, v = data["CID2UNICHR_H"], data["CID2UNICHR_V"]
    return [min(int(cid) for cid, uni in v.items() if uni == ch and cid not in h) for ch in text]


def test_identity_v_font_decodes_vertical_variant_cids() -> None:
    # Adobe-Japan1 has separate CIDs for the vertical forms of ー and ぁ; they are
    # part of the collection and map to the same characters.
    cids = _v_only_cids("Japan1", "ーぁ")
    w = PdfWriter()
    font = w.type0_font(base_font="CIDFont", encoding="Identity-V", cid_subtype="CIDFontType0",
                        ordering=("Adobe", "Japan1", 4))
    page = _show(w, font, b"<" + b"".join(b"%04X" % c for c in cids) + b">")
    assert all(g.vertical for g in page.glyphs)
    assert _texts(page) == ["ー", "ぁ"]


def test_predefined_legacy_vertical_cmap_decodes_vertical_variants() -> None:
    w = PdfWriter()
    font = w.type0_font(base_font="CJK", encoding="90ms-RKSJ-V", cid_subtype="CIDFontType0",
                        ordering=("Adobe", "Japan1", 2))
    page = _show(w, font, b"<" + "アーぁ".encode("shift_jis").hex().encode() + b">")
    assert all(g.vertical for g in page.glyphs)
    assert _texts(page) == ["ア", "ー", "ぁ"]
    assert page.text == "アーぁ"


def test_embedded_encoding_cmap_then_cid_collection() -> None:
    # Code → CID through an embedded CMap, CID → Unicode through Adobe-Japan1.
    cids = _cids_of("Japan1", "日本")
    w = PdfWriter()
    enc = cid_cmap("Custom", codespace=[(b"\x00", b"\xff")], cidchars=[(b"\x01", cids[0]), (b"\x02", cids[1])],
                   ordering=("Adobe", "Japan1", 4))
    font = w.type0_font(base_font="CIDFont", encoding=enc, cmap_name="Custom", cid_subtype="CIDFontType0",
                        ordering=("Adobe", "Japan1", 4))
    page = _show(w, font, b"<0102>")
    assert _texts(page) == ["日", "本"]
    assert [g.nbytes for g in page.glyphs] == [1, 1]


@pytest.mark.parametrize(("encoding", "ordering", "shown", "expected"), [
    ("UniGB-UCS2-H", ("Adobe", "GB1", 2), "中文", ["X", "文"]),
    ("Identity-H", ("Adobe", "Japan1", 4), None, ["X", "本"]),
])
def test_tounicode_wins_over_cmap_and_collection(encoding: str, ordering: tuple[str, str, int],
                                                 shown: str | None, expected: list[str]) -> None:
    # ToUnicode maps only the first code; the second falls through to step 2 or 3.
    codes = [int.from_bytes(c.encode("utf-16-be"), "big") for c in shown] if shown else _cids_of("Japan1", "日本")
    w = PdfWriter()
    cmap = tounicode_cmap([(codes[0].to_bytes(2, "big"), "X")], codespace=[(b"\x00\x00", b"\xff\xff")])
    font = w.type0_font(base_font="CJK", encoding=encoding, cid_subtype="CIDFontType0", ordering=ordering,
                        to_unicode=cmap)
    page = _show(w, font, b"<%04X%04X>" % (codes[0], codes[1]))
    assert _texts(page) == expected


# ---- R4 step 2 for simple fonts: /Differences through the glyph list -------------------

def test_differences_glyph_names() -> None:
    names = ["uni0041", "u1F600", "f_i", "eacute", "Euro", "uni00660069", "f_f_i", "u0042", "uni20AC",
             "A_B_C", "germandbls", "odieresis"]
    expected = ["A", GRIN, "fi", "é", "€", "fi", "ffi", "B", "€", "ABC", "ß", "ö"]
    w = PdfWriter()
    font = mono_font(w, encoding={"Differences": [1, *names]})
    page = _show(w, font, b"<" + b"".join(b"%02X" % c for c in range(1, len(names) + 1)) + b">")
    assert _texts(page) == expected


def test_differences_override_base_encoding_only_where_given() -> None:
    w = PdfWriter()
    font = mono_font(w, encoding={"BaseEncoding": "MacRomanEncoding", "Differences": [0x41, "Lslash"]})
    page = _show(w, font, b"<418E42>")
    assert _texts(page) == ["Ł", "é", "B"]


def test_mac_roman_encoding() -> None:
    w = PdfWriter()
    page = _show(w, mono_font(w, encoding="MacRomanEncoding"), b"<8E80A5D0>")
    # MacRoman: é Ä • – (WinAnsi would read Ž € ¥ Ð).
    assert _texts(page) == ["é", "Ä", "•", "–"]


def test_truetype_without_encoding_falls_back_to_winansi() -> None:
    w = PdfWriter()
    page = _show(w, mono_font(w), b"<80938EE941>")
    assert _texts(page) == ["€", "\u201c", "Ž", "é", "A"]


@pytest.mark.parametrize(("base_font", "codes", "expected"), [
    ("Symbol", b"<61624470A5>", ["α", "β", "Δ", "π", "∞"]),
    ("ZapfDingbats", b"<346E>", ["\u2714", "\u25a0"]),
])
def test_symbol_fonts_builtin_encoding(base_font: str, codes: bytes, expected: list[str]) -> None:
    w = PdfWriter()
    page = _show(w, w.standard_font(base_font), codes)
    assert _texts(page) == expected


# ---- R4 step 5 and R6: unresolved glyphs -----------------------------------------------

def _type3_shapes(w: PdfWriter) -> Ref:
    """Type3 font: a→/A, b→/square, c→/triangle, d→/B; square and triangle are not
    in the glyph list and there is no ToUnicode."""
    proc = b"500 0 0 0 500 700 d1 0 0 500 700 re f"
    return w.type3_font({"A": proc, "square": proc, "triangle": proc, "B": proc},
                        [97, "A", "square", "triangle", "B"], first_char=97, widths=[500] * 4)


def test_type3_unmappable_glyph_names() -> None:
    w = PdfWriter()
    page = _show(w, _type3_shapes(w), b"(abcd)")
    assert _texts(page) == ["A", "", "", "B"]  # kept, empty: not guessed from WinAnsi
    assert page.quality.glyphs == 4
    assert page.quality.unresolved == 2
    assert page.quality.coverage == pytest.approx(0.5)
    assert page.quality.coverage < 1
    assert page.text == "A B"  # one space for the two unresolved glyphs
    assert "(cid:" not in page.text


@pytest.mark.parametrize(("operand", "expected"), [
    (b"(abd)", "A B"),  # one unresolved glyph
    (b"(abcbcd)", "A B"),  # a run of four
    (b"(ab d)", "A B"),  # next to a real space: still one
    (b"(bca)", "A"),  # at the line start: trimmed
])
def test_unresolved_glyphs_become_one_space(operand: bytes, expected: str) -> None:
    w = PdfWriter()
    page = _show(w, _type3_shapes(w), operand)
    assert page.text == expected
    assert page.quality.unresolved == operand.count(b"b") + operand.count(b"c")


def test_missing_cmap_resources_skip_the_step() -> None:
    # A predefined CMap name that is not bundled: the chain goes on (here to the
    # ToUnicode) instead of failing.
    w = PdfWriter()
    font = w.type0_font(encoding="NoSuch-CMap-H", to_unicode=tounicode_cmap(
        [], [(b"\x00\x41", b"\x00\x5a", "A")], codespace=[(b"\x00\x00", b"\xff\xff")]))
    page = _show(w, font, b"<00410042>")
    assert _texts(page) == ["A", "B"]


def test_control_characters_from_tounicode_are_not_text() -> None:
    # A glyph mapped to a C0/C1 control is unresolved (R6: one space, counted); one
    # mapped to a whitespace control reads as a space.
    w = PdfWriter()
    cmap = tounicode_cmap([(b"A", "a"), (b"B", "\x02"), (b"C", "\x81"), (b"D", "\t"), (b"E", "e")])
    page = _show(w, mono_font(w, to_unicode=cmap), b"(ABCDE)")
    assert _texts(page) == ["a", "", "", " ", "e"]
    assert page.quality.unresolved == 2 and page.quality.glyphs == 5
    assert page.text == "a e"
