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

Bounded: strings, arrays, dictionaries, nesting and the operand stack have caps
(``Params``), and the string pattern uses possessive repeats, since a plain
``(?:a|b)*`` keeps a backtracking record per character (a 49 KB file with one
unclosed string of escapes reached 5 GB).
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Iterator

from pdfminer.psparser import LIT, PSLiteral

from .cmaps import hex_bytes
from .errors import Problem, ProblemCode
from .params import DEFAULT_PARAMS, Params

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


def _encoded_end(buf: bytes, start: int, attrs: dict[str, object], limit: int) -> int:
    """Where the data of an ASCII85-, ASCIIHex- or Flate-encoded inline image ends
    by its own format (its EOD marker, or the end of the deflate stream); the
    start itself when the encoding says nothing (or inflating passes ``limit``)."""
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
        produced = 0
        try:
            produced += len(inflater.decompress(memoryview(buf)[start:], 1 << 16))
            while inflater.unconsumed_tail and not inflater.eof and produced < limit:
                produced += len(inflater.decompress(inflater.unconsumed_tail, 1 << 16))
        except zlib.error:
            return start
        if inflater.eof:
            return len(buf) - len(inflater.unused_data)
    return start


def _end_of_inline_image(buf: bytes, start: int, attrs: dict[str, object], limit: int) -> int:
    """Offset just past the "EI" that closes inline image data beginning at start."""
    length = _inline_length(attrs)
    if length is not None:
        m = _SPACED_EI.match(buf, start + length)
        if m:
            return m.end()
    start = _encoded_end(buf, start, attrs, limit)
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
# Every repeat is of a single byte class or possessive: no backtracking records.
_TOKEN = re.compile(
    rb"[\x00\t\n\f\r ]*+(?:"
    rb"([+-]?(?:\d+\.?\d*|\.\d+))(?![^\x00\t\n\f\r ()<>\[\]{}/%])"
    rb"|/([^\x00\t\n\f\r ()<>\[\]{}/%]*)"
    rb"|\(([^()\\]*+(?:\\.[^()\\]*+)*+)\)"
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


_STRING_RUN = re.compile(rb"[^()\\]*+(?:\\.[^()\\]*+)*+", re.S)


def _nested_string(data: bytes, pos: int, cap: int) -> tuple[bytes, int, bool]:
    """A literal string with balanced parentheses inside, from just after "(":
    (raw bytes, offset after it, whether it was cut at ``cap`` bytes). Unbalanced to
    the end of data reads as running to the end (§7.3.4.2); one that passes the cap
    before it closes ends the stream (finding its end would cost a step per
    parenthesis of what may be all of a 64 MB stream)."""
    depth, i, n = 1, pos, len(data)
    run = _STRING_RUN.match
    while True:
        i = run(data, i).end()  # type: ignore[union-attr]  # it matches the empty string
        if i - pos > cap:
            return data[pos:pos + cap], n, True
        if i >= n:
            return data[pos:], n, False
        c = data[i]
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return data[pos:i], i + 1, False
        i += 1  # a "(" or ")", or a backslash ending the data


def _name(raw: bytes) -> PSLiteral:
    """Names as pdfminer.six spells them, so they match its resource dictionaries."""
    if b"#" in raw:
        raw = _NAME_HEX.sub(lambda m: bytes((int(m.group(1), 16),)), raw)
    try:
        return LIT(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return LIT(raw)


#: Syntax problems reported per stream; past it they are counted, not formatted
#: (a stream of stray bytes would make millions).
_NOISE_REPORTED = 50


def operations(data: bytes, problems: list[str], params: Params = DEFAULT_PARAMS) -> Iterator[Operation]:
    """Yield (operator, operands, index) for a content stream, skipping what is broken.

    Our own single-regex tokenizer (pdfminer.six's PSBaseParser took 70 % of run
    time on text-heavy pages). ``index`` counts top-level objects (operands and
    operators) from 0, so the operand of a showing operator is at ``index - 1``
    (the token index of R1). Strings, arrays, dictionaries, nesting and waiting
    operands are capped by ``params``; each cap hit is reported once per stream.
    """
    operands: list[object] = []
    nesting: list[tuple[bytes, list[object]]] = []
    skipped_depth = 0  # containers opened past max_nesting, whose contents are dropped
    index = 0
    pos = 0
    match = _TOKEN.match
    max_string, max_items, max_nesting = params.max_string_bytes, params.max_array_items, params.max_nesting
    noise = 0
    reported: set[str] = set()

    def report(problem: str, once: str | None = None) -> None:
        """A syntax error (listed up to _NOISE_REPORTED), or with ``once`` a cap hit
        (listed once per stream and cap)."""
        nonlocal noise
        if once is not None:
            if once in reported:
                return
            reported.add(once)
        else:
            noise += 1
            if noise > _NOISE_REPORTED:
                if noise == _NOISE_REPORTED + 1:
                    problems.append(Problem(ProblemCode.CONTENT_SYNTAX,
                                            "more syntax errors in this content stream not listed"))
                return
        problems.append(Problem(ProblemCode.CONTENT_SYNTAX if once is None else ProblemCode.CAP_HIT, problem))

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
            if len(raw) > max_string:
                report(f"string at byte {m.start(3)} longer than the {_size(max_string)} string cap; cut", "string")
                raw = raw[:max_string]
            value = _ESCAPE.sub(_unescape, raw) if b"\\" in raw else raw
        elif kind == 4:
            start = pos
            raw, pos, cut = _nested_string(data, pos, max_string)
            if cut:
                report(f"string at byte {start} longer than the {_size(max_string)} string cap; cut, "
                       "and the rest of the stream ignored", "string")
            value = _ESCAPE.sub(_unescape, raw)
        elif kind == 5:
            digits = m.group(5)
            if len(digits) > 2 * max_string:
                report(f"string at byte {m.start(5)} longer than the {_size(max_string)} string cap; cut", "string")
                digits = digits[:2 * max_string]
            value = hex_bytes(digits)
        elif kind == 8:
            word = m.group(8)
            if word in _CONSTANTS:
                value = _CONSTANTS[word]
            else:
                if nesting or skipped_depth:  # an operator inside an array: the array is broken
                    report(f"operator {_short(word)} inside an array at byte {m.start(8)}")
                    nesting.clear()
                    skipped_depth = 0
                    operands = []
                if word == b"BI":
                    attrs, pos = _inline_image(data, pos, problems, params)
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
                if skipped_depth or len(nesting) >= max_nesting:
                    if not skipped_depth:
                        report(f"arrays nested deeper than {max_nesting} at byte {m.start(6)}; "
                               "the inner ones are ignored", "nesting")
                    skipped_depth += 1
                    continue
                nesting.append((delim, []))
                continue
            if delim in (_CLOSE_ARRAY, _CLOSE_DICT):
                if skipped_depth:
                    skipped_depth -= 1
                    continue
                if not nesting or nesting[-1][0] != (_OPEN_ARRAY if delim == _CLOSE_ARRAY else _OPEN_DICT):
                    report(f"unbalanced {delim.decode()} at byte {m.start(6)}")
                    continue
                opened, items = nesting.pop()
                value = items if opened == _OPEN_ARRAY else _as_dict(items)
            else:
                continue  # braces belong to PostScript calculator functions, not content
        elif kind == 7:
            continue
        else:
            report(f"stray byte {m.group(9)!r} at {m.start(9)} skipped")
            continue
        if skipped_depth:
            continue
        if nesting:
            items = nesting[-1][1]
            if len(items) >= max_items:
                report(f"array or dictionary with more than {max_items} items; the rest is ignored", "items")
                continue
            items.append(value)
        else:
            if len(operands) >= max_items:
                report(f"more than {max_items} operands without an operator; the oldest are dropped", "operands")
                del operands[:max_items // 2]
            operands.append(value)
            index += 1


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n}-byte"


def _short(word: bytes) -> str:
    """An operator's name for a problem line (a 'keyword' may be megabytes)."""
    text = word[:40].decode("latin-1")
    return text + "…" if len(word) > 40 else text


def _as_dict(items: list[object]) -> dict[str, object]:
    return {literal_str(k) if isinstance(k, PSLiteral) else str(k): v
            for k, v in zip(items[0::2], items[1::2], strict=False)}


def literal_str(name: PSLiteral) -> str:
    """A name's text; pdfminer.six keeps names that are not UTF-8 as bytes."""
    value = name.name
    return value if isinstance(value, str) else value.decode("latin-1")


def _inline_image(data: bytes, pos: int, problems: list[str],
                  params: Params) -> tuple[dict[str, object], int]:
    """Read an inline image dictionary from after BI up to ID; return it and the
    offset where content resumes, after the image data and its EI."""
    items: list[object] = []
    depth = 0
    while True:
        if len(items) > params.max_array_items:
            problems.append(Problem(ProblemCode.CAP_HIT, f"inline image dictionary with more than "
                                    f"{params.max_array_items} items; the rest of the stream is ignored"))
            return {}, len(data)
        m = _TOKEN.match(data, pos)
        if m is None:
            problems.append(Problem(ProblemCode.CONTENT_SYNTAX, "inline image without ID"))
            return {}, len(data)
        pos = m.end()
        kind = m.lastindex
        if kind == 8 and m.group(8) == b"ID":
            start = pos + 1 if pos < len(data) and data[pos] in b"\x00\t\n\f\r " else pos
            attrs = _as_dict(items)
            return attrs, _end_of_inline_image(data, start, attrs, params.max_stream_bytes)
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
            _, pos, _cut = _nested_string(data, pos, params.max_string_bytes)
        elif depth == 0 and kind in (3, 5):
            items.append(m.group(kind))
