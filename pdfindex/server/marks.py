"""Where the matched words lie on the page: from the text map to boxes (issue 10).

The index holds a page's text as pipeline/assemble.py makes it, and ``assemble``
gives with it the glyph behind each character (``TextMap``: a ligature glyph gives
several characters, a composed accent none of its own, an inserted space or line
break none), so a token's character span found by the index's analyser leads back
to glyphs and their quads.

The glyphs to give it are those text assembly was given (server/page_glyphs.py:
forms, annotation appearances and /ActualText included); given ``Page.glyphs``
alone (the page stream's own records, R2) the words drawn elsewhere get no box.

No Whoosh here: the spans come from ``pdfindex.indexer.marks``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from pdfindex.pipeline import DEFAULT_PARAMS, Glyph, Params
from pdfindex.pipeline.assemble import assemble, visible
from pdfindex.pipeline.geometry import Rect
from pdfindex.pipeline.textmap import D, Drawn, Quad, TextMap

#: Boxes drawn for one page at most: a page of a million matching one-letter words
#: must not become a million polygons.
MAX_BOXES = 20_000


def page_words(glyphs: Sequence[Glyph], box: Rect, params: Params = DEFAULT_PARAMS) -> TextMap[Glyph]:
    """The text map of ``glyphs`` (``page_glyphs.text_glyphs``, or a page's own
    records) as the pipeline assembles them, ``box`` being the page's visible box
    (``Page.box``)."""
    return assemble(visible(glyphs, box), params)


def span_quads(words: TextMap[D], spans: Iterable[tuple[int, int]], limit: int = MAX_BOXES) -> list[Quad]:
    """One box per line of each span: the union of its glyphs' quads on that line,
    in the line's own frame (along its writing direction and across it), so a
    rotated line gives a rotated box. At most ``limit`` boxes."""
    quads: list[Quad] = []
    for start, end in spans:
        group: list[D] = []
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


def union_quad(glyphs: Sequence[Drawn]) -> Quad:
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
