"""Text fields that index a page's words without Whoosh's per-token path, and the
field of adjacent common-word pairs that answers phrases of common words.

Whoosh indexes a text field by running the analyzer as a generator of Token
objects and building each term's positions in a dict of lists, then pickling them:
a third of the writer's time went there. ``PageText`` takes the terms as one list
from ``PageTokenizer.terms`` and encodes exactly what Whoosh's formats would
(the same bytes: an index written either way reads the same), and keeps its last
value's postings, because a file's title, author and file name are indexed again on
each of its pages.

``WordPairs`` is Lucene's CommonGrams idea. A phrase of two common words ("of
the") matched positionally reads tens of thousands of pages' positions and cannot
skip any (every block holds a page that scores high): seconds at 50,000 pages.
Indexed as one term, the pair is a posting list like any word's, with block
maximum scores, so a top-10 search skips almost all of it. Only pairs of two
common words are indexed (the language's stop words, as the field's analyzer stems
them, stored with the field): a phrase with any other word is cheap to match by
positions, because intersecting with that word's postings skips the rest, and
indexing every pair would more than double the postings.
"""
from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from pickle import dumps
from typing import Any

from whoosh import formats
from whoosh.fields import TEXT, FieldType
from whoosh.system import pack_uint

from .analysis import PageTokenizer

#: Between the two words of a pair term: no term holds a space.
PAIR_SEPARATOR = " "
#: The field of the page text's common-word pairs.
PAIR_FIELD = "text_pairs"


def _positions_value(positions: list[int]) -> bytes:
    """Whoosh's Positions encoding: the count, then the pickled deltas."""
    deltas = [b - a for a, b in itertools.pairwise([0, *positions])]
    return pack_uint(len(deltas)) + dumps(deltas, 2)


def _frequency_postings(counts: Counter[str], boost: float) -> list[tuple[bytes, int, float, bytes]]:
    return [(term.encode("utf-8"), n, float(n) * boost, pack_uint(n)) for term, n in counts.items()]


class PageText(TEXT):
    """A TEXT field indexed from ``PageTokenizer.terms`` (any other analyzer or
    value: Whoosh's own path)."""

    _last: tuple[str, list[tuple[bytes, int, float, bytes]]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_last", None)  # the schema is pickled into every table of contents
        return state

    def index(self, value: Any, **kwargs: Any) -> Any:
        analyzer, kind = self.analyzer, type(self.format)
        if kwargs or not isinstance(value, str) or not isinstance(analyzer, PageTokenizer) \
                or kind not in (formats.Positions, formats.Frequency):
            return super().index(value, **kwargs)
        last = self._last
        if last is not None and last[0] is value:
            return last[1]
        terms = analyzer.terms(value)
        boost = self.format.field_boost
        if kind is formats.Frequency:
            postings = _frequency_postings(Counter(terms), boost)
        else:
            positions: defaultdict[str, list[int]] = defaultdict(list)
            for pos, term in enumerate(terms):
                positions[term].append(pos)
            postings = [(term.encode("utf-8"), len(p), float(len(p)) * boost, _positions_value(p))
                        for term, p in positions.items()]
        self._last = (value, postings)
        return postings


def common_terms(analyzer: PageTokenizer, words: list[str]) -> frozenset[str]:
    """``words`` as the analyzer indexes them (folded and stemmed)."""
    return frozenset(term for word in words for term in analyzer.terms(word))


class WordPairs(FieldType):
    """Adjacent pairs of common words of a page's text, each one term ("of the"),
    with frequencies for scoring; never stored, never named in a query."""

    def __init__(self, analyzer: PageTokenizer, common: frozenset[str]) -> None:
        super().__init__(formats.Frequency(), analyzer, scorable=True)
        self.common = common

    def pair(self, first: str, second: str) -> str | None:
        """The pair term of two adjacent terms, None when the pair is not indexed."""
        common = self.common
        return f"{first}{PAIR_SEPARATOR}{second}" if first in common and second in common else None

    def index(self, value: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError(f"{type(value).__name__} is not text")
        common = self.common
        pairs = Counter(f"{a}{PAIR_SEPARATOR}{b}" for a, b in itertools.pairwise(self.analyzer.terms(value))
                        if a in common and b in common)
        return _frequency_postings(pairs, self.format.field_boost)
