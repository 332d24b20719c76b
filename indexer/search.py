"""Searching the page index: query parsing, filters, a time limit, grouping by
document, and highlights computed only for the hits being shown."""
from __future__ import annotations

import time
from typing import Any

from whoosh import highlight
from whoosh.collectors import FilterCollector, TimeLimit
from whoosh.index import Index
from whoosh.qparser import FuzzyTermPlugin, MultifieldParser
from whoosh.query import And, NullQuery, NumericRange, Or, Prefix, Query, Term, Wildcard
from whoosh.searching import Hit as WhooshHit
from whoosh.searching import Searcher

from .analysis import is_cjk
from .errors import QueryError
from .records import DocumentHits, Hit, SearchOptions, SearchResult, Span
from .schema import KIND_DOC, KIND_PAGE, RECORD_FIELDS, path_term

# Markers the formatter puts around matched terms; control characters that page
# text never contains (extraction drops C0 controls).
_OPEN, _CLOSE = "\x02", "\x03"
_SNIPPET_CHARS = 160


class _MarkerFormatter(highlight.Formatter):
    between = " … "

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return f"{_OPEN}{highlight.get_text(text, token, replace)}{_CLOSE}"


def parse_query(ix: Index, text: str) -> Query:
    """Whoosh query syntax over page text, title and file name: AND/OR/NOT,
    "phrases", field:value, wildcards, fuzzy term~."""
    parser = MultifieldParser(["text", "title", "filename"], ix.schema, fieldboosts={"text": 1.0, "title": 1.5})
    parser.add_plugin(FuzzyTermPlugin())
    try:
        query = parser.parse(text)
    except Exception as exc:  # noqa: BLE001 - the parser raises many kinds on bad syntax
        raise QueryError(f"cannot parse query {text!r}: {exc}") from None
    if query is NullQuery or isinstance(query, type(NullQuery)):
        raise QueryError(f"the query {text!r} has no searchable terms")
    return query.accept(_widen_single_cjk)


def _widen_single_cjk(query: Query) -> Query:
    """CJK text is indexed as character bigrams; one character alone matches the
    bigrams it starts or ends (a unigram is only indexed for a lone character)."""
    if isinstance(query, Term) and query.fieldname == "text" and isinstance(query.text, str) \
            and len(query.text) == 1 and is_cjk(query.text):
        return Or([query, Prefix("text", query.text), Wildcard("text", f"?{query.text}")], boost=query.boost)
    return query


def _searches_records(query: Query) -> bool:
    """A query only about file-record fields (error:, status:) looks at records."""
    fields = {fieldname for fieldname, _ in query.iter_all_terms()}
    return bool(fields) and fields <= RECORD_FIELDS


def _filters(options: SearchOptions, records: bool) -> tuple[Query | None, Query]:
    """(allow, restrict) for the collector. Pages are found by excluding the few
    file records rather than by allowing every page: the allowed set is computed per
    search, and building one of all pages cost more than a rare-term search."""
    parts: list[Query] = []
    if options.min_coverage is not None:
        parts.append(NumericRange("coverage", options.min_coverage, None))
    if options.needs_ocr is not None:
        parts.append(Term("needs_ocr", options.needs_ocr))
    if options.path_glob:
        parts.append(Wildcard("path", path_term(options.path_glob)))  # as the paths were indexed
    if records:
        return And([Term("kind", KIND_DOC), *parts]), Term("kind", KIND_PAGE)
    return (And(parts) if parts else None), Term("kind", KIND_DOC)


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


def _hit(whoosh_hit: WhooshHit, with_snippet: bool) -> Hit:
    stored = whoosh_hit.fields()
    hit = Hit(
        doc_hash=stored["doc_hash"], path=stored.get("path", ""), page=stored.get("page", 0),
        score=float(whoosh_hit.score or 0.0), coverage=stored.get("coverage"),
        needs_ocr=bool(stored.get("needs_ocr", False)), title=stored.get("title", ""),
    )
    if with_snippet:
        field = "text" if stored.get("kind") == KIND_PAGE else "error"
        hit.snippet, hit.spans = _snippet(whoosh_hit, field, stored.get(field, ""))
    return hit


class _FilteredDeadlineCollector(FilterCollector):
    """Keeps the documents the filters allow and stops at a deadline. One loop does
    both: Whoosh's TimeLimitCollector iterates matches itself and so bypasses a
    FilterCollector inside it, and its SIGALRM mode only works in a main thread."""

    def __init__(self, child: Any, allow: Query | None, restrict: Query, timelimit: float) -> None:
        super().__init__(child, allow=allow, restrict=restrict)
        self.timelimit = timelimit
        self.deadline = 0.0

    def prepare(self, top_searcher: Searcher, q: Query, context: Any) -> None:
        super().prepare(top_searcher, q, context)
        self.deadline = time.monotonic() + self.timelimit

    def _kept(self, docnum: int) -> bool:
        # FilterCollector itself reads an empty allow set as "no filter".
        allow, restrict = self._allow, self._restrict
        return (allow is None or docnum in allow) and (restrict is None or docnum not in restrict)

    def all_ids(self) -> Any:
        return (docnum for docnum in self.child.all_ids() if self._kept(docnum))

    def count(self) -> int:
        return sum(1 for _ in self.all_ids())

    def collect_matches(self) -> None:
        child, offset, deadline, kept = self.child, self.offset, self.deadline, self._kept
        for n, sub_docnum in enumerate(child.matches(), 1):
            if n % 256 == 0 and time.monotonic() > deadline:
                raise TimeLimit
            if kept(offset + sub_docnum):
                child.collect(sub_docnum)


def _collect(searcher: Searcher, query: Query, options: SearchOptions, limit: int | None) -> tuple[Any, bool]:
    allow, restrict = _filters(options, _searches_records(query))
    collector = _FilteredDeadlineCollector(searcher.collector(limit=limit), allow, restrict, options.timeout)
    partial = False
    try:
        searcher.search_with_collector(query, collector)
    except TimeLimit:
        partial = True
    return collector.results(), partial


def _prepare(results: Any) -> None:
    results.fragmenter = highlight.ContextFragmenter(maxchars=_SNIPPET_CHARS, surround=40)
    results.formatter = _MarkerFormatter()


def run_search(ix: Index, searcher: Searcher, text: str, options: SearchOptions) -> SearchResult:
    """Run a query; pages (or documents) from ``offset``, at most ``limit``."""
    started = time.perf_counter()
    query = parse_query(ix, text)
    if options.by_document:
        results, partial = _collect(searcher, query, options, None)
        _prepare(results)
        grouped: dict[str, list[WhooshHit]] = {}
        for whoosh_hit in results:  # score order: each document's best page first
            grouped.setdefault(whoosh_hit["doc_hash"], []).append(whoosh_hit)
        shown = list(grouped.values())[options.offset:options.offset + options.limit]
        groups = []
        for pages in shown:
            hits = [_hit(h, options.highlight and i == 0) for i, h in enumerate(pages)]
            groups.append(DocumentHits(hits[0].doc_hash, hits[0].path, hits[0].title, hits))
        total = len(grouped)
        hits = []
    else:
        results, partial = _collect(searcher, query, options, options.offset + options.limit)
        _prepare(results)
        hits = [_hit(h, options.highlight) for h in results[options.offset:options.offset + options.limit]]
        total = results.estimated_length() if partial else len(results)
        groups = []
    return SearchResult(
        query=text, total=total, hits=hits, took=time.perf_counter() - started, partial=partial, groups=groups,
        note="the search time limit was reached: results are partial" if partial else "",
    )
