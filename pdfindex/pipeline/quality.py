"""Per-page text quality (R7): how much of what the page draws we could decode, and
(beyond) whether what we decoded is plausible text at all (plausibility.py)."""
from __future__ import annotations

from dataclasses import dataclass

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


def from_counts(total: int, unresolved: int, params: Params, text: str = "") -> Quality:
    """The score from the counts of the glyphs that make the page text (visible,
    forms included), counted as the page is assembled chunk by chunk; ``text``, the
    page's text, is checked for plausibility."""
    if total == 0:
        return Quality(0, 0, None, True)
    coverage = (total - unresolved) / total
    doubt = suspicion(text, params) if text else None
    if doubt is not None:
        return Quality(total, unresolved, coverage * (1.0 - doubt.share), True, doubt.reason)
    return Quality(total, unresolved, coverage, coverage < params.ocr_coverage)
