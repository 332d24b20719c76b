"""The records moved to ``pdfindex.contract.records`` (issue 21); this name stays
for the worker modules until they import the contract."""
from pdfindex.contract.limits import COUNT_CAP
from pdfindex.contract.problems import Problem as PageProblem
from pdfindex.contract.records import (
    DocumentHits,
    DocumentRecord,
    Hit,
    PageRecord,
    SearchOptions,
    SearchResult,
    Span,
    Stats,
    Status,
)

__all__ = ["COUNT_CAP", "DocumentHits", "DocumentRecord", "Hit", "PageProblem", "PageRecord", "SearchOptions",
           "SearchResult", "Span", "Stats", "Status"]
