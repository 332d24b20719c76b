"""Listing documents and pages of an index on Tantivy: ``listing``'s filters,
order and rows, without a query or scoring.

The rows are ``listing``'s own (``page_hit``, ``focused``, the dates of
``in_dates``); the order is the one Whoosh's listing reads from its sorted path
terms: by the path a row shows (with ``--path``, the first of the document's paths
the glob selects), then page. Tantivy gives the matching documents; their stored
fields give the path and page to sort by.
"""
from __future__ import annotations

import time
from typing import Any

import tantivy

from pdfindex.contract.records import Hit, ListFilters, Listing

from .listing import focused, in_dates, page_hit
from .schema import KIND_DOC, KIND_PAGE, doc_from_stored, path_term
from .tantivy_query import glob_regex
from .tantivy_schema import matching, stored_of

_Occur = tantivy.Occur


def _all(searcher: tantivy.Searcher, parts: list[tantivy.Query]) -> list[dict[str, Any]]:
    query = tantivy.Query.boolean_query([(_Occur.Must, part) for part in parts])
    return [stored_of(searcher.doc(address)) for address in matching(searcher, query)]


def _page_parts(schema: tantivy.Schema, filters: ListFilters) -> list[tantivy.Query]:
    parts = [tantivy.Query.term_query(schema, "kind", KIND_PAGE)]
    if filters.doc_hash is not None:
        parts.append(tantivy.Query.term_query(schema, "doc_hash", filters.doc_hash))
    if filters.needs_ocr is not None:
        parts.append(tantivy.Query.term_query(schema, "needs_ocr", filters.needs_ocr))
    if filters.min_coverage is not None:
        parts.append(tantivy.Query.range_query(schema, "coverage", tantivy.FieldType.Float,
                                               lower_bound=float(filters.min_coverage)))
    if filters.path_glob:
        parts.append(tantivy.Query.regex_query(schema, "paths", glob_regex(path_term(filters.path_glob))))
    if filters.problem is not None:
        # codes are indexed lower-case; "" is any code
        parts.append(tantivy.Query.term_query(schema, "problem", filters.problem.lower()) if filters.problem
                     else tantivy.Query.regex_query(schema, "problem", ".*"))
    return parts


def _records(searcher: tantivy.Searcher, schema: tantivy.Schema, filters: ListFilters) -> dict[str, dict[str, Any]]:
    """The stored file records passing the record filters (status, path, dates)."""
    parts = [tantivy.Query.term_query(schema, "kind", KIND_DOC)]
    if filters.doc_hash is not None:
        parts.append(tantivy.Query.term_query(schema, "doc_hash", filters.doc_hash))
    if filters.status is not None:
        parts.append(tantivy.Query.term_query(schema, "status", str(filters.status)))
    if filters.path_glob:
        parts.append(tantivy.Query.regex_query(schema, "paths", glob_regex(path_term(filters.path_glob))))
    return {stored["doc_hash"]: stored for stored in _all(searcher, parts) if in_dates(stored, filters)}


def _matched_pages(searcher: tantivy.Searcher, schema: tantivy.Schema, filters: ListFilters) -> list[dict[str, Any]]:
    """The pages passing ``filters``, in the listing's order."""
    pages = _all(searcher, _page_parts(schema, filters))
    if filters.status is not None or filters.since is not None or filters.until is not None:
        records = _records(searcher, schema, filters)
        pages = [p for p in pages if p["doc_hash"] in records]
    glob = filters.path_glob
    return sorted(pages, key=lambda p: (path_term(focused(p, glob).get("path", "")), p["doc_hash"], p.get("page", 0)))


def list_pages(searcher: tantivy.Searcher, schema: tantivy.Schema, filters: ListFilters, limit: int | None,
               offset: int = 0) -> Listing:
    """Pages passing ``filters``, by path then page (``listing.list_pages``)."""
    started = time.perf_counter()
    pages = _matched_pages(searcher, schema, filters)
    stop = None if limit is None else offset + limit
    return Listing(total=len(pages), pages=[page_hit(p, filters.path_glob) for p in pages[offset:stop]],
                   took=time.perf_counter() - started)


def list_page_groups(searcher: tantivy.Searcher, schema: tantivy.Schema, filters: ListFilters, limit: int | None,
                     offset: int = 0) -> tuple[int, list[list[Hit]]]:
    """Pages passing ``filters`` grouped by document: the number of documents and
    the groups from ``offset``, at most ``limit`` (``listing.list_page_groups``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for stored in _matched_pages(searcher, schema, filters):
        groups.setdefault(stored["doc_hash"], []).append(stored)
    stop = None if limit is None else offset + limit
    shown = [[page_hit(p, filters.path_glob) for p in group] for group in list(groups.values())[offset:stop]]
    return len(groups), shown


def list_documents(searcher: tantivy.Searcher, schema: tantivy.Schema, filters: ListFilters, limit: int | None,
                   offset: int = 0) -> Listing:
    """File records passing ``filters``, by path; with page criteria, only files
    with at least one such page (``listing.list_documents``)."""
    started = time.perf_counter()
    records = {h: focused(r, filters.path_glob) for h, r in _records(searcher, schema, filters).items()}
    if filters.page_criteria:
        keep = {p["doc_hash"] for p in _all(searcher, _page_parts(schema, filters))}
        records = {h: r for h, r in records.items() if h in keep}
    ordered = sorted(records.values(), key=lambda r: (path_term(r.get("path", "")), r["doc_hash"]))
    stop = None if limit is None else offset + limit
    return Listing(total=len(ordered), documents=[doc_from_stored(r) for r in ordered[offset:stop]],
                   took=time.perf_counter() - started)
