"""Typed values out of PDF objects: a name, a number, a matrix, a rectangle, a
text string.

A dictionary entry may be an indirect reference, a number where a name belongs, a
boolean (which Python counts as an int), an infinity (a 400-digit number), or an
array of the wrong length: these helpers resolve the reference and say what the
value is, or that it is not one. The lenient ones (``name``, ``number``,
``matrix``, ``rect``) give a default or None, for values a page can do without;
``strict_number`` and ``strict_matrix`` raise ``Damaged`` for operands of content
operators, whose operation is then skipped and reported (R17).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pdfminer.pdftypes import resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import PDFDocEncoding

from .errors import Damaged, brief
from .geometry import Matrix, Rect, normalize_rect


def name(x: object) -> str:
    """A name's text (a string or bytes given in its place read as Latin-1); ''."""
    x = resolve1(x)
    if isinstance(x, PSLiteral):
        return str(x.name)
    if isinstance(x, bytes):
        return x.decode("latin-1")
    return x if isinstance(x, str) else ""


#: A language escape of a Unicode text string: ESC, an ISO 639 language code and
#: maybe an ISO 3166 country code, ESC. The codes are two bytes each, so in UTF-16
#: one code unit each (some writers spend one a letter, hence up to four).
_LANGUAGE_ESCAPE = re.compile("\x1b[^\x1b]{1,4}\x1b")


def text_string(data: bytes) -> str:
    """A text string (Info entries, /ActualText: ISO 32000-2 §7.9.2.2) as Unicode,
    by its byte order mark: UTF-16BE after FE FF, UTF-8 after EF BB BF (PDF 2.0;
    read as PDFDocEncoding it was "ï»¿" and mojibake), UTF-16LE after FF FE (not in
    the standard, but written; no PDFDocEncoding text starts "ÿþ"), else
    PDFDocEncoding. Bytes that do not decode become U+FFFD: a broken title must not
    fail a file, and the rest of it stays readable. Language escapes are dropped:
    they mark the text, they are not part of it."""
    if data.startswith(b"\xef\xbb\xbf"):
        text = data[3:].decode("utf-8", "replace")
    elif data.startswith((b"\xfe\xff", b"\xff\xfe")):
        codec = "utf-16-be" if data[0] == 0xFE else "utf-16-le"
        text = data[2:len(data) - len(data) % 2].decode(codec, "replace")  # an odd last byte is padding
    else:
        return "".join(PDFDocEncoding[b] for b in data)
    return _LANGUAGE_ESCAPE.sub("", text) if "\x1b" in text else text


def _finite(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def number(x: object, default: float = 0.0) -> float:
    """A finite number, else ``default``."""
    value = _finite(resolve1(x))
    return default if value is None else value


def matrix(x: object) -> Matrix | None:
    """A six-number array as a matrix, else None."""
    x = resolve1(x)
    if not isinstance(x, list) or len(x) != 6:
        return None
    found = [_finite(resolve1(v)) for v in x]
    numbers = [v for v in found if v is not None]
    if len(numbers) != 6:
        return None
    a, b, c, d, e, f = numbers
    return (a, b, c, d, e, f)


def rect(x: object) -> Rect | None:
    """A four-number array as a normalized rectangle, else None."""
    x = resolve1(x)
    if not isinstance(x, list) or len(x) != 4:
        return None
    numbers = [v for v in (_finite(resolve1(v)) for v in x) if v is not None]
    if len(numbers) != 4:
        return None
    return normalize_rect((numbers[0], numbers[1], numbers[2], numbers[3]))


def strict_number(x: object) -> float:
    """An operand that must be a finite number."""
    value = _finite(x)
    if value is None:
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            raise Damaged("number out of range")
        raise Damaged(f"number expected, got {brief(repr(x), 60)}")
    return value


def strict_matrix(args: Sequence[object]) -> Matrix:
    a, b, c, d, e, f = (strict_number(v) for v in args)
    return (a, b, c, d, e, f)
