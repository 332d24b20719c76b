"""The glyph record (R1): one per shown glyph, created by the million, so a NamedTuple
with flat coordinates instead of nested point objects."""
from __future__ import annotations

from typing import NamedTuple

from .geometry import Point


class Glyph(NamedTuple):
    #: Decoded text; empty when the decode chain (R4) found nothing (R6).
    text: str
    #: Raw character code and its width in bytes, from the font's codespace ranges.
    code: int
    nbytes: int
    #: Font resource name (the /F1 of ``/F1 12 Tf``) and effective size in user space.
    font: str
    size: float
    #: The glyph box as two offsets from the baseline, shared by all glyphs of a
    #: string: (u0x, u0y) to its descent side, (u1x, u1y) to its ascent side (for
    #: vertical writing: to its left and right edges). ``quad`` gives the corners.
    box: tuple[float, float, float, float]
    #: Baseline start (the pen position the glyph is drawn at).
    ox: float
    oy: float
    #: Baseline end: pen after the full displacement (width·Tfs + Tc + Tw)·Tz.
    ex: float
    ey: float
    #: Glyph end: the glyph's own advance only (width·Tfs·Tz, no Tc or Tw).
    gx: float
    gy: float
    #: Unit vector of the writing direction in user space (shared per string).
    direction: Point
    #: True for vertical writing (WMode 1).
    vertical: bool
    #: Box height ascent-to-descent in user space (R3); thresholds are tied to it.
    height: float
    #: Text rise (Ts) in user space along the normal of the writing direction: a
    #: superscript's raised origin is not a new line (R12).
    rise: float
    #: Text render mode (Tr); 3 is invisible, still extracted (R10).
    render_mode: int
    #: Index of the showing operator's operand in the page content stream, or -1
    #: for glyphs drawn inside a Form XObject (R1, R2).
    token: int

    @property
    def origin(self) -> Point:
        return (self.ox, self.oy)

    @property
    def end(self) -> Point:
        return (self.ex, self.ey)

    @property
    def glyph_end(self) -> Point:
        return (self.gx, self.gy)

    @property
    def quad(self) -> tuple[float, float, float, float, float, float, float, float]:
        """Box corners in user space (R1): at the origin and at the glyph end on the
        descent side, then at the glyph end and at the origin on the ascent side."""
        u0x, u0y, u1x, u1y = self.box
        ox, oy, gx, gy = self.ox, self.oy, self.gx, self.gy
        return (ox + u0x, oy + u0y, gx + u0x, gy + u0y, gx + u1x, gy + u1y, ox + u1x, oy + u1y)

    @property
    def center(self) -> Point:
        u0x, u0y, u1x, u1y = self.box
        return ((self.ox + self.gx + u0x + u1x) / 2.0, (self.oy + self.gy + u0y + u1y) / 2.0)

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly form for ``pdfindex glyphs``."""
        return {
            "text": self.text,
            "code": self.code,
            "nbytes": self.nbytes,
            "font": self.font,
            "size": round(self.size, 4),
            "quad": [round(v, 3) for v in self.quad],
            "origin": [round(self.ox, 3), round(self.oy, 3)],
            "end": [round(self.ex, 3), round(self.ey, 3)],
            "glyph_end": [round(self.gx, 3), round(self.gy, 3)],
            "direction": [round(v, 4) for v in self.direction],
            "vertical": self.vertical,
            "height": round(self.height, 3),
            "rise": round(self.rise, 3),
            "render_mode": self.render_mode,
            "token": self.token,
        }
