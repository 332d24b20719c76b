"""``pdfindex explain``: why one page's text came out as it did, glyph by glyph.

The page is extracted as for the index (``extract_page``'s observer sees what its
text assembly is given), then assembled once more with the same functions, which
say what they decided and why (``assemble.Why``): for each glyph the line move
across the writing direction against its limit (R12, R13), and the gap along it
against the word-space threshold (R11, with its letter-spacing extension), or why
no gap was measured (white space, ideographs). Glyphs the visible box dropped
(R10) and the page's plausibility (R7, beyond) are listed too. Nothing here
decides anything: it reports the decisions of the code that makes the text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .assemble import _join_line, compose_accents, order_vertical, split_lines
from .document import PdfFile
from .extract import extract_page
from .glyph import Glyph
from .params import DEFAULT_PARAMS, Params


@dataclass(slots=True)
class Step:
    """One glyph of the assembled page and the decisions taken at it."""

    text: str
    x: float
    y: float
    height: float
    font: str
    size: float
    line: int  # 1-based
    #: Across the writing direction from the previous glyph, and its limit (R12).
    move: float | None = None
    move_limit: float | None = None
    new_line: bool = False
    line_rule: str = ""
    #: Along the line from the previous glyph, in box heights, and the threshold (R11).
    gap: float | None = None
    threshold: float | None = None
    space: bool = False
    space_rule: str = ""


@dataclass(slots=True)
class Explanation:
    page: int
    text: str
    steps: list[Step] = field(default_factory=list)
    #: Glyphs drawn but outside the visible box (R10): text and position.
    dropped: list[tuple[str, float, float]] = field(default_factory=list)
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    suspect: str = ""


def explain_page(pdf: PdfFile, number: int, params: Params = DEFAULT_PARAMS,
                 near: str | None = None) -> Explanation:
    """The decisions behind page ``number``'s text; with ``near``, only the lines
    whose text holds it (case-insensitive)."""
    drawn_all: list[Glyph] = []
    shown_all: list[Glyph] = []

    def observe(drawn: list[Glyph], shown: list[Glyph]) -> None:
        drawn_all.extend(drawn)
        shown_all.extend(shown)

    page = extract_page(pdf, number, params=params, observe=observe)
    kept = {id(g) for g in shown_all}
    out = Explanation(number, page.text, box=tuple(page.box),  # type: ignore[arg-type]
                      dropped=[(g.text, g.ox, g.oy) for g in drawn_all if id(g) not in kept])
    out.suspect = page.quality.suspect
    glyphs = compose_accents(order_vertical(shown_all, params) if any(g.vertical for g in shown_all) else shown_all)
    steps = [Step(g.text, g.ox, g.oy, g.height, g.font, g.size, 0) for g in glyphs]

    def line_why(k: int, measured: float | None, limit: float | None, decided: bool, reason: str) -> None:
        steps[k].move, steps[k].move_limit, steps[k].new_line, steps[k].line_rule = measured, limit, decided, reason

    lines = split_lines(glyphs, params, why=line_why)
    start = 0
    wanted = near.casefold() if near else None
    for number_, line in enumerate(lines, 1):
        first = start

        def gap_why(i: int, measured: float | None, limit: float | None, decided: bool, reason: str,
                    first: int = first) -> None:
            step = steps[first + i]
            step.gap, step.threshold, step.space, step.space_rule = measured, limit, decided, reason

        text = _join_line(line, params, why=gap_why)
        for step in steps[first:first + len(line)]:
            step.line = number_
        if wanted is None or wanted in text.casefold():
            out.steps.extend(steps[first:first + len(line)])
        start += len(line)
    if steps and not steps[0].line_rule:
        steps[0].line_rule = "the page's first glyph"
    return out
