"""Where the matched words lie on the page: from glyph records to boxes (issue 10).

The index holds a page's text as pipeline/assemble.py joins it: glyphs in the
visible box, vertical runs ordered into columns, spacing accents composed onto
their letters, lines split by R12, word spaces inserted by R11, then tidied
(ligatures expanded, space runs collapsed, blank lines dropped). ``page_words``
redoes exactly that with the pipeline's own functions, keeping for every character
of the text the glyph it came from (a ligature glyph gives several characters, a
composed accent none of its own), so a token's character span found by the index's
analyser leads back to glyphs and their quads. Spaces and line breaks that assembly
inserted belong to no glyph.

The glyphs to give it are those text assembly was given (server/page_glyphs.py:
forms, annotation appearances and /ActualText included); given ``Page.glyphs``
alone (the page stream's own records, R2) the words drawn elsewhere get no box.

No Whoosh here: the spans come from ``pdfindex.indexer.marks``.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from pdfindex.pipeline import DEFAULT_PARAMS, Glyph, Params
from pdfindex.pipeline.assemble import (
    LIGATURES,  # the ligature table of ``tidy``
    _RTL_CLUSTER,
    _RTL_RUN,
    _join_line,  # R11 word spaces of one line: the exact rule, not a copy of it
    compose_accents,
    order_vertical,
    split_lines,
    visible,
)
from pdfindex.pipeline.geometry import Rect

#: A box on the page in PDF user space: four corners (x, y) in drawing order.
Quad = tuple[float, float, float, float, float, float, float, float]
#: Boxes drawn for one page at most: a page of a million matching one-letter words
#: must not become a million polygons.
MAX_BOXES = 20_000

_NO_GLYPH = -1
# tidy()'s patterns (pipeline/assemble.py), applied with the owner array kept.
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u3000]+")
_LINE_EDGES = re.compile(r" *\n *")


@dataclass(frozen=True, slots=True)
class PageWords:
    """A page's text rebuilt from its glyphs, with the glyph of each character."""

    #: The page text as assembly makes it (equal to ``Page.text`` when the page has
    #: no form glyphs and no /ActualText).
    text: str
    #: For each character of ``text``: the index in ``glyphs`` of the glyph it came
    #: from, or -1 for a space or line break that assembly inserted.
    owners: tuple[int, ...]
    #: The glyphs in page-text order (visible, columns ordered, accents composed).
    glyphs: tuple[Glyph, ...]
    #: For each glyph: the number of its line.
    lines: tuple[int, ...]

    def glyphs_of(self, start: int, end: int) -> list[int]:
        """The glyphs of ``text[start:end]``, each once, in text order."""
        seen: dict[int, None] = {}
        for owner in self.owners[max(start, 0):max(end, 0)]:
            if owner != _NO_GLYPH:
                seen.setdefault(owner, None)
        return list(seen)


def page_words(glyphs: Sequence[Glyph], box: Rect, params: Params = DEFAULT_PARAMS) -> PageWords:
    """Assemble ``glyphs`` (``page_glyphs.text_glyphs``, or a page's own records)
    into its text as the pipeline does, keeping the character-to-glyph array.
    ``box`` is the page's visible box (``Page.box``)."""
    run = visible(glyphs, box)
    if any(g.vertical for g in run):
        run = order_vertical(run, params)
    run = compose_accents(run)
    chars: list[str] = []
    owners: list[int] = []
    kept: list[Glyph] = []
    line_of: list[int] = []
    for number, line in enumerate(split_lines(run, params)):
        mapped = _line_owners(line, params)
        if mapped is None:  # assembly did something this module cannot follow: no marks there
            continue
        text, local = mapped
        base = len(kept)
        kept.extend(line)
        line_of.extend([number] * len(line))
        if chars:
            chars.append("\n")
            owners.append(_NO_GLYPH)
        chars.extend(text)
        owners.extend(o if o == _NO_GLYPH else base + o for o in local)
    text, final = _tidy("".join(chars), owners)
    return PageWords(text, tuple(final), tuple(kept), tuple(line_of))


def _line_owners(line: Sequence[Glyph], params: Params) -> tuple[str, list[int]] | None:
    """The line's text (``_join_line``) and, per character, its glyph's index in
    the line. The text is the glyph texts with spaces between some of them (never
    next to a space glyph) and, for right-to-left runs drawn left to right, the
    runs reversed cluster by cluster: both are undone to find each owner."""
    texts = [g.text or " " for g in line]
    joined = _join_line(line, params)
    owners = _align(joined, texts)
    if owners is not None:
        return joined, owners
    reordered, source = _reverse_rtl_runs(joined)  # its own inverse
    owners = _align(reordered, texts)
    if owners is None:
        return None
    back = [0] * len(joined)
    for k, i in enumerate(source):  # reordered[k] is joined[i]
        back[i] = owners[k]
    return joined, back


def _align(joined: str, texts: Sequence[str]) -> list[int] | None:
    owners: list[int] = []
    pos = 0
    for i, text in enumerate(texts):
        if not joined.startswith(text, pos):
            if i == 0 or not joined.startswith(" ", pos) or not joined.startswith(text, pos + 1):
                return None
            owners.append(_NO_GLYPH)
            pos += 1
        owners.extend([i] * len(text))
        pos += len(text)
    return owners if pos == len(joined) else None


def _reverse_rtl_runs(text: str) -> tuple[str, list[int]]:
    """``_join_line``'s reversal of right-to-left runs, with each character's
    source position: out[k] == text[source[k]]."""
    source = list(range(len(text)))
    for run in _RTL_RUN.finditer(text):
        offset = run.start()
        clusters = [(offset + m.start(), offset + m.end()) for m in _RTL_CLUSTER.finditer(run.group())]
        order = [i for start, end in reversed(clusters) for i in range(start, end)]
        source[run.start():run.start() + len(order)] = order
    return "".join(text[i] for i in source), source


def _tidy(text: str, owners: list[int]) -> tuple[str, list[int]]:
    """pipeline/assemble.py's ``tidy`` (ligatures expanded, space runs collapsed,
    line ends trimmed, blank lines dropped, the ends stripped of spaces) with the
    owner array carried along."""
    if text.translate(LIGATURES) != text:
        chars: list[str] = []
        kept: list[int] = []
        for ch, owner in zip(text, owners, strict=True):
            replacement = LIGATURES.get(ord(ch), ch)
            if replacement is None:
                continue
            if isinstance(replacement, int):
                replacement = chr(replacement)
            chars.extend(replacement)
            kept.extend([owner] * len(replacement))
        text, owners = "".join(chars), kept
    text, owners = _substitute(_SPACES, " ", text, owners)
    text, owners = _substitute(_LINE_EDGES, "\n", text, owners)
    out: list[str] = []
    out_owners: list[int] = []
    for i, ch in enumerate(text):
        if ch == "\n" and (not out or out[-1] == "\n"):
            continue  # a blank line, or one before the first line
        out.append(ch)
        out_owners.append(owners[i])
    while out and out[-1] == "\n":
        out.pop()
        out_owners.pop()
    start, end = 0, len(out)
    while start < end and out[start] == " ":
        start += 1
    while end > start and out[end - 1] == " ":
        end -= 1
    return "".join(out[start:end]), out_owners[start:end]


def _substitute(pattern: re.Pattern[str], by: str, text: str, owners: list[int]) -> tuple[str, list[int]]:
    """``pattern.sub(by, text)`` where ``by`` is one character owned by no glyph."""
    out: list[str] = []
    out_owners: list[int] = []
    done = 0
    for m in pattern.finditer(text):
        out.append(text[done:m.start()])
        out_owners.extend(owners[done:m.start()])
        out.append(by)
        out_owners.append(_NO_GLYPH)
        done = m.end()
    out.append(text[done:])
    out_owners.extend(owners[done:])
    return "".join(out), out_owners


def span_quads(words: PageWords, spans: Iterable[tuple[int, int]], limit: int = MAX_BOXES) -> list[Quad]:
    """One box per line of each span: the union of its glyphs' quads on that line,
    in the line's own frame (along its writing direction and across it), so a
    rotated line gives a rotated box. At most ``limit`` boxes."""
    quads: list[Quad] = []
    for start, end in spans:
        group: list[Glyph] = []
        line = None
        for index in words.glyphs_of(start, end):
            if words.lines[index] != line and group:
                quads.append(union_quad(group))
                group = []
            line = words.lines[index]
            group.append(words.glyphs[index])
        if group:
            quads.append(union_quad(group))
        if len(quads) >= limit:
            return quads[:limit]
    return quads


def union_quad(glyphs: Sequence[Glyph]) -> Quad:
    """The smallest box holding the quads of ``glyphs`` whose sides run along and
    across the first glyph's writing direction."""
    ux, uy = glyphs[0].direction
    nx, ny = -uy, ux
    along: list[float] = []
    across: list[float] = []
    for g in glyphs:
        q = g.quad
        for k in range(0, 8, 2):
            x, y = q[k], q[k + 1]
            along.append(x * ux + y * uy)
            across.append(x * nx + y * ny)
    a0, a1, b0, b1 = min(along), max(along), min(across), max(across)
    return (a0 * ux + b0 * nx, a0 * uy + b0 * ny, a1 * ux + b0 * nx, a1 * uy + b0 * ny,
            a1 * ux + b1 * nx, a1 * uy + b1 * ny, a0 * ux + b1 * nx, a0 * uy + b1 * ny)


def mark_quads(glyphs: Sequence[Glyph], box: Rect, spans_of: Callable[[str], list[tuple[int, int]]],
               params: Params = DEFAULT_PARAMS, limit: int = MAX_BOXES) -> list[Quad]:
    """The boxes of a page's matching words: ``spans_of`` gives the character
    spans to mark in the page text (``indexer.marks.matching_spans`` with the
    terms and the index's language)."""
    if not glyphs:
        return []
    words = page_words(glyphs, box, params)
    return span_quads(words, spans_of(words.text), limit)
