"""What to mark on a page image for a query (issue 10): the index side.

The page image marks the words a search matched, so both halves must read words
exactly as the index does. ``PageIndex.terms_to_mark`` (``expand_terms``) parses
the query with our own parser (query.py) and expands its prefixes, wildcards, fuzzy words and ranges against the
index's lexicon within the search's own caps, then keeps the text-field terms a page
can match: negated words give nothing, other fields (``title:``, ``author:``, the
file name) give nothing, a phrase gives its words. ``token_spans`` and
``matching_spans`` run the page text through the index's analyser with character
offsets, so a folded accent ("résumé" for "resume"), a stem ("runs" for "running")
or a CJK bigram inside a run of ideographs is found where the index found it.

Every Whoosh-specific line of marking lives here; ``server/`` sees only terms (str)
and character spans.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from whoosh.query import (
    AndNot,
    Every,
    Not,
    NullQuery,
    Phrase,
    Query,
    Term,
)

from .analysis import is_cjk
from .query import MAX_EXPANDED_TERMS, LoneCJK, bound_expansions, parse
from .schema import analyzer

if TYPE_CHECKING:
    from whoosh.searching import Searcher


#: The only field whose terms a page image can show: the page text.
TEXT_FIELD = "text"


def expand_terms(searcher: Searcher, query: str, deadline: float,
                 budget: int = MAX_EXPANDED_TERMS) -> frozenset[str]:
    """``PageIndex.terms_to_mark`` on an open index: parse, expand within ``budget`` terms
    and ``deadline`` (time.monotonic()), collect the positive text terms."""
    parsed = parse(searcher, query)
    narrowed = parsed.query.accept(_lone_cjk_as_term)
    expanded, _ = bound_expansions(searcher, narrowed, deadline, budget)
    terms: set[str] = set()
    _collect(expanded, terms)
    return frozenset(terms)


def _lone_cjk_as_term(q: Query) -> Query:
    """query.py widens one CJK character to the bigrams it starts or ends (the index
    holds a unigram only for a character standing alone). Marking those bigrams
    would box the neighbouring character too: keep the character itself, which
    ``matching_spans`` finds inside any bigram."""
    return Term(TEXT_FIELD, q.char) if isinstance(q, LoneCJK) else q


def _collect(q: Query, out: set[str]) -> None:
    """The text terms of the parts of ``q`` a page must (or may) match; what is
    excluded (NOT, -word, the negative side of an AND NOT) gives nothing."""
    if isinstance(q, Not) or q is NullQuery or isinstance(q, Every):
        return
    if isinstance(q, AndNot):
        _collect(q.a, out)
        return
    if isinstance(q, Term):
        if q.fieldname == TEXT_FIELD and isinstance(q.text, str) and q.text:
            out.add(q.text)
        return
    if isinstance(q, Phrase):
        if q.fieldname == TEXT_FIELD:
            out.update(w for w in q.words if isinstance(w, str) and w)
        return
    for child in q.children():
        _collect(child, out)


@lru_cache(maxsize=16)
def _tokenizer(language: str) -> Any:
    return analyzer(language)


def token_spans(language: str, text: str) -> list[tuple[int, int, str]]:
    """The analyser's tokens of ``text`` as (start, end, term): character offsets
    into ``text`` and the term the index holds for it, exactly as page text is
    indexed in ``language`` (schema.analyzer). A CJK bigram that spans a wrapped
    line covers the line break between its characters."""
    return [(t.startchar, t.endchar, t.text)
            for t in _tokenizer(language)(text, positions=False, chars=True, mode="index")]


def matching_spans(language: str, text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of ``text`` whose tokens are among ``terms`` (sorted, no
    duplicates). A term that is one CJK character marks that character wherever it
    stands inside a bigram, not the bigram's other half."""
    wanted = frozenset(terms)
    if not wanted or not text:
        return []
    lone = frozenset(t for t in wanted if len(t) == 1 and is_cjk(t))
    spans: set[tuple[int, int]] = set()
    for start, end, term in token_spans(language, text):
        if term in wanted:
            spans.add((start, end))
        elif lone and is_cjk(term):
            for i in range(start, end):
                if text[i] != "\n" and unicodedata.normalize("NFKC", text[i]) in lone:
                    spans.add((i, i + 1))
    return sorted(spans)

