"""Typed words rank first: the best-scored pages are re-ranked by whether they hold
the query's words as typed, not only other forms of the same stems.

Stemming finds "person changed run" for "personal change runs", and BM25 over stems
cannot tell the page with the words as typed from the page that repeats the other
forms. The exact forms used to be indexed beside the stems (a second token for every
word whose stem differs), which added 27 % to the postings of a page and cost more
than a third of the writer's speed. Re-ranking the top of the list from the stored
text costs nothing at indexing time and a few milliseconds a query: the best
RERANK_WINDOW pages (by the stems' score) are looked at, the typed forms are sought in
their folded text, and each page gains EXACT_WEIGHT × the window's best score × the
share of the query's words it holds as typed: holding the words as typed comes first,
the stems' score orders pages that hold as many of them. (Scaling each score instead
let a page that repeats the other forms keep the lead.) Pages past the window keep their order, so a
page beyond it is never promoted; the window is fixed (not offset + limit), so paging
through the results never shows a page twice.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from whoosh.query import Query

from .analysis import fold, folded_words, stemmer

#: How many of the best-scored pages are re-ranked (collecting the top 100 instead of
#: the top 10 made a common-term search 50 % slower: less block skipping).
RERANK_WINDOW = 30
#: A page holding every word of the query as typed gains this times the best score
#: of the window (at 1.0 it outranks every page holding none of them as typed).
EXACT_WEIGHT = 1.0
#: The fields whose stems the typed words are matched against, and whose stored text
#: is read back.
_FIELDS = ("text", "title")


@dataclass(frozen=True, slots=True)
class TypedForms:
    """The words typed for the stems the query searches (folded), each with its stem."""

    stem_of: dict[str, str]  # typed form -> its stem
    stems: int
    pattern: re.Pattern[str]

    def share_held(self, text: str) -> float:
        """The share of the query's stems of which ``text`` holds a typed form; the
        page is read only until it holds them all (a common word: its first line)."""
        held: set[str] = set()
        for match in self.pattern.finditer(fold(text)):  # folding one word or a page is the same
            held.add(self.stem_of[match.group()])
            if len(held) == self.stems:
                break
        return len(held) / self.stems


def typed_forms(query: Query, text: str, language: str) -> TypedForms | None:
    """The typed forms of the words ``query`` searches by stem, or None when there is
    nothing to re-rank by (no stemming, no such word)."""
    stem = stemmer(language)
    if stem is None:
        return None
    searched = {term for name, term in query.iter_all_terms() if name in _FIELDS and isinstance(term, str)}
    by_stem: dict[str, set[str]] = {}
    for folded in folded_words(text):
        if (stemmed := stem(folded)) in searched:
            by_stem.setdefault(stemmed, set()).add(folded)
    if not by_stem:
        return None
    forms = sorted({f for fs in by_stem.values() for f in fs}, key=len, reverse=True)
    pattern = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, forms)) + r")(?![^\W_])")
    return TypedForms({f: s for s, fs in by_stem.items() for f in fs}, len(by_stem), pattern)


def rerank(top: list[tuple[float, int]], forms: TypedForms, stored_text: Callable[[int], Iterable[str]],
           weight: float | None = None) -> list[tuple[float, int]]:
    """``top`` ((score, docnum), best first) with its first RERANK_WINDOW entries
    re-scored by the typed forms each holds; ``stored_text(docnum)`` gives the
    page's stored text fields."""
    weight = EXACT_WEIGHT if weight is None else weight
    if not weight:
        return top
    best = top[0][0] if top else 0.0
    head = [(score + weight * best * forms.share_held(" ".join(stored_text(docnum))), docnum)
            for score, docnum in top[:RERANK_WINDOW]]
    head.sort(key=lambda item: item[0], reverse=True)  # stable: ties keep the stems' order
    return head + top[RERANK_WINDOW:]
