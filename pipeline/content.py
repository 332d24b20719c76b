"""Content-stream tokens grouped into operations, over pdfminer.six's PSBaseParser.

We keep our own grouping (arrays, dictionaries, operand lists) and our own inline
image handling: pdfminer.six ends inline image data at the first "EI" followed by
whitespace, so image bytes that happen to contain "EI " swallow the text after
them. Here the data length comes from /L or /Length, else from the image geometry,
else from the first "EI" that is followed by something that reads as content.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from io import BytesIO

from pdfminer.psparser import PSEOF, PSBaseParser, PSKeyword, PSLiteral

Operation = tuple[bytes, list[object], int]  # operator, operands, object index of the operator

_OPEN_ARRAY, _CLOSE_ARRAY = b"[", b"]"
_OPEN_DICT, _CLOSE_DICT = b"<<", b">>"
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


def _end_of_inline_image(buf: bytes, start: int, attrs: dict[str, object]) -> int:
    """Offset just past the "EI" that closes inline image data beginning at start."""
    length = _inline_length(attrs)
    if length is not None:
        m = re.compile(rb"[\x00\t\n\f\r ]*EI").match(buf, start + length)
        if m:
            return m.end()
    for m in _EI.finditer(buf, start):
        # The data may contain "EI" by chance; accept one followed by text that
        # looks like content (binary image data rarely stays printable for long).
        after = buf[m.end():m.end() + 48]
        if _TEXTUAL.match(after):
            return m.end()
    return len(buf)


def operations(data: bytes, problems: list[str]) -> Iterator[Operation]:
    """Yield (operator, operands, index) for a content stream, skipping what is broken.

    ``index`` counts top-level objects (operands and operators) from 0, so the
    operand of a showing operator is at ``index - 1`` (R1 token index).
    """
    parser = PSBaseParser(BytesIO(data))
    operands: list[object] = []
    nesting: list[tuple[bytes, list[object]]] = []
    index = 0
    while True:
        try:
            pos, token = parser.nexttoken()
        except PSEOF:
            break
        except Exception as exc:  # noqa: BLE001 - a broken stream loses only its rest (R17)
            problems.append(f"content stream unreadable after byte {parser.bufpos}: {exc}")
            break
        if isinstance(token, PSKeyword):
            name = token.name
            if name in (_OPEN_ARRAY, _OPEN_DICT):
                nesting.append((name, []))
                continue
            if name in (_CLOSE_ARRAY, _CLOSE_DICT):
                if not nesting or nesting[-1][0] != (_OPEN_ARRAY if name == _CLOSE_ARRAY else _OPEN_DICT):
                    problems.append(f"unbalanced {name.decode()} at byte {pos}")
                    continue
                kind, items = nesting.pop()
                value: object = items if kind == _OPEN_ARRAY else _as_dict(items)
                if nesting:
                    nesting[-1][1].append(value)
                else:
                    operands.append(value)
                    index += 1
                continue
            if nesting:  # an operator inside an array: the array is broken
                problems.append(f"operator {name.decode('latin-1')} inside an array at byte {pos}")
                nesting.clear()
                operands.clear()
            if name == b"BI":
                attrs, resume = _inline_image(parser, data, problems)
                yield b"BI", [attrs], index
                index += 1
                parser.seek(resume)
                operands = []
                continue
            yield name, operands, index
            index += 1
            operands = []
        elif nesting:
            nesting[-1][1].append(token)
        else:
            operands.append(token)
            index += 1


def _as_dict(items: list[object]) -> dict[str, object]:
    return {k.name if isinstance(k, PSLiteral) else str(k): v for k, v in zip(items[0::2], items[1::2])}


def _inline_image(parser: PSBaseParser, data: bytes, problems: list[str]) -> tuple[dict[str, object], int]:
    """Read an inline image dictionary up to ID; return it and where content resumes."""
    items: list[object] = []
    while True:
        try:
            pos, token = parser.nexttoken()
        except PSEOF:
            problems.append("inline image without ID")
            return {}, len(data)
        if isinstance(token, PSKeyword) and token.name == b"ID":
            start = pos + 2
            if start < len(data) and data[start] in b"\x00\t\n\f\r ":
                start += 1
            attrs = _as_dict(items)
            return attrs, _end_of_inline_image(data, start, attrs)
        if isinstance(token, PSKeyword) and token.name in (b"[", b"]"):
            continue  # Decode arrays etc.: not needed to find the data's end
        items.append(token)
