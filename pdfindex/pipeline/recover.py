"""Recovering what a damaged or truncated PDF still holds, when the normal open
(pdfminer.six's xref tables and its own line-based fallback) fails or finds no page.

Why our own: pdfminer.six's fallback (``PDFXRefFallback``) stops at the first
object it cannot parse, so a file cut anywhere inside an object (an interrupted
download: the common case) fails as a whole with "Unexpected EOF", although every
object before the cut is intact. It also only sees objects at line starts, gives
up on the catalog when no trailer survives, and trusts an object stream's /N.

Here the object table is rebuilt by scanning the bytes for ``N G obj`` (skipping
stream bodies, so a PDF embedded in a stream does not shadow the real objects),
object streams found that way are expanded from their own header (not their
/N or /First, which may lie), the trailer keys (Root, Info, Encrypt, ID) are taken
from any ``trailer`` or xref-stream dictionary that survives, and the pages come
from the page tree or, where it is missing or cut, from the /Type /Page objects
themselves in file order. Nothing here runs for a file that opens normally.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from io import BytesIO
from typing import TYPE_CHECKING, Any

from pdfminer.pdfdocument import PDFBaseXRef
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser, PDFStreamParser
from pdfminer.pdftypes import PDFObjRef, PDFStream
from pdfminer.psparser import PSLiteral

from .errors import DAMAGE, triage
from .params import strict_from_env

if TYPE_CHECKING:
    from pdfminer.pdfdocument import PDFDocument

#: ``N G obj`` anywhere (not only at a line start): writers put ``endobj 5 0 obj``
#: on one line, and byte damage joins lines.
_OBJ = re.compile(rb"(?<![0-9])([0-9]{1,10})\s+([0-9]{1,5})\s+obj(?![A-Za-z0-9_])")
_STREAM = re.compile(rb"(?<!end)stream(?:\r\n|\n|\r)")
_LENGTH = re.compile(rb"/Length\s+([0-9]{1,12})(?!\s+[0-9]+\s+R)")
_TRAILER = re.compile(rb"trailer\s*<<")
#: How far into an object its dictionary's /Type is looked for before parsing it.
_HEAD = 4096
_TYPE = re.compile(rb"/Type\s*/(Pages|Page|ObjStm|XRef|Catalog)(?![A-Za-z0-9_#.-])")
#: Only the last trailers and xref streams are read (the last one's keys win; a
#: file of a million ``trailer <<`` must not be parsed a million times).
MAX_TRAILERS = 32
#: A trailer dictionary is parsed from at most this many bytes.
TRAILER_WINDOW = 1 << 16
#: Largest object number taken from a scan: beyond it a number is damage, and a huge
#: one would only waste memory in the table.
MAX_OBJID = 10_000_000
#: Depth and size bounds of the page-tree walk (a looping or absurd tree).
MAX_TREE_DEPTH = 256
MAX_PAGES = 1_000_000

_INHERITABLE = ("Resources", "MediaBox", "CropBox", "Rotate")
_PAGE = "Page"
_PAGES = "Pages"


def damage(exc: BaseException) -> None:
    """For a handler that goes on after damage: our own bug (not damage) still
    raises in strict mode (the test suite), as everywhere in the pipeline."""
    triage(exc, strict_from_env())


def _literal(value: object) -> str | None:
    return value.name if isinstance(value, PSLiteral) and isinstance(value.name, str) else None


class Occurrences:
    """Where ``needle`` occurs in ``data``, found once (lazily), then looked up by
    bisection: repeated "next one after here" searches stay linear overall."""

    def __init__(self, data: bytes, needle: bytes | re.Pattern[bytes]) -> None:
        self.data = data
        self.needle = needle
        self._found: list[int] | None = None

    def after(self, pos: int) -> int:
        """The first occurrence at or after ``pos``, or -1."""
        if self._found is None:
            if isinstance(self.needle, bytes):
                found, at = [], self.data.find(self.needle)
                while at >= 0:
                    found.append(at)
                    at = self.data.find(self.needle, at + 1)
                self._found = found
            else:
                self._found = [m.start() for m in self.needle.finditer(self.data)]
        i = bisect_left(self._found, pos)
        return self._found[i] if i < len(self._found) else -1


class RebuiltXRef(PDFBaseXRef):
    """An object table made by scanning the file. ``get_pos`` follows pdfminer.six's
    contract: ``(None, offset, gen)`` for a plain object, ``(stream, index, 0)`` for
    one inside an object stream. The last definition of a number wins, as an
    incremental update's would."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offsets: dict[int, tuple[int | None, int, int]] = {}
        #: file position of each object's definition (an object stream's for its
        #: members), to order page objects and to let later definitions win.
        self.position: dict[int, int] = {}
        self.trailer: dict[str, Any] = {}
        self.object_streams: list[int] = []
        self.catalogs: list[int] = []  # by file position
        self.page_candidates: list[int] = []
        self.xref_streams: list[int] = []

    def __repr__(self) -> str:
        return f"<RebuiltXRef: {len(self.offsets)} objects>"

    # -- the scan (no parsing) -------------------------------------------------
    def scan(self) -> None:
        """Object headers, in file order, skipping stream bodies: they are opaque
        bytes that may hold ``N G obj`` of their own (an embedded PDF). Every
        search is a bisection in positions found once, so the scan is linear in
        the file however it is damaged."""
        data = self.data
        streams = Occurrences(data, _STREAM)
        endstreams = Occurrences(data, b"endstream")
        endobjs = Occurrences(data, b"endobj")
        skip_until = 0
        for m in _OBJ.finditer(data):
            start = m.start()
            if start < skip_until:
                continue
            objid, gen = int(m.group(1)), int(m.group(2))
            if not 0 < objid <= MAX_OBJID:
                continue
            self.offsets[objid] = (None, start, gen)
            self.position[objid] = start
            head_end = min(len(data), m.end() + _HEAD)
            endobj = endobjs.after(m.end())
            if 0 <= endobj < head_end:
                head_end = endobj
            stream = streams.after(m.end())
            in_stream = 0 <= stream < head_end
            if in_stream:
                head_end = stream
            kind = _TYPE.search(data, m.end(), head_end)
            name = kind.group(1) if kind else None
            if name == b"ObjStm":
                self.object_streams.append(objid)
            elif name == b"XRef":
                self.xref_streams.append(objid)
            elif name == b"Page":
                self.page_candidates.append(objid)
            elif name == b"Catalog":
                self.catalogs.append(objid)
            if in_stream:
                skip_until = self._stream_end(m.end(), stream, endstreams, endobjs)

    def _stream_end(self, dict_start: int, stream: int, endstreams: Occurrences, endobjs: Occurrences) -> int:
        """Where a stream's body ends: at /Length when that lands on ``endstream``,
        else at the next ``endstream``, or the next ``endobj`` when that comes first
        (a damaged ``endstream`` must not hide the objects after it)."""
        data = self.data
        body = _STREAM.match(data, stream)
        start = body.end() if body else stream
        length = _LENGTH.search(data, dict_start, stream)
        if length is not None:
            stop = start + int(length.group(1))
            if data[stop:stop + 64].lstrip().startswith(b"endstream"):
                return stop
        ends = [e for e in (endstreams.after(start), endobjs.after(start)) if e >= 0]
        return min(ends) if ends else start

    # -- what needs the parser ------------------------------------------------
    def load(self, parser: PDFParser) -> None:
        """pdfminer.six's xref contract, called while the document is being set up
        (before any decryption): the scan, then the trailer keys that survive."""
        self.scan()
        for pos in [m.start() for m in _TRAILER.finditer(self.data)][-MAX_TRAILERS:]:
            window = PDFParser(BytesIO(self.data[pos:pos + TRAILER_WINDOW]))
            if parser.doc is not None:
                window.set_document(parser.doc)  # its references resolve through the document
            try:
                window.nexttoken()  # the keyword
                _, dic = window.nextobject()
            except DAMAGE as exc:
                damage(exc)
                continue
            if isinstance(dic, dict):
                self._take_trailer_keys(dic)
        for objid in self.xref_streams[-MAX_TRAILERS:]:
            obj = self._parse_plain(parser, objid)
            if isinstance(obj, PDFStream):
                self._take_trailer_keys(obj.attrs)
        # pdfminer.six refuses a document without /Root; an empty placeholder gets
        # it through set-up, and find_catalog looks for the real one afterwards.
        self.trailer.setdefault("Root", {})

    def _take_trailer_keys(self, dic: dict[str, Any]) -> None:
        for key in ("Root", "Info", "Encrypt", "ID"):
            if key in dic:
                self.trailer[key] = dic[key]

    def _parse_plain(self, parser: PDFParser, objid: int) -> object:
        _, pos, _ = self.offsets[objid]
        try:
            parser.seek(pos)
            parser.reset()
            for _ in range(3):
                parser.nexttoken()
            _, obj = parser.nextobject()
        except DAMAGE as exc:
            damage(exc)
            return None
        return obj

    def expand_object_streams(self, doc: PDFDocument, notes: list[str]) -> None:
        """Add the members of each object stream found by the scan. A member
        defined again later as a plain object keeps the later definition."""
        for strmid in self.object_streams:
            try:
                stream = doc.getobj(strmid)
                if not isinstance(stream, PDFStream):
                    continue
                members, problem = objstm_members(stream.get_data(), stream.get("N"), stream.get("First"))
            except DAMAGE as exc:
                damage(exc)
                continue
            if problem:
                notes.append(f"object stream {strmid}: {problem}")
            where = self.position[strmid]
            for index, (objid, _offset) in enumerate(members):
                if objid == strmid or not 0 < objid <= MAX_OBJID:
                    continue
                if self.position.get(objid, -1) > where:
                    continue
                self.offsets[objid] = (strmid, index, 0)
                self.position[objid] = where

    # -- PDFBaseXRef -----------------------------------------------------------
    def get_trailer(self) -> dict[str, Any]:
        return self.trailer

    def get_objids(self) -> Iterator[int]:
        return iter(sorted(self.offsets, key=self.position.__getitem__))

    def get_pos(self, objid: int) -> tuple[int | None, int, int]:
        return self.offsets[objid]


def objstm_members(data: bytes, n: object, first: object) -> tuple[list[tuple[int, int]], str | None]:
    """The (object number, offset) pairs an object stream's header lists, and what
    its dictionary got wrong, if anything.

    When /N and /First agree (the bytes before /First are exactly 2·N integers) they
    are trusted. Otherwise each one that fits the header (a run of integer pairs
    with increasing offsets) gives a count, and the larger wins: a lie that
    shortens the header is the one that can still fit. When /First proves nothing,
    the run itself is a candidate too."""
    stated = _header_before(data, first)
    by_first = len(stated) // 2 if stated is not None else None
    if stated is not None and by_first == _count(n):
        return _pairs(stated, len(stated) // 2), None
    run = _leading_integers(data)
    in_run = len(run) // 2
    fits = [c for c in (_count(n), by_first) if c is not None and 0 < c <= in_run]
    if by_first is None:  # /First proves nothing: the run of pairs may be longer than /N
        fits.append(in_run)
    count = max(fits) if fits else in_run  # neither fits: the run is all there is
    lies = []
    if n != count:
        lies.append(f"/N says {n!r} but its header lists {count} objects")
    if by_first != count:
        lies.append(f"/First {first!r} does not end its header")
    return _pairs(run, count), "; ".join(lies)


def _count(x: object) -> int | None:
    """A count or offset from a dictionary: a non-negative integer, else None."""
    return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None


def _header_before(data: bytes, first: object) -> list[int] | None:
    """The integers before /First when that is all there is, in pairs."""
    end = _count(first)
    if not end or end > len(data):
        return None
    tokens = data[:end].split()
    if tokens and len(tokens) % 2 == 0 and all(t.isdigit() for t in tokens):
        return [int(t) for t in tokens]
    return None


def _pairs(values: list[int], count: int) -> list[tuple[int, int]]:
    return [(values[2 * i], values[2 * i + 1]) for i in range(count)]


def _leading_integers(data: bytes) -> list[int]:
    """The header as the run of integer pairs at the start whose offsets increase;
    the first object may itself be an integer, so a pair must look like one."""
    parser = PDFStreamParser(data)
    values: list[int] = []
    try:
        while True:
            _, tok = parser.nextobject()
            if not isinstance(tok, int) or isinstance(tok, bool):
                break
            values.append(tok)
    except DAMAGE as exc:
        damage(exc)
        pass
    pairs = len(values) // 2
    out: list[int] = []
    for i in range(pairs):
        objid, offset = values[2 * i], values[2 * i + 1]
        if i and offset < out[-1]:
            break
        out += [objid, offset]
    return out


def find_catalog(doc: PDFDocument, rebuilt: RebuiltXRef) -> dict[str, Any] | None:
    """The trailer's /Root if it still resolves to a dictionary, else the last
    /Type /Catalog object found (an incremental update's catalog comes last)."""
    root = rebuilt.trailer.get("Root")
    candidates: list[object] = [root] if root else []
    members = [o for o, (s, _, _) in rebuilt.offsets.items() if s is not None]
    for objid in sorted(members, key=rebuilt.position.__getitem__, reverse=True):
        candidates.append(PDFObjRef(doc, objid))
    candidates.extend(PDFObjRef(doc, objid) for objid in reversed(rebuilt.catalogs))
    for candidate in candidates:
        try:
            obj = candidate.resolve() if isinstance(candidate, PDFObjRef) else candidate
        except DAMAGE as exc:
            damage(exc)
            continue
        if isinstance(obj, dict) and (candidate is root or _literal(obj.get("Type")) == "Catalog"):
            return obj
    return None


def _resolve(doc: PDFDocument, value: object) -> object:
    for _ in range(32):
        if not isinstance(value, PDFObjRef):
            return value
        try:
            value = doc.getobj(value.objid)
        except DAMAGE as exc:
            damage(exc)
            return None
    return None


def _inherited(doc: PDFDocument, node: dict[str, Any]) -> dict[str, Any]:
    """The page's attributes with the inheritable ones filled in from its /Parent
    chain (for a page found by scan, not reached through the tree)."""
    attrs = dict(node)
    parent = _resolve(doc, node.get("Parent"))
    seen: set[int] = set()
    while isinstance(parent, dict) and id(parent) not in seen and len(seen) < MAX_TREE_DEPTH:
        seen.add(id(parent))
        for key in _INHERITABLE:
            if key not in attrs and key in parent:
                attrs[key] = parent[key]
        parent = _resolve(doc, parent.get("Parent"))
    return attrs


def tree_pages(doc: PDFDocument, catalog: dict[str, Any]) -> tuple[list[tuple[int | None, dict[str, Any]]], bool]:
    """The page tree walked without recursion, loops and absurd depth cut: the
    pages (object number, attributes with inheritance) and whether a node was
    missing or unreadable on the way (then the tree does not hold every page)."""
    out: list[tuple[int | None, dict[str, Any]]] = []
    broken = False
    seen: set[int] = set()
    stack: list[tuple[object, dict[str, Any], int]] = [(catalog.get("Pages"), {}, 0)]
    while stack and len(out) < MAX_PAGES:
        ref, inherited, depth = stack.pop()
        objid = ref.objid if isinstance(ref, PDFObjRef) else None
        if objid is not None:
            if objid in seen:
                broken = True
                continue
            seen.add(objid)
        node = _resolve(doc, ref)
        if not isinstance(node, dict):
            broken = True
            continue
        attrs = dict(node)
        for key, value in inherited.items():
            attrs.setdefault(key, value)
        kind = _literal(attrs.get("Type"))
        kids = _resolve(doc, attrs.get("Kids"))
        if kind == _PAGE or (kind is None and "Kids" not in attrs and "Contents" in attrs):
            out.append((objid, attrs))
        elif isinstance(kids, list) and depth < MAX_TREE_DEPTH:
            passed = {k: attrs[k] for k in _INHERITABLE if k in attrs}
            stack.extend((kid, passed, depth + 1) for kid in reversed(kids))
        else:
            broken = True
    return out, broken


def recovered_pages(doc: PDFDocument, rebuilt: RebuiltXRef, catalog: dict[str, Any] | None,
                    note: str) -> list[PDFPage]:
    """Pages of a rebuilt document: the tree's, then (when the tree is missing or
    was cut) the /Type /Page objects it did not reach, in file order. Every page
    carries ``note``; a page found only by scan also says so."""
    found, broken = tree_pages(doc, catalog) if catalog is not None else ([], True)
    pages: list[PDFPage] = []
    reached = {objid for objid, _ in found if objid is not None}
    for objid, attrs in found:
        page = _make_page(doc, objid, attrs, [note])
        if page is not None:
            pages.append(page)
    if broken:
        members = [o for o, (s, _, _) in rebuilt.offsets.items() if s is not None]
        candidates = sorted({*rebuilt.page_candidates, *members} - reached, key=rebuilt.position.__getitem__)
        for objid in candidates:
            if len(pages) >= MAX_PAGES:
                break
            obj = _resolve(doc, PDFObjRef(doc, objid))
            if not isinstance(obj, dict) or _literal(obj.get("Type")) != _PAGE:
                continue
            page = _make_page(doc, objid, _inherited(doc, obj),
                              [note, "page found by scanning, not through the page tree; its place is a guess"])
            if page is not None:
                pages.append(page)
    return pages


def has_content(doc: PDFDocument, page: PDFPage) -> bool:
    """Whether the page has any content stream bytes at all: a rebuilt document
    of blank pages only is no better than the normal open's error."""
    contents = _resolve(doc, page.attrs.get("Contents"))
    streams = contents if isinstance(contents, list) else [contents]
    for ref in streams[:1000]:
        stream = _resolve(doc, ref)
        if isinstance(stream, PDFStream) and (stream.rawdata or stream.data):
            return True
    return False


def _make_page(doc: PDFDocument, objid: int | None, attrs: dict[str, Any], notes: list[str]) -> PDFPage | None:
    try:
        page = PDFPage(doc, objid, attrs, None)
    except DAMAGE as exc:
        damage(exc)
        return None
    page.recovery_notes = notes  # type: ignore[attr-defined]
    return page


__all__ = ["RebuiltXRef", "find_catalog", "has_content", "objstm_members", "recovered_pages", "tree_pages"]
