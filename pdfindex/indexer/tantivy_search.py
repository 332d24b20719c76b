"""Searching an index on Tantivy: our parser's query, Tantivy's matching and
scoring, and our own folding, re-ranking, hits and highlights.

What a user sees is built as on Whoosh (``search``): the query is read by our
parser (the same errors), filters are required clauses that add nothing to a
score, a metadata-only match is folded to one page per document (``folding``'s
rule: the document's first such page), the best pages are re-ranked by the words
as typed (``exact``), and a hit and its snippet are made by ``search``'s own
functions. Highlights come from our analysis of the stored page text, through the
same fragmenter, scorer and formatter as Whoosh's, so their code-point spans are
the same on both engines; Tantivy's SnippetGenerator (byte offsets, its own
tokens) is not used. Scores are Tantivy's BM25, not Whoosh's (docs/engines.md).
"""
from __future__ import annotations

import time
from typing import Any, cast

import tantivy
from whoosh import highlight
from whoosh.query import Or, Query

from pdfindex.contract.limits import COUNT_CAP
from pdfindex.contract.records import DocumentHits, Hit, ListFilters, SearchOptions, SearchResult

from .errors import QueryError
from .exact import RERANK_WINDOW, rerank, typed_forms
from .folding import metadata_and_own
from .query import bound_expansions, parse, suggest
from .snippets import marked
from .search import as_hit, has_phrase, is_listing_query, searches_records, snippet_parts
from .tantivy_listing import list_page_groups, list_pages
from .tantivy_lexicon import Lexicon
from .tantivy_query import field_terms, filters, translate
from .tantivy_schema import count, matching, stored_of, whoosh_schema

_Occur = tantivy.Occur
#: ``--sort``: the fast field and direction of each order but score.
_ORDERS = {"date": ("date", tantivy.Order.Desc), "path": ("path", tantivy.Order.Asc)}


def _required(clauses: list[tantivy.Query]) -> list[tuple[tantivy.Occur, tantivy.Query]]:
    """Filters as clauses that must match and score nothing: a filter's own score
    would shift every page's."""
    return [(_Occur.Must, tantivy.Query.const_score_query(clause, 0.0)) for clause in clauses]


class _StoredHit:
    """A Tantivy match as ``search.as_hit`` reads a Whoosh hit: its stored fields,
    its score and its highlights."""

    def __init__(self, stored: dict[str, Any], score: float, marker: _Marker) -> None:
        self._stored, self.score, self._marker = stored, score, marker

    def fields(self) -> dict[str, Any]:
        return self._stored

    def highlights(self, field: str, top: int = 3) -> str:
        return self._marker.marked(field, self._stored.get(field, ""), top)


class _Marker:
    """Whoosh's highlighting of a page's stored text (``snippets.marked``) for the
    expanded query's terms, found where the page's terms (the writer's analysis,
    words cached) hold them, as the Whoosh side finds them in its postings."""

    def __init__(self, query: Query, language: str) -> None:
        self._query = query
        self._schema = whoosh_schema(language)
        self._terms: dict[str, frozenset[str]] = {}
        self._highlighter = highlight.Highlighter(**snippet_parts())

    def marked(self, field: str, text: str, top: int) -> str:
        if field not in self._terms:
            self._terms[field] = field_terms(self._query, field)
        words = self._terms[field]
        if not words or not text:
            return ""
        analyzer = self._schema[field].analyzer  # text and error: PageTokenizer fields
        return marked(self._highlighter, text,
                      lambda part: {n: term for n, term in enumerate(analyzer.shown_terms(part)) if term in words}, top)


def _any_leaf(query: Query) -> bool:
    """Whether ``query`` matches a page exactly when one of its leaves does (leaves
    joined by Or alone, as a word searched in several fields is)."""
    if query.is_leaf():
        return True
    return isinstance(query, Or) and query.minmatch <= 1 and all(_any_leaf(child) for child in query.children())


def _folded_away(searcher: tantivy.Searcher, schema: tantivy.Schema, parsed: Query, found: tantivy.Query,
                 filtered: list[tuple[tantivy.Occur, tantivy.Query]]) -> tantivy.Query | None:
    """The pages ``folding`` passes over, as a query (None: none): those matching only
    by a metadata word, but for each document's first (its lowest page number). Such
    a page must match the whole query (``found``); when the query is its leaves
    joined by Or, a page matching a metadata leaf does, and the filters
    (``filtered``) are all it must pass too: the query is not run again (a phrase's
    positions read twice more)."""
    leaves = metadata_and_own(parsed)
    if leaves is None:
        return None
    metadata, own = leaves
    clauses = [*(filtered if _any_leaf(parsed) else [(_Occur.Must, found)]),
               (_Occur.Must, translate(schema, Or(metadata)))]
    if own:
        clauses.append((_Occur.MustNot, translate(schema, Or(own))))
    only_metadata = tantivy.Query.boolean_query(clauses)
    firsts = _first_pages(searcher, schema, only_metadata)
    if not firsts:
        return None
    return tantivy.Query.boolean_query([(_Occur.Must, only_metadata),
                                        (_Occur.MustNot, tantivy.Query.term_set_query(schema, "key", firsts))])


#: Pages one aggregation groups at most. Tantivy refuses an aggregation of more than
#: 65,000 buckets; a bucket is a document and a document has a page at least, so a
#: part of at most this many pages is always grouped.
AGGREGATED_PAGES = 60_000
#: Hex digits of the content hash a folding splits its pages by, at most: 256 parts,
#: 15 million pages. Past that, the records are read.
_PART_DIGITS = 2


def _first_pages(searcher: tantivy.Searcher, schema: tantivy.Schema, query: tantivy.Query) -> list[str]:
    """The keys of the first page of each document with pages matching ``query``;
    none when no document has more than one (nothing to pass over). An aggregation
    over the content hash's fast column and the page number's: no stored record
    read; where it cannot tell (an index written before the hash was a fast column,
    more pages than ``_PART_DIGITS`` parts hold, a key not in hex), the pages'
    records."""
    pages = count(searcher, query)
    if pages < 2:
        return []
    buckets = _buckets(searcher, schema, query, "", pages)
    if buckets is None:
        buckets = _buckets_of_records(searcher, query)
    if all(held == 1 for _, _, held in buckets):
        return []  # no document has a page to pass over
    return [f"{doc_hash}:{first}" for doc_hash, first, _ in buckets]


def _buckets(searcher: tantivy.Searcher, schema: tantivy.Schema, query: tantivy.Query, prefix: str,
             pages: int) -> list[tuple[str, int, int]] | None:
    """(content hash, first page, pages) of each document with pages matching
    ``query`` (``pages`` of them, their hashes beginning with ``prefix``): one
    aggregation, or one per next hex digit of the hash when they are more than
    ``AGGREGATED_PAGES``."""
    if pages == 0:
        return []
    if pages > AGGREGATED_PAGES:
        if len(prefix) == _PART_DIGITS:
            return None
        out: list[tuple[str, int, int]] = []
        parted = 0
        for digit in "0123456789abcdef":
            part = tantivy.Query.boolean_query([
                (_Occur.Must, query),
                (_Occur.Must, tantivy.Query.regex_query(schema, "doc_hash", f"{prefix}{digit}.*"))])
            held = count(searcher, part)
            found = _buckets(searcher, schema, part, prefix + digit, held)
            if found is None:
                return None
            out += found
            parted += held
        return out if parted == pages else None  # a hash not in lower-case hex: the records tell
    spec = {"docs": {"terms": {"field": "doc_hash", "size": pages, "segment_size": pages},
                     "aggs": {"first": {"min": {"field": "page"}}}}}
    try:
        found = searcher.aggregate(query, spec)["docs"]["buckets"]
    except ValueError:  # no fast column: an index written before it
        return None
    return [(bucket["key"], int(bucket["first"]["value"]), bucket["doc_count"]) for bucket in found]


def _buckets_of_records(searcher: tantivy.Searcher, query: tantivy.Query) -> list[tuple[str, int, int]]:
    """``_buckets`` from the stored records of the pages matching ``query``."""
    docs: dict[str, tuple[int, int]] = {}
    for address in matching(searcher, query):
        stored = stored_of(searcher.doc(address))
        page = stored.get("page", 0)
        first, held = docs.get(stored["doc_hash"], (page, 0))
        docs[stored["doc_hash"]] = (min(first, page), held + 1)
    return [(doc_hash, first, held) for doc_hash, (first, held) in docs.items()]


def _listing_result(index: tantivy.Index, text: str, options: SearchOptions, started: float) -> SearchResult:
    """``*`` or filters alone: what they let through, listed (``search._listing_result``)."""
    filters = ListFilters(needs_ocr=options.needs_ocr, min_coverage=options.min_coverage,
                          path_glob=options.path_glob, since=options.since, until=options.until)
    searcher, schema = index.searcher(), index.schema
    if options.by_document:
        total, shown = list_page_groups(searcher, schema, filters, options.limit, options.offset)
        groups = [DocumentHits(pages[0].doc_hash, pages[0].path, pages[0].title, pages) for pages in shown]
        return SearchResult(query=text, total=total, hits=[], took=time.perf_counter() - started, groups=groups)
    listed = list_pages(searcher, schema, filters, options.limit, options.offset)
    return SearchResult(query=text, total=listed.total, hits=listed.pages, took=time.perf_counter() - started)


def _shown_total(total: int, parsed: Query, language: str, options: SearchOptions) -> tuple[int, bool]:
    """The total as Whoosh shows it (``search._total``): a scored search without a
    phrase matched by positions stops counting at COUNT_CAP (a lower bound) unless
    the exact count is asked for. Tantivy's count is exact and cheap; the cap is
    kept so that the same search shows the same count on both engines."""
    if (options.sort == "score" and not options.exact_count and total > COUNT_CAP
            and not has_phrase(parsed, whoosh_schema(language))):
        return COUNT_CAP, True
    return total, False


def run_search(index: tantivy.Index, language: str, text: str, options: SearchOptions) -> SearchResult:
    """``search.run_search`` on Tantivy."""
    started = time.perf_counter()
    if is_listing_query(text, options):
        return _listing_result(index, text, options, started)
    deadline = time.monotonic() + options.timeout
    if options.sort != "score" and options.sort not in _ORDERS:
        raise QueryError(f"unknown sort order {options.sort!r}; use one of: score, {', '.join(_ORDERS)}")
    parsed = parse(whoosh_schema(language), text)
    schema = index.schema
    searcher = index.searcher()
    lexicon = cast(Any, Lexicon(searcher, schema, language))
    expanded, expansion = bound_expansions(lexicon, parsed.query, deadline)
    records = searches_records(expanded)
    filtered = _required(filters(schema, options, records))
    query = tantivy.Query.boolean_query([(_Occur.Must, translate(schema, expanded)), *filtered])
    away = None if records else _folded_away(searcher, schema, expanded, query, filtered)
    if away is not None:
        query = tantivy.Query.boolean_query([(_Occur.Must, query), (_Occur.MustNot, away)])
    forms = typed_forms(parsed.query, text, language) if options.sort == "score" else None
    wanted = max(options.offset + options.limit, RERANK_WINDOW if forms is not None else 1)
    if options.by_document:  # every match, to group
        wanted = max(wanted, count(searcher, query))
    order = _ORDERS.get(options.sort)
    result = (searcher.search(query, wanted, count=True) if order is None
              else searcher.search(query, wanted, count=True, order_by_field=order[0], order=order[1]))
    total = int(result.count or 0)  # type: ignore[attr-defined]  # count=True sets it; the stub omits it
    found = result.hits
    stored = [stored_of(searcher.doc(address)) for _, address in found]
    ranked = [(float(score) if order is None else 0.0, n) for n, (score, _) in enumerate(found)]
    if forms is not None:
        ranked = rerank(ranked, forms, lambda n: [stored[n].get("text", ""), stored[n].get("title", "")])
    marker = _Marker(expanded, language)

    def hit(n: int, snippet: bool, score: float) -> Hit:
        return as_hit(cast(Any, _StoredHit(stored[n], score, marker)), snippet, order is None)

    hits: list[Hit] = []
    groups: list[DocumentHits] = []
    lower_bound = False
    if options.by_document:
        grouped: dict[str, list[tuple[float, int]]] = {}
        for score, n in ranked:
            grouped.setdefault(stored[n]["doc_hash"], []).append((score, n))
        for pages in list(grouped.values())[options.offset:options.offset + options.limit]:
            shown = [hit(n, options.highlight and i == 0, score) for i, (score, n) in enumerate(pages)]
            groups.append(DocumentHits(shown[0].doc_hash, shown[0].path, shown[0].title, shown))
        total = len(grouped)
    else:
        hits = [hit(n, options.highlight, score) for score, n in ranked[options.offset:options.offset + options.limit]]
        total, lower_bound = (total, True) if expansion.expired else _shown_total(total, expanded, language, options)
    # as on Whoosh: only for a search that really found nothing, never much past the deadline
    partial = expansion.expired
    suggestion = "" if total or partial else suggest(lexicon, parsed, max(deadline, time.monotonic() + 0.05))
    return SearchResult(query=text, total=total, hits=hits, took=time.perf_counter() - started, partial=partial,
                        groups=groups, note="; ".join(expansion.notes), suggestion=suggestion,
                        total_is_lower_bound=lower_bound)

