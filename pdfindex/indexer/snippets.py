"""Highlights of the hits shown, from the postings' positions instead of the
page text analysed again.

Whoosh highlights a page by running the field's analyzer over its whole stored
text (folding, normalising and stemming every word) to find the tokens whose terms
the query holds: 20-42 % of every query with highlights (issue 24), 70 % of a rare
word's under the profiler at 20,000 pages. The index already knows where those
terms are: each term's postings hold its positions on the page. So the query's
terms are read once per result list, their positions on the shown pages from the
postings (a term lookup and a skip per page), and a position is turned into its
characters by the tokenizer's own pattern alone (``analysis._TOKENS``), without
folding or stemming anything: a token's position is its index among the pattern's
tokens, as ``PageTokenizer`` numbered them when indexing.

The tokens, marked where the postings put a query term, then go through Whoosh's
own merging, ContextFragmenter, fragment scoring and formatter, so a snippet marks
exactly what Whoosh's re-analysis marked: the same characters (code points), the
same fragments. What remains of a snippet's cost is that fragmenting: a Python loop
over every token of the page (a common word's highlights, 3-13 ms of CPU a query at
50,000 pages, are mostly it: 0.65 of their 0.77 s under the profiler at 20,000).
"""
from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from whoosh import formats, highlight
from whoosh.analysis import Token
from whoosh.reading import TermNotFound

# The tokenizer's own pattern and word-end rule: one definition of a token.
from .analysis import _TOKENS as _PATTERN
from .analysis import _WORD_END, PageTokenizer, cjk_spans


class PositionHighlighter(highlight.Highlighter):
    """``Highlighter`` whose ``highlight_hit`` takes the matched tokens of a page
    text field from the postings; other fields are Whoosh's. One per result list:
    it keeps the query's terms and their positions on ``docnums`` (the hits to
    be highlighted; any other hit is read on its own)."""

    def __init__(self, docnums: Sequence[int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.docnums = sorted(set(docnums))
        self._words: dict[str, frozenset[str]] = {}
        self._marks: dict[str, dict[int, dict[int, str]]] = {}

    def highlight_hit(self, hitobj: Any, fieldname: str, text: str | None = None, top: int = 3,
                      minscore: int = 1, strict_phrase: bool = False) -> str:
        results = hitobj.results
        field = results.searcher.schema[fieldname]
        if (strict_phrase or not isinstance(field.analyzer, PageTokenizer)
                or not isinstance(field.format, formats.Positions)):
            return str(super().highlight_hit(hitobj, fieldname, text, top, minscore, strict_phrase))
        if text is None:
            text = hitobj[fieldname]
        return marked(self, text, self._marks_of(results, fieldname, hitobj.docnum), top, minscore)

    def _marks_of(self, results: Any, fieldname: str, docnum: int) -> dict[int, str]:
        """{position: term} of the query's terms on page ``docnum``."""
        words = self._words.get(fieldname)
        if words is None:
            # What Whoosh highlights: the query's terms of this field that the index
            # holds, wildcards expanded (Whoosh expanded them again for every hit).
            field = results.searcher.schema[fieldname]
            words = self._words[fieldname] = frozenset(
                field.from_bytes(term) for _, term in results.query_terms(expand=True, fieldname=fieldname))
        by_doc = self._marks.setdefault(fieldname, {})
        if docnum not in by_doc:
            wanted = self.docnums if docnum in self.docnums else [docnum]
            by_doc.update(_positions(results.searcher.reader(), fieldname, words, wanted))
        return by_doc[docnum]


def _positions(reader: Any, fieldname: str, words: frozenset[str], docnums: list[int]) -> dict[int, dict[int, str]]:
    """{docnum: {position: term}} for sorted ``docnums``: each term's postings
    opened once per segment that holds one of them, and skipped from page to page."""
    out: dict[int, dict[int, str]] = {docnum: {} for docnum in docnums}
    by_segment: defaultdict[int, list[int]] = defaultdict(list)
    leaves = list(reader.leaf_readers())
    starts = [offset for _, offset in leaves]
    for docnum in docnums:
        by_segment[bisect.bisect_right(starts, docnum) - 1].append(docnum)
    for segment, hits in by_segment.items():
        leaf, offset = leaves[segment]
        for word in words:
            try:
                matcher = leaf.postings(fieldname, word)
            except TermNotFound:
                continue
            for docnum in hits:
                if not matcher.is_active():
                    break
                matcher.skip_to(docnum - offset)
                if matcher.is_active() and matcher.id() == docnum - offset:
                    marks = out[docnum]
                    for position in matcher.value_as("positions"):
                        marks[position] = word
    return out


def marked(highlighter: highlight.Highlighter, text: str, marks: dict[int, str], top: int, minscore: int = 1) -> str:
    """``text``'s best fragments with the tokens at ``marks``'s positions marked, as
    Whoosh's ``highlight_hit`` makes them: ``highlighter``'s merging, fragmenter,
    scorer, order and formatter. Both engines' snippets end here."""
    tokens = highlighter._merge_matched_tokens(_tokens(text, marks))
    fragments = highlight.top_fragments(highlighter.fragmenter.fragment_tokens(text, tokens), top, highlighter.scorer,
                                        highlighter.order, minscore=minscore)
    return str(highlighter.formatter.format(fragments))


def _tokens(text: str, marks: dict[int, str]) -> Iterator[Token]:
    """Every token of ``text`` with its characters, as ``PageTokenizer`` splits it
    (a word without its trailing apostrophe or dot; overlapping bigrams of a CJK
    run, one character alone for a run of one), matched where ``marks`` holds its
    position. One Token object handed out again and again, as an analyzer does
    (Whoosh copies the matched ones)."""
    token = Token(positions=True, chars=True, removestops=False, mode="index")
    token.boost = 1.0
    token.stopped = False
    position = 0
    for match in _PATTERN.finditer(text):
        start, end = match.span()
        if match.lastgroup == "word":
            while text[end - 1] in _WORD_END:
                end -= 1
            spans: Sequence[tuple[int, int]] = ((start, end),)
        else:
            spans = cjk_spans(match.group(), start)
        for token.startchar, token.endchar in spans:
            term = marks.get(position)
            token.pos = position
            token.matched = term is not None
            token.text = term or ""
            position += 1
            yield token
