"""R16 whole documents: a page range written out as one text, pages separated.

Pages are extracted and written one at a time, so a long book is never held
whole. A file is written beside its final name and renamed into place when every
page is written: a failure (an unreadable file, a full disk, Ctrl-C) leaves the
previous file, or none, never half a text.
"""
from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import BinaryIO

from .document import PdfFile, Source
from .extract import Page, iter_pages
from .ocr.options import OcrSettings
from .params import DEFAULT_PARAMS, Params

#: What R16 puts between pages unless told otherwise.
FORM_FEED = "\f"
BOM = b"\xef\xbb\xbf"


def export_text(source: Source | PdfFile, out: BinaryIO | str | Path, *, password: str | None = None,
                pages: Iterable[int] | None = None, separator: str = FORM_FEED, bom: bool = False,
                layout: bool = False, params: Params = DEFAULT_PARAMS, ocr: OcrSettings | None = None) -> int:
    """Write the text of ``pages`` (None: all) of ``source`` to ``out`` (a path, or
    a binary stream) as UTF-8, ``separator`` between pages, a BOM first if ``bom``
    (``layout``: R15's grid text; ``ocr``: pages OCR'd as it decides); return the number of pages written. Pages past
    the last are not written (ask ``parse_page_ranges`` for an error instead).
    Raises what ``extract`` raises for a document that cannot be read, before
    anything is written to a path."""
    pdf = source if isinstance(source, PdfFile) else PdfFile(source, password)
    each = partial(iter_pages, pdf, pages, params=params, layout=layout, ocr=ocr, password=password)
    if isinstance(out, (str, Path)):
        return _to_path(each, Path(out), separator, bom)
    return _write(each, out, separator, bom)


def _write(each: Callable[[], Iterator[Page]], out: BinaryIO, separator: str, bom: bool) -> int:
    sep = _utf8(separator)
    if bom:
        out.write(BOM)
    written = 0
    for page in each():
        if written:
            out.write(sep)
        out.write(_utf8(page.text))
        written += 1
    return written


def _to_path(each: Callable[[], Iterator[Page]], path: Path, separator: str, bom: bool) -> int:
    temp = path.with_name(f".{path.name}.{os.getpid()}.part")  # same folder: the rename is atomic
    try:
        with open(temp, "xb") as fh:  # the usual permissions (umask), never an existing file
            written = _write(each, fh, separator, bom)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return written


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    """UTF-8; a lone surrogate (half a pair from a broken ToUnicode) becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
