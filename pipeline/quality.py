"""Per-page text quality (R7): how much of what the page draws we could decode."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .glyph import Glyph
from .params import Params


@dataclass(frozen=True, slots=True)
class Quality:
    glyphs: int
    unresolved: int
    #: resolved / glyphs; None for a page without glyphs (nothing to measure).
    coverage: float | None
    #: No text layer at all (an image scan), or one too poorly decoded to search.
    needs_ocr: bool


def measure(glyphs: Sequence[Glyph], params: Params) -> Quality:
    """Score the glyphs that make the page text (visible, forms included)."""
    return from_counts(len(glyphs), sum(1 for g in glyphs if not g.text), params)


def from_counts(total: int, unresolved: int, params: Params) -> Quality:
    """The same score from counts, for a page assembled chunk by chunk."""
    if total == 0:
        return Quality(0, 0, None, True)
    coverage = (total - unresolved) / total
    return Quality(total, unresolved, coverage, coverage < params.ocr_coverage)
