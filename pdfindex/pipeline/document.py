"""Opening a PDF with pdfminer.six's low-level parser: xref, object streams,
encryption, the page tree with inherited attributes (§7.7.3.4), document info.

Everything that can make a whole document unreadable is turned into one of the
typed errors of ``errors.py`` here, with the file named in the message.
"""
from __future__ import annotations

import os
import re
import warnings
from io import BytesIO
from typing import Any, ClassVar

from pdfminer.pdfdocument import (
    PDFBaseXRef,
    PDFDocument,
    PDFEncryptionError,
    PDFNoValidXRef,
    PDFPasswordIncorrect,
    PDFStandardSecurityHandler,
    PDFStandardSecurityHandlerV5,
    PDFXRef,
    PDFXRefStream,
)
from pdfminer.pdfexceptions import PDFObjectNotFound
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser, PDFSyntaxError
from pdfminer.pdftypes import PDFObjRef, PDFStream, int_value, resolve1
from pdfminer.psparser import PSEOF, PSBaseParser, PSKeyword, PSLiteral

from .errors import DAMAGE, ExtractionError, NotAPdfError, PasswordError, Problem, ProblemCode
from .values import number as finite_number, rect, text_string
from .geometry import Rect, intersect
from .recover import Occurrences, RebuiltXRef, damage, find_catalog, has_content, objstm_members, recovered_pages
from .streams import read_stream
from .threads import Threads, read_threads

# pdfminer.six logs recoverable damage at WARNING; we report it per page instead, but
# leave its logger as the host program set it: the CLI filters what it shows (cli/logs.py).

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
    except ValueError as exc:  # a NUL byte in the path
        raise ExtractionError(repr(name), f"cannot read file: {exc}") from exc


class _SecurityHandlerV5(PDFStandardSecurityHandlerV5):
    """AES-256 (ISO 32000-2 §7.6.4.4): /U and /O are 48 bytes, but Acrobat pads them
    to 127 and pdfminer.six hashes the owner password with the padded /U, so owner
    passwords of such files fail there. Only the first 48 bytes count."""

    def init_params(self) -> None:
        super().init_params()
        self.u, self.o = self.u[:48], self.o[:48]
        self.o_key_salt, self.u_key_salt = self.o[40:48], self.u[40:48]


#: Xref sections read through /Prev and /XRefStm before the chain counts as absurd.
MAX_XREF_SECTIONS = 4096
#: Hops through objects that are only a reference to another object (``5 0 obj 6 0 R``).
MAX_REF_HOPS = 32


class _Parser(PDFParser):
    """pdfminer.six's parser, with a stream whose /Length does not end at its
    ``endstream`` (a wrong or damaged number) cut at the ``endstream`` instead:
    pdfminer.six takes exactly /Length bytes whenever the xref was readable, so a
    /Length of 0 gives an empty page with no problem, and a long one swallows
    ``endstream endobj`` and the next objects."""

    def __init__(self, data: bytes) -> None:
        super().__init__(BytesIO(data))
        self.data = data
        self._endstreams = Occurrences(data, b"endstream")

    def do_keyword(self, pos: int, token: PSKeyword) -> None:
        super().do_keyword(pos, token)
        if token is not self.KEYWORD_STREAM or self.fallback or not self.curstack:
            return
        stream = self.curstack[-1][1]
        if not isinstance(stream, PDFStream) or stream.rawdata is None:
            return
        data = self.data
        # where pdfminer.six starts the data: after the line holding the keyword
        cr, lf = data.find(b"\r", pos, pos + 256), data.find(b"\n", pos, pos + 256)
        eol = min(i for i in (cr, lf) if i >= 0) if max(cr, lf) >= 0 else -1
        if eol < 0:
            return
        start = eol + (2 if data.startswith(b"\r\n", eol) else 1)
        end = start + len(stream.rawdata)
        if data[end:end + 64].lstrip().startswith(b"endstream"):
            return  # the healthy case
        found = self._endstreams.after(start)
        if found < 0:
            return  # cut off before its end: keep what /Length gave
        raw = data[start:found]
        for ending in (b"\r\n", b"\n", b"\r"):
            if raw.endswith(ending):
                raw = raw[:-len(ending)]
                break
        stream.rawdata = raw
        # pdfminer.six's own search may have run past it; the base seek keeps the stack
        PSBaseParser.seek(self, found + len(b"endstream"))
        doc = self.doc
        if isinstance(doc, _Document):
            note = "a stream's /Length does not end at its endstream; its data was taken up to endstream"
            if note not in doc.notes:
                doc.notes.append(note)


def _read_section(parser: PDFParser, start: int) -> PDFBaseXRef:
    """One xref section (table or stream) at ``start``, as pdfminer.six's
    ``PDFDocument.read_xref_from`` reads it, without following its /Prev."""
    parser.seek(start)
    parser.reset()
    try:
        pos, token = parser.nexttoken()
    except PSEOF as exc:
        raise PDFNoValidXRef("Unexpected EOF") from exc
    xref: PDFBaseXRef
    if isinstance(token, int):  # an xref stream (PDF 1.5)
        parser.seek(pos)
        parser.reset()
        xref = PDFXRefStream()
    else:
        if token is parser.KEYWORD_XREF:
            parser.nextline()
        xref = PDFXRef()
    xref.load(parser)
    return xref


class _Document(PDFDocument):
    """pdfminer.six's document with three guards: the xref chain is walked without
    recursion and stops at a loop, a reference chain between objects stops at a
    loop (pdfminer.six's ``resolve1`` would spin forever), and an object stream
    whose /N or /First lies is read from its own header. What they met is in
    ``notes``. With ``rebuilt``, the object table is the scan's, not the file's."""

    security_handler_registry: ClassVar[dict[int, type[PDFStandardSecurityHandler]]] = {
        **PDFDocument.security_handler_registry, 5: _SecurityHandlerV5}

    def __init__(self, parser: PDFParser, password: str = "", *, rebuilt: RebuiltXRef | None = None) -> None:
        self.notes: list[str] = []
        self._rebuilt = rebuilt
        self._scanned: RebuiltXRef | None = None
        self._found_by_scan = False
        super().__init__(parser, password)

    def _add_scanned_table(self) -> bool:
        """On the first object the file's own tables cannot give (offsets shifted by
        a deleted or inserted range, a broken entry), a table rebuilt by scanning
        becomes the last one looked in. Only then is the file scanned: a healthy
        file whose references all resolve never is. False when there is none to add."""
        if self._rebuilt is not None or self._scanned is not None or self._parser is None or not self.xrefs:
            return False
        data = getattr(self._parser, "data", None)
        if not isinstance(data, bytes):
            return False
        self._scanned = RebuiltXRef(data)
        self._scanned.scan()
        self.xrefs.append(self._scanned)
        self._scanned.expand_object_streams(self, self.notes)
        return True

    def find_xref(self, parser: PDFParser) -> int:
        return 0 if self._rebuilt is not None else super().find_xref(parser)

    def read_xref_from(self, parser: PDFParser, start: int, xrefs: list[PDFBaseXRef]) -> None:
        """pdfminer.six's walk (each section, then its /XRefStm, then its /Prev, in
        that order) with a stack instead of recursion and a record of visited offsets."""
        if self._rebuilt is not None:
            xrefs.append(self._rebuilt)
            self._rebuilt.load(parser)
            return
        seen: set[int] = set()
        stack = [start]
        while stack:
            pos = stack.pop()
            if pos in seen:
                self.notes.append(f"xref /Prev chain loops (back to offset {pos}); "
                                  "the sections before the loop are used")
                continue
            if len(seen) >= MAX_XREF_SECTIONS:
                self.notes.append(f"xref /Prev chain longer than {MAX_XREF_SECTIONS} sections; the rest is ignored")
                break
            seen.add(pos)
            xref = _read_section(parser, pos)
            xrefs.append(xref)
            trailer = xref.get_trailer()
            if "Prev" in trailer:
                stack.append(int_value(trailer["Prev"]))
            if "XRefStm" in trailer:
                stack.append(int_value(trailer["XRefStm"]))

    def getobj(self, objid: int) -> object:
        try:
            obj = super().getobj(objid)
        except PDFObjectNotFound:
            if not self._add_scanned_table():
                raise
            obj = super().getobj(objid)  # now also looked up in the scanned table
            if not self._found_by_scan:
                self._found_by_scan = True
                self.notes.append("xref table damaged: objects found by scanning the file")
        hops = 0
        while isinstance(obj, PDFObjRef):
            hops += 1
            if hops > MAX_REF_HOPS or obj.objid == objid:
                raise PDFObjectNotFound(objid)
            obj = super().getobj(obj.objid)
        return obj

    def _get_objects(self, stream: PDFStream) -> tuple[list[object], int]:
        objs, n = super()._get_objects(stream)
        first = stream.get("First")
        if (isinstance(n, int) and 0 <= 2 * n <= len(objs) and isinstance(first, int)
                and 0 < first <= len(stream.get_data()) and len(stream.get_data()[:first].split()) == 2 * n
                and all(isinstance(o, int) for o in objs[:2 * n])):
            return objs, n  # the healthy case
        members, problem = objstm_members(stream.get_data(), n, first)
        if problem:
            self.notes.append(f"object stream {stream.objid}: {problem}")
        return objs, len(members)


_CATALOG = re.compile(rb"(\d+)\s+(\d+)\s+obj\s*<<(?:(?!endobj).){0,2000}?/Type\s*/Catalog\b", re.S)


def _with_found_catalog(data: bytes) -> bytes | None:
    """A file cut off before its trailer (an interrupted download) keeps its objects;
    pdfminer.six's fallback finds them but not the catalog, so point a trailer at it."""
    matches = list(_CATALOG.finditer(data))
    if not matches:
        return None
    found = matches[-1]  # the last catalog wins, as an incremental update's would
    return data + b"\ntrailer\n<< /Root %s %s R >>\n" % (found.group(1), found.group(2))


#: The page problem of every page of a document opened from a rebuilt object table.
REBUILT_NOTE = "document structure rebuilt by scanning the file (truncated or damaged xref/trailer)"


class _Unreadable(Exception):
    """The normal open failed; ``error`` is what to raise if recovery fails too."""

    def __init__(self, error: ExtractionError) -> None:
        super().__init__(str(error))
        self.error = error


class PdfFile:
    """An opened document: its pages (page tree order), info, and ``notes``: what
    was wrong with the document's structure (each also a problem of every page)."""

    def __init__(self, source: Source, password: str | None = None) -> None:
        data, self.name = read_source(source)
        if b"%PDF-" not in data[:1024]:
            raise NotAPdfError(self.name, "not a PDF file (no %PDF- header)" if data else "empty file")
        self.data = data
        self.encrypted = False
        self.notes: list[str] = []
        self._threads: Threads | None = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                self.doc = self._open(password)
                self.pages = self._tree_pages()
            except _Unreadable as failed:
                # Only now (the fast path failed or found nothing) is the file scanned.
                first = getattr(self, "doc", None)
                earlier = first.notes if isinstance(first, _Document) else []
                self.doc, self.pages = self._recover(password, failed.error)
                if isinstance(self.doc, _Document):
                    self.doc.notes[:0] = earlier
        self.notes = list(dict.fromkeys(self.doc.notes if isinstance(self.doc, _Document) else []))
        for page in self.pages:
            notes = getattr(page, "recovery_notes", [])
            page.recovery_notes = list(dict.fromkeys([*notes, *self.notes]))  # type: ignore[attr-defined]

    def _tree_pages(self) -> list[PDFPage]:
        try:
            pages = list(PDFPage.create_pages(self.doc))
        except PasswordError:
            raise
        except DAMAGE as exc:
            damage(exc)
            raise _Unreadable(NotAPdfError(self.name, f"broken page tree: {type(exc).__name__}: {exc}")) from exc
        if not pages:
            raise _Unreadable(NotAPdfError(self.name, "no pages found (missing or broken catalog / page tree)"))
        if not isinstance(resolve1(self.doc.catalog.get("Pages")), dict):
            # pdfminer.six found these by its own scan of /Type /Page objects, without
            # the attributes they inherit: the rebuilt path does that properly.
            raise _Unreadable(NotAPdfError(self.name, "no page tree (missing or broken catalog)"))
        if getattr(self.doc, "_found_by_scan", False) and not any(has_content(self.doc, p) for p in pages):
            # the table had to be rebuilt and gave only blank pages: as in _recover,
            # that is no document
            raise _Unreadable(NotAPdfError(self.name, "no pages found (broken xref table)"))
        return pages

    def _candidates(self, password: str | None) -> list[str]:
        candidates = [password or ""]
        if password:
            # §7.6.3.3: R2-R4 passwords are PDFDocEncoding; some writers used UTF-8.
            try:
                alt = password.encode("utf-8").decode("latin-1")
                if alt != password:
                    candidates.append(alt)
            except UnicodeError:
                pass
        return candidates

    def _open(self, password: str | None) -> PDFDocument:
        last: Exception | None = None
        data = self.data
        for candidate in self._candidates(password):
            try:
                try:
                    doc = _Document(_Parser(data), password=candidate)
                except PDFSyntaxError as exc:
                    repaired = _with_found_catalog(data) if "Root" in str(exc) else None
                    if repaired is None:
                        raise
                    data = repaired
                    doc = _Document(_Parser(data), password=candidate)
                self.encrypted = doc.encryption is not None
                return doc
            except PDFPasswordIncorrect as exc:
                last = exc
            except PDFEncryptionError as exc:
                raise ExtractionError(self.name, f"unsupported encryption: {exc}") from exc
            except DAMAGE as exc:
                damage(exc)
                raise _Unreadable(NotAPdfError(
                    self.name, f"unreadable PDF structure: {type(exc).__name__}: {exc}")) from exc
        raise self._password_error(password) from last

    def _password_error(self, password: str | None) -> PasswordError:
        if password is None:
            return PasswordError(self.name, "encrypted; a password is required", missing=True)
        return PasswordError(self.name, "encrypted; the password is wrong", missing=False)

    def _recover(self, password: str | None, error: ExtractionError) -> tuple[PDFDocument, list[PDFPage]]:
        """The document from an object table rebuilt by scanning; ``error`` (the
        normal open's) is raised when that finds no page either."""
        if b"%%EOF" not in self.data[-1024:]:
            # the usual cause (an interrupted download), said first: the parser's
            # own words ("Unexpected EOF") do not tell a user the file is cut short
            error = NotAPdfError(self.name, f"file is truncated (no %%EOF at its end) and no page could be "
                                            f"recovered; {error.problem}")
        last: Exception | None = None
        for candidate in self._candidates(password):
            rebuilt = RebuiltXRef(self.data)
            try:
                doc = _Document(_Parser(self.data), password=candidate, rebuilt=rebuilt)
            except PDFPasswordIncorrect as exc:
                last = exc
                continue
            except PDFEncryptionError as exc:
                raise ExtractionError(self.name, f"unsupported encryption: {exc}") from exc
            except DAMAGE as exc:
                damage(exc)
                raise error from None
            try:
                # Objects parsed while the table was built were read before any
                # decryption was set up: drop them.
                doc._cached_objs.clear()
                doc._parsed_objs.clear()
                rebuilt.expand_object_streams(doc, doc.notes)
                catalog = find_catalog(doc, rebuilt)
                if catalog is not None:
                    doc.catalog = catalog
                pages = recovered_pages(doc, rebuilt, catalog, REBUILT_NOTE)
            except DAMAGE as exc:
                damage(exc)
                raise error from None
            if not any(has_content(doc, page) for page in pages):
                raise error
            self.encrypted = doc.encryption is not None
            return doc, pages
        raise self._password_error(password) from last

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def threads(self, strict: bool = False) -> Threads:
        """The article threads' beads, page by page (threads.py): read once, when the
        first page asks, since most documents have none and a page needs only its own."""
        if self._threads is None:
            self._threads = read_threads(self.doc.catalog, self.pages, strict)
        return self._threads

    def info(self) -> dict[str, str]:
        """Document info strings (Title, Author, Producer, ...), decoded."""
        out: dict[str, str] = {}
        for entry in self.doc.info:
            for key, value in entry.items():
                value = resolve1(value)
                if isinstance(value, bytes):
                    out[str(key)] = text_string(value).strip("\x00").strip()
                elif isinstance(value, PSLiteral):
                    out[str(key)] = str(value.name)
        return out


def visible_box(page: PDFPage, problems: list[str]) -> Rect:
    """R10: the CropBox clipped to the MediaBox, both inherited through the page tree
    (pdfminer.six copies inheritable attributes down into ``page.attrs``).

    Also where a page takes on what was wrong with the document's structure
    (``PdfFile.notes``, a rebuilt object table): this runs first for every page."""
    problems.extend(Problem(ProblemCode.STRUCTURE_DAMAGED, note) for note in getattr(page, "recovery_notes", ()))
    media = rect(page.attrs.get("MediaBox"))
    if media is None or media[0] == media[2] or media[1] == media[3]:
        problems.append(Problem(ProblemCode.BOX_INVALID, "missing or invalid MediaBox; US Letter assumed"))
        media = LETTER
    crop = rect(page.attrs.get("CropBox"))
    if crop is None:
        return media
    box = intersect(crop, media)
    if box is None:
        problems.append(Problem(ProblemCode.BOX_INVALID, "CropBox does not overlap the MediaBox; MediaBox used"))
        return media
    return box


def page_rotation(page: PDFPage) -> int:
    """The page's /Rotate (inherited, §7.7.3.3) as 0, 90, 180 or 270 degrees
    clockwise: how a viewer turns the page. The standard allows only multiples of
    90; any other number counts its whole quarter turns (135 is 90, -45 is 0) and
    a value that is not a number is 0, as pdfium reads it, so the layout text
    (R15) is turned as the page images of ``pdfindex serve`` show the page."""
    turns = int(finite_number(page.attrs.get("Rotate")) / 90)
    return turns % 4 * 90


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
                problems.append(Problem(ProblemCode.STREAM_DAMAGED, f"content stream {number} is not a stream"))
            continue
        data = read_stream(stream, f"content stream {number}", problems)
        if data is not None:
            chunks.append(data)
    return b"\n".join(chunks)


def page_resources(page: PDFPage) -> dict[str, Any]:
    resources = resolve1(page.attrs.get("Resources"))
    return resources if isinstance(resources, dict) else {}
