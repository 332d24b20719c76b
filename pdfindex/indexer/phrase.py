"""Phrase matching that a top-10 search can afford on common words.

Whoosh turns a phrase into SpanNear2, which for every page holding all the words
builds a Span object per position, bisects and sorts them, and cannot skip a block of
pages whose score could not enter the top N (its ``replace`` and quality skipping
are stubs). For a phrase of two common words that is tens of thousands of pages at
~40 µs each: 1.6 s at 50,000 pages.

The score of a Whoosh phrase is the score of the AND of its words (the span
matcher wraps the intersection and passes its score through), so the intersection's
block quality bounds it too. ``AdjacentPhrase`` keeps that score and Whoosh's
``Phrase`` for everything else (terms, highlighting, slop), and matches with the
intersection of the words' matchers (which can skip blocks by quality, though
indexer/search.py collects phrase queries without it: for common words it skips
almost nothing and costs the exact total), and checks adjacency only on the pages it
stops at: positions decoded with one C-level pass and compared as sets.

Where the index has word pairs (``textfields.WordPairs``), a phrase of two common
words is the posting list of its pair term: scored as a term (by the phrase's own
frequency on the page), with the block skipping every term has, and no positions
read. A longer phrase holding common pairs intersects their posting lists with its
words' as well, which cuts the pages whose positions must be compared.
"""
from __future__ import annotations

import itertools
import pickle
from typing import Any

from whoosh import formats
from whoosh.matching import IntersectionMatcher, NullMatcher, RequireMatcher, WrappingMatcher
from whoosh.query import Phrase, Term
from whoosh.util import make_binary_tree

from .textfields import PAIR_FIELD

#: The field holding a text field's common-word pairs.
PAIR_FIELDS = {"text": PAIR_FIELD}


def _positions_decoder(field: Any) -> Any:
    """A fast decoder of the position list of a posting of ``field``: Whoosh's
    Positions format stores a 4-byte frequency, then the pickled deltas without the
    final STOP; any other format uses Whoosh's own decoder."""
    if type(field.format) is formats.Positions:
        loads, accumulate = pickle.loads, itertools.accumulate
        return lambda m: list(accumulate(loads(m.value()[4:] + b".")))
    return lambda m: m.value_as("positions")


class _AdjacentMatcher(WrappingMatcher):
    """The intersection of the words' matchers, stopping only where they are
    adjacent and in order."""

    def __init__(self, words: list[Any], decode: Any, boost: float = 1.0, pairs: list[Any] | None = None) -> None:
        child = make_binary_tree(IntersectionMatcher, words)
        if pairs:  # pages holding the phrase's common pairs: fewer to compare, the words' scores
            child = RequireMatcher(child, make_binary_tree(IntersectionMatcher, pairs))
        super().__init__(child, boost=boost)
        self._words = words
        self._pairs = pairs
        self._decode = decode
        self._find_next()

    def copy(self) -> _AdjacentMatcher:
        return _AdjacentMatcher([m.copy() for m in self._words], self._decode, self.boost,
                                [m.copy() for m in self._pairs] if self._pairs else None)

    def _adjacent(self) -> bool:
        decode = self._decode
        starts = set(decode(self._words[0]))
        for offset, m in enumerate(self._words[1:], 1):
            starts.intersection_update(p - offset for p in decode(m))
            if not starts:
                return False
        return True

    def _find_next(self) -> bool:
        """Move to the next adjacent match; True if a new block was entered (the
        collector then checks block quality again)."""
        child, entered = self.child, False
        while child.is_active() and not self._adjacent():
            entered = bool(child.next()) or entered
        return entered

    def replace(self, minquality: float = 0) -> Any:
        # The leaf matchers are held for their positions: never swapped for others.
        return self if self.is_active() else NullMatcher()

    def next(self) -> bool:
        entered = bool(self.child.next())
        return self._find_next() or entered

    def skip_to(self, id: int) -> bool:
        entered = bool(self.child.skip_to(id))
        return self._find_next() or entered

    def skip_to_quality(self, minquality: float) -> int:
        skipped = self.child.skip_to_quality(minquality / self.boost)
        self._find_next()
        return skipped

    def all_ids(self) -> Any:
        while self.is_active():
            yield self.id()
            self.next()

    def spans(self) -> Any:
        raise NotImplementedError("AdjacentPhrase is not a span query")


class AdjacentPhrase(Phrase):
    """A phrase without slop (the words adjacent and in order), matched by
    ``_AdjacentMatcher`` or by its word pairs; with slop, Whoosh's own matcher."""

    def _pair_terms(self, schema: Any) -> list[str | None]:
        """The pair term of each two adjacent words (None: not indexed as a pair)."""
        name = PAIR_FIELDS.get(self.fieldname)
        if self.slop != 1 or name is None or name not in schema:
            return []
        field = schema[name]
        return [field.pair(a, b) for a, b in itertools.pairwise(self.words)]

    def pair_term(self, schema: Any) -> str | None:
        """The one pair term that answers this phrase (two common words), or None."""
        pairs = self._pair_terms(schema) if len(self.words) == 2 else []
        return pairs[0] if pairs else None

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        if self.slop != 1 or len(self.words) < 2 or self.fieldname not in searcher.schema:
            return super().matcher(searcher, context)
        field = searcher.schema[self.fieldname]
        if not field.format or not field.format.supports("positions"):
            return super().matcher(searcher, context)  # Whoosh raises its error
        pair = self.pair_term(searcher.schema)
        if pair is not None:
            return Term(PAIR_FIELDS[self.fieldname], pair, boost=self.boost).matcher(searcher, context)
        reader = searcher.reader()
        words = [self._leaf(searcher, reader, self.fieldname, field.to_bytes, word, context) for word in self.words]
        pair_name = PAIR_FIELDS.get(self.fieldname, "")
        pairs = [self._leaf(searcher, reader, pair_name, str.encode, p, context)
                 for p in self._pair_terms(searcher.schema) if p is not None]
        if any(m is None for m in [*words, *pairs]):
            return NullMatcher()
        m = _AdjacentMatcher(words, _positions_decoder(field), boost=self.boost, pairs=pairs)
        return m if m.is_active() else NullMatcher()

    @staticmethod
    def _leaf(searcher: Any, reader: Any, fieldname: str, to_bytes: Any, text: str, context: Any) -> Any:
        """A term's matcher, or None when the index does not hold the term."""
        try:
            btext = to_bytes(text)
        except ValueError:
            return None
        if (fieldname, btext) not in reader:
            return None
        return Term(fieldname, text).matcher(searcher, context)
