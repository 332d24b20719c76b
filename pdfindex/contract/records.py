"""Engine-neutral values that cross the index facade: what goes in (documents and
their pages), what is asked (search options, listing filters) and what comes out
(hits, results, listings, statistics). Nothing here knows Whoosh, so the pipeline,
the workers, the CLI and the server share them without loading the engine."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .enums import SORT_ORDERS, SortOrder, Status
from .problems import Problem

__all__ = ["SORT_ORDERS", "DocumentHits", "DocumentRecord", "Hit", "ListFilters", "Listing", "PageRecord",
           "SearchOptions", "SearchResult", "SortOrder", "Span", "Stats", "Status", "WriterIndex"]


@dataclass(frozen=True, slots=True)
class PageRecord:
    number: int
    text: str
    coverage: float | None
    glyphs: int
    unresolved: int
    needs_ocr: bool
    #: The page's problems, in the order extraction recorded them.
    problems: tuple[Problem, ...] = ()
    #: Where ``text`` comes from: "text" (the text layer), "ocr", "text+ocr" (OCR
    #: of the images without text added after the text layer's).
    source: str = "text"
    #: For OCR'd text: the mean word confidence (0-100) and the languages read.
    ocr_confidence: float | None = None
    ocr_languages: str = ""
    #: Chosen for OCR, which has not run yet (it runs after the text pages: issue 22).
    ocr_pending: bool = False


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One file's record: its status survives even when it has no pages, so
    failures are searchable and listable."""

    doc_hash: str
    path: str
    status: Status
    page_count: int = 0
    title: str = ""
    producer: str = ""
    size: int = 0
    mtime: float = 0.0
    ingested: float = 0.0
    error: str = ""
    attempts: int = 1
    mean_coverage: float | None = None
    author: str = ""
    subject: str = ""
    keywords: str = ""
    #: Seconds since the epoch, UTC, from Info or XMP; None where the PDF has none.
    created: float | None = None
    modified: float | None = None
    #: Every path of this content; ``path`` is the first. Empty means ``[path]``.
    paths: list[str] = field(default_factory=list)
    #: Problems of its pages, summed: code -> how many (a page may count several).
    problems: dict[str, int] = field(default_factory=dict)
    #: Pages waiting for OCR; None in an index from before OCR (its needs-OCR pages
    #: are then taken as waiting).
    ocr_pending: int | None = 0

    @property
    def all_paths(self) -> list[str]:
        return list(self.paths) if self.paths else [self.path]

    @property
    def date(self) -> float:
        """What --since/--until and --sort date use: created, else modified, else the
        file's mtime."""
        return self.created if self.created is not None else (
            self.modified if self.modified is not None else self.mtime)

    @property
    def filename(self) -> str:
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Span:
    """A highlighted stretch of a snippet, as offsets into the snippet text."""

    start: int
    end: int


@dataclass(slots=True)
class Hit:
    doc_hash: str
    path: str
    page: int
    #: relevance; None when the hits were ordered by date or path (not scored), 0
    #: for a page listed without a query
    score: float | None
    coverage: float | None
    needs_ocr: bool
    title: str = ""
    snippet: str = ""
    spans: list[Span] = field(default_factory=list)
    author: str = ""
    created: float | None = None
    modified: float | None = None
    #: every path of the hit's content (``path`` first)
    paths: list[str] = field(default_factory=list)
    #: the page's problems (empty in an index written before schema 5)
    problems: list[Problem] = field(default_factory=list)
    #: where the page's text comes from ("text", "ocr", "text+ocr") and, OCR'd, its
    #: mean word confidence (0-100)
    source: str = "text"
    ocr_confidence: float | None = None
    #: the query's words this page lacks: set on the pages that follow the few
    #: holding every word (``indexer.relaxed``), else empty
    missing: list[str] = field(default_factory=list)


@dataclass(slots=True)
class DocumentHits:
    """``--by-document``: a document's matching pages, best first."""

    doc_hash: str
    path: str
    title: str
    pages: list[Hit]

    @property
    def score(self) -> float | None:
        return self.pages[0].score


@dataclass(slots=True)
class SearchResult:
    query: str
    total: int  # matching pages (or documents when grouped)
    hits: list[Hit]
    took: float  # seconds
    partial: bool = False  # the time limit cut the search short
    groups: list[DocumentHits] = field(default_factory=list)
    note: str = ""
    #: ``total`` is a count stopped at the cap (SearchOptions.exact_count off): at
    #: least that many match.
    total_is_lower_bound: bool = False
    #: For a search that found nothing: the query with each word the index does not
    #: hold replaced by the nearest one it does ("did you mean …"), else "".
    suggestion: str = ""
    #: When pages holding most of the words follow those holding all of them
    #: (``indexer.relaxed``): how many of ``total`` hold every word; else None.
    all_words_total: int | None = None


@dataclass(frozen=True, slots=True)
class Stats:
    documents: int
    pages: int
    by_status: dict[str, int]
    size_bytes: int
    location: str
    #: Per problem code: pages with it, and documents with such a page.
    problem_pages: dict[str, int] = field(default_factory=dict)
    problem_documents: dict[str, int] = field(default_factory=dict)
    #: Pages in each shard (one entry: not sharded).
    shard_pages: tuple[int, ...] = (0,)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    limit: int = 10
    offset: int = 0
    by_document: bool = False
    min_coverage: float | None = None
    #: True: only pages flagged as needing OCR; False: only pages with usable text.
    needs_ocr: bool | None = None
    path_glob: str | None = None
    highlight: bool = True
    timeout: float = 5.0
    #: epoch seconds, inclusive bounds on the document's date (created, else
    #: modified, else mtime)
    since: float | None = None
    until: float | None = None
    sort: SortOrder = "score"
    #: Count every match for ``total``; by default counting stops at COUNT_CAP
    #: (counting was most of a common-term search) and the total is a lower bound.
    exact_count: bool = False


@dataclass(frozen=True, slots=True)
class ListFilters:
    """What to list. Page criteria (``needs_ocr``, ``min_coverage``) select pages;
    listing documents, they select the documents with at least one such page."""

    status: Status | None = None
    #: True: pages needing OCR; False: pages with a usable text layer.
    needs_ocr: bool | None = None
    min_coverage: float | None = None
    #: A glob over the indexed (absolute) path, as SearchOptions.path_glob.
    path_glob: str | None = None
    #: Seconds since the epoch (UTC), inclusive: on the file's creation date,
    #: else its modification date, else its mtime.
    since: float | None = None
    until: float | None = None
    #: Pages with this problem code (``list --problems CODE``); "" for pages with
    #: any problem. A page criterion, like ``needs_ocr``.
    problem: str | None = None
    #: Only this document's record and pages (the API's page list of one document).
    doc_hash: str | None = None

    @property
    def page_criteria(self) -> bool:
        return self.needs_ocr is not None or self.min_coverage is not None or self.problem is not None


@dataclass(slots=True)
class Listing:
    total: int
    documents: list[DocumentRecord] = field(default_factory=list)
    pages: list[Hit] = field(default_factory=list)
    took: float = 0.0


class WriterIndex(NamedTuple):
    """The index a distributed set-up's writer announced on the broker (``status``):
    its id, folder and host, and whether the writer is running."""

    id: str
    path: str
    host: str
    running: bool
