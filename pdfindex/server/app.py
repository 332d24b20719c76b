"""The ASGI application of ``pdfindex serve``: the JSON API, the search page and
the page images over one read-only index.

Everything a client may send is input: a malformed query or parameter is a 400
with the reason (never a 500), an unknown document a 404, and a fault of the
index's storage a 503 naming the problem. The OpenAPI description that FastAPI
builds from the endpoints is served at ``/openapi.json``, behind the token like
the rest (not FastAPI's browsable ``/docs``: its page loads scripts from a CDN).
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from pdfindex import __version__
from pdfindex.config import Settings
from pdfindex.indexer import QueryError, SearchIndexError, StorageError
from pdfindex.workers.files import read_passwords

from . import api, images, page
from .access import Access, is_loopback
from .indexes import IndexPool
from .lanes import SearchLanes, SearchStuck
from .render import PageRenderer
from .unavailable import FileUnavailable, wants_html

STATIC = Path(__file__).resolve().parent / "static"


@dataclass(frozen=True, slots=True)
class ServeOptions:
    index_dir: Path
    settings: Settings
    host: str = "127.0.0.1"
    token: str | None = None
    #: PageIndex objects lent to request threads (each keeps a searcher open).
    searchers: int = 2
    #: Processes rendering page images, and the seconds one render may take (a
    #: scanned page's marks need its OCR again: seconds, not milliseconds).
    renderers: int = 2
    render_timeout: float = 60.0
    #: Passwords for encrypted files' page images (None: ``settings.password_file``).
    password_file: Path | None = None


class PasswordFileError(Exception):
    """The password file cannot be read: a server that quietly had no passwords
    would answer every encrypted page with 409, far from the cause."""


def create_app(options: ServeOptions) -> FastAPI:
    """The application, with the index opened (FileNotFoundError: none there;
    PasswordFileError: the password file cannot be read)."""
    passwords = _passwords(options)
    app = FastAPI(title="pdfindex", version=__version__, default_response_class=api.JSONResponse, lifespan=_lifespan,
                  description="Search the pages of an index built by `pdfindex ingest`. The JSON shapes are "
                              "those of `pdfindex ... --json` (docs/json.md).",
                  docs_url=None, redoc_url=None)  # their pages load scripts from a CDN
    pool = IndexPool(options.index_dir, options.searchers)
    renderer = PageRenderer(processes=options.renderers, timeout=options.render_timeout,
                            max_memory_mb=options.settings.max_memory_mb, passwords=passwords)
    app.state.pdfindex = api.ServerState(pool, SearchLanes(pool), renderer, options.settings, options.token)
    app.include_router(api.router)
    app.include_router(images.router)
    app.include_router(page.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _errors(app)
    app.add_middleware(Access, token=options.token, loopback_only=is_loopback(options.host))
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    st: api.ServerState = app.state.pdfindex
    st.renderer.close()  # their processes end with the server
    st.lanes.close()


def _passwords(options: ServeOptions) -> list[str]:
    """The password file's passwords, for encrypted files' page images (read once:
    they go to the render processes with each job, never into an answer or a log)."""
    path = options.password_file or options.settings.password_file
    try:
        return read_passwords(path)
    except OSError as exc:
        raise PasswordFileError(f"{path}: cannot read password file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PasswordFileError(f"{path}: cannot read password file: it is not UTF-8 text") from None


def _errors(app: FastAPI) -> None:
    def error(status: int, message: str) -> api.JSONResponse:
        return api.JSONResponse({"error": message}, status_code=status)

    @app.exception_handler(QueryError)
    async def _query(_: Request, exc: QueryError) -> api.JSONResponse:
        return error(400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> api.JSONResponse:
        details = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
                            for e in exc.errors())
        return error(400, details[:500] or "invalid request")

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        if isinstance(exc, FileUnavailable) and wants_html(request):
            return page.unavailable(exc)  # the search page's link, followed by a browser
        response = error(exc.status_code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    @app.exception_handler(SearchStuck)
    async def _stuck(_: Request, exc: SearchStuck) -> api.JSONResponse:
        response = error(503, str(exc))
        response.headers["retry-after"] = "2"
        return response

    @app.exception_handler(StorageError)
    async def _storage(_: Request, exc: StorageError) -> api.JSONResponse:
        return error(503, str(exc))

    @app.exception_handler(SearchIndexError)
    async def _index(_: Request, exc: SearchIndexError) -> api.JSONResponse:
        return error(503, str(exc))
