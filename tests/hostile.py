"""Builders of hostile PDFs for the bounds tests (tests/test_bounds.py), all with our
own writer (tests/pdfwriter.py). Each file draws a known text before its hostile
part, so a test can check that the text before the cut survives.

Bombs are compressed piece by piece: a 1 GiB Flate bomb is ~1 MB and never exists
decompressed in the test process.
"""
from __future__ import annotations

import zlib
from typing import Any

from tests.builders import font_resources, mono_font
from tests.pdfwriter import Name, PdfWriter, Ref, tounicode_cmap

GIB = 1 << 30
BEFORE = b"Before the bomb"
_FLATE = {"Filter": Name("FlateDecode")}


def deflate_bomb(head: bytes, size: int, filler: bytes = b" ") -> bytes:
    """zlib data of ``head`` followed by ``size`` bytes of ``filler``."""
    z = zlib.compressobj(9)
    out = [z.compress(head)]
    block = filler * ((1 << 20) // len(filler))
    left = size
    while left > 0:
        piece = block if left >= len(block) else block[:left]
        out.append(z.compress(piece))
        left -= len(piece)
    out.append(z.flush())
    return b"".join(out)


def text_op(text: bytes, y: float = 700) -> bytes:
    return b"BT /F1 10 Tf 72 %g Td (%s) Tj ET\n" % (y, text)


def _page(w: PdfWriter, content: bytes | Ref | list[bytes | Ref], font: Ref | None = None,
          xobjects: dict[str, Ref] | None = None) -> bytes:
    w.add_page(content, resources=font_resources(font if font is not None else mono_font(w), xobjects))
    return w.to_bytes()


def content_bomb(size: int = GIB) -> bytes:
    """One content stream: a line of text, then ``size`` bytes of spaces."""
    w = PdfWriter()
    return _page(w, w.add_stream(deflate_bomb(text_op(BEFORE), size), _FLATE))


def split_content_bomb(streams: int = 16, size: int = 64 << 20) -> bytes:
    """Text, then many content streams of ``size`` spaces each (each under the
    stream cap; together far over the page cap)."""
    w = PdfWriter()
    refs: list[bytes | Ref] = [text_op(BEFORE)]
    bomb = deflate_bomb(b"", size)
    refs += [w.add_stream(bomb, _FLATE) for _ in range(streams)]
    return _page(w, refs)


def tounicode_bomb(size: int = GIB) -> bytes:
    """A ToUnicode CMap mapping "A" to "Z", followed by ``size`` spaces; the page
    shows "AAA"."""
    w = PdfWriter()
    cmap = tounicode_cmap([(b"A", "Z")])
    head = cmap[:cmap.index(b"endcmap")]  # the map ends after the bomb, never reached
    tu = w.add_stream(deflate_bomb(head, size), _FLATE)
    font = mono_font(w, font_attrs={"ToUnicode": tu})
    return _page(w, text_op(b"AAA"), font)


def tounicode_flood(entries: int) -> bytes:
    """A ToUnicode CMap with ``entries`` bfchar entries (two-byte codes)."""
    w = PdfWriter()
    body = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            b"1 begincodespacerange <0000> <FFFFFFFF> endcodespacerange\n")
    # Four-byte codes make ``entries`` distinct keys beyond 65,536.
    rows = b"".join(b"<%08X> <0041>\n" % k for k in range(entries))
    body += b"%d beginbfchar\n" % entries + rows + b"endbfchar\nendcmap\nend end\n"
    tu = w.add_stream(zlib.compress(body), _FLATE)
    font = mono_font(w, font_attrs={"ToUnicode": tu})
    return _page(w, text_op(BEFORE), font)


def form_bomb(size: int = GIB) -> bytes:
    """The page draws a form whose content is a line of text and ``size`` spaces."""
    w = PdfWriter()
    font = mono_font(w)
    form = w.add_stream(deflate_bomb(text_op(BEFORE), size), {
        "Type": Name("XObject"), "Subtype": Name("Form"), "BBox": [0, 0, 612, 792],
        "Resources": font_resources(font), **_FLATE})
    return _page(w, b"/X Do\n", font, {"X": form})


def unclosed_string(pairs: int = 20_000_000) -> bytes:
    """Text, then a string that never closes, made of ``pairs`` escapes."""
    w = PdfWriter()
    head = text_op(BEFORE) + b"BT /F1 10 Tf 72 600 Td ("
    return _page(w, w.add_stream(deflate_bomb(head, 2 * pairs, b"\\a"), _FLATE))


def run_length_bomb(encoded: int = 8 << 20) -> bytes:
    """A RunLength content stream: the text as a literal run, then ``encoded``
    bytes of two-byte runs of 128 spaces each (64 times larger decoded)."""
    w = PdfWriter()
    head = text_op(BEFORE)
    data = bytearray()
    for k in range(0, len(head), 128):
        piece = head[k:k + 128]
        data += bytes([len(piece) - 1]) + piece
    data += b"\x81 " * (encoded // 2) + b"\x80"
    return _page(w, w.add_stream(bytes(data), {"Filter": Name("RunLengthDecode")}))


def many_tj(count: int = 2_000_000) -> bytes:
    """``count`` one-glyph Tj on one line, in a small file; the font's glyphs are
    zero-width so all stay on the page."""
    w = PdfWriter()
    content = b"BT /F1 10 Tf 72 700 Td " + b"(a) Tj " * count + b"ET\n"
    font = mono_font(w, width=0)
    return _page(w, w.add_stream(zlib.compress(content, 9), _FLATE), font)


def many_lines(lines: int, words: int = 8) -> bytes:
    """An ordinary page of ``lines`` lines of ``words`` words each."""
    w = PdfWriter()
    ops = [b"BT /F1 10 Tf 72 780 Td 12 TL"]
    for k in range(lines):
        ops.append(b"(%s) Tj T*" % b" ".join(b"w%dx%d" % (k, j) for j in range(words)))
        if k % 60 == 59:
            ops.append(b"ET BT /F1 10 Tf 72 780 Td 12 TL")
    ops.append(b"ET\n")
    return _page(w, b"\n".join(ops))


def wide_widths(ranges: int = 20_000) -> bytes:
    """A Type0 font whose /W has ``ranges`` ranges of 65,536 CIDs each; the page
    shows "AB" through its ToUnicode map."""
    w = PdfWriter()
    widths: list[Any] = []
    for _ in range(ranges):
        widths += [0, 65535, 500]
    cmap = tounicode_cmap([(b"\x00A", "A"), (b"\x00B", "B")], codespace=[(b"\x00\x00", b"\xff\xff")])
    font = w.type0_font(w=widths, to_unicode=cmap)
    return _page(w, b"BT /F1 10 Tf 72 700 Td <00410042> Tj ET\n", font)


def huge_array(items: int = 5_000_000) -> bytes:
    """Text, then a TJ array of ``items`` numbers, then more text."""
    w = PdfWriter()
    content = text_op(BEFORE) + b"BT /F1 10 Tf 72 600 Td [" + b"1 " * items + b"(x)] TJ ET\n" + text_op(b"After", 500)
    return _page(w, w.add_stream(zlib.compress(content, 9), _FLATE))


def huge_dict(items: int = 2_000_000) -> bytes:
    """Text, then a marked-content property dictionary of ``items`` entries."""
    w = PdfWriter()
    content = text_op(BEFORE) + b"/P <<" + b"/A 1 " * items + b">> BDC EMC\n" + text_op(b"After", 500)
    return _page(w, w.add_stream(zlib.compress(content, 9), _FLATE))


def deep_nesting(depth: int = 2_000_000) -> bytes:
    """Text, then ``depth`` nested arrays, closed, then more text."""
    w = PdfWriter()
    content = text_op(BEFORE) + b"[" * depth + b"]" * depth + b" pop\n" + text_op(b"After", 500)
    return _page(w, w.add_stream(zlib.compress(content, 9), _FLATE))


def many_operands(count: int = 10_000_000) -> bytes:
    """Text, then ``count`` numbers with no operator, then more text."""
    w = PdfWriter()
    content = text_op(BEFORE) + b"1 " * count + b"\n" + text_op(b"After", 500)
    return _page(w, w.add_stream(zlib.compress(content, 9), _FLATE))


BUILDERS = {
    "content_bomb": content_bomb, "split_content_bomb": split_content_bomb, "tounicode_bomb": tounicode_bomb,
    "form_bomb": form_bomb, "unclosed_string": unclosed_string, "run_length": run_length_bomb,
    "many_tj": many_tj, "wide_widths": wide_widths, "huge_array": huge_array, "huge_dict": huge_dict,
    "deep_nesting": deep_nesting, "many_operands": many_operands,
}


def lzw_encode(data: bytes) -> bytes:
    """LZWDecode data (§7.4.4, EarlyChange 1) of ``data``: a reference encoder so
    tests can give the LZW decoder real input."""
    table = {bytes([i]): i for i in range(256)}
    next_code, width = 258, 9
    bits, nbits = 0, 0
    out = bytearray()

    def emit(code: int) -> None:
        nonlocal bits, nbits
        bits = (bits << width) | code
        nbits += width
        while nbits >= 8:
            nbits -= 8
            out.append((bits >> nbits) & 0xFF)

    emit(256)
    word = b""
    for byte in data:
        candidate = word + bytes([byte])
        if candidate in table:
            word = candidate
            continue
        emit(table[word])
        table[candidate] = next_code
        next_code += 1
        if next_code == (1 << width) and width < 12:
            width += 1
        if next_code >= 4094:
            emit(256)
            table = {bytes([i]): i for i in range(256)}
            next_code, width = 258, 9
        word = bytes([byte])
    if word:
        emit(table[word])
    emit(257)
    if nbits:
        out.append((bits << (8 - nbits)) & 0xFF)
    return bytes(out)
