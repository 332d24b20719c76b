"""R15 layout text: the page's visual arrangement as plain text.

Upright glyphs (writing left to right, not rotated) are grouped by baseline, sorted
along it and placed on a character grid: a cell is the page's typical glyph advance
wide (nine tenths of the mean over its glyphs, so a column of wider than average
letters still ends before the next one's cells), a full-width CJK glyph takes two.
A glyph goes to the cell its x position falls in, or right after the text before it
when that cell is taken. A word space (R11's own decision, letter spacing and all)
always leaves at least one space and no gap inside a word adds one, so words stay
whole; a gap narrower than two cells is one space (justified text is not spread
out), a wider one keeps the grid place, so columns, indentation and table cells
keep theirs. Lines further
apart than the page's usual line spacing get blank lines between them (at most
``_MAX_BLANK``). Glyphs that are rotated or vertical are not forced into the grid:
they follow as reading-flow text (R11-R13) after a blank line.

The grid is built in the page's displayed orientation: the glyphs are first turned
as a viewer turns the page for its /Rotate (``page_rotation``), so a landscape
table drawn up the portrait user space of a /Rotate 90 page reads upright with its
columns in order, as it shows (and as pdftotext -layout gives it). Where most of
the page's text runs along another quarter turn of the displayed page (a /Rotate
stamped on a page whose table then shows sideways, a landscape table drawn turned
on a page without /Rotate), the grid follows the text instead, as pdftotext does:
read sideways, a table is only its cells' reading flow. The reading-flow text needs
no turning: it follows each glyph's own writing direction.

The decoding is the reading-flow mode's: the same glyph records, the same visible
box, the same ActualText replacement.
"""
from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Sequence

from .assemble import LIGATURES, assemble, compose_accents, line_spaces
from .geometry import Matrix, apply
from .glyph import Glyph
from .params import Params

#: Blank lines a vertical gap becomes, at most.
_MAX_BLANK = 4
#: Longest line, in cells (a glyph placed absurdly far right is clamped, not padded).
_MAX_COLUMNS = 1000
#: Gaps wider than this many cells keep their grid place (a column, a table cell);
#: narrower ones are one space, however wide justification made them.
_WIDE = 2.0
#: A cell's width as a share of the page's mean glyph advance.
_CELL_SHARE = 0.9
#: How far a direction may lean and still count as upright.
_UPRIGHT = 0.01
#: User space to the displayed page for each /Rotate (the viewer turns the page
#: clockwise), without the translation: the grid only uses differences.
_TURNS: dict[int, Matrix] = {
    90: (0.0, -1.0, 1.0, 0.0, 0.0, 0.0),
    180: (-1.0, 0.0, 0.0, -1.0, 0.0, 0.0),
    270: (0.0, 1.0, -1.0, 0.0, 0.0, 0.0),
}
_QUARTERS = (0, 90, 180, 270)


def _upright(g: Glyph) -> bool:
    ux, uy = g.direction
    return not g.vertical and ux > 0 and abs(uy) < _UPRIGHT


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _median(values: list[float]) -> float:
    """The lower median: of two line steps, the usual one rather than the gap."""
    values = sorted(values)
    return values[(len(values) - 1) // 2] if values else 0.0


def layout_text(glyphs: Sequence[Glyph], params: Params, rotation: int = 0) -> str:
    """The page's text laid out on a character grid (R15). ``glyphs``: what the
    text assembly gets (visible, in content order); ``rotation``: the page's
    /Rotate, normalised (``document.page_rotation``), the grid's orientation unless
    most of the text runs along another (``_grid_turn``)."""
    glyphs = _turned(glyphs, _grid_turn(glyphs, rotation))
    grid = [g for g in compose_accents(glyphs) if _upright(g)]
    others = [g for g in glyphs if not _upright(g)]
    lines = _grid_lines(grid, params) if grid else []
    if others:
        rest = assemble(others, params).text
        if rest:
            lines += ["", *rest.split("\n")] if lines else rest.split("\n")
    # Ligatures expanded as in reading flow; spaces and blank lines are the layout.
    return "\n".join(line.translate(LIGATURES) for line in lines).strip("\n")


def _grid_turn(glyphs: Sequence[Glyph], rotation: int) -> int:
    """The quarter turn (clockwise, as /Rotate) that makes most of the page's
    horizontal glyphs upright; the page's own ``rotation`` where it does as well
    as any, and where no glyph runs along an axis."""
    counts = dict.fromkeys(_QUARTERS, 0)
    for g in glyphs:
        if g.vertical or not g.text.strip():
            continue
        ux, uy = g.direction
        if abs(uy) < _UPRIGHT:
            counts[0 if ux > 0 else 180] += 1
        elif abs(ux) < _UPRIGHT:
            counts[90 if uy > 0 else 270] += 1
    return max(_QUARTERS, key=lambda turn: (counts[turn], turn == rotation))


def _turned(glyphs: Sequence[Glyph], rotation: int) -> Sequence[Glyph]:
    """The glyphs turned clockwise by ``rotation`` degrees: positions, box offsets
    and writing direction. Lengths and the writing direction's normal turn with
    them, so height and rise stay as they are."""
    turn = _TURNS.get(rotation)
    if turn is None:
        return glyphs
    out: list[Glyph] = []
    for g in glyphs:
        u0x, u0y, u1x, u1y = g.box
        (ox, oy), (ex, ey), (gx, gy) = apply(turn, g.ox, g.oy), apply(turn, g.ex, g.ey), apply(turn, g.gx, g.gy)
        out.append(g._replace(ox=ox, oy=oy, ex=ex, ey=ey, gx=gx, gy=gy, direction=apply(turn, *g.direction),
                              box=(*apply(turn, u0x, u0y), *apply(turn, u1x, u1y))))
    return out


def _grid_lines(glyphs: list[Glyph], params: Params) -> list[str]:
    drawn = [g for g in glyphs if g.text.strip() and g.gx > g.ox]
    heights = [g.height for g in glyphs if g.height > 0]
    # A little narrower than the mean advance, so that a line of wider than average
    # letters still ends before the next column's cell.
    cells = sum(_cells(g.text) for g in drawn)
    cell = _CELL_SHARE * sum(g.gx - g.ox for g in drawn) / cells if cells else 0.5 * (_median(heights) or 10.0)
    x0 = min(g.ox for g in glyphs)
    rows = _rows(glyphs)
    steps = [a[0] - b[0] for a, b in itertools.pairwise(rows) if a[0] - b[0] > 0]
    spacing = _median(steps) or _median(heights) or 12.0
    out: list[str] = []
    previous: float | None = None
    for baseline, row in rows:
        if previous is not None:
            blank = round((previous - baseline) / spacing) - 1
            out.extend([""] * max(0, min(blank, _MAX_BLANK)))
        out.append(_row_text(sorted(row, key=lambda g: g.ox), x0, cell, params))
        previous = baseline
    return out


def _rows(glyphs: list[Glyph]) -> list[tuple[float, list[Glyph]]]:
    """Glyphs grouped by baseline (text rise taken out, as R12 does), top to bottom."""
    ordered = sorted(glyphs, key=lambda g: -(g.oy - g.rise))
    rows: list[tuple[float, list[Glyph]]] = []
    for g in ordered:
        base = g.oy - g.rise
        if rows and rows[-1][0] - base <= 0.3 * max(g.height, rows[-1][1][0].height):
            rows[-1][1].append(g)
        else:
            rows.append((base, [g]))
    return rows


def _row_text(row: list[Glyph], x0: float, cell: float, params: Params) -> str:
    """One row on the grid. Glyph texts and word spaces are the reading flow's
    (``line_spaces``: R6, R11); where a word space falls, the glyph keeps its grid
    place if the gap is wide, else one space."""
    texts, spaces = line_spaces(row, params)
    parts: list[str] = []
    used = 0  # cells filled so far
    prev: Glyph | None = None
    spaced = False  # a space glyph came since prev
    for g, text, space in zip(row, texts, spaces, strict=True):
        if g.text.isspace():
            spaced = True
            continue
        want = min(_MAX_COLUMNS, max(0, round((g.ox - x0) / cell)))
        if prev is not None:
            if not (spaced or space):
                want = used  # inside a word: no space, whatever the grid says
            elif want <= used or g.ox - max(prev.gx, prev.ex) <= _WIDE * cell:
                want = used + 1  # a word space: one, however justification spread it
        if want > used:
            parts.append(" " * (want - used))
            used = want
        parts.append(text)
        used += _cells(text)
        prev, spaced = g, False
    return "".join(parts).rstrip()
