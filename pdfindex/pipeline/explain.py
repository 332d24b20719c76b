"""``pdfindex explain``: why one page's text came out as it did, glyph by glyph.

The page is extracted as for the index (``extract_page``'s observer sees what its
text assembly is given), then assembled once more into its text map
(``assemble.assemble``), which says which line each glyph is on and what it decided
and why (``assemble.Why``): for each glyph the line move across the writing
direction against its limit (R12, R13), and the gap along it against the word-space
threshold (R11, with its letter-spacing extension), or why no gap was measured
(white space, ideographs). ``--near`` looks for its text in the lines of that text. Glyphs the visible box dropped
(R10) and the page's plausibility (R7, beyond) are listed too. Nothing here
decides anything: it reports the decisions of the code that makes the text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .assemble import Why, assemble
from .document import PdfFile
from .extract import extract_page
from .glyph import Glyph
from .params import DEFAULT_PARAMS, Params
from .textmap import TextMap


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
    moves: dict[int, _Decision] = {}
    gaps: dict[int, _Decision] = {}
    text = assemble(shown_all, params, why_line=_recorder(moves), why_gap=_recorder(gaps))
    steps = _steps(text, moves, gaps)
    if near:
        wanted = near.casefold()
        shown = {line + 1 for line, line_text in text.line_texts().items() if wanted in line_text.casefold()}
        steps = [step for step in steps if step.line in shown]
    out.steps = steps
    return out


def _steps(text: TextMap[Glyph], moves: dict[int, _Decision], gaps: dict[int, _Decision]) -> list[Step]:
    """A step for each glyph of the text map, with the decisions taken at it."""
    steps: list[Step] = []
    for k, g in enumerate(text.glyphs):
        step = Step(g.text, g.ox, g.oy, g.height, g.font, g.size, text.lines[k] + 1)
        if k in moves:
            step.move, step.move_limit, step.new_line, step.line_rule = moves[k]
        if k in gaps:
            step.gap, step.threshold, step.space, step.space_rule = gaps[k]
        steps.append(step)
    if steps and not steps[0].line_rule:
        steps[0].line_rule = "the page's first glyph"
    return steps


#: What a ``Why`` was told: measured, limit, decided, reason.
_Decision = tuple[float | None, float | None, bool, str]


def _recorder(into: dict[int, _Decision]) -> Why:
    def record(index: int, measured: float | None, limit: float | None, decided: bool, reason: str) -> None:
        into[index] = (measured, limit, decided, reason)
    return record
