"""``a -b``: Whoosh's AndNot with its first match checked.

Whoosh's AndNotMatcher checks its first document against the excluded matcher only
when both already stand on the same document; when the excluded matcher starts
earlier (its first page comes before the first match), the first match is kept
even if it holds the excluded word. The collector's matcher is usually rebuilt by
``replace`` and then right, but counting and listing walk the original: ``glacier
-the`` counted, and with a large limit showed, the first page of every segment
that has "glacier" and "the". Here the first document goes through the same
check as every next one.
"""
from __future__ import annotations

from typing import Any

from whoosh.matching import AndNotMatcher
from whoosh.query import AndNot


class _CheckedAndNotMatcher(AndNotMatcher):
    def _find_first(self) -> None:
        if self.a.is_active() and self.b.is_active():
            self._find_next()


class Excluding(AndNot):
    """``a`` without the documents ``b`` matches (AndNot, its first match checked)."""

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        scored = self.a.matcher(searcher, context)
        excluded = self.b.matcher(searcher, searcher.boolean_context())
        return _CheckedAndNotMatcher(scored, excluded)
