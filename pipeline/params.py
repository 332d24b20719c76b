"""Every threshold of text assembly in one place, with the SPEC.md rule it comes from.

Thresholds scale with the glyph box height (R3), never with the Tf operand, so a
Word export that writes ``1 Tf`` and puts the real size in the text matrix behaves
like any other file.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Params:
    #: R11: a gap wider than this × the current glyph's box height is a word space.
    word_gap: float = 0.15
    #: R11 (beyond): a move this many box heights backwards along the line starts a
    #: new fragment and gets a space; smaller back-steps (composite accents, fake-bold
    #: overprints) do not.
    backward_jump: float = 2.0
    #: R12: a move across the writing direction wider than this × the larger box
    #: height of the two glyphs starts a new line.
    line_break: float = 0.5
    #: R9: nesting depth at which Form XObject recursion stops.
    max_form_depth: int = 12
    #: R17 (beyond): per-page budgets against hostile files. Forms that draw each
    #: other many times multiply without any cycle ("billion laughs"); past these
    #: limits the rest is skipped and reported.
    max_form_calls: int = 10_000
    max_page_glyphs: int = 2_000_000
    #: R3: ascent and descent (in em) used when neither the font descriptor, the
    #: FontBBox nor the standard-14 metrics give a usable height.
    default_ascent: float = 0.8
    default_descent: float = -0.2
    #: R7 (beyond): a page whose glyph coverage is below this is flagged as needing
    #: OCR too, since its text layer cannot be trusted for search.
    ocr_coverage: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.word_gap < self.line_break:
            raise ValueError("word_gap must be positive and smaller than line_break")
        if self.max_form_calls < 1 or self.max_page_glyphs < 1:
            raise ValueError("page budgets must be positive")
        if self.max_form_depth < 1:
            raise ValueError("max_form_depth must be at least 1")
        if not self.default_descent < 0 < self.default_ascent:
            raise ValueError("default ascent must be positive and descent negative")
        if not 0 <= self.ocr_coverage <= 1:
            raise ValueError("ocr_coverage is a fraction")


DEFAULT_PARAMS = Params()
