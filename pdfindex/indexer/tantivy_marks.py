"""What to mark on a page image for a query, on an index on Tantivy
(``marks.expand_terms``'s job).

The query is read and narrowed as ``marks`` reads it (a lone CJK character stays
itself); the page text's prefixes and wildcards are expanded against Tantivy's
term dictionary, in term order, within ``MAX_EXPANDED_TERMS`` terms in all and the
deadline (a cut expansion marks fewer words, never wrong ones); then ``marks``
collects the positive page-text terms, as for Whoosh.
"""
from __future__ import annotations

import re
import time
from typing import Any

import tantivy
from whoosh.query import FuzzyTerm, NullQuery, Or, Prefix, Query, Term, TermRange, Wildcard

from .marks import TEXT_FIELD, _collect, _lone_cjk_as_term
from .query import MAX_EXPANDED_TERMS, parse
from .tantivy_query import python_glob
from .tantivy_schema import NotSupported, whoosh_schema


def _pattern(leaf: Prefix | Wildcard) -> tuple[str, re.Pattern[str]]:
    """The fixed start of a pattern (what the term dictionary is walked from) and
    the expression a whole term must match."""
    if isinstance(leaf, Wildcard):
        fixed = re.split(r"[*?]", leaf.text, maxsplit=1)[0]
        return fixed, re.compile(python_glob(leaf.text), re.DOTALL)
    return leaf.text, re.compile(re.escape(leaf.text) + ".*", re.DOTALL)


def expand_terms(searcher: tantivy.Searcher, language: str, query: str, deadline: float) -> frozenset[str]:
    """``PageIndex.terms_to_mark`` on Tantivy."""
    parsed = parse(whoosh_schema(language), query)
    budget = [MAX_EXPANDED_TERMS]

    def expand(q: Query) -> Any:
        if isinstance(q, FuzzyTerm):
            raise NotSupported("fuzzy words (word~)")
        if isinstance(q, TermRange):
            raise NotSupported("ranges of terms ([a TO b])")
        if not isinstance(q, Prefix | Wildcard) or q.fieldname != TEXT_FIELD:
            return q
        if isinstance(q, Wildcard) and "[" in q.text:
            raise NotSupported("a wildcard with a [character class]")
        fixed, pattern = _pattern(q)
        terms: list[str] = []
        for term in sorted(t for t, _ in searcher.terms_with_prefix(TEXT_FIELD, fixed)):
            if budget[0] <= 0 or time.monotonic() > deadline:
                break
            if pattern.fullmatch(term):
                terms.append(term)
                budget[0] -= 1
        return Or([Term(TEXT_FIELD, t) for t in terms]) if terms else NullQuery

    expanded = parsed.query.accept(_lone_cjk_as_term).accept(expand)
    found: set[str] = set()
    _collect(expanded, found)
    return frozenset(found)
