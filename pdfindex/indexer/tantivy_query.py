"""Our parsed queries as Tantivy queries, and the search options' filters.

The query language stays ours: ``query_build.parse`` reads the text (every error
with its column, our analysis of each word) into the query tree it always made,
here used as a plain description of the query, its prefixes, wildcards, ranges and
fuzzy words already expanded to the index's terms by ``query_expansion`` (over
Tantivy's term dictionary: ``tantivy_lexicon``), and this module builds the same
logic from Tantivy's parts. A path glob is a regular expression over the indexed
paths (``*`` any run of characters, ``?`` one: Whoosh's wildcard).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import tantivy
from whoosh.query import And, AndMaybe, AndNot, Every, Not, NullQuery, Or, Phrase, Query, Term

from pdfindex.contract.records import SearchOptions

from .schema import KIND_DOC, KIND_PAGE, date_term, path_term
from .tantivy_schema import NotSupported

_Occur = tantivy.Occur
#: What a Rust regular expression reads as syntax (regex-syntax's meta characters).
_RUST_META = re.compile(r"([\\.+*?()|\[\]{}^$#&\-~])")


def escape(text: str) -> str:
    return _RUST_META.sub(r"\\\1", text)


def glob_regex(pattern: str) -> str:
    """Whoosh's wildcard (``fnmatch``: ``*``, ``?``) as a regular expression over
    whole terms; a bracket class, which fnmatch also reads, is not translated yet."""
    if "[" in pattern:
        raise NotSupported("a wildcard with a [character class]")
    return "".join(".*" if ch == "*" else "." if ch == "?" else escape(ch) for ch in pattern)


def _boosted(query: tantivy.Query, boost: float) -> tantivy.Query:
    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def translate(schema: tantivy.Schema, query: Query) -> tantivy.Query:
    """``query`` (a tree ``query_build.parse`` made) as a Tantivy query."""
    boost = float(getattr(query, "boost", 1.0))
    if query is NullQuery:
        return tantivy.Query.empty_query()
    if isinstance(query, Every):
        return tantivy.Query.all_query()
    if type(query) is Term:  # not a FuzzyTerm: those are expanded first
        return _boosted(tantivy.Query.term_query(schema, query.fieldname, query.text), boost)
    if isinstance(query, Phrase):
        # Whoosh's slop counts the distance between words (1: adjacent), Tantivy's the
        # words allowed between them (0: adjacent)
        return _boosted(tantivy.Query.phrase_query(schema, query.fieldname, list(query.words),
                                                   slop=max(query.slop - 1, 0)), boost)
    if isinstance(query, Not):
        return _boolean([(_Occur.Must, tantivy.Query.all_query()), (_Occur.MustNot, translate(schema, query.query))])
    if isinstance(query, AndNot):  # Excluding too
        return _boolean([(_Occur.Must, translate(schema, query.a)), (_Occur.MustNot, translate(schema, query.b))],
                        boost)
    if isinstance(query, AndMaybe):
        return _boolean([(_Occur.Must, translate(schema, query.a)), (_Occur.Should, translate(schema, query.b))],
                        boost)
    if isinstance(query, And):
        return _boolean([(_Occur.Must, translate(schema, q)) for q in query.subqueries], boost)
    if isinstance(query, Or):
        return _boolean([(_Occur.Should, translate(schema, q)) for q in query.subqueries], boost)
    raise NotSupported(f"the query part {type(query).__name__}")


def _boolean(clauses: list[tuple[tantivy.Occur, tantivy.Query]], boost: float = 1.0) -> tantivy.Query:
    return _boosted(tantivy.Query.boolean_query(clauses), boost)


def leaves(query: Query) -> Iterator[Query]:
    """Every leaf of ``query``, excluded ones too (Whoosh's highlighter reads them all)."""
    if query.is_leaf():
        yield query
        return
    for child in query.children():
        yield from leaves(child)


def field_terms(query: Query, field: str) -> frozenset[str]:
    """The terms of ``field`` that an expanded ``query`` names (its words and phrase
    words, excluded ones too): what Whoosh's highlighter marks on a page."""
    found: set[str] = set()
    for leaf in leaves(query):
        if getattr(leaf, "fieldname", None) != field:
            continue
        if isinstance(leaf, Phrase):
            found.update(word for word in leaf.words if isinstance(word, str))
        elif isinstance(leaf, Term) and isinstance(leaf.text, str):
            found.add(leaf.text)
    return frozenset(found)


def filters(schema: tantivy.Schema, options: SearchOptions, records: bool) -> list[tantivy.Query]:
    """The search options as required clauses: records or pages, coverage, OCR
    need, path glob and dates, as ``search._filters`` gives them to Whoosh."""
    parts = [tantivy.Query.term_query(schema, "kind", KIND_DOC if records else KIND_PAGE)]
    if options.min_coverage is not None:
        parts.append(tantivy.Query.range_query(schema, "coverage", tantivy.FieldType.Float,
                                               lower_bound=float(options.min_coverage)))
    if options.needs_ocr is not None:
        parts.append(tantivy.Query.term_query(schema, "needs_ocr", bool(options.needs_ocr)))
    if options.path_glob:
        parts.append(tantivy.Query.regex_query(schema, "paths", glob_regex(path_term(options.path_glob))))
    if options.since is not None or options.until is not None:
        parts.append(tantivy.Query.range_query(
            schema, "date", tantivy.FieldType.Integer,
            lower_bound=None if options.since is None else date_term(options.since),
            upper_bound=None if options.until is None else date_term(options.until)))
    return parts
