"""Content-stream tokens grouped into operations (§7.8.2), with inline images.

Our own tokenizer: one compiled regular expression over the whole stream. We first
used pdfminer.six's PSBaseParser, which cost 70 % of extraction time on text-heavy
pages (a Python method call per byte class); names are interned with its ``LIT`` so
they compare equal to the names in resource dictionaries it parsed.

Inline images are ours too: pdfminer.six ends inline image data at the first "EI"
followed by whitespace, so image bytes that happen to contain "EI " swallow the
text after them. Here the data length comes from /L or /Length, else from the
image geometry, else from the filter's own end of data (ASCII85 ``~>``, ASCIIHex
``>``, the end of the deflate stream), and only then from the first "EI" followed by
something that reads as content.
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Iterator

from pdfminer.psparser import LIT, PSLiteral

from .cmaps import hex_bytes

Operation = tuple[bytes, list[object], int]  # operator, operands, object index of the operator

_OPEN_ARRAY, _CLOSE_ARRAY = b"[", b"]"
_OPEN_DICT, _CLOSE_DICT = b"<<", b">>"
_SPACED_EI = re.compile(rb"[\x00\t\n\f\r ]*EI")
_EI = re.compile(rb"EI(?=[\x00\t\n\f\r ]|$)")
_TEXTUAL = re.compile(rb"^[\x00\t\n\f\r\x20-\x7e]*$")
_COMPONENTS = {"DeviceGray": 1, "G": 1, "DeviceRGB": 3, "RGB": 3, "DeviceCMYK": 4, "CMYK": 4, "Indexed": 1, "I": 1}


def _inline_length(attrs: dict[str, object]) -> int | None:
    """Bytes of inline image data when the dictionary says so or the data is raw."""
    for key in ("L", "Length"):
        value = attrs.get(key)
        if isinstance(value, int) and value >= 0:
            return value
    if attrs.get("F") or attrs.get("Filter"):
        return None
    width, height = attrs.get("W", attrs.get("Width")), attrs.get("H", attrs.get("Height"))
    if not (isinstance(width, int) and isinstance(height, int)):
        return None
    if attrs.get("IM") is True or attrs.get("ImageMask") is True:
        comps, bpc = 1, 1
    else:
        cs = attrs.get("CS", attrs.get("ColorSpace"))
        if isinstance(cs, list) and cs:
            cs = cs[0]
        name = cs.name if isinstance(cs, PSLiteral) else None
        comps_or_none = _COMPONENTS.get(str(name)) if name is not None else None
        bpc_value = attrs.get("BPC", attrs.get("BitsPerComponent"))
        if comps_or_none is None or not isinstance(bpc_value, int):
            return None
        comps, bpc = comps_or_none, bpc_value
    return ((width * comps * bpc + 7) // 8) * height


def _encoded_end(buf: bytes, start: int, attrs: dict[str, object]) -> int:
    """Where the data of an ASCII85-, ASCIIHex- or Flate-encoded inline image ends
    by its own format (its EOD marker, or the end of the deflate stream); the
    start itself when the encoding says nothing."""
    filters = attrs.get("F", attrs.get("Filter"))
    first = filters[0] if isinstance(filters, list) and filters else filters
    name = first.name if isinstance(first, PSLiteral) else None
    if name in ("A85", "ASCII85Decode"):
        end = buf.find(b"~>", start)
        return end + 2 if end >= 0 else start
    if name in ("AHx", "ASCIIHexDecode"):
        end = buf.find(b">", start)
        return end + 1 if end >= 0 else start
    if name in ("Fl", "FlateDecode"):
        inflater = zlib.decompressobj()
        try:
            inflater.decompress(buf[start:], 1 << 16)
            while inflater.unconsumed_tail and not inflater.eof:
                inflater.decompress(inflater.unconsumed_tail, 1 << 16)
        except zlib.error:
            return start
        if inflater.eof:
            return len(buf) - len(inflater.unused_data)
    return start


def _end_of_inline_image(buf: bytes, start: int, attrs: dict[str, object]) -> int:
    """Offset just past the "EI" that closes inline image data beginning at start."""
    length = _inline_length(attrs)
    if length is not None:
        m = _SPACED_EI.match(buf, start + length)
        if m:
            return m.end()
    start = _encoded_end(buf, start, attrs)
    for m in _EI.finditer(buf, start):
        # The data may contain "EI" by chance; accept one followed by text that
        # looks like content (binary image data rarely stays printable for long).
        after = buf[m.end():m.end() + 48]
        if _TEXTUAL.match(after):
            return m.end()
    return len(buf)


# One token per match, leading whitespace skipped. Group numbers (m.lastindex):
# 1 number, 2 name, 3 string without nested parentheses, 4 start of a string with
# them, 5 hex string, 6 delimiter, 7 comment, 8 keyword (operator), 9 stray byte.
_TOKEN = re.compile(
    rb"[\x00\t\n\f\r ]*(?:"
    rb"([+-]?(?:\d+\.?\d*|\.\d+))(?![^\x00\t\n\f\r ()<>\[\]{}/%])"
    rb"|/([^\x00\t\n\f\r ()<>\[\]{}/%]*)"
    rb"|\(((?:[^()\\]|\\.)*)\)"
    rb"|(\()"
    rb"|<([0-9A-Fa-f\x00\t\n\f\r ]*)>"
    rb"|(<<|>>|[\[\]{}])"
    rb"|(%[^\r\n]*)"
    rb"|([^\x00\t\n\f\r ()<>\[\]{}/%]+)"
    rb"|([^\x00\t\n\f\r ]))",
    re.S,
)
_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|(\r\n|[\r\n])|(.))", re.S)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
_NAME_HEX = re.compile(rb"#([0-9A-Fa-f]{2})")
_CONSTANTS: dict[bytes, object] = {b"true": True, b"false": False, b"null": None}


def _unescape(m: re.Match[bytes]) -> bytes:
    octal, newline, char = m.groups()
    if octal is not None:
        return bytes((int(octal, 8) & 0xFF,))
    if newline is not None:
        return b""
    return _ESCAPES.get(char, char)


def _nested_string(data: bytes, pos: int) -> tuple[bytes, int]:
    """A literal string with balanced parentheses inside, from just after "(";
    unbalanced to the end of data reads as running to the end (§7.3.4.2)."""
    depth, i, n = 1, pos, len(data)
    while i < n:
        c = data[i]
        if c == 0x5C:  # backslash
            i += 2
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return data[pos:i], i + 1
        i += 1
    return data[pos:], n


def _name(raw: bytes) -> PSLiteral:
    """Names as pdfminer.six spells them, so they match its resource dictionaries."""
    if b"#" in raw:
        raw = _NAME_HEX.sub(lambda m: bytes((int(m.group(1), 16),)), raw)
    try:
        return LIT(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return LIT(raw)


def operations(data: bytes, problems: list[str]) -> Iterator[Operation]:
    """Yield (operator, operands, index) for a content stream, skipping what is broken.

    Our own single-regex tokenizer (pdfminer.six's PSBaseParser took 70 % of run
    time on text-heavy pages). ``index`` counts top-level objects (operands and
    operators) from 0, so the operand of a showing operator is at ``index - 1``
    (the token index of R1).
    """
    operands: list[object] = []
    nesting: list[tuple[bytes, list[object]]] = []
    index = 0
    pos = 0
    match = _TOKEN.match
    while True:
        m = match(data, pos)
        if m is None:
            break
        pos = m.end()
        kind = m.lastindex
        value: object
        if kind == 1:
            text = m.group(1)
            value = float(text) if b"." in text else int(text)
        elif kind == 2:
            value = _name(m.group(2))
        elif kind == 3:
            raw = m.group(3)
            value = _ESCAPE.sub(_unescape, raw) if b"\\" in raw else raw
        elif kind == 4:
            raw, pos = _nested_string(data, pos)
            value = _ESCAPE.sub(_unescape, raw)
        elif kind == 5:
            value = hex_bytes(m.group(5))
        elif kind == 8:
            word = m.group(8)
            if word in _CONSTANTS:
                value = _CONSTANTS[word]
            else:
                if nesting:  # an operator inside an array: the array is broken
                    problems.append(f"operator {word.decode('latin-1')} inside an array at byte {m.start(8)}")
                    nesting.clear()
                    operands = []
                if word == b"BI":
                    attrs, pos = _inline_image(data, pos, problems)
                    yield b"BI", [attrs], index
                    index += 1
                    operands = []
                    continue
                yield word, operands, index
                index += 1
                operands = []
                continue
        elif kind == 6:
            delim = m.group(6)
            if delim in (_OPEN_ARRAY, _OPEN_DICT):
                nesting.append((delim, []))
                continue
            if delim in (_CLOSE_ARRAY, _CLOSE_DICT):
                if not nesting or nesting[-1][0] != (_OPEN_ARRAY if delim == _CLOSE_ARRAY else _OPEN_DICT):
                    problems.append(f"unbalanced {delim.decode()} at byte {m.start(6)}")
                    continue
                opened, items = nesting.pop()
                value = items if opened == _OPEN_ARRAY else _as_dict(items)
            else:
                continue  # braces belong to PostScript calculator functions, not content
        elif kind == 7:
            continue
        else:
            problems.append(f"stray byte {m.group(9)!r} at {m.start(9)} skipped")
            continue
        if nesting:
            nesting[-1][1].append(value)
        else:
            operands.append(value)
            index += 1


def _as_dict(items: list[object]) -> dict[str, object]:
    return {literal_str(k) if isinstance(k, PSLiteral) else str(k): v
            for k, v in zip(items[0::2], items[1::2], strict=False)}


def literal_str(name: PSLiteral) -> str:
    """A name's text; pdfminer.six keeps names that are not UTF-8 as bytes."""
    value = name.name
    return value if isinstance(value, str) else value.decode("latin-1")


def _inline_image(data: bytes, pos: int, problems: list[str]) -> tuple[dict[str, object], int]:
    """Read an inline image dictionary from after BI up to ID; return it and the
    offset where content resumes, after the image data and its EI."""
    items: list[object] = []
    depth = 0
    while True:
        m = _TOKEN.match(data, pos)
        if m is None:
            problems.append("inline image without ID")
            return {}, len(data)
        pos = m.end()
        kind = m.lastindex
        if kind == 8 and m.group(8) == b"ID":
            start = pos + 1 if pos < len(data) and data[pos] in b"\x00\t\n\f\r " else pos
            attrs = _as_dict(items)
            return attrs, _end_of_inline_image(data, start, attrs)
        if kind == 1:
            text = m.group(1)
            items.append(float(text) if b"." in text else int(text))
        elif kind == 2:
            items.append(_name(m.group(2)))
        elif kind == 8 and m.group(8) in _CONSTANTS:
            items.append(_CONSTANTS[m.group(8)])
        elif kind == 6 and m.group(6) in (b"[", b"]"):
            depth += 1 if m.group(6) == b"[" else -1
            if depth == 1 and m.group(6) == b"[":
                items.append([])  # an array value (Decode, a filter list): kept as a marker
        elif kind == 4:
            _, pos = _nested_string(data, pos)
        elif depth == 0 and kind in (3, 5):
            items.append(m.group(kind))
