"""Page text from glyph geometry: the visible box (R10), word spaces (R11), line
breaks (R12), vertical columns (R13), content order (R14).

Spaces and line breaks come from where glyphs are, not from space characters: TeX,
Distiller and most justified layouts move the pen with TJ numbers or Td instead of
drawing a space.

``assemble`` gives the text with the glyph behind each character (textmap.py), for
the readers that box or explain it; ``PageText`` gives the same text alone, chunk by
chunk, for extraction, which must not hold a page's glyphs.
"""
from __future__ import annotations

import math
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import islice

from .geometry import Point, Rect
from .glyph import Glyph
from .params import Params
from .textmap import TextMap

LIGATURES = str.maketrans({
    "\u00ad": None,  # soft hyphen: invisible, and a word joiner for search
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st",
})
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u3000]+")
_LINE_EDGES = re.compile(r" *\n *")

# Han (with radicals, compatibility ideographs, supplementary planes), kana, CJK
# symbols and punctuation, fullwidth forms, vertical and compatibility forms.
_IDEOGRAPHIC_RANGES = (
    (0x2E80, 0x2FDF), (0x3000, 0x30FF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF), (0xFE10, 0xFE1F), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF), (0x20000, 0x3134F),
)


# Spacing accents that TeX and others draw as separate glyphs over a base letter,
# with the combining mark each stands for.
_ACCENTS = {
    "\u00b4": "\u0301", "`": "\u0300", "\u02c6": "\u0302", "\u00a8": "\u0308", "\u02dc": "\u0303",
    "\u00af": "\u0304", "\u02d8": "\u0306", "\u02d9": "\u0307", "\u02da": "\u030a", "\u00b8": "\u0327",
    "\u02db": "\u0328", "\u02c7": "\u030c", "\u02dd": "\u030b",
}
_text_of = operator.attrgetter("text")
_DOTLESS = {"\u0131": "i", "\u0237": "j"}


def compose_accents(glyphs: Sequence[Glyph]) -> list[Glyph]:
    """Beyond the seeds: a spacing accent drawn over a neighbouring letter (pdfTeX's
    OT1 "\\'e" is an acute glyph, a kern back, then "e") joins that letter as one
    precomposed character, so "r´esum´e" reads and indexes as "résumé"."""
    if not any(map(_ACCENTS.__contains__, map(_text_of, glyphs))):
        return list(glyphs)
    out: list[Glyph] = []
    skip = False
    n = len(glyphs)
    for i, g in enumerate(glyphs):
        if skip:
            skip = False
            continue
        mark = _ACCENTS.get(g.text)
        if mark is not None:
            if i + 1 < n and _over(g, glyphs[i + 1]):
                out.append(_with_mark(glyphs[i + 1], mark))
                skip = True
                continue
            if out and _over(g, out[-1]):
                out[-1] = _with_mark(out[-1], mark)
                continue
        out.append(g)
    return out


def _over(accent: Glyph, base: Glyph) -> bool:
    """The accent's centre lies within the base letter's advance, along the line."""
    if not base.text or base.text in _ACCENTS or not base.text[-1].isalpha():
        return False
    ux, uy = base.direction
    cx, cy = accent.center
    along = (cx - base.ox) * ux + (cy - base.oy) * uy
    width = (base.gx - base.ox) * ux + (base.gy - base.oy) * uy
    return 0.0 <= along <= width


def _with_mark(base: Glyph, mark: str) -> Glyph:
    text = base.text[:-1] + _DOTLESS.get(base.text[-1], base.text[-1]) + mark
    return base._replace(text=unicodedata.normalize("NFC", text))


def is_ideographic(ch: str) -> bool:
    """Han, kana, CJK punctuation or fullwidth forms: justification spreads these
    without word boundaries (R11). Hangul is not here: Korean has word spaces."""
    cp = ord(ch)
    if cp < 0x2E80:
        return False
    return any(lo <= cp <= hi for lo, hi in _IDEOGRAPHIC_RANGES)


def replace_actual_text(glyphs: Sequence[Glyph], spans: Sequence[tuple[int, int, str]]) -> list[Glyph]:
    """Page-text view of marked-content spans with /ActualText: each span's glyphs
    become one glyph carrying that text (none when it is empty), placed where the
    span starts and ending where it ends."""
    if not spans:
        return list(glyphs)
    out: list[Glyph] = []
    done = 0
    for start, end, text in sorted(spans):
        if start < done:
            continue
        out.extend(glyphs[done:start])
        first, last = glyphs[start], glyphs[end - 1]
        if text:
            out.append(first._replace(text=text, ex=last.ex, ey=last.ey, gx=last.gx, gy=last.gy))
        done = end
    out.extend(glyphs[done:])
    return out


def visible(glyphs: Iterable[Glyph], box: Rect) -> list[Glyph]:
    """Glyphs whose box centre lies in the visible box (R10): drops slug lines and
    printer marks, keeps clipped, white and invisible (render mode 3) text."""
    x0, y0, x1, y1 = box
    out: list[Glyph] = []
    # Twice the centre against twice the box, saving the divisions.
    x0, y0, x1, y1 = 2 * x0, 2 * y0, 2 * x1, 2 * y1
    append = out.append
    for g in glyphs:
        u0x, u0y, u1x, u1y = g.box
        cx = g.ox + g.gx + u0x + u1x
        cy = g.oy + g.gy + u0y + u1y
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            append(g)
    return out


def order_vertical(glyphs: Sequence[Glyph], params: Params) -> list[Glyph]:
    """R13: each run of vertical glyphs is regrouped into columns, read right to left
    (along the normal of the writing direction) and each top to bottom. Beyond:
    glyphs of a vertical font that go across instead (``_placed_across``) are a
    horizontal line, whatever WMode says."""
    out: list[Glyph] = []
    i, n = 0, len(glyphs)
    while i < n:
        if not glyphs[i].vertical:
            out.append(glyphs[i])
            i += 1
            continue
        j = i
        while j < n and glyphs[j].vertical:
            j += 1
        if _in_line(glyphs, i, j):
            out.extend(g._replace(vertical=False, text=_across_form(g.text)) for g in glyphs[i:j])
            i = j
            continue
        columns: list[Glyph] = []
        for segment, across in _placed_across(glyphs[i:j]):
            if across:
                out.extend(_columns(columns, params) if columns else [])
                columns = []
                out.extend(segment)
            else:
                columns.extend(segment)
        out.extend(_columns(columns, params) if columns else [])
        i = j
    return out


def _in_line(glyphs: Sequence[Glyph], i: int, j: int) -> bool:
    """Whether the vertical glyphs ``i:j`` belong to the horizontal line beside them:
    each written along that line's direction (a vertical font's glyph placed turned a
    quarter, as producers draw a word's letters from an Identity-V font inside a
    horizontal word), the first or last on the line of its horizontal neighbour (its
    box's middle within half a box height of the neighbour's). A real column's
    glyphs go down across the line, never along it."""
    for k, neighbour in ((i, i - 1), (j - 1, j)):
        if 0 <= neighbour < len(glyphs) and not glyphs[neighbour].vertical:
            h = glyphs[neighbour]
            ux, uy = h.direction
            if all(g.direction[0] * ux + g.direction[1] * uy > 0.99 for g in glyphs[i:j]):
                g = glyphs[k]
                (gx, gy), (hx, hy) = g.center, h.center
                if abs((gy - hy) * ux - (gx - hx) * uy) <= 0.5 * max(g.height, h.height):
                    return True
    return False


def _across_form(text: str) -> str:
    """A vertical presentation form (U+FE10-FE19, U+FE30-FE4F: ︵ for "(") as the
    character it stands for, once its glyph is read across a line."""
    return "".join(unicodedata.normalize("NFKC", ch) if "\ufe10" <= ch <= "\ufe4f" else ch for ch in text)


#: Glyphs of a vertical font placed across, one after the other, on one row: at
#: least this many make a line.
_ACROSS_RUN = 3


def _placed_across(run: Sequence[Glyph]) -> list[tuple[list[Glyph], bool]]:
    """The run cut into segments, each marked True when its glyphs go across the
    writing direction (and then given as the horizontal glyphs they are drawn as):
    each shown by a string of its own, all at one height along it, each about one
    glyph further along the normal (left to right, for a downward direction) than
    the one before. Some producers place every glyph of an Identity-V font with its
    own Tm that way; read as columns, the line came out backwards, one letter a
    line. Real columns never do: their glyphs move down. A glyph of such a line
    turned a quarter (vertical brackets drawn upright in a line) writes along it
    already and belongs to it too."""
    across = _across_direction(run)
    pieces: list[list[Glyph]] = []
    for g in run:
        h = _as_horizontal(g, across)
        if pieces and _next_across(pieces[-1][-1], h):
            pieces[-1].append(h)
        else:
            pieces.append([h])
    segments: list[tuple[list[Glyph], bool]] = []
    start = 0
    for piece in pieces:
        is_across = len(piece) >= _ACROSS_RUN
        glyphs = piece if is_across else list(run[start:start + len(piece)])
        start += len(piece)
        if segments and not is_across and not segments[-1][1]:  # neighbouring column glyphs stay together
            segments[-1][0].extend(glyphs)
        else:
            segments.append((glyphs, is_across))
    return segments


def _across_direction(run: Sequence[Glyph]) -> Point:
    """The direction a line of ``run`` would go: the normal of its commonest writing
    direction (left to right for a downward one)."""
    ux, uy = Counter(g.direction for g in run).most_common(1)[0][0]
    return (-uy, ux)


def _next_across(prev: Glyph, g: Glyph) -> bool:
    """Whether ``g`` follows ``prev`` on one line, both as horizontal glyphs."""
    if g.token == prev.token and g.token >= 0:
        return False
    ux, uy = prev.direction
    if g.direction[0] * ux + g.direction[1] * uy < 0.99:
        return False
    height = prev.height if prev.height > g.height else g.height
    (px, py), (gx, gy) = prev.center, g.center
    off = (gy - py) * ux - (gx - px) * uy
    step = (g.ox - prev.ox) * ux + (g.oy - prev.oy) * uy
    width = math.hypot(prev.gx - prev.ox, prev.gy - prev.oy)  # a narrow letter steps less
    least = 0.3 * height if 0.3 * height < 0.8 * width else 0.8 * width
    return abs(off) <= 0.25 * height and least <= step <= 1.6 * height


def _as_horizontal(g: Glyph, across: Point) -> Glyph:
    """A vertical glyph as the horizontal one it is drawn as on a line going
    ``across``: from its left box edge to its right one, writing along the normal, its
    box hanging below its origin; or, when it writes along the line already (turned
    a quarter), as it is."""
    ux, uy = g.direction
    if ux * across[0] + uy * across[1] > 0.99:  # hung from its box's top, as the others are
        u0x, u0y, u1x, u1y = g.box
        return g._replace(ox=g.ox + u1x, oy=g.oy + u1y, ex=g.ex + u1x, ey=g.ey + u1y, gx=g.gx + u1x,
                          gy=g.gy + u1y, box=(u0x - u1x, u0y - u1y, 0.0, 0.0), vertical=False,
                          text=_across_form(g.text))
    l0x, l0y, r0x, r0y = g.box
    ox, oy, ex, ey = g.ox + l0x, g.oy + l0y, g.ox + r0x, g.oy + r0y
    h = g.height
    return g._replace(ox=ox, oy=oy, ex=ex, ey=ey, gx=ex, gy=ey, direction=(-uy, ux), vertical=False,
                      box=(ux * h, uy * h, 0.0, 0.0), text=_across_form(g.text))


def _columns(run: Sequence[Glyph], params: Params) -> list[Glyph]:
    ux, uy = run[0].direction
    # The normal (-uy, ux) points from a column to the one read before it.
    keyed = sorted(run, key=lambda g: -(g.ox * -uy + g.oy * ux))
    columns: list[list[Glyph]] = []
    last = None
    for g in keyed:
        across = g.ox * -uy + g.oy * ux
        if last is None or abs(last - across) > params.line_break * g.height:
            columns.append([])
            last = across
        columns[-1].append(g)
    out: list[Glyph] = []
    for column in columns:
        out.extend(sorted(column, key=lambda g: g.ox * ux + g.oy * uy))
    return out


#: why(index, measured, limit, decided, reason): what ``split_lines`` and ``word_spaces``
#: decided for glyph ``index`` and why, for ``pdfindex explain``.
Why = Callable[[int, float | None, float | None, bool, str], None]


def assemble(glyphs: Sequence[Glyph], params: Params, why_line: Why | None = None,
             why_gap: Why | None = None) -> TextMap[Glyph]:
    """The page text of ``glyphs`` (visible, in content order): their texts in reading
    order with the spaces and line breaks their geometry implies, unresolved glyphs
    standing as one space (R6); with, for each character, the glyph that drew it.
    ``PageText`` makes the same text without keeping the glyphs. ``why_line`` and
    ``why_gap`` are told each line and word-space decision (the index in
    ``TextMap.glyphs``)."""
    run = _ordered(glyphs, params)
    decisions: list[tuple[int, float | None, float | None, bool, str]] = []
    # Arguments named, not ``*d``: mypyc (setup.py) miscompiles a starred lambda passed as a Why.
    numbered = _split(run, params, None if why_line is None
                      else lambda k, measured, limit, decided, reason:
                      decisions.append((k, measured, limit, decided, reason)))
    placed = [run[k] for indices in numbered for k in indices]
    if why_line is not None:  # a continued line moves glyphs: indices as placed
        position = {k: p for p, k in enumerate(k for indices in numbered for k in indices)}
        for k, measured, limit, decided, reason in decisions:
            why_line(position[k], measured, limit, decided, reason)
    chars: list[str] = []
    owners: list[int | None] = []
    line_of: list[int] = []
    for number, indices in enumerate(numbered):
        line = [run[k] for k in indices]
        base = len(line_of)
        text, local = _line_map(line, params, None if why_gap is None else _shifted(why_gap, base))
        if number:
            chars.append("\n")
            owners.append(None)
        chars.append(text)
        owners.extend(None if o is None else base + o for o in local)
        line_of.extend([number] * len(line))
    raw = "".join(chars)
    text = tidy(raw)
    return TextMap(text, _tidied_owners(raw, owners, text), tuple(placed), tuple(line_of))


def _shifted(why: Why, base: int) -> Why:
    def shifted(i: int, measured: float | None, limit: float | None, decided: bool, reason: str) -> None:
        why(base + i, measured, limit, decided, reason)
    return shifted


def _ordered(glyphs: Sequence[Glyph], params: Params) -> Sequence[Glyph]:
    """Vertical runs as columns (R13), spacing accents on their letters: the order
    the lines are split in."""
    if any(g.vertical for g in glyphs):
        glyphs = order_vertical(glyphs, params)
    return compose_accents(glyphs)


class PageText:
    """A page's text assembled from its glyphs chunk by chunk, so the records can
    be dropped as the page goes on (memory stays flat however many glyphs a page
    draws). Given all glyphs at once it is exactly ``assemble``'s text. Between chunks it
    holds back the last, maybe unfinished, line; a line longer than
    ``max_held_glyphs`` is joined in pieces, its last glyph kept as the context
    that decides the word space at the cut."""

    def __init__(self, params: Params) -> None:
        self.params = params
        self.lines: list[str] = []
        self.open: list[str] = []  # joined pieces of a line longer than the cap
        self.pending: list[Glyph] = []
        self.context = False  # pending[0] was already joined into ``open``
        self.glyphs = 0
        self.unresolved = 0

    def add(self, glyphs: Sequence[Glyph], final: bool = False) -> None:
        """Take the next glyphs (visible, in page-text order)."""
        self.glyphs += len(glyphs)
        self.unresolved += sum(1 for g in glyphs if not g.text)
        run: Sequence[Glyph] = self.pending + list(glyphs) if self.pending else glyphs
        params = self.params
        lines = split_lines(_ordered(run, params), params)
        self.pending = []
        last: list[Glyph] | None = lines.pop() if lines and not final else None
        held: list[list[Glyph]] = []  # lines a later string may still continue
        if last is not None and not self.context:
            room = params.max_held_glyphs - len(last)
            while lines and len(held) < _CONTINUED_WITHIN and len(lines[-1]) < room:
                room -= len(lines[-1])
                held.insert(0, lines.pop())
        for line in lines:
            self._line(_join_line(line, params, self.context))
            self.context = False
        if last is None:
            return
        if len(last) < params.max_held_glyphs:
            self.pending = [g for line in held for g in line] + last
            return
        self.open.append(_join_line(last, params, self.context))
        self.pending, self.context = last[-1:], True

    def _line(self, text: str) -> None:
        if self.open:
            self.open.append(text)
            text = "".join(self.open)
            self.open = []
        self.lines.append(text)

    def text(self) -> str:
        """The page text of everything added (call after the final ``add``)."""
        if self.pending:
            self.add([], final=True)
        if self.open:
            self._line("")
        return tidy("\n".join(self.lines))


def split_lines(glyphs: Sequence[Glyph], params: Params, why: Why | None = None) -> list[list[Glyph]]:
    """``glyphs`` in lines (``_split``), in the order the lines begin."""
    return [list(glyphs[line[0]:line[-1] + 1]) if line[-1] - line[0] + 1 == len(line) else [glyphs[k] for k in line]
            for line in _split(glyphs, params, why)]


#: A string may continue any of this many lines before the current one.
_CONTINUED_WITHIN = 3


def _split(glyphs: Sequence[Glyph], params: Params, why: Why | None = None) -> list[list[int]]:
    """R12: a new line starts when the origin moves across the previous glyph's
    writing direction by more than half the larger box height. Text rise is taken
    out first, so a superscript, however high, stays on its line. A change between
    horizontal and vertical writing is a column change (R13), hence a new line.

    Beyond: a string that goes back to where its line began (or before) after moving
    across by more than ``line_return`` of the box height starts a new line too. Big
    type set with leading under its box height (48 pt lines 36 pt apart, in a font
    whose box is 1.5 em) moves less than half a box, but a line's text never returns
    to its own start; a superscript or subscript moves on from its base.

    And a string that breaks from its line may continue one of the few lines before
    it (``_continued``): producers that draw word by word down a table's column or
    across two sizes (``Big``, ``Small``, ``Text``, ``Text``) would otherwise give each
    word a line. Lines are lists of indices into ``glyphs``, in the order they begin."""
    lines: list[list[int]] = []
    line: list[int] = []
    factor, back = params.line_break, params.line_return
    prev: Glyph | None = None
    for k, g in enumerate(glyphs):
        # Glyphs of one showing operation share a baseline: only a new string can
        # start a new line (form glyphs, token -1, are always checked).
        if prev is not None and (g.token != prev.token or g.token < 0):
            ux, uy = prev.direction
            across = (g.oy - prev.oy) * ux - (g.ox - prev.ox) * uy - (g.rise - prev.rise)
            height = g.height if g.height > prev.height else prev.height
            moved = abs(across)
            returned = moved > back * height and _at_start(glyphs[line[0]], g, ux, uy, height)
            broke = moved > factor * height or g.vertical != prev.vertical or returned or (
                g.height != prev.height and not _boxes_overlap_across(prev, g, ux, uy))
            continued = None
            if broke:
                continued = _continued(glyphs, lines, line, g)
                line = continued if continued is not None else []
                if continued is None:
                    lines.append(line)
            if why is not None:
                if continued is not None:
                    why(k, moved, factor * height, True, "goes on where an earlier line ends, on its "
                        "baseline: that line continues (R12, beyond)")
                else:
                    _why_line(why, k, prev, g, across, factor * height, broke, returned)
        elif prev is None:
            lines.append(line)
        elif why is not None:
            why(k, 0.0, None, False, "the same string: one baseline (R12)")
        line.append(k)
        prev = g
    return lines


def _at_start(start: Glyph, g: Glyph, ux: float, uy: float, height: float) -> bool:
    """Whether ``g`` begins where the line of ``start`` began, or before."""
    return (g.ox - start.ox) * ux + (g.oy - start.oy) * uy <= 0.1 * height


def _continued(glyphs: Sequence[Glyph], lines: list[list[int]], current: list[int], g: Glyph) -> list[int] | None:
    """The line among the few before ``current`` that ``g`` continues: one whose last
    glyph shares ``g``'s direction, baseline (within a tenth of the box height) and
    size (within a quarter), and ends at most one box height before ``g`` begins
    (a word gap, not a column's gutter)."""
    for line in reversed(lines[-_CONTINUED_WITHIN - 1:]):
        if line is current:
            continue
        h = glyphs[line[-1]]
        if h.vertical != g.vertical or h.direction != g.direction or not 0.8 * h.height <= g.height <= 1.25 * h.height:
            continue
        ux, uy = h.direction
        across = (g.oy - h.oy) * ux - (g.ox - h.ox) * uy - (g.rise - h.rise)
        along = (g.ox - h.gx) * ux + (g.oy - h.gy) * uy
        if abs(across) <= 0.1 * h.height and -0.1 * h.height <= along <= h.height:
            return line
    return None


def _why_line(why: Why, index: int, prev: Glyph, g: Glyph, across: float, limit: float, broke: bool,
              returned: bool) -> None:
    if g.vertical != prev.vertical:
        reason = "the writing mode changes: a new column (R13)"
    elif abs(across) > limit:
        reason = f"moved {abs(across):.2f} across, over half the larger box height {limit:.2f}: a new line (R12)"
    elif returned:
        reason = (f"moved {abs(across):.2f} across and back to the line's start: a new line "
                  "(R12, beyond: leading under the box height)")
    elif broke:
        reason = "the boxes share no height across the line: a new line (R12, beyond)"
    else:
        reason = f"moved {abs(across):.2f} across, within {limit:.2f}: the same line (R12)"
    why(index, abs(across), limit, broke, reason)


def _boxes_overlap_across(prev: Glyph, g: Glyph, ux: float, uy: float) -> bool:
    """Whether the two glyph boxes share any height across the writing direction
    (ux, uy). Beyond R12: a small word drawn below a big one, less than half the big
    box height lower, shares no height with it and is another line; what R12 keeps
    on the line (a superscript, a small caption on the same baseline) overlaps.
    Text rise is taken out, as for the line move."""
    def extent(h: Glyph) -> tuple[float, float]:
        at = h.oy * ux - h.ox * uy - h.rise  # text rise taken out, as R12 does
        u0x, u0y, u1x, u1y = h.box
        a, b = u0y * ux - u0x * uy, u1y * ux - u1x * uy
        return (at + a, at + b) if a < b else (at + b, at + a)

    p_lo, p_hi = extent(prev)
    g_lo, g_hi = extent(g)
    return g_lo < p_hi and p_lo < g_hi


def _join_line(line: Sequence[Glyph], params: Params, context: bool = False) -> str:
    """One line's text: its glyphs' texts with R11's word spaces, in reading order.

    With ``context``, the first glyph only decides the space before the second: its
    own text was already joined (PageText's cut of an overlong line).
    """
    texts, spaces = line_spaces(line, params)
    text = _spaced(texts, spaces, context)
    order = _rtl_order(line, texts, text)
    return text if order is None else "".join([text[k] for k in order])


def _line_map(line: Sequence[Glyph], params: Params, why: Why | None) -> tuple[str, list[int | None]]:
    """``_join_line``'s text and, for each character, its glyph's index in the line
    (None: a word space)."""
    texts, spaces = line_spaces(line, params, why)
    text = _spaced(texts, spaces)
    owners: list[int | None] = []
    for i, glyph_text in enumerate(texts):
        if spaces[i]:
            owners.append(None)
        owners.extend([i] * len(glyph_text))
    order = _rtl_order(line, texts, text)
    if order is None:
        return text, owners
    return "".join([text[k] for k in order]), [owners[k] for k in order]


def line_spaces(line: Sequence[Glyph], params: Params, why: Why | None = None) -> tuple[list[str], list[bool]]:
    """Each glyph's text, an unresolved one standing as one space (R6), and whether a
    word space goes before it (R11, ``word_spaces``). The layout mode (R15) places
    its words by these same decisions."""
    texts = [g.text or " " for g in line]
    return texts, word_spaces(line, texts, params, why)


def _spaced(texts: Sequence[str], spaces: Sequence[bool], context: bool = False) -> str:
    parts = [texts[0]]
    for i in range(1, len(texts)):
        if spaces[i]:
            parts.append(" ")
        parts.append(texts[i])
    return "".join(parts[1:] if context else parts)


def word_spaces(line: Sequence[Glyph], texts: Sequence[str], params: Params, why: Why | None = None) -> list[bool]:
    """R11: whether a word space goes before each glyph of one line (``texts``: the
    glyphs' texts, an unresolved one as a space). The layout mode (R15) places its
    words by these same decisions.

    The gap runs along the previous glyph's direction from its glyph end, so
    negative Tc given back by TJ numbers is no gap; beyond the seeds, from its pen
    end when that lies further on, so positive Tc tracking is no gap either. Also
    beyond: when a line that marks word boundaries with space glyphs spreads the
    letters of its words too (CSS letter-spacing drawn glyph by glyph), the typical
    letter gap is tracking, and only gaps wider than tracking plus the threshold are
    word spaces; and a jump far back along the line starts another fragment. And a
    line whose gaps between words' letters fall in two clear groups, letter gaps and
    word gaps, is split between them (``line_split``), even under the threshold:
    tightly justified text sets its word gaps at 0.09-0.13 of the box height, with
    space glyphs or by placement alone. Failing that, on a line with space glyphs, a
    sentence's end set apart by placement alone is a space (``_sentence_end``).
    """
    gaps, candidates, has_space, near = _gaps(line, texts, why, params.split_letter_max, params.word_gap)
    word_gap = params.word_gap
    tracking = 0.0
    split: float | None = None
    spaced: frozenset[int] = frozenset()
    typical = 0.0
    if has_space and len(candidates) >= 4:
        typical = sorted(candidates)[len(candidates) // 2]
        if typical > word_gap:
            tracking = typical
    # only a gap under R11's threshold can change: most lines have none near it
    if not tracking and (near or typical < params.split_letter_max - params.split_word_min):
        between = [(i, gap) for i, gap in enumerate(gaps) if gap is not None and _between_words(line, texts, i)]
        split = line_split([gap for _, gap in between], params)
        spaced = frozenset(i for i, _ in between)
        if split is None and has_space and len(candidates) >= 4:
            split = typical + params.split_word_min  # a sentence's end set apart without a space glyph
            spaced = frozenset(i for i, gap in enumerate(gaps) if gap is not None and _sentence_end(texts, i))
    threshold = word_gap + tracking
    backward = -params.backward_jump
    spaces = [False] * len(line)
    for i, gap in enumerate(gaps):
        if gap is not None:
            own = split is not None and split < gap <= threshold and i in spaced
            spaces[i] = own or gap > threshold or gap < backward
            if why is not None:
                if own and split is not None:
                    _why_split(why, i, gap, split)
                else:
                    _why_gap(why, i, gap, threshold, tracking, backward, spaces[i])
    return spaces


def _sentence_end(texts: Sequence[str], i: int) -> bool:
    """Whether glyph ``i`` begins a sentence after the end of one: a capital after
    ".", "!", "?", ";" or ":". A line that marks its word gaps with space glyphs may
    still set its sentence gaps by placement alone (freeculture: "content.That", 241
    times); a gap there wider than the line's letter gaps is a space."""
    return texts[i - 1][-1] in ".!?;:" and texts[i][0].isupper()


def _between_words(line: Sequence[Glyph], texts: Sequence[str], i: int) -> bool:
    """Whether the gap before glyph ``i`` may be a word gap for the line's own split:
    before a letter, a digit, an opening bracket or quote or "§", after anything but
    a dash, an opening bracket or quote, or a slash, at one size. Not next to an
    ideograph (justified CJK spreads those), not before other punctuation (an
    italic's correction: "f,", "C++"), not across a change of size (small capitals,
    a superscript): their gaps are not the text's word gaps."""
    a, b = texts[i - 1][-1], texts[i][0]
    if not (b.isalnum() or b == "\u00a7" or unicodedata.category(b) in _OPENING):
        return False
    if a == "/" or unicodedata.category(a) in _OPENING or unicodedata.category(a) == "Pd":
        return False
    if is_ideographic(a) or is_ideographic(b):
        return False
    prev, g = line[i - 1], line[i]
    return abs(prev.size - g.size) <= 0.02 * g.size


#: Unicode categories of opening brackets and quotes.
_OPENING = ("Ps", "Pi")


def line_split(gaps: Sequence[float], params: Params) -> float | None:
    """The gap (box heights) that parts a line's letter gaps from its word gaps, when
    they form two clear groups; else None (R11's threshold alone decides).

    Beyond R11, the way poppler estimates a line's space width from the line itself:
    enough gaps, each either a letter gap (within ``split_letter_max``: kerning, TJ
    rounding) or a word gap (from ``split_word_min``), none between, letter gaps and
    at least two word gaps, the narrowest no less than half the median (justification
    spreads a line's word gaps evenly; one narrow gap among wide ones is a kern, a
    small capital's placement or a thin space). A gap between the two groups marks a
    line it cannot read for sure: letter spacing, a heading's tracking, noisy
    placement; R11 stays.
    """
    if len(gaps) < params.split_min_gaps:
        return None
    letter_max, word_min = params.split_letter_max, params.split_word_min
    letters: list[float] = []
    words: list[float] = []
    for gap in gaps:
        if gap <= letter_max:
            letters.append(gap)
        elif gap >= word_min:
            words.append(gap)
        else:
            return None
    if not letters or len(words) < 2:
        return None
    words.sort()
    if words[0] < words[len(words) // 2] / 2:  # justification spreads a line's word gaps evenly
        return None
    return (max(letters) + words[0]) / 2


def _gaps(line: Sequence[Glyph], texts: Sequence[str], why: Why | None, low: float,
          word_gap: float) -> tuple[list[float | None], list[float], bool, bool]:
    """R11's measure: before each glyph, the gap along the line in box heights (None
    where none is measured: next to white space, between ideographs); the gaps
    measured, in order; whether the line has a white-space glyph; whether a gap
    lies over ``low`` and within ``word_gap`` (one the line's own split may decide)."""
    n = len(line)
    gaps: list[float | None] = [None] * n
    candidates: list[float] = []
    append = candidates.append
    has_space = near = False
    # one pass over neighbouring pairs (zip: no indexing in the loop, the hottest of the assembly)
    pairs = zip(range(1, n), line, islice(line, 1, None), texts, islice(texts, 1, None), strict=False)
    for i, prev, g, before, after in pairs:
        a, b = before[-1], after[0]
        if a.isspace() or b.isspace():
            has_space = True
            if why is not None:
                why(i, None, None, False, "a white-space glyph: no space added (R11)")
            continue
        if a >= "\u2e80" and b >= "\u2e80" and is_ideographic(a) and is_ideographic(b):
            if why is not None:
                why(i, None, None, False, "two ideographs: no space, whatever the gap (R11)")
            continue
        ux, uy = prev.direction
        x, y = g.ox, g.oy
        from_glyph_end = (x - prev.gx) * ux + (y - prev.gy) * uy
        if prev.code == 32 and prev.nbytes == 1:  # a letter drawn for code 32: its pen end holds Tw too
            from_pen_end = from_glyph_end - _tracking(line, i - 1, ux, uy)
        else:
            from_pen_end = (x - prev.ex) * ux + (y - prev.ey) * uy
        height = g.height
        gap = from_pen_end if from_pen_end < from_glyph_end else from_glyph_end
        if gap < from_glyph_end - height:  # Tc wider than a box height is no tracking:
            gap = from_glyph_end  # cells set apart by Tc, taken back by TJ inside each number (NICS)
        ratio = gap / height if height > 0 else 0.0
        gaps[i] = ratio
        append(ratio)
        if low < ratio <= word_gap:
            near = True
    return gaps, candidates, has_space, near


def _tracking(line: Sequence[Glyph], k: int, ux: float, uy: float) -> float:
    """The Tc tracking of glyph ``k``, a single-byte code 32, whose pen end also holds
    Tw: from a neighbour of the same string that is not code 32 (its pen end is its
    glyph end plus Tc alone). Tw is a word gap whatever glyph code 32 draws (R11), so
    the pen-end extension may discount Tc, never Tw; 0 when no neighbour tells."""
    for j in (k - 1, k + 1):
        if 0 <= j < len(line):
            n = line[j]
            if n.token == line[k].token and n.font == line[k].font and not (n.code == 32 and n.nbytes == 1):
                return (n.ex - n.gx) * ux + (n.ey - n.gy) * uy
    return 0.0


def _why_gap(why: Why, i: int, gap: float, threshold: float, tracking: float, backward: float,
             spaced: bool) -> None:
    beyond = f", letter spacing of {tracking:.2f} counted as tracking (R11, beyond)" if tracking else ""
    if gap < backward:
        reason = f"jumped {-gap:.2f} heights back along the line: another fragment, a space (R11, beyond)"
    elif spaced:
        reason = f"gap {gap:.2f} heights over the threshold {threshold:.2f}: a word space (R11){beyond}"
    else:
        reason = f"gap {gap:.2f} heights within the threshold {threshold:.2f}: no space (R11){beyond}"
    why(i, gap, threshold, spaced, reason)


def _why_split(why: Why, i: int, gap: float, split: float) -> None:
    why(i, gap, split, True, f"gap {gap:.2f} heights, under R11's threshold but over the line's own split "
                             f"{split:.2f} (its letter gaps apart from its word gaps, or a sentence's end): "
                             "a word space (R11, beyond)")


def _is_rtl(ch: str) -> bool:
    return unicodedata.bidirectional(ch) in ("R", "AL")


_RTL_LETTER = "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]"
_RTL_MARKS = "[\u0300-\u036f\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]*"
_RTL_CHAR = re.compile(_RTL_LETTER)
# A right-to-left letter with its combining marks; runs of them with single spaces.
_RTL_CLUSTER = re.compile(f"{_RTL_LETTER}{_RTL_MARKS}| ")
_RTL_RUN = re.compile(f"{_RTL_LETTER}{_RTL_MARKS}(?: ?{_RTL_LETTER}{_RTL_MARKS})*")


def _rtl_order(line: Sequence[Glyph], texts: list[str], text: str) -> list[int] | None:
    """Beyond the seeds: Hebrew and Arabic are often drawn in visual order, each
    glyph to the right of the one before; such runs are reversed into reading order,
    cluster by cluster (a letter keeps its marks). Runs the producer drew right to
    left are already in reading order. The order of ``text``'s characters (the
    line's ``_spaced`` text) as read; None where they stay as they are."""
    if not _RTL_CHAR.search(text) or not _drawn_left_to_right(line, texts):
        return None
    order = list(range(len(text)))
    for run in _RTL_RUN.finditer(text):
        start = run.start()
        clusters = [(start + m.start(), start + m.end()) for m in _RTL_CLUSTER.finditer(run.group())]
        order[start:run.end()] = [k for first, end in reversed(clusters) for k in range(first, end)]
    return order


def _drawn_left_to_right(line: Sequence[Glyph], texts: list[str]) -> bool:
    """Whether more neighbouring right-to-left glyphs go forward along the line than back."""
    forward = backward = 0
    for i in range(1, len(line)):
        if _is_rtl(texts[i - 1][0]) and _is_rtl(texts[i][0]):
            prev, g = line[i - 1], line[i]
            ux, uy = prev.direction
            if (g.ox - prev.ox) * ux + (g.oy - prev.oy) * uy >= 0:
                forward += 1
            else:
                backward += 1
    return forward > backward


def tidy(text: str) -> str:
    """Collapse space runs, trim line ends, drop blank lines, expand ligatures."""
    text = _SPACES.sub(" ", text.translate(LIGATURES))
    text = _LINE_EDGES.sub("\n", text)
    return "\n".join(line for line in text.split("\n") if line).strip(" ")


def _tidied_owners(raw: str, owners: Sequence[int | None], text: str) -> tuple[int | None, ...]:
    """The owners of the characters of ``text``, ``tidy(raw)``, from those of ``raw``.
    tidy changes white space alone (space runs, line ends, blank lines) and expands
    ligatures: the other characters keep their order, the n-th of them in ``text``
    is the n-th of them in ``raw`` once expanded, and every space and line break of
    ``text`` is tidy's own."""
    solid: list[int | None] = []
    for ch, owner in zip(raw, owners, strict=True):
        solid.extend([owner] * _solid_width(ch))
    drawn = iter(solid)
    return tuple(None if ch in " \n" else next(drawn) for ch in text)


@lru_cache(maxsize=4096)
def _solid_width(ch: str) -> int:
    """How many characters other than white space ``tidy`` makes of ``ch``."""
    return len(_SPACES.sub("", ch.translate(LIGATURES)).replace("\n", ""))
