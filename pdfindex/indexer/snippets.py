"""Highlights of the hits shown, from the postings' positions instead of the
page text analysed again.

Whoosh highlights a page by running the field's analyzer over its whole stored
text (folding, normalising and stemming every word) to find the tokens whose terms
the query holds: 20-42 % of every query with highlights (issue 24), 70 % of a rare
word's under the profiler at 20,000 pages. The index already knows where those
terms are: each term's postings hold its positions on the page. So the query's
terms are read once per result list, their positions on the shown pages from the
postings (a term lookup and a skip per page), and a position is turned into its
characters by the tokenizer's own pattern alone (``analysis.TOKENS``), without
folding or stemming anything: a token's position is its index among the pattern's
tokens, as ``PageTokenizer`` numbered them when indexing.

The marked tokens then go through Whoosh's merging, ContextFragmenter rule,
fragment scoring and formatter, so a snippet marks exactly what Whoosh's re-analysis
marked: the same characters (code points), the same fragments. The fragmenting is
ours (``_fragments``, checked against Whoosh's on random pages in
tests/test_snippets.py): Whoosh's visits every token of the page in Python with a
Token object each (a common word's highlights, 3-13 ms of CPU a query at 50,000
pages, were mostly it); ours steps over the unmatched stretches between fragments,
so what a page costs is one regex pass to find where its tokens lie, as far as the
fragmenter reads (``fragmented_part``: Whoosh's stops at 32 KB).
"""
from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from whoosh import formats, highlight
from whoosh.analysis import Token
from whoosh.reading import TermNotFound

# The tokenizer's own pattern and word-end rule: one definition of a token.
from .analysis import TOKENS, WORD_END, PageTokenizer, cjk_spans, outside_tokens, word_spans


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
        return marked(self, text, lambda _: self._marks_of(results, fieldname, hitobj.docnum), top, minscore)

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


def marked(highlighter: highlight.Highlighter, text: str, marks: Callable[[str], Mapping[int, str]], top: int,
           minscore: int = 1) -> str:
    """``text``'s best fragments with the tokens at ``marks(part)``'s positions marked
    (``part``: what the fragmenter reads of it, ``fragmented_part``), as Whoosh's
    ``highlight_hit`` makes them with a ``ContextFragmenter``: ``highlighter``'s
    fragment sizes, scorer, order and formatter. Both engines' snippets end here."""
    fragmenter = highlighter.fragmenter
    part = fragmented_part(text, fragmenter.charlimit)
    fragments = _fragments(part, marks(part), fragmenter.maxchars, fragmenter.surround, fragmenter.charlimit)
    best = highlight.top_fragments(fragments, top, highlighter.scorer, highlighter.order, minscore=minscore)
    return str(highlighter.formatter.format(best))


def fragmented_part(text: str, charlimit: int | None) -> str:
    """The part of ``text`` the fragmenter reads: up to the first token ending past
    ``charlimit`` (where Whoosh's stops), cut where no token is, so its tokens are
    the whole text's. A page of megabytes costs its first 32 KB. (A token ends past
    the limit before a cut when a letter, digit or CJK character lies between: each
    is in a token, whose end it does not pass.)"""
    if not charlimit or len(text) <= charlimit:
        return text
    end = _cut_after(text, charlimit)
    if TOKENS.search(text, charlimit, end) is None:  # none ends past the limit before the cut: the next one does
        following = TOKENS.search(text, end)
        if following is not None:
            end = _cut_after(text, following.start())
    return text[:end]


def _cut_after(text: str, at: int) -> int:
    """The first place from ``at`` on where ``text`` may be cut (its end if none)."""
    cut = outside_tokens().search(text, at)
    return cut.start() if cut is not None else len(text)


def token_spans(text: str) -> tuple[list[int], list[int]]:
    """(starts, ends) of every token of ``text`` as ``PageTokenizer`` splits and
    numbers it: a word without its trailing apostrophe or dot; overlapping bigrams of
    a CJK run, one character alone for a run of one."""
    split = word_spans(text)
    if split is not None:
        return split[1], split[2]
    spans: list[tuple[int, int]] = []
    for m in TOKENS.finditer(text):
        if m.lastgroup == "word":
            spans.append(m.span())
        else:
            spans += cjk_spans(m.group(), m.start())
    return [s for s, _ in spans], [e - 1 if text[e - 1] in WORD_END else e for _, e in spans]


class _Group:
    """Consecutive matched tokens as Whoosh's ``_merge_matched_tokens`` joins them
    (touching or overlapping: CJK bigrams), or one matched token it left alone."""

    __slots__ = ("end", "first", "last", "start", "text")

    def __init__(self, position: int, start: int, end: int, text: str) -> None:
        self.first = self.last = position
        self.start, self.end, self.text = start, end, text

    def token(self) -> Token:
        return Token(startchar=self.start, endchar=self.end, text=self.text, boost=1.0, matched=True)


def _groups(marks: Mapping[int, str], starts: list[int], ends: list[int]) -> list[_Group]:
    """The matched tokens after Whoosh's merging, in order. Its rule, quirks kept: a
    matched token joins the group before it when it follows it directly and starts
    within it; one that follows directly but does not is left alone, and the group
    after it starts afresh."""
    groups: list[_Group] = []
    current: _Group | None = None
    previous = -2
    for position in sorted(p for p in marks if p < len(starts)):
        start, end, text = starts[position], ends[position], marks[position]
        if current is not None and position != previous + 1:
            current = None  # an unmatched token came between
        previous = position
        if current is None:
            current = _Group(position, start, end, text)
            groups.append(current)
        elif start <= current.end:
            if end > current.end:
                current.text += text[current.end - end:]
                current.end = end
            current.last = position
        else:
            groups.append(_Group(position, start, end, text))
            current = None
    return groups


def _fragments(text: str, marks: Mapping[int, str], maxchars: int, surround: int,
               charlimit: int | None) -> Iterator[highlight.Fragment]:
    """What ``ContextFragmenter.fragment_tokens`` yields for ``text`` with the tokens
    at ``marks`` matched, stepping over the unmatched tokens between fragments
    instead of visiting each: the one thing it keeps of them, the start of the
    context before the next match (the first token starting within ``surround`` of
    the end of the last unmatched one), is found by bisection. Inside a fragment
    (``surround`` characters after each match, ``maxchars`` at most) it takes the
    tokens one by one as Whoosh does."""
    starts, ends = token_spans(text)
    groups = _groups(marks, starts, ends)
    count = len(starts)
    first: int | None = None
    countdown = -1
    tks: list[Token] = []
    endchar = 0
    currentlen = 0
    context_from = 0  # the unmatched tokens from here on are the context a match may take
    i = 0
    g = 0  # the next group
    while i < count:
        group = groups[g] if g < len(groups) and groups[g].first == i else None
        if countdown < 0 and group is None:
            if g == len(groups):
                break  # unmatched to the end: no fragment to come
            # Out of a fragment: step to the next match.
            i = groups[g].first
            continue
        if group is not None:
            startchar, endchar, i = group.start, group.end, group.last + 1
            g += 1
        else:
            startchar, endchar = starts[i], ends[i]
            i += 1
        if charlimit and endchar > charlimit:
            break
        tlength = endchar - startchar
        if currentlen + tlength > maxchars:
            countdown = 0
        elif group is not None:
            countdown = surround
            if first is None:
                before = group.first
                if before > context_from:
                    floor = ends[before - 1] - surround
                    k = bisect.bisect_left(starts, floor, context_from, before)
                    first = starts[k] if k < before else None
                if first is None:
                    first = startchar
                    countdown += surround
            tks.append(group.token())
        # In a fragment (or its last step)
        currentlen += tlength
        countdown -= tlength
        if countdown <= 0:
            yield highlight.mkfrag(text, tks, startchar=first, endchar=endchar)
            tks, first, currentlen, context_from = [], None, 0, i
    if tks:
        yield highlight.mkfrag(text, tks, startchar=first, endchar=endchar)
