"""The glyphs a page's indexed text was assembled from, kept for marking (issue 10).

``iter_pages(..., keep_glyphs=True)`` keeps the page content stream's own records
(R2): without the glyphs of Form XObjects and annotation appearances, and before
/ActualText replaced them. The index's text has all three, and on real files they
matter: a figure's labels or a whole page drawn inside a form go unmarked, and an
ActualText soft hyphen drawn as a space glyph ("Mit arbei terinnen") splits the word
the index holds whole ("Mitarbeiterinnen"). So the page is extracted as for the
index, and what its text assembly is given is kept (``extract_page``'s observer).
"""
from __future__ import annotations

from pdfindex.pipeline import DEFAULT_PARAMS, Glyph, Page, Params, PdfFile, extract_page
from pdfindex.pipeline.geometry import Rect

#: Glyph records kept for one page's marks (~0.4 KB each): a page drawing millions
#: renders all the same, its words past this many unmarked.
MAX_GLYPHS = 300_000


def text_glyphs(pdf: PdfFile, number: int, params: Params = DEFAULT_PARAMS,
                limit: int = MAX_GLYPHS) -> tuple[list[Glyph], Rect]:
    """``page_text_glyphs``'s glyphs and the page's visible box."""
    glyphs, page = page_text_glyphs(pdf, number, params, limit)
    return glyphs, page.box


def page_text_glyphs(pdf: PdfFile, number: int, params: Params = DEFAULT_PARAMS,
                     limit: int = MAX_GLYPHS) -> tuple[list[Glyph], Page]:
    """The glyphs page ``number`` (1-based) hands to text assembly, in order (forms
    and annotation appearances included, ActualText applied, outside the visible
    box dropped), at most ``limit``; and the page as extracted (its visible box, its
    quality and images: whether OCR read it). Never raises for damage inside the
    page, as extraction does not."""
    kept: list[Glyph] = []

    def observe(_drawn: list[Glyph], shown: list[Glyph]) -> None:
        if len(kept) < limit:
            kept.extend(shown[:limit - len(kept)])

    return kept, extract_page(pdf, number, params=params, observe=observe)
