"""The JSON API: the CLI's answers over HTTP, in the shapes of docs/json.md.

Every answer is what the matching command prints with ``--json`` (the same
functions build both: ``pdfindex.contract.shapes``; the option values are read by
``pdfindex.contract.options``, as the CLI reads them). A document is named only by its
content hash: no endpoint takes a path, so nothing outside the index can be asked
for, and a file is served or rendered only while its bytes still hash to the
indexed document (a file swapped for a link to something else since it was
indexed hashes differently and is refused).
"""
from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path as PathParam, Query, Request
from fastapi.responses import Response, StreamingResponse

from pdfindex.config import Settings
from pdfindex.contract.options import OptionError, parse_date, parse_problem_code, resolve_path_glob
from pdfindex.contract.records import DocumentRecord, ListFilters, SearchOptions, SortOrder, Status
from pdfindex.contract.shapes import document_json, json_text, listing_json, problems_json, result_json
from pdfindex.indexer import PageIndex
from pdfindex.workers.files import OutsideRoots, check_under_roots
from pdfindex.workers.status import status_report

from .indexes import IndexPool
from .lanes import SearchLanes
from .render import PageRenderer
from .unavailable import CHANGED_REASON, GONE_REASON, FileUnavailable, PathProblem

HASH = r"^[0-9a-f]{64}$"
#: Bytes read at a time when hashing and sending a PDF.
CHUNK = 1 << 20

router = APIRouter()


class JSONResponse(Response):
    """JSON as the CLI writes it: non-ASCII readable, and a file name that is not
    valid UTF-8 (a lone surrogate) written as its JSON escape instead of failing."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json_text(content).encode("utf-8")


@dataclass(slots=True)
class ServerState:
    """What every request uses, made once when the server starts."""

    pool: IndexPool
    lanes: SearchLanes
    renderer: PageRenderer
    settings: Settings
    token: str | None = None


def state(request: Request) -> ServerState:
    value: ServerState = request.app.state.pdfindex
    return value


def _date(value: str | None, end: bool) -> float | None:
    if value is None or value == "":
        return None
    try:
        return parse_date(value, end_of_period=end)
    except OptionError as exc:
        raise HTTPException(400, f"{'until' if end else 'since'}={value[:40]!r}: {exc}") from None


def path_glob(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if "\0" in value:
        raise HTTPException(400, "path contains a NUL character")
    return resolve_path_glob(value)


def problem_code(value: str | None) -> str | None:
    """A problem code as ``list --problems`` takes it ('' for any); an unknown one
    is a 400, as the CLI refuses it, not an empty list that looks like an answer."""
    if value is None:
        return None
    try:
        return parse_problem_code(value)
    except OptionError as exc:
        raise HTTPException(400, f"problem: {exc}") from None


def dates(since: str | None, until: str | None) -> tuple[float | None, float | None]:
    low, high = _date(since, False), _date(until, True)
    if low is not None and high is not None and low > high:
        raise HTTPException(400, "since is after until: nothing can match")
    return low, high


Limit = Annotated[int, Query(ge=1, le=1000, description="hits per page")]
Offset = Annotated[int, Query(ge=0, le=1_000_000, description="hits to skip")]
Coverage = Annotated[float | None, Query(ge=0.0, le=1.0, description="only pages with at least this text coverage")]
NeedsOcr = Annotated[bool | None, Query(description="true: only pages needing OCR; false: only pages with usable text")]
PathGlob = Annotated[str | None, Query(max_length=4096, description="a folder, a path or a glob of indexed paths")]
Since = Annotated[str | None, Query(max_length=40, description="YYYY, YYYY-MM or YYYY-MM-DD (inclusive)")]
DocHash = Annotated[str, PathParam(pattern=HASH, description="the document's content hash (SHA-256)")]


@router.get("/api/search", summary="Search pages (as `pdfindex search --json`)")
def search(request: Request, q: Annotated[str, Query(max_length=4000, description="query (docs: search --help)")] = "",
           limit: Limit = 10, offset: Offset = 0, by_document: bool = False, min_coverage: Coverage = None,
           needs_ocr: NeedsOcr = None, path: PathGlob = None, since: Since = None, until: Since = None,
           sort: SortOrder = "score", exact_count: bool = False) -> JSONResponse:
    st = state(request)
    low, high = dates(since, until)
    options = SearchOptions(limit=limit, offset=offset, by_document=by_document, min_coverage=min_coverage,
                            needs_ocr=needs_ocr, path_glob=path_glob(path), timeout=st.settings.search_timeout,
                            exact_count=exact_count, since=low, until=high, sort=sort)
    result = st.lanes.search(q, options)
    return JSONResponse(result_json(result))


@router.get("/api/documents", summary="List file records (as `pdfindex list --json`)")
def documents(request: Request, status: Status | None = None, needs_ocr: NeedsOcr = None,
              min_coverage: Coverage = None, path: PathGlob = None, since: Since = None, until: Since = None,
              problem: Annotated[str | None, Query(max_length=64, description="a problem code; '' for any")] = None,
              limit: Limit = 50, offset: Offset = 0) -> JSONResponse:
    st = state(request)
    low, high = dates(since, until)
    filters = ListFilters(status=status, needs_ocr=needs_ocr, min_coverage=min_coverage, path_glob=path_glob(path),
                          since=low, until=high, problem=problem_code(problem))
    with st.pool.index() as ix:
        listing = ix.list_documents(filters, limit, offset)
    return JSONResponse(listing_json(listing, pages=False))


def record_of(ix: PageIndex, doc_hash: str) -> DocumentRecord:
    """The document's record; a 404 naming it when the index has none."""
    record = ix.document(doc_hash)
    if record is None:
        raise HTTPException(404, f"no document {doc_hash} in the index")
    return record


@router.get("/api/documents/{doc_hash}", summary="One document: its record and every page's quality")
def document(request: Request, doc_hash: DocHash) -> JSONResponse:
    with state(request).pool.index() as ix:
        record = record_of(ix, doc_hash)
        pages = ix.list_pages(ListFilters(doc_hash=doc_hash), None, 0).pages  # by page: one path
    out = document_json(record)
    out["pages"] = [{"page": p.page, "coverage": None if p.coverage is None else round(p.coverage, 4),
                     "needs_ocr": p.needs_ocr, "problems": problems_json(p.problems)} for p in pages]
    return JSONResponse(out)


@router.get("/api/documents/{doc_hash}/pdf", summary="The PDF file itself, while it is still the indexed one",
            response_class=Response, responses={200: {"content": {"application/pdf": {}}}})
def pdf(request: Request, doc_hash: DocHash) -> StreamingResponse:
    st = state(request)
    with st.pool.index() as ix:
        record = record_of(ix, doc_hash)
    fd, size, path = open_indexed(record, st.settings.roots, served_index(st))
    name = os.path.basename(path) or "document.pdf"
    headers = {"content-length": str(size),
               "content-disposition": f"inline; filename*=UTF-8''{quote(name.encode('utf-8', 'surrogateescape'))}",
               "cache-control": "private, no-store"}
    return StreamingResponse(_chunks(fd), media_type="application/pdf", headers=headers)


def open_indexed(record: DocumentRecord, roots: tuple[Path, ...], index_dir: Path | None = None
                 ) -> tuple[int, int, str]:
    """An open descriptor of one of the record's paths whose bytes hash to the
    record (its size, and the path); FileUnavailable (404/409, each path's problem
    and the command that mends it, ``index_dir`` named in it) when none does; 409
    for a document that is not indexed. The hash is checked on the open
    descriptor, which is what is then read: nothing swapped in after the check can
    be served. A file without text (EMPTY: a scan) is served too: its pages are
    listed as needing OCR, and the page links to it."""
    if record.status not in (Status.INDEXED, Status.EMPTY):
        raise HTTPException(409, f"{record.path}: not indexed ({record.status})")
    problems = []
    for path in record.all_paths:
        try:
            if roots:
                check_under_roots(Path(path), roots)
            fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            problems.append(PathProblem(path, "gone", GONE_REASON))
            continue
        except OutsideRoots as exc:
            problems.append(PathProblem(path, "unreadable", str(exc).removeprefix(f"{path}: ")))
            continue
        except OSError as exc:
            problems.append(PathProblem(path, "unreadable", exc.strerror or str(exc)))
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                problems.append(PathProblem(path, "gone", "not a regular file"))
            elif _digest(fd) != record.doc_hash:
                problems.append(PathProblem(path, "changed", CHANGED_REASON))
            else:
                return fd, info.st_size, path
        except OSError as exc:
            problems.append(PathProblem(path, "unreadable", exc.strerror or str(exc)))
        os.close(fd)
    raise FileUnavailable(problems, index_dir)


def served_index(st: ServerState) -> Path | None:
    """The index as a command must name it (``--index``): None when it is the
    default one of the server's environment."""
    root = st.pool.root.absolute()
    return None if root == st.settings.index_dir.absolute() else root


def _digest(fd: int) -> str:
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(fd, CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def _chunks(fd: int) -> Iterator[bytes]:
    try:
        offset = 0
        while chunk := os.pread(fd, CHUNK, offset):
            offset += len(chunk)
            yield chunk
    finally:
        os.close(fd)


@router.get("/api/status", summary="Index counts, failures, problems, queues (as `pdfindex status --json`)")
def status(request: Request) -> JSONResponse:
    st = state(request)
    with st.pool.index() as ix:
        return JSONResponse(status_report(ix, st.settings))


@router.get("/healthz", summary="Liveness: answers without a token and reads nothing")
def healthz() -> JSONResponse:
    return JSONResponse({"ok": True})
