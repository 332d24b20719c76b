"""Page text from glyph geometry: the visible box (R10), word spaces (R11), line
breaks (R12), vertical columns (R13), content order (R14).

Spaces and line breaks come from where glyphs are, not from space characters: TeX,
Distiller and most justified layouts move the pen with TJ numbers or Td instead of
drawing a space.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .geometry import Rect
from .glyph import Glyph
from .params import Params

_LIGATURES = str.maketrans({
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


def is_ideographic(ch: str) -> bool:
    """Han, kana, CJK punctuation or fullwidth forms: justification spreads these
    without word boundaries (R11). Hangul is not here: Korean has word spaces."""
    cp = ord(ch)
    if cp < 0x2E80:
        return False
    for lo, hi in _IDEOGRAPHIC_RANGES:
        if lo <= cp <= hi:
            return True
    return False


def visible(glyphs: Iterable[Glyph], box: Rect) -> list[Glyph]:
    """Glyphs whose box centre lies in the visible box (R10): drops slug lines and
    printer marks, keeps clipped, white and invisible (render mode 3) text."""
    x0, y0, x1, y1 = box
    out = []
    for g in glyphs:
        q = g.quad
        cx = (q[0] + q[2] + q[4] + q[6]) * 0.25
        cy = (q[1] + q[3] + q[5] + q[7]) * 0.25
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            out.append(g)
    return out


def order_vertical(glyphs: Sequence[Glyph], params: Params) -> list[Glyph]:
    """R13: each run of vertical glyphs is regrouped into columns, read right to left
    (along the normal of the writing direction) and each top to bottom."""
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
        out.extend(_columns(glyphs[i:j], params))
        i = j
    return out


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


def assemble(glyphs: Sequence[Glyph], params: Params) -> str:
    """Join glyph texts in content order with the spaces and line breaks their
    geometry implies. Unresolved glyphs stand as one space (R6)."""
    if any(g.vertical for g in glyphs):
        glyphs = order_vertical(glyphs, params)
    parts: list[str] = []
    word_gap, line_break = params.word_gap, params.line_break
    prev: Glyph | None = None
    prev_last = " "
    for g in glyphs:
        text = g.text or " "
        if prev is not None:
            ux, uy = prev.direction
            dx, dy = g.ox - prev.ox, g.oy - prev.oy
            height = g.height if g.height > prev.height else prev.height
            if abs(dy * ux - dx * uy) > line_break * height:
                parts.append("\n")
                prev_last = "\n"
            else:
                gap = (g.ox - prev.gx) * ux + (g.oy - prev.gy) * uy
                if gap > word_gap * g.height and not prev_last.isspace() and not text[0].isspace() and not (
                    is_ideographic(prev_last) and is_ideographic(text[0])
                ):
                    parts.append(" ")
        parts.append(text)
        prev_last = text[-1]
        prev = g
    return tidy("".join(parts))


def tidy(text: str) -> str:
    """Collapse space runs, trim line ends, drop blank lines, expand ligatures."""
    text = _SPACES.sub(" ", text.translate(_LIGATURES))
    text = _LINE_EDGES.sub("\n", text)
    return "\n".join(line for line in text.split("\n") if line).strip(" ")
