"""The second stage of reading a query: syntax nodes (``query_syntax``) into a Whoosh query.

Here the index's schema comes in: each word is analysed per field (stems, folding, CJK
bigrams), words count against ``MAX_QUERY_TERMS`` as analysed, ``status:`` values are
checked, fields the index lacks match nothing, and clauses are combined the way Lucene
reads them (in an OR group, ``+word`` is required and ``-word`` excluded).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from whoosh.index import Index
from whoosh.query import And, AndMaybe, Every, FuzzyTerm, Not, NullQuery, Or, Prefix, Query, Term, TermRange, Wildcard

from pdfindex.contract.enums import TEXT_SOURCES
from pdfindex.contract.records import Status

from .analysis import is_cjk
from .errors import QueryError
from .exclusion import Excluding
from .phrase import AdjacentPhrase
from .query_syntax import AllOf, AnyOf, InField, Node, Phrase, Range, Sign, Word, bad_query, quoted, read

#: Words (phrase words included) in one query.
MAX_QUERY_TERMS = 64
#: Fuzzy words: the first letter must match (most misspellings keep it, and it cuts
#: the terms to compare by ~20x).
FUZZY_PREFIX = 1
#: Fields a word without ``field:`` is looked for in, with their weights. A field
#: that the index's schema does not have is skipped.
DEFAULT_FIELDS: dict[str, float] = {"text": 1.0, "title": 1.5, "filename": 1.0}

_STATUSES = tuple(str(s) for s in Status)
#: Fields of a closed set of values, matched whole and lowercased, each value checked.
_CLOSED = {"status": ("status", _STATUSES), "source": ("text source", TEXT_SOURCES)}
_PREFIX = re.compile(r"([^*?]+)\*")


@dataclass(frozen=True, slots=True)
class WordSpan:
    """A plain word of the query, where it was typed and the fields it was looked
    for in: what a spelling suggestion may replace."""

    start: int
    end: int
    text: str
    fields: tuple[str, ...]


@dataclass(slots=True)
class ParsedQuery:
    """A parsed query and what was read on the way: the word spans a spelling
    suggestion may replace."""

    query: Query
    text: str
    words: list[WordSpan] = field(default_factory=list)


class Union(Or):
    """An Or matched as a tree of unions. Whoosh's Or chooses per segment, and in a
    segment of under 5,000 documents takes an array matcher whose set-up (a
    2,048-slot array filled in Python) cost ~1 ms per segment and field: most of a
    rare term's time once the index has a few small segments."""

    matcher_type = Or.DEFAULT_MATCHER


class LoneCJK(Union):
    """One CJK character searched alone (``_widen_single_cjk``): its unigram, or any
    bigram it starts or ends. A type of its own so that what reads queries (the page
    marks) knows the character, not the bigrams around it, was asked for."""

    @property
    def char(self) -> str:
        first = self.subqueries[0]
        return str(first.text)


def parse(ix: Index | Any, text: str) -> ParsedQuery:
    """``text`` as a query over the index (or schema) ``ix``; QueryError (with the
    position where it is known) for anything it cannot read."""
    schema = ix.schema if hasattr(ix, "schema") else ix
    syntax = read(text)
    builder = _Builder(schema)
    query = builder.any_of(syntax, builder.default)
    if query is None:
        raise QueryError(f"the query {quoted(text)} has no searchable words (only punctuation or symbols)",
                         position=None)
    return ParsedQuery(query, text, builder.words)


Clauses = list[tuple[Sign, Query]]


class _Builder:
    """Walks the syntax nodes left to right, so the word that passes a limit is the
    one named."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.default = tuple(name for name in DEFAULT_FIELDS if name in schema)
        self.terms = 0
        self.words: list[WordSpan] = []

    def node(self, node: Node, fields: tuple[str, ...]) -> Query | None:
        if isinstance(node, Word):
            return self.word(node, fields)
        if isinstance(node, AnyOf):
            return self.any_of(node, fields)
        if isinstance(node, InField):
            return self.in_field(node)
        if isinstance(node, Phrase):
            return self.phrase(node, fields)
        return self.range(node, fields)

    def any_of(self, node: AnyOf, fields: tuple[str, ...]) -> Query | None:
        groups = [self.all_of(group, fields) for group in node.groups]
        if len(groups) == 1:
            return _all_of(groups[0])
        required: list[Query] = []
        excluded: list[Query] = []
        optional: list[Query] = []
        for group in groups:
            if len(group) == 1 and group[0][0]:  # one +word or -word
                (required if group[0][0] == "+" else excluded).append(group[0][1])
            elif (query := _all_of(group)) is not None:
                optional.append(query)
        return _combine(required, optional, excluded)

    def all_of(self, node: AllOf, fields: tuple[str, ...]) -> Clauses:
        clauses: Clauses = []
        for clause in node.clauses:
            query = self.node(clause.node, fields)
            if query is not None:
                clauses.append((clause.sign, query))
        return clauses

    def in_field(self, node: InField) -> Query | None:
        query = self.node(node.value, (node.name,))
        if node.name not in self.schema:  # metadata an older index does not have: nothing matches
            return NullQuery
        return query

    # ---- leaves --------------------------------------------------------------------------------

    def _count(self, n: int, pos: int) -> None:
        self.terms += n
        if self.terms > MAX_QUERY_TERMS:
            raise bad_query(f"the query has more than {MAX_QUERY_TERMS} words; search for fewer", pos)

    def _analyse(self, name: str, text: str, tokenize: bool = True) -> list[str]:
        return [t.text for t in self.schema[name].analyzer(text, mode="query", tokenize=tokenize)
                if t.text] if name not in _CLOSED else ([text.lower()] if text else [])

    def _fields(self, fields: tuple[str, ...]) -> list[tuple[str, float]]:
        boosts = DEFAULT_FIELDS if fields == self.default else {}
        return [(name, boosts.get(name, 1.0)) for name in fields if name in self.schema]

    def phrase(self, node: Phrase, fields: tuple[str, ...]) -> Query | None:
        subs: list[Query] = []
        counted = False
        for name, boost in self._fields(fields):
            words = self._analyse(name, node.text)
            if not counted and words:
                self._count(len(words), node.pos)
                counted = True
            if len(words) == 1:
                subs.append(Term(name, words[0], boost=boost))
            elif words:
                subs.append(AdjacentPhrase(name, words, slop=node.slop, boost=boost))
        return _any_of(subs)

    def range(self, node: Range, fields: tuple[str, ...]) -> Query | None:
        self._count(1, node.pos)
        subs: list[Query] = []
        for name, boost in self._fields(fields):
            lo = self._analyse(name, node.start, tokenize=False)
            hi = self._analyse(name, node.end, tokenize=False)
            subs.append(TermRange(name, lo[0] if lo else None, hi[0] if hi else None, startexcl=node.exclusive,
                                  endexcl=node.exclusive, boost=boost))
        return _any_of(subs)

    def word(self, node: Word, fields: tuple[str, ...]) -> Query | None:
        self._count(1, node.pos)
        if node.text == "*":  # not fuzzy: the syntax refuses "*~"
            if fields == self.default:
                return Every()
            return _any_of([Prefix(name, "", boost=b * node.boost) for name, b in self._fields(fields)])
        plain = not node.wild and node.edits is None
        subs: list[Query] = []
        for name, boost in self._fields(fields):
            text = node.text.lower() if name in _CLOSED else node.text
            if not plain:
                subs.extend(self._patterns(name, text, node.edits, boost * node.boost))
            elif name in _CLOSED and text not in _CLOSED[name][1]:
                what, values = _CLOSED[name]
                raise bad_query(f"unknown {what} {node.text!r}; the {what}s are {', '.join(values)}", node.pos)
            elif (query := self._term(name, text, boost * node.boost)) is not None:
                subs.append(query)
        if subs and plain:
            self.words.append(WordSpan(node.pos, node.pos + len(node.text), node.text, fields))
        return _any_of(subs)

    def _patterns(self, name: str, text: str, edits: int | None, boost: float) -> list[Query]:
        """A wildcard, prefix or fuzzy word, matched as typed and as its stem: text is
        indexed as stems and patterns are typed as words ("personal*" finds the stem
        "person", which "personal" was indexed as)."""
        folded = self._analyse(name, text, tokenize=False)
        if not folded:
            return []
        targets = [folded[0]]
        prefix = _PREFIX.fullmatch(folded[0])
        if edits is not None or prefix:
            word = prefix.group(1) if prefix else folded[0]
            stem = self._analyse(name, word)
            if len(stem) == 1 and stem[0] != word:
                targets.append(stem[0] + "*" if prefix else stem[0])
        return [_pattern(name, target, edits, boost) for target in targets]

    def _term(self, name: str, text: str, boost: float) -> Query | None:
        words = self._analyse(name, text)
        if not words:
            return None
        if len(words) == 1:
            return _widen_single_cjk(Term(name, words[0], boost=boost))
        kind = getattr(self.schema[name], "multitoken_query", "default")
        if kind == "phrase":
            return AdjacentPhrase(name, words, boost=boost)
        if kind == "or":
            return Union([Term(name, w) for w in words], boost=boost)
        return And([Term(name, w) for w in words], boost=boost)



def _pattern(name: str, target: str, edits: int | None, boost: float) -> Query:
    if edits is not None:
        return FuzzyTerm(name, target, boost=boost, maxdist=edits, prefixlength=FUZZY_PREFIX)
    if target.endswith("*") and "*" not in target[:-1] and "?" not in target:
        return Prefix(name, target[:-1], boost=boost)
    return Wildcard(name, target, boost=boost)


def _widen_single_cjk(query: Query) -> Query:
    """CJK text is indexed as character bigrams; one character alone matches the
    bigrams it starts or ends (a unigram is only indexed for a lone character)."""
    if isinstance(query, Term) and query.fieldname == "text" and isinstance(query.text, str) \
            and len(query.text) == 1 and is_cjk(query.text):
        return LoneCJK([query, Prefix("text", query.text), Wildcard("text", f"?{query.text}")], boost=query.boost)
    return query


def _any_of(subs: list[Query]) -> Query | None:
    if any(isinstance(q, Every) for q in subs):
        return Every()
    return None if not subs else subs[0] if len(subs) == 1 else Union(subs)


def _all_of(clauses: Clauses) -> Query | None:
    required = [q for sign, q in clauses if sign != "-"]
    excluded = [q for sign, q in clauses if sign == "-"]
    return _combine(required, [], excluded)


def _combine(required: list[Query], optional: list[Query], excluded: list[Query]) -> Query | None:
    """required AND (any of optional) AND NOT (any of excluded). Every() is
    dropped from an AND of other queries (Whoosh would widen the AND to every
    document)."""
    if len(required) > 1:
        required = [q for q in required if not isinstance(q, Every)] or [Every()]
    base: Query | None = None
    if required:
        base = required[0] if len(required) == 1 else And(required)
    either = _any_of(optional)
    if either is not None:
        base = either if base is None else (base if isinstance(either, Every) else AndMaybe(base, either))
    if excluded:
        out = excluded[0] if len(excluded) == 1 else Union(excluded)
        if base is None or isinstance(base, Every):
            return Not(out)
        return Excluding(base, out)
    return base
