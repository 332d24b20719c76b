"""Our parsed queries as Tantivy queries, and the search options' filters.

The query language stays ours: ``query_build.parse`` reads the text (every error
with its column, our analysis of each word) into the query tree it always made,
here used as a plain description of the query, and this module builds the same
logic from Tantivy's parts. Patterns match the terms the index holds as Whoosh's
do (``Prefix``: the term starts with the text; ``Wildcard``: ``*`` any run of
characters, ``?`` one), through Tantivy's regular expressions over its term
dictionary. What has no Tantivy form yet raises NotSupported.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

import tantivy
from whoosh.query import (
    And,
    AndMaybe,
    AndNot,
    Every,
    FuzzyTerm,
    Not,
    NullQuery,
    Or,
    Phrase,
    Prefix,
    Query,
    Term,
    TermRange,
    Wildcard,
)

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
    if isinstance(query, FuzzyTerm):  # before Term: a FuzzyTerm is one
        raise NotSupported("fuzzy words (word~)")
    if isinstance(query, Term):
        return _boosted(tantivy.Query.term_query(schema, query.fieldname, query.text), boost)
    if isinstance(query, Phrase):
        # Whoosh's slop counts the distance between words (1: adjacent), Tantivy's the
        # words allowed between them (0: adjacent)
        return _boosted(tantivy.Query.phrase_query(schema, query.fieldname, list(query.words),
                                                   slop=max(query.slop - 1, 0)), boost)
    if isinstance(query, Prefix):
        return _boosted(tantivy.Query.regex_query(schema, query.fieldname, escape(query.text) + ".*"), boost)
    if isinstance(query, Wildcard):
        return _boosted(tantivy.Query.regex_query(schema, query.fieldname, glob_regex(query.text)), boost)
    if isinstance(query, TermRange):
        raise NotSupported("ranges of terms ([a TO b])")
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


def text_matcher(query: Query, field: str) -> re.Pattern[str] | None:
    """One expression matching the terms of ``field`` that ``query`` names (its
    words, phrase words and patterns): what a page's highlights mark, as Whoosh
    marks the query's terms that the index holds. None: no such term."""
    parts: list[str] = []
    for leaf in leaves(query):
        if getattr(leaf, "fieldname", None) != field:
            continue
        if isinstance(leaf, Phrase):
            parts.extend(re.escape(word) for word in leaf.words)
        elif isinstance(leaf, Prefix):
            parts.append(re.escape(leaf.text) + ".*")
        elif isinstance(leaf, Wildcard):
            parts.append(python_glob(leaf.text))
        elif isinstance(leaf, Term) and isinstance(leaf.text, str):
            parts.append(re.escape(leaf.text))
    return re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL) if parts else None


def python_glob(pattern: str) -> str:
    """Whoosh's wildcard as a Python expression over whole terms."""
    return "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)


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
