"""The query language of ``pdfindex search`` (the CLI and any other front end share it).

Syntax (also in ``pdfindex search --help``)::

    free culture          both words (words are ANDed)
    free OR culture       either word            NOT free, -free   pages without it
    +free                 the word is required, also inside an OR group
    "free culture"        the words adjacent and in order ("..."~2: up to 2 words apart)
    title:report          a field: text, title, author, subject, keywords, producer,
                          filename, error, status, problem  (title:(a OR b) for a group)
    cult*  c?lture        prefix and wildcards   cultur~  cultur~2  fuzzy (edits)
    [a TO c]  {a TO c}    a range of terms (inclusive / exclusive)
    word^2                weight a word

Why our own parser rather than Whoosh's: Whoosh's parser never says a query is wrong.
It reads an unbalanced quote as a word, ``title:(`` as the word "titl", an unknown
field as a phrase, ignores ``-word``, and its parse time grows with the square of the
query's length. This one is linear, refuses what it cannot read with a ``QueryError``
that names the problem and its position, and limits a query's size.

Wildcards, prefixes, ranges and fuzzy words are expanded here, not by Whoosh, so the
expansion is capped (``MAX_EXPANDED_TERMS``) and stops at the search's deadline
(Whoosh expanded them before its time limit began, 9 to 20 s on a 20k-page index).
"""
from __future__ import annotations

import itertools
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from whoosh.index import Index
from whoosh.query import (
    And,
    AndMaybe,
    Every,
    FuzzyTerm,
    Not,
    NullQuery,
    Or,
    Prefix,
    Query,
    Term,
    TermRange,
    Wildcard,
)
from whoosh.searching import Searcher
from whoosh.support.levenshtein import damerau_levenshtein

from .analysis import fold, is_cjk
from .errors import QueryError
from .exclusion import Excluding
from .phrase import AdjacentPhrase
from .records import Status

#: A longer query is refused before it is read (a person types far less; Whoosh's
#: parser took 0.6 s for 10k characters and 80 s for 100k).
MAX_QUERY_CHARS = 1000
#: Words (phrase words included) in one query.
MAX_QUERY_TERMS = 64
#: Index terms that wildcards, prefixes, ranges and fuzzy words of one query may
#: expand to, all together; the rest are left out with a note.
MAX_EXPANDED_TERMS = 1000
#: Fuzzy words: at most this many edits, and the first letter must match (most
#: misspellings keep it, and it cuts the terms to compare by ~20x).
MAX_FUZZY_EDITS = 2
FUZZY_PREFIX = 1
MAX_BOOST = 1000.0
#: Parentheses (and NOT/-/+) inside each other; deeper would exhaust the stack.
MAX_NESTING = 32

#: Fields a word without ``field:`` is looked for in, with their weights. A field
#: that the index's schema does not have is skipped.
DEFAULT_FIELDS: dict[str, float] = {"text": 1.0, "title": 1.5, "filename": 1.0}
#: What ``field:`` may name. author, subject and keywords come with document
#: metadata; an index without them answers such a query with nothing.
FIELDS = ("text", "title", "author", "subject", "keywords", "producer", "filename", "error", "status", "problem")
#: The field whose terms spelling suggestions come from.
SUGGESTION_FIELD = "text"
#: At most this long looking for suggestions (after a search that found nothing).
SUGGESTION_SECONDS = 0.3
#: Pages whose stored text is read to find how a suggested term is written.
SURFACE_PAGES = 5

_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):")
_SPECIAL = set('()"')
_OPERATORS = {"AND", "OR", "NOT"}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # word, phrase, range, field, open, close, and, or, not, plus, minus
    text: str
    pos: int
    end: int
    extra: str = ""  # a phrase's ~slop, a range's bracket pair


@dataclass(slots=True)
class ParsedQuery:
    """A parsed query and what was read on the way: the word spans a spelling
    suggestion may replace."""

    query: Query
    text: str
    words: list[tuple[int, int, str, tuple[str, ...]]] = field(default_factory=list)  # start, end, word, fields


def _column(pos: int) -> str:
    return f"column {pos + 1}"


def _error(message: str, pos: int | None) -> QueryError:
    where = f" at {_column(pos)}" if pos is not None else ""
    return QueryError(f"bad query{where}: {message}", position=pos)


def _quote(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")


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


# ---- reading the query text into tokens -----------------------------------------------------

def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "(":
            out.append(_Token("open", ch, i, i + 1))
            i += 1
        elif ch == ")":
            out.append(_Token("close", ch, i, i + 1))
            i += 1
        elif ch == '"':
            close = text.find('"', i + 1)
            if close < 0:
                raise _error('a quote (") is never closed: add the closing quote', i)
            end = close + 1
            slop = ""
            m = re.match(r"~(\d*)", text[end:])
            if m:
                slop, end = m.group(1) or "1", end + m.end()
            out.append(_Token("phrase", text[i + 1:close], i, end, slop))
            i = end
        elif ch in "[{":
            closer = "]" if ch == "[" else "}"
            close = text.find(closer, i + 1)
            if close < 0:
                raise _error(f"a range opened with {ch!r} is never closed with {closer!r}", i)
            out.append(_Token("range", text[i + 1:close], i, close + 1, ch + closer))
            i = close + 1
        elif ch in "+-" and (i == 0 or text[i - 1].isspace() or text[i - 1] == "("):
            if i + 1 >= n or text[i + 1].isspace() or text[i + 1] == ")":
                raise _error(f"{ch!r} must be directly followed by a word (e.g. {ch}draft)", i)
            out.append(_Token("plus" if ch == "+" else "minus", ch, i, i + 1))
            i += 1
        else:
            m = _FIELD.match(text, i)
            if m:
                end = m.end()
                if end >= n or text[end].isspace() or text[end] == ")":
                    raise _error(f"{m.group(0)!r} needs a value after the colon (e.g. {m.group(0)}report)", i)
                out.append(_Token("field", m.group(1), i, end))
                i = end
                continue
            j = i
            while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            word = text[i:j]
            kind = word.lower() if word in _OPERATORS else "word"
            out.append(_Token(kind, word, i, j))
            i = j
    return out


# ---- the parser: tokens into a Whoosh query -------------------------------------------------------

class _Parser:
    def __init__(self, schema: Any, text: str) -> None:
        self.schema = schema
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.words: list[tuple[int, int, str, tuple[str, ...]]] = []
        self.terms = 0
        self.default = tuple(name for name in DEFAULT_FIELDS if name in schema)
        self.depth = 0

    def peek(self) -> _Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> _Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> Query | None:
        query = self.or_expr(self.default)
        tok = self.peek()
        if tok is not None:  # only a stray ")" stops or_expr early
            raise _error("a closing parenthesis has no opening one", tok.pos)
        return query

    def _operand_missing(self, tok: _Token, side: str) -> QueryError:
        return _error(f"{tok.text} has nothing {side} it", tok.pos)

    def or_expr(self, fields: tuple[str, ...]) -> Query | None:
        groups = [self.and_expr(fields)]
        while (tok := self.peek()) is not None and tok.kind == "or":
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("or", "and", "close"):
                raise self._operand_missing(tok, "after")
            groups.append(self.and_expr(fields))
        if len(groups) == 1:
            return _all_of(groups[0])
        # Lucene's reading: in an OR group, +word is required and -word excluded.
        required: list[Query] = []
        excluded: list[Query] = []
        optional: list[Query] = []
        for group in groups:
            if len(group) == 1 and group[0][0] in ("+", "-"):
                (required if group[0][0] == "+" else excluded).append(group[0][1])
            elif (query := _all_of(group)) is not None:
                optional.append(query)
        return _combine(required, optional, excluded)

    def and_expr(self, fields: tuple[str, ...]) -> list[tuple[str, Query]]:
        clauses: list[tuple[str, Query]] = []
        first = True
        while (tok := self.peek()) is not None and tok.kind not in ("or", "close"):
            if tok.kind == "and":
                if first:
                    raise self._operand_missing(tok, "before")
                self.take()
                nxt = self.peek()
                if nxt is None or nxt.kind in ("or", "and", "close"):
                    raise self._operand_missing(tok, "after")
                continue
            mark, query = self.unary(fields)
            first = False
            if query is not None:
                clauses.append((mark, query))
        if first and (tok := self.peek()) is not None and tok.kind == "or":
            raise self._operand_missing(tok, "before")
        return clauses

    def unary(self, fields: tuple[str, ...]) -> tuple[str, Query | None]:
        tok = self.peek()
        assert tok is not None
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _error(f"the query nests parentheses or operators more than {MAX_NESTING} deep", tok.pos)
        try:
            return self._unary(fields)
        finally:
            self.depth -= 1

    def _unary(self, fields: tuple[str, ...]) -> tuple[str, Query | None]:
        tok = self.take()
        if tok.kind == "not":
            nxt = self.peek()
            if nxt is None or nxt.kind in ("or", "and", "close"):
                raise self._operand_missing(tok, "after")
            _, query = self.unary(fields)
            return "-", query
        if tok.kind in ("plus", "minus"):
            _, query = self.primary(self.take(), fields)
            return ("+" if tok.kind == "plus" else "-"), query
        return self.primary(tok, fields)

    def primary(self, tok: _Token, fields: tuple[str, ...]) -> tuple[str, Query | None]:
        if tok.kind == "open":
            if self.peek() is None or self.peek().kind == "close":  # type: ignore[union-attr]
                if self.peek() is None:
                    raise _error("a parenthesis is never closed", tok.pos)
                raise _error("empty parentheses", tok.pos)
            query = self.or_expr(fields)
            if self.peek() is None:
                raise _error("a parenthesis is never closed", tok.pos)
            self.take()
            return "", query
        if tok.kind == "close":
            raise _error("a closing parenthesis has no opening one", tok.pos)
        if tok.kind == "field":
            if tok.text not in FIELDS:
                raise _error(f"unknown field {tok.text!r}; the fields are {', '.join(FIELDS)} "
                             f'(to search for "{tok.text}:" itself, put it in quotes)', tok.pos)
            nxt = self.take()
            if nxt.kind in ("and", "or", "not", "plus", "minus", "field", "close"):
                raise _error(f"'{tok.text}:' needs a value after the colon (e.g. {tok.text}:report)", tok.pos)
            mark, query = self.primary(nxt, (tok.text,))
            if tok.text not in self.schema:  # metadata an older index does not have: nothing matches
                return mark, NullQuery
            return mark, query
        if tok.kind in ("and", "or", "not", "plus", "minus"):  # pragma: no cover - handled by the callers
            raise self._operand_missing(tok, "before")
        if tok.kind == "phrase":
            return "", self.phrase(tok, fields)
        if tok.kind == "range":
            return "", self.range(tok, fields)
        return "", self.word(tok, fields)

    # ---- leaves --------------------------------------------------------------------------------

    def _count(self, n: int, tok: _Token) -> None:
        self.terms += n
        if self.terms > MAX_QUERY_TERMS:
            raise _error(f"the query has more than {MAX_QUERY_TERMS} words; search for fewer", tok.pos)

    def _analyse(self, name: str, text: str, tokenize: bool = True) -> list[str]:
        return [t.text for t in self.schema[name].analyzer(text, mode="query", tokenize=tokenize)
                if t.text] if name != "status" else ([text] if text else [])

    def _fields(self, fields: tuple[str, ...]) -> list[tuple[str, float]]:
        boosts = DEFAULT_FIELDS if fields == self.default else {}
        return [(name, boosts.get(name, 1.0)) for name in fields if name in self.schema]

    def phrase(self, tok: _Token, fields: tuple[str, ...]) -> Query | None:
        slop = int(tok.extra) if tok.extra else 1
        if slop > 100:
            raise _error("a phrase's ~ distance must be at most 100", tok.pos)
        subs: list[Query] = []
        counted = False
        for name, boost in self._fields(fields):
            words = self._analyse(name, tok.text)
            if not counted and words:
                self._count(len(words), tok)
                counted = True
            if len(words) == 1:
                subs.append(Term(name, words[0], boost=boost))
            elif words:
                subs.append(AdjacentPhrase(name, words, slop=slop, boost=boost))
        return _any_of(subs)

    def range(self, tok: _Token, fields: tuple[str, ...]) -> Query | None:
        parts = re.split(r"\s+TO\s+|^\s*TO\s+|\s+TO\s*$|^\s*TO\s*$", tok.text)
        if len(parts) != 2:
            raise _error(f"a range is written [first TO last] (either may be left out), not {tok.extra[0]}"
                         f"{tok.text}{tok.extra[1]}", tok.pos)
        start, end = (p.strip() for p in parts)
        excl = tok.extra == "{}"
        self._count(1, tok)
        subs: list[Query] = []
        for name, boost in self._fields(fields):
            lo = self._analyse(name, start, tokenize=False)
            hi = self._analyse(name, end, tokenize=False)
            subs.append(TermRange(name, lo[0] if lo else None, hi[0] if hi else None, startexcl=excl,
                                  endexcl=excl, boost=boost))
        return _any_of(subs)

    def word(self, tok: _Token, fields: tuple[str, ...]) -> Query | None:
        text, boost = tok.text, 1.0
        m = re.search(r"\^([^\^~]*)$", text)
        if m:
            if not _NUMBER.fullmatch(m.group(1)) or not 0 < float(m.group(1)) <= MAX_BOOST:
                raise _error(f"'^' in {_quote(text)} must be followed by a weight from 0 to {MAX_BOOST:g} "
                             "(e.g. report^2)", tok.pos)
            boost, text = float(m.group(1)), text[:m.start()]
        fuzzy = None
        m = re.search(r"~(\d*)$", text)
        if m:
            edits = int(m.group(1)) if m.group(1) else 1
            if edits > MAX_FUZZY_EDITS:
                raise _error(f"a fuzzy word allows at most {MAX_FUZZY_EDITS} edits (e.g. report~2), "
                             f"not {edits}", tok.pos)
            fuzzy, text = edits, text[:m.start()]
            if "*" in text or "?" in text:
                raise _error(f"{_quote(tok.text)} is both a wildcard and fuzzy; use one", tok.pos)
        if not text:
            raise _error(f"{_quote(tok.text)} has no word before its '~' or '^'", tok.pos)
        self._count(1, tok)
        if text == "*" and fuzzy is None:
            if fields == self.default:
                return Every()
            return _any_of([Prefix(name, "", boost=b * boost) for name, b in self._fields(fields)])
        subs: list[Query] = []
        wild = "*" in text or "?" in text
        for name, b in self._fields(fields):
            if name == "status" and not wild and fuzzy is None and text.lower() not in {str(s) for s in Status}:
                raise _error(f"unknown status {text!r}; the statuses are {', '.join(str(s) for s in Status)}",
                             tok.pos)
            weight = b * boost
            if wild or fuzzy is not None:
                folded = self._analyse(name, text.lower() if name == "status" else text, tokenize=False)
                if not folded:
                    continue
                # Text is indexed as stems and patterns are typed as words: a prefix
                # or a fuzzy word is matched as typed and as its stem ("personal*"
                # finds the stem "person", which "personal" was indexed as).
                targets = [folded[0]]
                prefix = re.fullmatch(r"([^*?]+)\*", folded[0])
                if fuzzy is not None or prefix:
                    word = prefix.group(1) if prefix else folded[0]
                    stem = self._analyse(name, word)
                    if len(stem) == 1 and stem[0] != word:
                        targets.append(stem[0] + "*" if prefix else stem[0])
                for target in targets:
                    if fuzzy is not None:
                        subs.append(FuzzyTerm(name, target, boost=weight, maxdist=fuzzy, prefixlength=FUZZY_PREFIX))
                    elif target.endswith("*") and "*" not in target[:-1] and "?" not in target:
                        subs.append(Prefix(name, target[:-1], boost=weight))
                    else:
                        subs.append(Wildcard(name, target, boost=weight))
                continue
            words = self._analyse(name, text.lower() if name == "status" else text)
            if len(words) == 1:
                subs.append(_widen_single_cjk(Term(name, words[0], boost=weight)))
            elif words:
                kind = getattr(self.schema[name], "multitoken_query", "default")
                if kind == "phrase":
                    subs.append(AdjacentPhrase(name, words, boost=weight))
                elif kind == "or":
                    subs.append(Union([Term(name, w) for w in words], boost=weight))
                else:
                    subs.append(And([Term(name, w) for w in words], boost=weight))
        if subs and not wild and fuzzy is None:
            self.words.append((tok.pos, tok.pos + len(text), text, fields))
        return _any_of(subs)


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


def _all_of(clauses: list[tuple[str, Query]]) -> Query | None:
    required = [q for mark, q in clauses if mark != "-"]
    excluded = [q for mark, q in clauses if mark == "-"]
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


def _schema(ix: Index | Any) -> Any:
    return ix.schema if hasattr(ix, "schema") else ix


def parse(ix: Index | Any, text: str) -> ParsedQuery:
    """``text`` as a query over the index (or schema) ``ix``; QueryError (with the
    position where it is known) for anything it cannot read."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,}",
                         position=MAX_QUERY_CHARS)
    bad = re.search("[\ud800-\udfff]", text)
    if bad:
        raise _error("the query holds bytes that are not UTF-8", bad.start())
    if not text.strip():
        raise QueryError("the query is empty: give words to search for (or filters, with `pdfindex list`)",
                         position=None)
    parser = _Parser(_schema(ix), text)
    query = parser.parse()
    if query is None:
        raise QueryError(f"the query {_quote(text)} has no searchable words (only punctuation or symbols)",
                         position=None)
    return ParsedQuery(query, text, parser.words)


# ---- bounded expansion ----------------------------------------------------------------------------

_MULTI = (Prefix, Wildcard, FuzzyTerm, TermRange)


@dataclass(slots=True)
class Expansion:
    """What bounding a query's expansions did: the notes for the result, and
    whether the deadline stopped it."""

    budget: int = MAX_EXPANDED_TERMS
    notes: list[str] = field(default_factory=list)
    expired: bool = False


def _wildcard(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern) + r"\Z",
                      re.DOTALL)


def _candidates(reader: Any, q: Query) -> Iterator[bytes | None]:
    """The terms ``q`` matches, in term order, and None for each term looked at
    that does not match (so the caller can watch the clock on long scans)."""
    name = q.fieldname
    if isinstance(q, Prefix):
        yield from reader.expand_prefix(name, q.text)
    elif isinstance(q, Wildcard):
        literal = re.match(r"[^*?]*", q.text).group()  # type: ignore[union-attr]
        match = _wildcard(q.text).match
        for btext in reader.expand_prefix(name, literal):
            yield btext if match(btext.decode("utf-8")) else None
    elif isinstance(q, FuzzyTerm):
        word, edits = q.text, q.maxdist
        for btext in reader.expand_prefix(name, word[:q.prefixlength]):
            term = btext.decode("utf-8")
            near = abs(len(term) - len(word)) <= edits and damerau_levenshtein(term, word, edits) <= edits
            yield btext if near else None
    elif isinstance(q, TermRange):
        start = (q.start or "").encode("utf-8")
        end = None if q.end is None else q.end.encode("utf-8")
        for fname, btext in reader.terms_from(name, start):
            if fname != name or (end is not None and (btext > end or (q.endexcl and btext == end))):
                return
            yield None if q.startexcl and btext == start else btext


def _describe(q: Query) -> str:
    if isinstance(q, FuzzyTerm):
        return f"the fuzzy word {q.text}~{q.maxdist}"
    if isinstance(q, TermRange):
        return f"the range {q.fieldname}:[{q.start or ''} TO {q.end or ''}]"
    if isinstance(q, Prefix):
        return f"the prefix {q.fieldname}:{q.text}*"
    return f"the wildcard {q.fieldname}:{q.text}"


def bound_expansions(searcher: Searcher, query: Query, deadline: float,
                     budget: int = MAX_EXPANDED_TERMS) -> tuple[Query, Expansion]:
    """``query`` with every wildcard, prefix, range and fuzzy word replaced by the
    index terms it matches, at most ``budget`` terms for the whole query and
    stopping at ``deadline`` (time.monotonic()); what was left out is noted."""
    reader = searcher.reader()
    state = Expansion(budget)

    def expand(q: Query) -> Query:
        if not isinstance(q, _MULTI) or q.fieldname not in reader.schema:
            return q
        if state.budget <= 0:
            state.notes.append(f"{_describe(q)} was not searched: the query's other wildcards and fuzzy words "
                               f"already expanded to {budget:,} terms")
            return NullQuery
        terms: list[Query] = []
        capped = False
        for n, btext in enumerate(_candidates(reader, q), 1):
            if n % 256 == 0 and time.monotonic() > deadline:
                state.expired = True
                break
            if btext is None:
                continue
            if len(terms) >= state.budget:
                capped = True
                break
            terms.append(Term(q.fieldname, btext.decode("utf-8")))
        state.budget -= len(terms)
        if capped:
            state.notes.append(f"{_describe(q)} matched more than {len(terms):,} terms; only the first "
                               f"{len(terms):,} were searched")
        if not terms:
            return NullQuery
        return terms[0].with_boost(q.boost) if len(terms) == 1 else Or(terms, boost=q.boost)

    bounded = query.accept(expand)
    if state.expired:
        state.notes.append("the search time limit was reached while expanding wildcards or fuzzy words: "
                           "results are partial")
    return bounded, state


# ---- did you mean ----------------------------------------------------------------------------------

def _suggestion_field(schema: Any) -> str | None:
    return SUGGESTION_FIELD if SUGGESTION_FIELD in schema else None


def _nearest(reader: Any, name: str, term: str, deadline: float) -> str | None:
    """The index term nearest ``term`` (1 edit before 2; more pages first)."""
    best: tuple[int, int, str] | None = None
    for n, btext in enumerate(reader.expand_prefix(name, term[:1]), 1):
        if n % 256 == 0 and time.monotonic() > deadline:
            break
        cand = btext.decode("utf-8")
        if abs(len(cand) - len(term)) > 2 or cand == term:
            continue
        dist = damerau_levenshtein(cand, term, 3)
        if dist > 2 or (len(term) <= 4 and dist > 1):
            continue
        key = (dist, -reader.doc_frequency(name, cand), cand)
        if best is None or key < best:
            best = key
    return best[2] if best else None


def suggest(searcher: Searcher, parsed: ParsedQuery, deadline: float) -> str:
    """A corrected query made of the index's own words, or "": each plain word
    the index does not hold at all is replaced by the nearest one it does, as the
    pages write it (an index term is a stem: "librari")."""
    schema = searcher.schema
    name = _suggestion_field(schema)
    if name is None or not parsed.words:
        return ""
    reader = searcher.reader()
    analyse = schema[name].analyzer
    text, changed = parsed.text, False
    deadline = min(deadline, time.monotonic() + SUGGESTION_SECONDS)
    nearest_of: dict[str, str | None] = {}  # each distinct word looked up once
    for start, end, word, _fields in sorted(parsed.words, reverse=True):
        if time.monotonic() > deadline:
            return ""  # a half-corrected query would mislead
        tokens = [t.text for t in analyse(word, mode="query")]
        if len(tokens) != 1 or is_cjk(tokens[0]) or _NUMBER.fullmatch(tokens[0]):
            continue
        term = tokens[0]
        if any(reader.doc_frequency(f, t) for f in DEFAULT_FIELDS if f in schema
               for t in [a.text for a in schema[f].analyzer(word, mode="query")]):
            continue
        if term not in nearest_of:
            nearest_of[term] = _nearest(reader, name, term, deadline)
        nearest = nearest_of[term]
        if nearest is None:
            continue
        written = _written_form(searcher, name, nearest, word, deadline) or _surface(word, term, nearest, analyse)
        text, changed = text[:start] + written + text[end:], True
    return text if changed else ""


def _written_form(searcher: Searcher, name: str, term: str, word: str, deadline: float) -> str | None:
    """How the pages write the words indexed as ``term`` (a stem, folded: "librari"):
    of the words of the first SURFACE_PAGES pages holding it that analyse to it,
    the one nearest to what the user typed ("libaries" → "libraries", not
    "library"), then the most frequent, lower-cased ("Library" → "library"), accents
    kept ("francai" → "français"). None if no page shows one in time. Asked only
    after a search that found nothing, so a search with hits never pays for it."""
    analyse = searcher.schema[name].analyzer
    counts: Counter[str] = Counter()
    for docnum in itertools.islice(searcher.docs_for_query(Term(name, term)), SURFACE_PAGES):
        if time.monotonic() > deadline:
            break
        stored = searcher.stored_fields(docnum).get(name)
        if isinstance(stored, str):
            counts.update(unicodedata.normalize("NFKC", t.original).lower()
                          for t in analyse(stored, mode="index", keeporiginal=True) if t.text == term)
    if not counts:
        return None
    typed = fold(word)
    return min(counts, key=lambda form: (damerau_levenshtein(fold(form), typed), -counts[form], form))


def _surface(word: str, stem: str, nearest: str, analyse: Any) -> str:
    """A readable form of the index term ``nearest`` when no page shows one: a stem
    ("financ") gets back the ending the user's word had ("finnance" → "finance")
    when that stems to it."""
    folded = word.casefold()
    common = 0
    while common < min(len(folded), len(stem)) and folded[common] == stem[common]:
        common += 1
    ending = folded[common:] if common == len(stem) else ""
    if ending:
        candidate = nearest + ending
        if [t.text for t in analyse(candidate, mode="query")] == [nearest]:
            return candidate
    return nearest

