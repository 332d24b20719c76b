"""The glyphs a page's indexed text was assembled from, kept for marking (issue 10).

``iter_pages(..., keep_glyphs=True)`` keeps the page content stream's own records
(R2): without the glyphs of Form XObjects and annotation appearances, and before
/ActualText replaced them. The index's text has all three, and on real files they
matter: a figure's labels or a whole page drawn inside a form go unmarked, and an
ActualText soft hyphen drawn as a space glyph ("Mit arbei terinnen") splits the word
the index holds whole ("Mitarbeiterinnen"). So this runs the page as
``pipeline.extract.extract_page`` does, with the same interpreter, budgets and
damage handling, but keeps what its text assembly is given: each chunk's glyphs with
ActualText applied, in the visible box.

It mirrors extract_page step for step (the test compares the rebuilt text with
``Page.text``); a glyph hook in extract_page would let it go.
"""
from __future__ import annotations

from pdfindex.pipeline import DEFAULT_PARAMS, Glyph, Params, PdfFile
from pdfindex.pipeline.annotations import appearances
from pdfindex.pipeline.assemble import replace_actual_text, visible
from pdfindex.pipeline.document import page_content, page_resources, visible_box
from pdfindex.pipeline.errors import DAMAGE, ProblemCode, ProblemList, caught
from pdfindex.pipeline.geometry import IDENTITY, Rect
from pdfindex.pipeline.interpreter import Interpreter
from pdfindex.pipeline.streams import page_budget

#: Glyph records kept for one page's marks (~0.4 KB each): a page drawing millions
#: renders all the same, its words past this many unmarked.
MAX_GLYPHS = 300_000


def text_glyphs(pdf: PdfFile, number: int, params: Params = DEFAULT_PARAMS,
                limit: int = MAX_GLYPHS) -> tuple[list[Glyph], Rect]:
    """The glyphs page ``number`` (1-based) hands to text assembly, in order (forms
    and annotation appearances included, ActualText applied, outside the visible
    box dropped), at most ``limit``; and the page's visible box. Never raises for
    damage inside the page, as extraction does not."""
    problems = ProblemList(params.max_page_problems)
    page = pdf.pages[number - 1]
    kept: list[Glyph] = []

    def take(glyphs: list[Glyph], spans: list[tuple[int, int, str]]) -> None:
        if len(kept) < limit:
            kept.extend(visible(replace_actual_text(glyphs, spans), box)[:limit - len(kept)])

    with page_budget(params, problems):
        box = visible_box(page, problems)
        interpreter = Interpreter(params, {}, problems, sink=take)
        try:
            interpreter.run_page(page_content(page, problems), page_resources(page), IDENTITY)
            for form, key, matrix in appearances(page):
                interpreter.run_form(form, key, matrix, "annotation appearance")
        except RecursionError:
            pass  # extraction's text stops here too
        except DAMAGE as exc:
            caught(ProblemCode.PAGE_STOPPED, "", exc, params.strict)  # our own bug raises in strict mode
        interpreter.finish()
    return kept, box
