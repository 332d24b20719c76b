"""Listing documents and pages straight from the index: filters without a query.

"Every page that needs OCR" or "every failed file" is not a search: nothing is
parsed, scored, highlighted or expanded. Each filter is a set of document numbers
read from postings (``needs_ocr``, ``coverage``, ``path``, ``status``, ``problem``), dates are
read from the file records (far fewer than pages), and the order (path, then page)
comes from walking the sorted ``path`` terms, so stored fields are read only for
the rows shown. (Listing every page with ``search '*'`` used to expand ``*`` into
every term of the index before the time limit even started: 5 s on 620 pages.)
"""
from __future__ import annotations

import fnmatch
import time
from collections.abc import Iterable, Iterator
from typing import Any

from whoosh.query import And, Every, NumericRange, Query, Term, Wildcard
from whoosh.searching import Searcher

from pdfindex.contract.records import Hit, ListFilters, Listing

from .schema import KIND_DOC, KIND_PAGE, doc_from_stored, path_term, problems_of

_SNIPPET_CHARS = 160


def document_date(stored: dict[str, Any]) -> float | None:
    """The date ``--since/--until`` compare: created, else modified, else the
    file's mtime (None when none is known)."""
    for name in ("created", "modified", "mtime"):
        value = stored.get(name)
        if isinstance(value, int | float) and value:
            return float(value)
    return None


def in_dates(stored: dict[str, Any], filters: ListFilters) -> bool:
    if filters.since is None and filters.until is None:
        return True
    date = document_date(stored)
    if date is None:
        return False
    return (filters.since is None or date >= filters.since) and (filters.until is None or date <= filters.until)


def _term_matches(term: str, pattern: str) -> bool:
    """Whether the indexed path ``term`` is one the ``Wildcard`` of ``_path_query``
    matches: Whoosh takes a pattern without ``*`` or ``?`` for a plain term, and
    matches any other as ``fnmatch`` does, case and all."""
    if "*" not in pattern and "?" not in pattern:
        return term == pattern
    return fnmatch.fnmatchcase(term, pattern)


def glob_selects(path: str, glob: str) -> bool:
    """Whether the ``path_glob`` filter of a listing or search selects ``path``."""
    return _term_matches(path_term(path), path_term(glob))


def focused(stored: dict[str, Any], glob: str | None) -> dict[str, Any]:
    """The stored fields as ``--path`` shows them: the paths the glob selects first
    (in path order, the order of the listing), then the others, and ``path`` the first
    of them. Identical copies are one document with several paths, and its first path
    may lie outside the folder asked for; a listing of that folder must show the copy
    inside it. Without a glob (or an index without the ``paths`` list), unchanged."""
    paths = list(stored.get("paths") or [])
    if not glob or len(paths) < 2:
        return stored
    pattern = path_term(glob)
    inside = sorted((p for p in paths if _term_matches(path_term(p), pattern)), key=path_term)
    if not inside:
        return stored
    ordered = inside + [p for p in paths if p not in inside]
    return {**stored, "path": ordered[0], "paths": ordered}


def _path_query(searcher: Searcher, glob: str) -> Query:
    """Any path of the content (identical copies share a record) where the index
    records them all, else the one path."""
    field_name = "paths" if "paths" in searcher.schema else "path"
    return Wildcard(field_name, path_term(glob))


def _docs(searcher: Searcher, query: Query) -> set[int]:
    return set(searcher.docs_for_query(query))


def _page_query(searcher: Searcher, filters: ListFilters) -> Query:
    parts: list[Query] = [Term("kind", KIND_PAGE)]
    if filters.doc_hash is not None:
        parts.append(Term("doc_hash", filters.doc_hash))
    if filters.needs_ocr is not None:
        parts.append(Term("needs_ocr", filters.needs_ocr))
    if filters.min_coverage is not None:
        parts.append(NumericRange("coverage", filters.min_coverage, None))
    if filters.path_glob:
        parts.append(_path_query(searcher, filters.path_glob))
    if filters.problem is not None:
        # codes are indexed lower-case; an unknown one is a term no page has
        parts.append(Term("problem", filters.problem.lower()) if filters.problem else Every("problem"))
    return And(parts)


def _records(searcher: Searcher, filters: ListFilters) -> dict[str, dict[str, Any]]:
    """The stored file records passing the record filters (status, path, dates),
    by document hash."""
    parts: list[Query] = [Term("kind", KIND_DOC)]
    if filters.doc_hash is not None:
        parts.append(Term("doc_hash", filters.doc_hash))
    if filters.status is not None:
        parts.append(Term("status", str(filters.status)))
    if filters.path_glob:
        parts.append(_path_query(searcher, filters.path_glob))
    out: dict[str, dict[str, Any]] = {}
    for docnum in searcher.docs_for_query(And(parts)):
        stored = searcher.stored_fields(docnum)
        if in_dates(stored, filters):
            out[stored["doc_hash"]] = stored
    return out


def _hashes_of(searcher: Searcher, docnums: set[int]) -> set[str]:
    """The document hashes of these pages, from the ``doc_hash`` postings (no
    stored fields read)."""
    reader = searcher.reader()
    found: set[str] = set()
    for term in reader.lexicon("doc_hash"):
        if not docnums.isdisjoint(reader.postings("doc_hash", term).all_ids()):
            found.add(term.decode("utf-8"))
    return found


def _pages_of(searcher: Searcher, hashes: Iterable[str]) -> set[int]:
    reader = searcher.reader()
    out: set[int] = set()
    for doc_hash in hashes:
        if reader.doc_frequency("doc_hash", doc_hash):
            out.update(reader.postings("doc_hash", doc_hash).all_ids())
    return out


def _by_path(searcher: Searcher, docnums: set[int]) -> Iterator[list[int]]:
    """``docnums`` grouped by path (the sorted lexicon of ``path``), each group in
    index order, which is page order within a document (its pages are added
    together)."""
    reader = searcher.reader()
    for term in reader.lexicon("path"):
        group = sorted(d for d in reader.postings("path", term).all_ids() if d in docnums)
        if group:
            yield group


def _by_shown_path(searcher: Searcher, docnums: set[int], glob: str | None) -> Iterator[list[int]]:
    """``_by_path``, or with ``glob`` by the path ``focused`` shows: each document's
    pages under the first of its paths the glob selects, read from the sorted
    ``paths`` lexicon (a path belongs to one document, so its postings are that
    document's pages)."""
    if not glob or "paths" not in searcher.schema:
        yield from _by_path(searcher, docnums)
        return
    reader = searcher.reader()
    pattern = path_term(glob)
    left = set(docnums)
    fixed = min((i for i in (pattern.find(c) for c in "*?[") if i >= 0), default=len(pattern))
    for term in reader.expand_prefix("paths", pattern[:fixed]):  # as Whoosh's Wildcard narrows it
        if not left:
            return
        if _term_matches(term.decode("utf-8"), pattern):
            group = sorted(d for d in reader.postings("paths", term).all_ids() if d in left)
            if group:
                left.difference_update(group)
                yield group
    yield from _by_path(searcher, left)  # none, unless a page lost its paths


def _in_path_order(searcher: Searcher, docnums: set[int], glob: str | None = None) -> Iterator[int]:
    for group in _by_shown_path(searcher, docnums, glob):
        yield from group


def _matched_pages(searcher: Searcher, filters: ListFilters) -> set[int]:
    matched = _docs(searcher, _page_query(searcher, filters))
    if _needs_records(filters):
        matched &= _pages_of(searcher, _records(searcher, filters))
    return matched


def list_page_groups(searcher: Searcher, filters: ListFilters, limit: int | None,
                     offset: int = 0) -> tuple[int, list[list[Hit]]]:
    """Pages passing ``filters`` grouped by document (by path, pages in order):
    the number of documents and the groups from ``offset``, at most ``limit``."""
    stop = None if limit is None else offset + limit
    total = 0
    shown: list[list[Hit]] = []
    glob = filters.path_glob
    for n, group in enumerate(_by_shown_path(searcher, _matched_pages(searcher, filters), glob)):
        total += 1
        if n >= offset and (stop is None or n < stop):
            shown.append([page_hit(searcher.stored_fields(d), glob) for d in group])
    return total, shown


def _needs_records(filters: ListFilters) -> bool:
    return filters.status is not None or filters.since is not None or filters.until is not None


def list_pages(searcher: Searcher, filters: ListFilters, limit: int | None, offset: int = 0) -> Listing:
    """Pages passing ``filters``, by path then page; ``total`` counts them all."""
    started = time.perf_counter()
    matched = _matched_pages(searcher, filters)
    shown: list[Hit] = []
    stop = None if limit is None else offset + limit
    for n, docnum in enumerate(_in_path_order(searcher, matched, filters.path_glob)):
        if stop is not None and n >= stop:
            break
        if n >= offset:
            shown.append(page_hit(searcher.stored_fields(docnum), filters.path_glob))
    return Listing(total=len(matched), pages=shown, took=time.perf_counter() - started)


def list_documents(searcher: Searcher, filters: ListFilters, limit: int | None, offset: int = 0) -> Listing:
    """File records passing ``filters``, by path; with page criteria, only files
    with at least one such page. With a path filter, each under the path it matched
    (``focused``)."""
    started = time.perf_counter()
    records = {h: focused(r, filters.path_glob) for h, r in _records(searcher, filters).items()}
    if filters.page_criteria:
        keep = _hashes_of(searcher, _docs(searcher, _page_query(searcher, filters)))
        records = {h: r for h, r in records.items() if h in keep}
    ordered = sorted(records.values(), key=lambda r: (path_term(r.get("path", "")), r["doc_hash"]))
    stop = None if limit is None else offset + limit
    return Listing(total=len(ordered), documents=[doc_from_stored(r) for r in ordered[offset:stop]],
                   took=time.perf_counter() - started)


def page_hit(stored: dict[str, Any], glob: str | None = None) -> Hit:
    """A listed page as a hit (score 0: nothing was scored), its snippet the page's
    first words; under the path ``glob`` matched (``focused``), its copies' paths
    after it."""
    stored = focused(stored, glob)
    text = " ".join(stored.get("text", "").split())
    snippet = text[:_SNIPPET_CHARS] + ("…" if len(text) > _SNIPPET_CHARS else "")
    return Hit(doc_hash=stored["doc_hash"], path=stored.get("path", ""), page=stored.get("page", 0), score=0.0,
               coverage=stored.get("coverage"), needs_ocr=bool(stored.get("needs_ocr", False)),
               title=stored.get("title", ""), snippet=snippet, paths=list(stored.get("paths") or []),
               problems=list(problems_of(stored)), source=stored.get("source", "text"),
               ocr_confidence=stored.get("ocr_confidence"))
