"""Searching the page index: query parsing, filters, a time limit, grouping by
document, and highlights computed only for the hits being shown."""
from __future__ import annotations

import bisect
import itertools
import math
import time
import weakref
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from whoosh import highlight, sorting
from whoosh.collectors import FilterCollector, TimeLimit, TopCollector
from whoosh.query import And, NumericRange, Phrase, Query, Term, Wildcard
from whoosh.searching import Hit as WhooshHit
from whoosh.searching import Searcher

from pdfindex.contract.limits import COUNT_CAP
from pdfindex.contract.records import SORT_ORDERS, DocumentHits, Hit, ListFilters, SearchOptions, SearchResult, Span

from .exact import RERANK_WINDOW, TypedForms, rerank, typed_forms
from .errors import QueryError
from .folding import MetadataFolding, Walk, metadata_folding
from .phrase import PAIR_FIELDS, AdjacentPhrase
from .query import bound_expansions, parse, suggest
from .listing import list_page_groups, list_pages
from .schema import KIND_DOC, KIND_PAGE, RECORD_FIELDS, date_term, path_term, problems_of
from .snippets import PositionHighlighter

# Markers the formatter puts around matched terms; control characters that page
# text never contains (extraction drops C0 controls).
_OPEN, _CLOSE = "\x02", "\x03"
_SNIPPET_CHARS = 160


class _MarkerFormatter(highlight.Formatter):
    between = " … "

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return f"{_OPEN}{highlight.get_text(text, token, replace)}{_CLOSE}"


def searches_records(query: Query) -> bool:
    """A query only about file-record fields (error:, status:) looks at records."""
    fields = {fieldname for fieldname, _ in query.iter_all_terms()}
    return bool(fields) and fields <= RECORD_FIELDS


_RECORDS: weakref.WeakKeyDictionary[Searcher, set[int]] = weakref.WeakKeyDictionary()


def _record_docnums(searcher: Searcher) -> set[int]:
    """The file records' document numbers, once per searcher: every page search
    excludes them, and finding them again per query was more than half of a rare
    term's time at 100k pages. A searcher sees one fixed state of the index."""
    docnums = _RECORDS.get(searcher)
    if docnums is None:
        docnums = _RECORDS[searcher] = set(searcher.docs_for_query(Term("kind", KIND_DOC)))
    return docnums


def _filters(searcher: Searcher, options: SearchOptions, records: bool) -> tuple[Query | None, set[int] | None]:
    """(allow, restrict) for the collector. Pages are found by excluding the few
    file records rather than by allowing every page (a set of all pages cost more
    than a rare-term search); a search of records allows records only."""
    parts: list[Query] = []
    if options.min_coverage is not None:
        parts.append(NumericRange("coverage", options.min_coverage, None))
    if options.needs_ocr is not None:
        parts.append(Term("needs_ocr", options.needs_ocr))
    if options.path_glob:
        # any path of the content (copies), as the paths were indexed
        parts.append(Wildcard("paths", path_term(options.path_glob)))
    if options.since is not None or options.until is not None:
        parts.append(NumericRange("date", None if options.since is None else date_term(options.since),
                                  None if options.until is None else date_term(options.until)))
    if records:
        return And([Term("kind", KIND_DOC), *parts]), None
    return (And(parts) if parts else None), _record_docnums(searcher)


def _snippet(whoosh_hit: WhooshHit, field: str, text: str) -> tuple[str, list[Span]]:
    marked = whoosh_hit.highlights(field, top=2) if text else ""
    if not marked:
        plain = " ".join(text.split())
        return plain[:_SNIPPET_CHARS] + ("…" if len(plain) > _SNIPPET_CHARS else ""), []
    marked = " ".join(marked.split())
    out: list[str] = []
    spans: list[Span] = []
    length = 0
    for i, piece in enumerate(marked.split(_OPEN)):
        if i == 0:
            out.append(piece)
            length += len(piece)
            continue
        match, _, rest = piece.partition(_CLOSE)
        spans.append(Span(length, length + len(match)))
        out.append(match + rest)
        length += len(match) + len(rest)
    return "".join(out), spans


def as_hit(whoosh_hit: WhooshHit, with_snippet: bool, scored: bool) -> Hit:
    """``scored``: the search was ordered by score. Ordered by date or path, Whoosh's
    "score" is the sort key (a negated date, -9.2e18 for none): not a relevance."""
    stored = whoosh_hit.fields()
    hit = Hit(
        doc_hash=stored["doc_hash"], path=stored.get("path", ""), page=stored.get("page", 0),
        score=float(whoosh_hit.score or 0.0) if scored else None, coverage=stored.get("coverage"),
        needs_ocr=bool(stored.get("needs_ocr", False)), title=stored.get("title", ""),
        author=stored.get("author", ""), created=stored.get("created"), modified=stored.get("modified"),
        paths=list(stored.get("paths") or [stored.get("path", "")]), problems=list(problems_of(stored)),
        source=stored.get("source", "text"), ocr_confidence=stored.get("ocr_confidence"),
    )
    if with_snippet:
        field = "text" if stored.get("kind") == KIND_PAGE else "error"
        hit.snippet, hit.spans = _snippet(whoosh_hit, field, stored.get(field, ""))
    return hit


class _FilteredDeadlineCollector(FilterCollector):
    """Keeps the documents the filters allow, one page for a document matched only
    by its metadata (indexer/folding.py), and stops at a deadline. One loop does
    all: Whoosh's TimeLimitCollector iterates matches itself and so bypasses a
    FilterCollector inside it, and its SIGALRM mode only works in a main thread."""

    def __init__(self, child: Any, allow: Query | None, restrict: set[int] | None, timelimit: float,
                 folding: MetadataFolding | None = None) -> None:
        super().__init__(child, allow=allow, restrict=restrict)
        self.timelimit = timelimit
        self.deadline = 0.0
        self.folding = folding
        self._walk: Walk | None = None

    def prepare(self, top_searcher: Searcher, q: Query, context: Any) -> None:
        super().prepare(top_searcher, q, context)
        self.deadline = time.monotonic() + self.timelimit
        self._walk = None if self.folding is None else self.folding.walk()

    def _kept(self, docnum: int) -> bool:
        # FilterCollector itself reads an empty allow set as "no filter".
        allow, restrict = self._allow, self._restrict
        return (allow is None or docnum in allow) and (restrict is None or docnum not in restrict)

    def all_ids(self) -> Any:
        # A top-N collector matches the query again (ascending): fold that walk too.
        # Any other kept what it collected, folded already.
        if self.folding is not None and isinstance(self.child, TopCollector):
            return self._folded_ids(self.folding.walk())
        kept = self._kept
        return (docnum for docnum in self.child.all_ids() if kept(docnum))

    def _folded_ids(self, walk: Walk) -> Iterator[int]:
        kept, offsets = self._kept, walk.folding.offsets
        segment, start, end, metadata = -1, 0, -1.0, frozenset[int]()
        for docnum in self.child.all_ids():
            if docnum >= end:  # into the next segment (empty ones are never in it)
                segment = bisect.bisect_right(offsets, docnum) - 1
                start = offsets[segment]
                end = offsets[segment + 1] if segment + 1 < len(offsets) else math.inf
                metadata = walk.folding.metadata_matches(segment)
            if kept(docnum) and (docnum - start not in metadata or walk.keep_metadata_match(segment, docnum - start)):
                yield docnum

    def count(self) -> int:
        return sum(1 for _ in self.all_ids())

    def collect_matches(self) -> None:
        child, offset, deadline, kept, walk = self.child, self.offset, self.deadline, self._kept, self._walk
        segment, metadata = -1, frozenset[int]()
        if walk is not None:  # this segment's pages that match a metadata word
            segment = bisect.bisect_right(walk.folding.offsets, offset) - 1
            metadata = walk.folding.metadata_matches(segment)
        for n, sub_docnum in enumerate(child.matches(), 1):
            if n % 256 == 0 and time.monotonic() > deadline:
                raise TimeLimit
            if kept(offset + sub_docnum) and (sub_docnum not in metadata  # never in it without a walk
                                              or walk is None or walk.keep_metadata_match(segment, sub_docnum)):
                child.collect(sub_docnum)


def _order(options: SearchOptions) -> Any:
    """``--sort``: the Whoosh facet of each order but score (newest first for dates)."""
    if options.sort == "date":
        return sorting.FieldFacet("date", reverse=True)
    if options.sort == "path":
        return sorting.FieldFacet("path")
    if options.sort != "score":
        raise QueryError(f"unknown sort order {options.sort!r}; use one of: {', '.join(SORT_ORDERS)}")
    return None


def has_phrase(query: Query, schema: Any) -> bool:
    """Whether ``query`` holds a phrase over page text matched by positions (one
    answered by a word pair is a term; a title's or file name's is short)."""
    if isinstance(query, Phrase):
        return query.fieldname in PAIR_FIELDS and not (
            isinstance(query, AdjacentPhrase) and query.pair_term(schema) is not None)
    return any(has_phrase(child, schema) for child in query.children())


def _collect(searcher: Searcher, query: Query, options: SearchOptions, limit: int | None) -> tuple[Any, bool]:
    records = searches_records(query)
    allow, restrict = _filters(searcher, options, records)
    # Skipping blocks by quality hardly skips for a phrase (every block of two common
    # words holds a page that scores high), and then the total needs a second pass:
    # without skipping, the collector counts every match as it goes.
    optimize = not has_phrase(query, searcher.schema)
    child = searcher.collector(limit=limit, sortedby=_order(options), optimize=optimize)
    if not optimize:
        # Nor may it drop sub-matchers that cannot reach the top N (``replace``):
        # their matches would be missing from the count.
        child.replace = 0
    folding = None if records else metadata_folding(searcher, query)
    collector = _FilteredDeadlineCollector(child, allow, restrict, options.timeout, folding)
    partial = False
    try:
        searcher.search_with_collector(query, collector)
    except TimeLimit:
        partial = True
    return collector.results(), partial


def _stored_text(searcher: Searcher) -> Any:
    def text_of(docnum: int) -> list[str]:
        stored = searcher.stored_fields(docnum)
        return [stored.get("text", ""), stored.get("title", "")]
    return text_of


def _prepare(results: Any, searcher: Searcher, forms: TypedForms | None) -> None:
    if forms is not None:
        results.top_n = rerank(results.top_n, forms, _stored_text(searcher))


def _highlight(results: Any, shown: list[WhooshHit]) -> None:
    """Highlights of the hits ``shown`` from their terms' positions (snippets.py)."""
    results.highlighter = PositionHighlighter([hit.docnum for hit in shown], **snippet_parts())


def snippet_parts() -> dict[str, Any]:
    """The fragmenter and formatter of every snippet, on both engines: fragments of
    about ``_SNIPPET_CHARS``, matches between the markers ``_snippet`` reads."""
    return {"fragmenter": highlight.ContextFragmenter(maxchars=_SNIPPET_CHARS, surround=40),
            "formatter": _MarkerFormatter()}


def is_listing_query(text: str, options: SearchOptions) -> bool:
    """``*``, or an empty query with a filter: every page the filters let through,
    listed rather than searched (expanding ``*`` into every term of the index took
    seconds). An empty query without any filter is a mistake, which parsing reports."""
    text = text.strip()
    filtered = (options.needs_ocr is not None or options.min_coverage is not None or bool(options.path_glob)
                or options.since is not None or options.until is not None)
    return text == "*" or (not text and filtered)


def _listing_result(searcher: Searcher, text: str, options: SearchOptions, started: float) -> SearchResult:
    filters = ListFilters(needs_ocr=options.needs_ocr, min_coverage=options.min_coverage,
                          path_glob=options.path_glob, since=options.since, until=options.until)
    if options.by_document:
        total, shown = list_page_groups(searcher, filters, options.limit, options.offset)
        groups = [DocumentHits(pages[0].doc_hash, pages[0].path, pages[0].title, pages) for pages in shown]
        return SearchResult(query=text, total=total, hits=[], took=time.perf_counter() - started, groups=groups)
    listed = list_pages(searcher, filters, options.limit, options.offset)
    return SearchResult(query=text, total=listed.total, hits=listed.pages, took=time.perf_counter() - started)


def _total(results: Any, partial: bool, exact: bool) -> tuple[int, bool]:
    """(total, is a lower bound). Counting every match was most of a common-term
    search, because the top-N collector skips blocks that cannot enter the top N
    and so must match the query a second time to count: by default that second
    pass stops after COUNT_CAP matches."""
    if partial:
        return results.estimated_length(), True
    collector = results.collector
    child = collector.child
    if not isinstance(child, TopCollector):  # it kept every match
        return len(results), False
    # Without block skipping it saw every match: the count is free and exact. (Not
    # ``computes_count``: it asks the last segment's matcher, which may not skip
    # when earlier segments' did, and then reports a part of the count as all.) So
    # it did while no match had to beat a full top N (``minscore`` still 0): until
    # then it neither skips a block nor drops a sub-matcher. A rare word's second
    # pass over every segment was half its search at 1M pages (523 segments).
    if not child.usequality or not child.minscore:
        return int(child.total), False
    if exact:
        return len(results), False
    counted = sum(1 for _ in itertools.islice(collector.all_ids(), COUNT_CAP + 1))
    return (COUNT_CAP, True) if counted > COUNT_CAP else (counted, False)


#: Seconds estimating a query's cost may spend expanding its wildcards.
_ESTIMATE_SECONDS = 0.2


def estimated_postings(searcher: Searcher, text: str, options: SearchOptions) -> int | None:
    """How many postings the search would walk: its terms' document frequencies
    summed, wildcards expanded (a phrase walks every word's postings, so a phrase
    of common words counts as much as they do). None for a listing (no query),
    whose cost is that of what the filters let through. Raises QueryError as the
    search would. Cheap: a parse and a lexicon lookup per term."""
    if is_listing_query(text, options):
        return None
    parsed = parse(searcher, text)  # the open searcher's schema: Index.schema reads the TOC anew
    query, _ = bound_expansions(searcher, parsed.query, time.monotonic() + _ESTIMATE_SECONDS)
    reader = searcher.reader()
    return sum(reader.doc_frequency(name, term) for name, term in query.iter_all_terms())


def run_search(searcher: Searcher, text: str, options: SearchOptions) -> SearchResult:
    """Run a query; pages (or documents) from ``offset``, at most ``limit``. An
    empty query or ``*`` lists what the filters let through, unscored."""
    started = time.perf_counter()
    if is_listing_query(text, options):
        return _listing_result(searcher, text, options, started)
    # One deadline for expanding wildcards and fuzzy words and for collecting.
    deadline = time.monotonic() + options.timeout
    parsed = parse(searcher, text)  # the open searcher's schema: Index.schema reads the TOC anew
    forms = None if options.sort != "score" else typed_forms(
        parsed.query, text, getattr(searcher.schema["text"].analyzer, "language", "none"))
    query, expansion = bound_expansions(searcher, parsed.query, deadline)
    options = replace(options, timeout=max(deadline - time.monotonic(), 1e-6))
    scored = options.sort == "score"
    lower_bound = False
    if options.by_document:
        results, partial = _collect(searcher, query, options, None)
        _prepare(results, searcher, forms)
        highlight = options.highlight and not (partial or expansion.expired)
        grouped: dict[str, list[WhooshHit]] = {}
        for whoosh_hit in results:  # score order: each document's best page first
            grouped.setdefault(whoosh_hit["doc_hash"], []).append(whoosh_hit)
        shown = list(grouped.values())[options.offset:options.offset + options.limit]
        _highlight(results, [pages[0] for pages in shown])
        groups = []
        for pages in shown:
            hits = [as_hit(h, highlight and i == 0, scored) for i, h in enumerate(pages)]
            groups.append(DocumentHits(hits[0].doc_hash, hits[0].path, hits[0].title, hits))
        total = len(grouped)
        hits = []
    else:
        wanted = options.offset + options.limit
        results, partial = _collect(searcher, query, options, wanted if forms is None else max(wanted, RERANK_WINDOW))
        _prepare(results, searcher, forms)
        # Past the deadline, no more work: highlighting costs a walk over every
        # expanded term for each hit (0.3 s for a 1,000-term range on 10 hits).
        highlight = options.highlight and not (partial or expansion.expired)
        shown_hits = results[options.offset:options.offset + options.limit]
        _highlight(results, shown_hits)
        hits = [as_hit(h, highlight, scored) for h in shown_hits]
        total, lower_bound = _total(results, partial, options.exact_count)
        groups = []
    notes = list(expansion.notes)
    if partial and not expansion.expired:
        notes.append("the search time limit was reached: results are partial")
    partial = partial or expansion.expired
    # A suggestion only for a search that really found nothing, at most
    # SUGGESTION_SECONDS and never much past the deadline.
    suggestion = "" if total or partial else suggest(searcher, parsed, max(deadline, time.monotonic() + 0.05))
    return SearchResult(
        query=text, total=total, hits=hits, took=time.perf_counter() - started, partial=partial, groups=groups,
        note="; ".join(notes), suggestion=suggestion,
        total_is_lower_bound=lower_bound,
    )
