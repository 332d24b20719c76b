"""Wildcards, prefixes, ranges and fuzzy words expanded to index terms, within a budget
and a deadline.

Expanded here, not by Whoosh, so the expansion is capped (``MAX_EXPANDED_TERMS``) and
stops at the search's deadline (Whoosh expanded them before its time limit began, 9 to
20 s on a 20k-page index).
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from whoosh.query import FuzzyTerm, NullQuery, Or, Prefix, Query, Term, TermRange, Wildcard
from whoosh.searching import Searcher
from whoosh.support.levenshtein import damerau_levenshtein

#: Index terms that wildcards, prefixes, ranges and fuzzy words of one query may
#: expand to, all together; the rest are left out with a note.
MAX_EXPANDED_TERMS = 1000

_LITERAL = re.compile(r"[^*?]*")


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


_MULTI = (Prefix, Wildcard, FuzzyTerm, TermRange)


def _candidates(reader: Any, q: Query) -> Iterator[bytes | None]:
    """The terms ``q`` matches, in term order, and None for each term looked at
    that does not match (so the caller can watch the clock on long scans)."""
    if isinstance(q, Prefix):
        return _prefix_terms(reader, q)
    if isinstance(q, Wildcard):
        return _wildcard_terms(reader, q)
    if isinstance(q, FuzzyTerm):
        return _fuzzy_terms(reader, q)
    return _range_terms(reader, q)


def _prefix_terms(reader: Any, q: Prefix) -> Iterator[bytes | None]:
    yield from reader.expand_prefix(q.fieldname, q.text)


def _wildcard_terms(reader: Any, q: Wildcard) -> Iterator[bytes | None]:
    match = _wildcard(q.text).match
    for btext in reader.expand_prefix(q.fieldname, _LITERAL.match(q.text).group()):  # type: ignore[union-attr]
        yield btext if match(btext.decode("utf-8")) else None


def _fuzzy_terms(reader: Any, q: FuzzyTerm) -> Iterator[bytes | None]:
    word, edits = q.text, q.maxdist
    for btext in reader.expand_prefix(q.fieldname, word[:q.prefixlength]):
        term = btext.decode("utf-8")
        near = abs(len(term) - len(word)) <= edits and damerau_levenshtein(term, word, edits) <= edits
        yield btext if near else None


def _range_terms(reader: Any, q: TermRange) -> Iterator[bytes | None]:
    name = q.fieldname
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
