"""The search page at ``/`` and the sign-in form, rendered on the server.

The page is plain HTML from a Jinja2 template (autoescaped: a title holding
``<script>`` is shown as text), one form that submits by GET (so Enter searches,
the back button works and a result page can be bookmarked), and links for the
pages of results. A hit's marked page image sits in a closed ``<details>``: the
browser loads it only when it is opened. No script is needed; the little there is
(``static/page.js``) only keeps the filters of the form tidy.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader

from pdfindex.contract.display import shown
from pdfindex.contract.records import Hit, SearchOptions, SearchResult, SortOrder
from pdfindex.indexer import QueryError

from . import api
from .access import COOKIE, form_field, safe_next, session_value, token_matches
from .places import folder, other_paths, where
from .unavailable import GONE_REASON, FileUnavailable, Mend, PathProblem, is_gone, mends

STATIC = Path(__file__).resolve().parent / "static"
TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).resolve().parent / "templates"), autoescape=True,
                        trim_blocks=True, lstrip_blocks=True)
# File names, titles and authors are anyone's: control characters, bidirectional
# overrides and bytes that are not UTF-8 are shown as visible escapes, as on a terminal.
TEMPLATES.filters["shown"] = shown
TEMPLATES.filters["basename"] = lambda path: shown(os.path.basename(path) or path)
TEMPLATES.filters["folder"] = lambda path: shown(folder(path))
TEMPLATES.filters["where"] = lambda path: shown(where(path))
TEMPLATES.filters["thousands"] = "{:,}".format
TEMPLATES.filters["day"] = lambda stamp: time.strftime("%Y-%m-%d", time.gmtime(stamp))
PER_PAGE = 10
#: Page-number links on either side of the current page (besides the first and last).
PAGE_LINKS = 2
#: Below this share of resolved glyphs a page's text is marked as doubtful.
DOUBTFUL = 0.9
#: The sign-in form's largest body, in bytes.
MAX_FORM = 8192
#: The width, in pixels, of a marked page image on the page.
IMAGE_WIDTH = 900

router = APIRouter(include_in_schema=False)


@dataclass(slots=True)
class ShownHit:
    """A hit as the template shows it: the snippet cut into marked and plain runs,
    whether its page image has anything to mark, the other paths of identical
    copies, and, when no path of it is a file any more, the commands that mend the
    index (a stat per path: which of them still hold the content, only the link
    can tell, by hashing)."""

    hit: Hit
    runs: list[tuple[str, bool]]
    image: str
    pdf: str
    marked: bool = True
    others: list[str] = field(default_factory=list)
    gone: list[Mend] = field(default_factory=list)


def runs_of(snippet: str, spans: list[Any]) -> list[tuple[str, bool]]:
    """``snippet`` as (text, marked) runs from the highlight spans (sorted, clipped)."""
    runs: list[tuple[str, bool]] = []
    at = 0
    for span in sorted(spans, key=lambda s: s.start):
        start, end = max(span.start, at), min(span.end, len(snippet))
        if start >= end:
            continue
        if start > at:
            runs.append((snippet[at:start], False))
        runs.append((snippet[start:end], True))
        at = end
    if at < len(snippet):
        runs.append((snippet[at:], False))
    return runs


def _shown(hit: Hit, query: str, index_dir: Path | None) -> ShownHit:
    marked = query.strip() not in ("", "*")  # a listing (the needs-OCR one) has no words to mark
    image = urlencode({"q": query, "width": IMAGE_WIDTH} if marked else {"width": IMAGE_WIDTH})
    paths = hit.paths or [hit.path]
    gone = mends([PathProblem(p, "gone", GONE_REASON) for p in paths], index_dir) if all(map(is_gone, paths)) else []
    return ShownHit(hit, runs_of(hit.snippet, list(hit.spans)),
                    f"/api/documents/{hit.doc_hash}/pages/{hit.page}.png?{image}",
                    f"/api/documents/{hit.doc_hash}/pdf#page={hit.page}", marked, other_paths(hit.path, paths), gone)


class Page(HTMLResponse):
    """HTML in UTF-8; a lone surrogate left in page text (never valid Unicode) is
    written as its escape instead of failing the whole page."""

    def render(self, content: Any) -> bytes:
        return str(content).encode("utf-8", "backslashreplace")


def _html(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    return Page(TEMPLATES.get_template(template).render(**context), status_code=status)


@router.get("/", response_class=HTMLResponse)
def search_page(request: Request, q: Annotated[str, Query(max_length=4000)] = "",
                page: Annotated[int, Query(ge=1, le=10_000)] = 1, by_document: bool = False,
                min_coverage: Annotated[str, Query(max_length=10)] = "",
                needs_ocr: Literal["", "yes", "no"] = "", path: Annotated[str, Query(max_length=4096)] = "",
                since: Annotated[str, Query(max_length=40)] = "", until: Annotated[str, Query(max_length=40)] = "",
                sort: SortOrder = "score") -> HTMLResponse:
    st = api.state(request)
    coverage = _coverage(min_coverage)
    form = {"q": q, "by_document": by_document, "min_coverage": "" if coverage is None else coverage,
            "needs_ocr": needs_ocr, "path": path, "since": since, "until": until, "sort": sort}
    filtered = bool(path or since or until or needs_ocr or coverage is not None)
    context: dict[str, Any] = {"form": form, "result": None, "error": None, "hits": [], "groups": [],
                               "doubtful": DOUBTFUL, "pages": None}
    if not q and not filtered:
        return _html("search.html", **context)
    try:
        low, high = api.dates(since or None, until or None)
        options = SearchOptions(limit=PER_PAGE, offset=(page - 1) * PER_PAGE, by_document=by_document,
                                min_coverage=coverage, needs_ocr={"yes": True, "no": False}.get(needs_ocr),
                                path_glob=api.path_glob(path or None), timeout=st.settings.search_timeout,
                                since=low, until=high, sort=sort)
        result = st.lanes.search(q, options)
    except (QueryError, HTTPException) as exc:
        # the message may quote the query or the path: shown, like any text from outside
        context["error"] = shown(str(exc.detail) if isinstance(exc, HTTPException) else str(exc))
        return _html("search.html", status=400, **context)
    context.update(result=result, pages=_pagination(request, result, page, by_document))
    index_dir = api.served_index(st)
    if result.groups:
        context["groups"] = [(g, [_shown(h, q, index_dir) for h in g.pages]) for g in result.groups]
    else:
        context["hits"] = [_shown(h, q, index_dir) for h in result.hits]
    return _html("search.html", **context)


def _coverage(text: str) -> float | None:
    """The form's coverage filter: empty (any), or a share from 0 to 1."""
    try:
        value = float(text) if text.strip() else None
    except ValueError:
        value = -1.0
    if value is not None and not 0.0 <= value <= 1.0:
        raise HTTPException(400, f"min_coverage={text[:10]!r}: a share from 0 to 1")
    return value


def _pagination(request: Request, result: SearchResult, page: int, by_document: bool) -> dict[str, Any]:
    """Which results these are ("results 11–20 of 1,234", "of 1,000+" when the count
    stopped at its cap), and links to the previous, the next and nearby pages by
    number, keeping every other parameter. A capped count is at least what has been
    seen, and while a page is full there may be another."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]

    def link(number: int) -> str:
        return "/?" + urlencode([*params, ("page", str(number))])

    count = len(result.groups) if result.groups else len(result.hits)
    first = (page - 1) * PER_PAGE + 1
    last = first + count - 1
    at_least, total = result.total_is_lower_bound, result.total
    if at_least and 0 < count < PER_PAGE:  # a page not full is the last: now the total is known
        at_least, total = False, last
    elif at_least:
        total = max(total, last)
    more = last < total or (at_least and count == PER_PAGE)
    final = max(1, -(-total // PER_PAGE))  # the last page known to exist
    numbers = {1, *range(max(1, page - PAGE_LINKS), min(final, page + PAGE_LINKS) + 1)}
    if not at_least:
        numbers.add(final)
    links: list[tuple[int, str | None]] = []  # (number, its link: None for this page); (0, None): a gap
    for number in sorted(numbers):
        if links and number > links[-1][0] + 1:
            links.append((0, None))
        links.append((number, None if number == page else link(number)))
    if at_least and more:
        links.append((0, None))  # more pages than counted
    return {"page": page, "first": first, "last": last, "count": count, "total": total, "at_least": at_least,
            "unit": ("document" if by_document else "page") + ("" if total == 1 else "s"),
            "previous": link(page - 1) if page > 1 else None, "next": link(page + 1) if more else None,
            "links": links}


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """The icon, where a browser asks for it by itself (also for the API's JSON and
    the PDFs it shows): without it each of those asks is a 404 or a 401 in the log."""
    return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon",
                        headers={"cache-control": "public, max-age=86400"})


def unavailable(exc: FileUnavailable) -> HTMLResponse:
    """What a browser shows for a hit whose file is gone or changed: each path's
    fate and the command that mends it, instead of the API's JSON."""
    fates = exc.fates
    what = "gone" if fates == {"gone"} else "changed" if fates == {"changed"} else "unavailable"
    return _html("unavailable.html", status=exc.status_code, problems=exc.problems, mends=exc.mends, what=what)


#: Why the sign-in form is shown again (``?why=``, set by access.Access): a fixed
#: text each, so a link cannot make the form say anything else.
SIGNIN_WHY = {"wrong": "The token sent is not the token this server was started with.",
              "session": "Your session is no longer valid (was the server restarted with another token?). "
                         "Sign in again."}


@router.get("/signin", response_class=HTMLResponse)
def signin_form(request: Request, next: str = "/", why: str = "") -> Response:
    if api.state(request).token is None:
        return RedirectResponse("/", status_code=303)
    return _html("signin.html", next=safe_next(next), error=SIGNIN_WHY.get(why))


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    token = api.state(request).token
    body = b""
    async for chunk in request.stream():  # anyone may post here: read a few KiB at most
        body += chunk
        if len(body) > MAX_FORM:
            return _html("signin.html", status=413, next="/", error="That form is too large.")
    target = safe_next(form_field(body, "next"))
    if token is None:
        return RedirectResponse("/", status_code=303)
    if not token_matches(form_field(body, "token"), token):
        return _html("signin.html", status=401, next=target,
                     error="That is not the token this server was started with.")
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(COOKIE, session_value(token), httponly=True, samesite="strict", path="/")
    return response

