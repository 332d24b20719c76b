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


# The byte patterns of tokens, each written once: the tokenizer and the whole-array
# patterns below are made of them, so both read the same values.
_WS = rb"[\x00\t\n\f\r ]"
_REGULAR = rb"[^\x00\t\n\f\r ()<>\[\]{}/%]"  # a byte of a name, number or keyword
_NUMBER = rb"[+-]?(?:\d+\.?\d*|\.\d+)"  # followed by a delimiter: "12abc" is a keyword
_STRING = rb"[^()\\]*+(?:\\.[^()\\]*+)*+"  # inside a string without parentheses inside
_HEX = rb"[0-9A-Fa-f\x00\t\n\f\r ]*"
_DELIMITED = rb"(?!" + _REGULAR + rb")"

# One token per match, leading whitespace skipped; the group that matched names the
# token (``m.lastgroup``). A keyword is an operator or true/false/null. Every repeat
# is of a single byte class or possessive: no backtracking records.
_TOKEN = re.compile(
    _WS + rb"*+(?:"
    rb"(?P<number>" + _NUMBER + rb")" + _DELIMITED +
    rb"|/(?P<name>" + _REGULAR + rb"*)"
    rb"|\((?P<string>" + _STRING + rb")\)"  # a string without parentheses inside
    rb"|(?P<nested>\()"  # the start of a string with them
    rb"|<(?P<hex>" + _HEX + rb")>"
    rb"|(?P<open><<|\[)"
    rb"|(?P<close>>>|\])"
    rb"|(?P<brace>[{}])"
    rb"|(?P<comment>%[^\r\n]*)"
    rb"|(?P<keyword>" + _REGULAR + rb"+)"
    rb"|(?P<stray>[^\x00\t\n\f\r ]))",
    re.S,
)
# A whole array of strings without parentheses inside, hex strings and numbers, the
# operand of nearly every TJ: read with one match and one findall instead of a turn
# of ``operations``' loop per item (a TeX line is a few dozen kerned pieces). Anything
# else in an array (a name, a nested string, a comment, a stray byte) fails the match
# and the array is read token by token.
_SIMPLE_ARRAY = re.compile(rb"\[(?:" + _WS + rb"*+(?:\(" + _STRING + rb"\)|<" + _HEX + rb">|" + _NUMBER + _DELIMITED
                           + rb"))*+" + _WS + rb"*+\]", re.S)
_ARRAY_ITEMS = re.compile(rb"(\()(" + _STRING + rb")\)|<(" + _HEX + rb")>|(" + _NUMBER + rb")", re.S)
# Path construction and painting, and the graphics state and colour operators that
# take numbers alone (§8.5, §8.4.4, §8.6.8): a figure is mostly these ("x y l", six
# numbers and "c"), and a reader of text ignores them all. After one of them,
# ``operations(skip=...)`` reads the run of them that follows in one match, at most
# six numbers each (more is for the token-by-token reading and its caps), and only
# counts its tokens.
PATH_OPERATORS = frozenset(b"m l c v y re h S s f F f* B B* b b* n W W* w J j M i g G rg RG k K".split())
_PATH_OPERATOR = b"|".join(re.escape(op) for op in sorted(PATH_OPERATORS, key=lambda op: (-len(op), op)))
_PATH_RUN = re.compile(rb"(?:" + _WS + rb"*+(?:" + _NUMBER + _DELIMITED + _WS + rb"*+){0,6}+"
                       rb"(?:" + _PATH_OPERATOR + rb")" + _DELIMITED + rb")++")
_WORDS = re.compile(_REGULAR + rb"+")
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


class _Report:
    """The problems of one content stream: syntax errors listed up to
    _NOISE_REPORTED, each cap hit once per stream and cap."""

    __slots__ = ("caps", "noise", "problems")

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        self.noise = 0
        self.caps: set[str] = set()

    def error(self, text: str) -> None:
        self.noise += 1
        if self.noise <= _NOISE_REPORTED:
            self.problems.append(Problem(ProblemCode.CONTENT_SYNTAX, text))
        elif self.noise == _NOISE_REPORTED + 1:
            self.problems.append(Problem(ProblemCode.CONTENT_SYNTAX,
                                         "more syntax errors in this content stream not listed"))

    def cap(self, text: str, which: str) -> None:
        if which not in self.caps:
            self.caps.add(which)
            self.problems.append(Problem(ProblemCode.CAP_HIT, text))


class _Dropped(list[object]):
    """Containers nested past ``max_nesting``, as one entry of the stack: what they
    hold is dropped as it comes, and they are counted, not held, so that their
    closing delimiters close them (a stream of a million "[" holds one)."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        super().__init__()
        self.depth = 1

    def append(self, item: object, /) -> None:
        pass


#: What a token that is no operand gives (a comment, an opening delimiter).
_NOTHING = object()
_Nesting = list[tuple[bytes, list[object]]]  # the open arrays and dictionaries: opener, items


def operations(data: bytes, problems: list[str], params: Params = DEFAULT_PARAMS, *,
               skip_paths: bool = False) -> Iterator[Operation]:
    """Yield (operator, operands, index) for a content stream, skipping what is broken.

    Our own single-regex tokenizer (pdfminer.six's PSBaseParser took 70 % of run
    time on text-heavy pages). ``index`` counts top-level objects (operands and
    operators) from 0, so the operand of a showing operator is at ``index - 1``
    (the token index of R1). Strings, arrays, dictionaries, nesting and waiting
    operands are capped by ``params``; each cap hit is reported once per stream.

    The tokens of text (numbers, names, strings, hex strings, operators) are
    read in this loop itself, the rest by ``_other``. With ``skip_paths``, the run of
    ``PATH_OPERATORS`` after one of them is not yielded, its tokens only counted
    (``index`` stays that of every object).
    """
    operands: list[object] = []
    nesting: _Nesting = []
    index = pos = 0
    match = _TOKEN.match
    max_string, max_items = params.max_string_bytes, params.max_array_items
    report = _Report(problems)
    while (m := match(data, pos)) is not None:
        pos = m.end()
        kind = m.lastgroup
        value: object
        if kind == "number":
            text = m["number"]
            value = float(text) if b"." in text else int(text)
        elif kind == "name":
            value = _name(m["name"])
        elif kind == "string":
            value = raw = m["string"]
            if b"\\" in raw or len(raw) > max_string:
                value = _literal(raw, m.start("string"), max_string, report)
        elif kind == "hex":
            digits = m["hex"]
            if len(digits) > 2 * max_string:
                report.cap(f"string at byte {m.start('hex')} longer than the {_size(max_string)} string cap; cut",
                           "string")
                digits = digits[:2 * max_string]
            value = hex_bytes(digits)
        elif kind == "keyword":
            word = m["keyword"]
            if word in _CONSTANTS:
                value = _CONSTANTS[word]
            else:
                if nesting:  # an operator inside an array: the array is broken
                    report.error(f"operator {_short(word)} inside an array at byte {m.start('keyword')}")
                    nesting.clear()
                    operands = []
                if word == b"BI":
                    attrs, pos = _inline_image(data, pos, problems, params)
                    yield b"BI", [attrs], index
                else:
                    yield word, operands, index
                index += 1
                operands = []
                if skip_paths and word in PATH_OPERATORS and (run := _PATH_RUN.match(data, pos)) is not None:
                    index += len(_WORDS.findall(data, pos, run.end()))
                    pos = run.end()
                continue
        elif kind == "open" and not nesting and (simple := _simple_array(data, m.start("open"), params)):
            value, pos = simple
        else:
            value, pos = _other(m, data, nesting, params, report)
            if value is _NOTHING:
                continue
        if nesting:
            items = nesting[-1][1]
            if len(items) >= max_items:
                report.cap(f"array or dictionary with more than {max_items} items; the rest is ignored", "items")
                continue
            items.append(value)
        else:
            if len(operands) >= max_items:
                report.cap(f"more than {max_items} operands without an operator; the oldest are dropped",
                           "operands")
                del operands[:max_items // 2]
            operands.append(value)
            index += 1


def _simple_array(data: bytes, at: int, params: Params) -> tuple[list[object], int] | None:
    """The array opening at ``at`` and the offset after it, when it holds only strings
    without parentheses inside, hex strings and numbers and is within the string and
    item caps (so nothing in it is cut or reported); else None."""
    m = _SIMPLE_ARRAY.match(data, at)
    if m is None or m.end() - at > params.max_string_bytes:
        return None
    items: list[object] = []
    append = items.append
    for paren, string, digits, number in _ARRAY_ITEMS.findall(data, at + 1, m.end() - 1):
        if paren:
            append(_ESCAPE.sub(_unescape, string) if b"\\" in string else string)
        elif number:
            append(float(number) if b"." in number else int(number))
        else:
            append(hex_bytes(digits))
    if len(items) > params.max_array_items:
        return None
    return items, m.end()


def _literal(raw: bytes, at: int, max_string: int, report: _Report) -> bytes:
    """A literal string's bytes: cut at the cap, escapes (§7.3.4.2) replaced."""
    if len(raw) > max_string:
        report.cap(f"string at byte {at} longer than the {_size(max_string)} string cap; cut", "string")
        raw = raw[:max_string]
    return _ESCAPE.sub(_unescape, raw) if b"\\" in raw else raw


def _other(m: re.Match[bytes], data: bytes, nesting: _Nesting, params: Params,
           report: _Report) -> tuple[object, int]:
    """The tokens other than those of text: array and dictionary delimiters, a
    string with parentheses inside, and those that give no value (braces, which
    belong to PostScript calculator functions, comments, stray bytes). Returns
    the value (_NOTHING for none) and the offset after the token."""
    kind, pos = m.lastgroup, m.end()
    if kind == "close":
        return _close(nesting, m["close"], m.start("close"), report), pos
    if kind == "open":
        dropped = nesting[-1][1] if nesting else None
        if isinstance(dropped, _Dropped):
            dropped.depth += 1
        elif len(nesting) < params.max_nesting:
            nesting.append((m["open"], []))
        else:
            report.cap(f"arrays nested deeper than {params.max_nesting} at byte {m.start('open')}; "
                       "the inner ones are ignored", "nesting")
            nesting.append((m["open"], _Dropped()))
    elif kind == "nested":
        max_string = params.max_string_bytes
        raw, pos, cut = _nested_string(data, pos, max_string)
        if cut:
            report.cap(f"string at byte {m.end()} longer than the {_size(max_string)} string cap; cut, "
                       "and the rest of the stream ignored", "string")
        return _ESCAPE.sub(_unescape, raw), pos
    elif kind == "stray":
        report.error(f"stray byte {m['stray']!r} at {m.start('stray')} skipped")
    return _NOTHING, pos


def _close(nesting: _Nesting, delim: bytes, at: int, report: _Report) -> object:
    """Close the innermost array or dictionary: its value, or _NOTHING when it was
    dropped or the delimiter closes nothing that is open."""
    dropped = nesting[-1][1] if nesting else None
    if isinstance(dropped, _Dropped):
        dropped.depth -= 1
        if not dropped.depth:
            nesting.pop()
        return _NOTHING
    if not nesting or nesting[-1][0] != (_OPEN_ARRAY if delim == _CLOSE_ARRAY else _OPEN_DICT):
        report.error(f"unbalanced {delim.decode()} at byte {at}")
        return _NOTHING
    opened, items = nesting.pop()
    return items if opened == _OPEN_ARRAY else _as_dict(items)


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
    depth = 0  # arrays open
    while len(items) <= params.max_array_items:
        m = _TOKEN.match(data, pos)
        if m is None:
            problems.append(Problem(ProblemCode.CONTENT_SYNTAX, "inline image without ID"))
            return {}, len(data)
        pos = m.end()
        kind = m.lastgroup
        if kind == "keyword" and m["keyword"] == b"ID":
            start = pos + 1 if pos < len(data) and data[pos] in b"\x00\t\n\f\r " else pos
            attrs = _as_dict(items)
            return attrs, _end_of_inline_image(data, start, attrs, params.max_stream_bytes)
        if kind == "nested":
            _, pos, _cut = _nested_string(data, pos, params.max_string_bytes)
        else:
            depth = _inline_item(items, m, depth)
    problems.append(Problem(ProblemCode.CAP_HIT, f"inline image dictionary with more than "
                            f"{params.max_array_items} items; the rest of the stream is ignored"))
    return {}, len(data)


def _inline_item(items: list[object], m: re.Match[bytes], depth: int) -> int:
    """Add what one token of an inline image dictionary gives to ``items``, with
    ``depth`` arrays open before it: numbers, names and true/false/null at any
    depth, strings only outside arrays, and an array as an empty marker where it
    opens (Decode, a filter list). Returns the arrays open after the token."""
    kind = m.lastgroup
    if kind == "number":
        text = m["number"]
        items.append(float(text) if b"." in text else int(text))
    elif kind == "name":
        items.append(_name(m["name"]))
    elif kind == "keyword" and m["keyword"] in _CONSTANTS:
        items.append(_CONSTANTS[m["keyword"]])
    elif kind == "open" and m["open"] == _OPEN_ARRAY:
        if depth == 0:
            items.append([])
        return depth + 1
    elif kind == "close" and m["close"] == _CLOSE_ARRAY:
        return depth - 1
    elif depth == 0 and kind in ("string", "hex"):
        items.append(m[kind])
    return depth
