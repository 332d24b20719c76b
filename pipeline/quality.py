"""Per-page text quality (R7): how much of what the page draws we could decode, and
(beyond) whether what we decoded is plausible text at all (plausibility.py)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .glyph import Glyph
from .params import Params
from .plausibility import suspicion


@dataclass(frozen=True, slots=True)
class Quality:
    glyphs: int
    unresolved: int
    #: resolved / glyphs; None for a page without glyphs (nothing to measure).
    coverage: float | None
    #: No text layer at all (an image scan), or one too poorly decoded to search.
    needs_ocr: bool
    #: Why the decoded text is implausible ("" when it is not): the page's coverage is
    #: then lowered by the implausible share and it needs OCR.
    suspect: str = ""


def measure(glyphs: Sequence[Glyph], params: Params, text: str = "") -> Quality:
    """Score the glyphs that make the page text (visible, forms included)."""
    return from_counts(len(glyphs), sum(1 for g in glyphs if not g.text), params, text)


def from_counts(total: int, unresolved: int, params: Params, text: str = "") -> Quality:
    """The same score from counts, for a page assembled chunk by chunk; ``text``,
    the page's text, is checked for plausibility."""
    if total == 0:
        return Quality(0, 0, None, True)
    coverage = (total - unresolved) / total
    doubt = suspicion(text, params) if text else None
    if doubt is not None:
        return Quality(total, unresolved, coverage * (1.0 - doubt.share), True, doubt.reason)
    return Quality(total, unresolved, coverage, coverage < params.ocr_coverage)
