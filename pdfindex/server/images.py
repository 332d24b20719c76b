"""``GET /api/documents/{hash}/pages/{n}.png``: a page with the query's words boxed.

The words to box are the index's own terms for the query (``indexer.marks``), so
what is boxed is what the search matched; the page is re-extracted and rendered in
the renderer's capped processes (``render.PageRenderer``: time, memory and pixel
bounds, a cache), which also check that the file still holds the indexed content.
Each way an image can fail has its own status: the page or file is not there (404),
the file changed or is encrypted (409), the page cannot be read (422), rendering
took too long or every render process is busy (503, with Retry-After).
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import Response

from pdfindex.workers.files import OutsideRoots, check_under_roots

from . import api
from .render import (
    DEFAULT_WIDTH,
    DocumentChanged,
    DocumentGone,
    RenderError,
    RendererBusy,
    RenderTimeout,
)
from .unavailable import CHANGED_REASON, GONE_REASON, FileUnavailable, PathProblem, is_gone

router = APIRouter()

@router.get("/api/documents/{doc_hash}/pages/{number}.png", summary="Page n as PNG, the words of q boxed",
            response_class=Response, responses={200: {"content": {"image/png": {}}}})
def page_png(request: Request, doc_hash: api.DocHash,
             number: Annotated[int, PathParam(ge=1, le=1_000_000, description="page number, from 1")],
             q: Annotated[str, Query(max_length=4000, description="the query whose words to box")] = "",
             width: Annotated[int, Query(ge=100, le=2000, description="image width in pixels")] = DEFAULT_WIDTH,
             ) -> Response:
    st = api.state(request)
    with st.pool.index() as ix:
        record = api.record_of(ix, doc_hash)
        terms = ix.terms_to_mark(q, timeout=st.settings.search_timeout) if q.strip() else frozenset()
    if record.page_count and number > record.page_count:
        raise HTTPException(404, f"{record.path} has {record.page_count} pages, not {number}")
    failure: RenderError | None = None
    problems: list[PathProblem] = []
    for path in record.all_paths:  # the first copy that still holds the content
        try:
            if st.settings.roots:
                check_under_roots(Path(path), st.settings.roots)
            png = st.renderer.png(path, number, terms, st.pool.language, width, doc_hash=doc_hash)
        except OutsideRoots as exc:
            problems.append(PathProblem(path, "unreadable", str(exc).removeprefix(f"{path}: ")))
        except DocumentChanged:
            problems.append(PathProblem(path, "changed", CHANGED_REASON))
        except DocumentGone as exc:
            problems.append(PathProblem(path, "gone", GONE_REASON) if is_gone(path)
                            else PathProblem(path, "unreadable", str(exc).removeprefix(f"{path}: ")))
        except RenderError as exc:
            failure = exc
            break
        else:
            return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=300"})
    if failure is None:
        raise FileUnavailable(problems, api.served_index(st))
    headers = {"retry-after": "2"} if isinstance(failure, (RendererBusy, RenderTimeout)) else None
    raise HTTPException(failure.status, str(failure), headers=headers)
