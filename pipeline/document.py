"""Opening a PDF with pdfminer.six's low-level parser: xref, object streams,
encryption, the page tree with inherited attributes (§7.7.3.4), document info.

Everything that can make a whole document unreadable is turned into one of the
typed errors of ``errors.py`` here, with the file named in the message.
"""
from __future__ import annotations

import logging
import os
import re
import warnings
from io import BytesIO
from typing import Any, ClassVar

from pdfminer.pdfdocument import (
    PDFDocument,
    PDFEncryptionError,
    PDFPasswordIncorrect,
    PDFStandardSecurityHandler,
    PDFStandardSecurityHandlerV5,
)
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser, PDFSyntaxError
from pdfminer.pdftypes import PDFStream, resolve1
from pdfminer.psparser import PSLiteral
from pdfminer.utils import decode_text

from .errors import DAMAGE, ExtractionError, NotAPdfError, PasswordError
from .geometry import Rect, intersect, normalize_rect
from .streams import read_stream

# pdfminer.six logs recoverable damage at WARNING; we report it per page instead.
logging.getLogger("pdfminer").setLevel(logging.ERROR)

Source = str | os.PathLike[str] | bytes

LETTER: Rect = (0.0, 0.0, 612.0, 792.0)


def read_source(source: Source) -> tuple[bytes, str]:
    """The file's bytes and the name used in messages."""
    if isinstance(source, bytes):
        return source, "<bytes>"
    name = os.fspath(source)
    try:
        with open(name, "rb") as fh:
            return fh.read(), name
    except OSError as exc:
        raise ExtractionError(name, f"cannot read file: {exc.strerror or exc}") from exc


def rect_value(value: object) -> Rect | None:
    value = resolve1(value)
    if not isinstance(value, list) or len(value) != 4:
        return None
    nums = [resolve1(v) for v in value]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in nums):
        return None
    return normalize_rect((float(nums[0]), float(nums[1]), float(nums[2]), float(nums[3])))


class _SecurityHandlerV5(PDFStandardSecurityHandlerV5):
    """AES-256 (ISO 32000-2 §7.6.4.4): /U and /O are 48 bytes, but Acrobat pads them
    to 127 and pdfminer.six hashes the owner password with the padded /U, so owner
    passwords of such files fail there. Only the first 48 bytes count."""

    def init_params(self) -> None:
        super().init_params()
        self.u, self.o = self.u[:48], self.o[:48]
        self.o_key_salt, self.u_key_salt = self.o[40:48], self.u[40:48]


class _Document(PDFDocument):
    security_handler_registry: ClassVar[dict[int, type[PDFStandardSecurityHandler]]] = {
        **PDFDocument.security_handler_registry, 5: _SecurityHandlerV5}


_CATALOG = re.compile(rb"(\d+)\s+(\d+)\s+obj\s*<<(?:(?!endobj).){0,2000}?/Type\s*/Catalog\b", re.S)


def _with_found_catalog(data: bytes) -> bytes | None:
    """A file cut off before its trailer (an interrupted download) keeps its objects;
    pdfminer.six's fallback finds them but not the catalog, so point a trailer at it."""
    matches = list(_CATALOG.finditer(data))
    if not matches:
        return None
    found = matches[-1]  # the last catalog wins, as an incremental update's would
    return data + b"\ntrailer\n<< /Root %s %s R >>\n" % (found.group(1), found.group(2))


class PdfFile:
    """An opened document: its pages (page tree order) and info."""

    def __init__(self, source: Source, password: str | None = None) -> None:
        data, self.name = read_source(source)
        if b"%PDF-" not in data[:1024]:
            raise NotAPdfError(self.name, "not a PDF file (no %PDF- header)" if data else "empty file")
        self.data = data
        self.encrypted = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.doc = self._open(password)
            try:
                self.pages: list[PDFPage] = list(PDFPage.create_pages(self.doc))
            except PasswordError:
                raise
            except DAMAGE as exc:
                raise NotAPdfError(self.name, f"broken page tree: {type(exc).__name__}: {exc}") from exc
        if not self.pages:
            raise NotAPdfError(self.name, "no pages found (missing or broken catalog / page tree)")

    def _open(self, password: str | None) -> PDFDocument:
        candidates = [password or ""]
        if password:
            # §7.6.3.3: R2-R4 passwords are PDFDocEncoding; some writers used UTF-8.
            try:
                alt = password.encode("utf-8").decode("latin-1")
                if alt != password:
                    candidates.append(alt)
            except UnicodeError:
                pass
        last: Exception | None = None
        data = self.data
        for candidate in candidates:
            try:
                try:
                    doc = _Document(PDFParser(BytesIO(data)), password=candidate)
                except PDFSyntaxError as exc:
                    repaired = _with_found_catalog(data) if "Root" in str(exc) else None
                    if repaired is None:
                        raise
                    data = repaired
                    doc = _Document(PDFParser(BytesIO(data)), password=candidate)
                self.encrypted = doc.encryption is not None
                return doc
            except PDFPasswordIncorrect as exc:
                last = exc
            except PDFEncryptionError as exc:
                raise ExtractionError(self.name, f"unsupported encryption: {exc}") from exc
            except DAMAGE as exc:
                raise NotAPdfError(self.name, f"unreadable PDF structure: {type(exc).__name__}: {exc}") from exc
        if password is None:
            raise PasswordError(self.name, "encrypted; a password is required", missing=True) from last
        raise PasswordError(self.name, "encrypted; the password is wrong", missing=False) from last

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def info(self) -> dict[str, str]:
        """Document info strings (Title, Author, Producer, ...), decoded."""
        out: dict[str, str] = {}
        for entry in self.doc.info:
            for key, value in entry.items():
                value = resolve1(value)
                if isinstance(value, bytes):
                    out[str(key)] = decode_text(value).strip("\x00").strip()
                elif isinstance(value, PSLiteral):
                    out[str(key)] = str(value.name)
        return out


def visible_box(page: PDFPage, problems: list[str]) -> Rect:
    """R10: the CropBox clipped to the MediaBox, both inherited through the page tree
    (pdfminer.six copies inheritable attributes down into ``page.attrs``)."""
    media = rect_value(page.attrs.get("MediaBox"))
    if media is None or media[0] == media[2] or media[1] == media[3]:
        problems.append("missing or invalid MediaBox; US Letter assumed")
        media = LETTER
    crop = rect_value(page.attrs.get("CropBox"))
    if crop is None:
        return media
    box = intersect(crop, media)
    if box is None:
        problems.append("CropBox does not overlap the MediaBox; MediaBox used")
        return media
    return box


def page_content(page: PDFPage, problems: list[str]) -> bytes:
    """All content streams of a page joined; a stream that will not decode is
    reported and skipped (a stream boundary is a token boundary, §7.8.2)."""
    contents = resolve1(page.attrs.get("Contents"))
    streams = contents if isinstance(contents, list) else [contents] if contents is not None else []
    chunks: list[bytes] = []
    for number, ref in enumerate(streams, 1):
        stream = resolve1(ref)
        if not isinstance(stream, PDFStream):
            if stream is not None:
                problems.append(f"content stream {number} is not a stream")
            continue
        data = read_stream(stream, f"content stream {number}", problems)
        if data is not None:
            chunks.append(data)
    return b"\n".join(chunks)


def page_resources(page: PDFPage) -> dict[str, Any]:
    resources = resolve1(page.attrs.get("Resources"))
    return resources if isinstance(resources, dict) else {}
