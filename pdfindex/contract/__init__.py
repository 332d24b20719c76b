"""The contract: what the layers say to each other, light enough for every one of
them to import. Records and enums (status, problem codes, sort orders), the limits
they must agree on, the JSON shapes of docs/json.md, and the option values the CLI
and the server both read. It imports nothing of pdfindex's other layers and none of
their engines (Whoosh, pdfminer, Celery, Redis): ``tests/test_layering.py`` checks.
"""
if __name__ != "pdfindex.contract":  # the top-level contract/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.contract, not {__name__} (README, Layout)")
from .limits import COUNT_CAP, MAX_SHARDS
from .problems import MAX_LINE, PROBLEM_CODES, Problem, ProblemCode, as_problem, brief, code_of
from .records import (
    SORT_ORDERS,
    DocumentHits,
    DocumentRecord,
    Hit,
    ListFilters,
    Listing,
    PageRecord,
    SearchOptions,
    SearchResult,
    SortOrder,
    Span,
    Stats,
    Status,
    WriterIndex,
)

__all__ = [
    "COUNT_CAP", "MAX_LINE", "MAX_SHARDS", "PROBLEM_CODES", "SORT_ORDERS", "DocumentHits", "DocumentRecord", "Hit",
    "ListFilters", "Listing", "PageRecord", "Problem", "ProblemCode", "SearchOptions", "SearchResult", "SortOrder",
    "Span", "Stats", "Status", "WriterIndex", "as_problem", "brief", "code_of",
]
