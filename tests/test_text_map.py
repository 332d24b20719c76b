"""Issue 21, item 3: text with provenance. ``assemble`` gives the page text with the
glyph behind each character (pipeline/textmap.py); extraction's ``PageText`` gives the
same text chunk by chunk, and marks and explain read the map instead of re-deriving
the assembly's rules. Byte-built pages, and a map whose "glyphs" are OCR-like word
boxes, as the next issue's recognised words will be."""
from __future__ import annotations

import random
from typing import NamedTuple

import pytest

from pdfindex import pipeline
from pdfindex.pipeline.assemble import LIGATURES, PageText, _tidied_owners, assemble, tidy
from pdfindex.pipeline.geometry import Point
from pdfindex.pipeline.textmap import Quad, TextMap
from pdfindex.server.marks import span_quads
from pdfindex.server.page_glyphs import text_glyphs
from tests.builders import one_font_pdf, text_line

SIZE = 20.0

PAGES = {
    "lines and a TJ gap": one_font_pdf([text_line(72, 700, b"[(Free) -800 (culture)] TJ", size=SIZE),
                                        text_line(72, 650, b"(second  line ) Tj", size=SIZE)]),
    "blank line between": one_font_pdf([text_line(72, 700, b"(alpha) Tj", size=SIZE),
                                        text_line(72, 650, b"(   ) Tj", size=SIZE),
                                        text_line(72, 600, b"(beta gamma) Tj", size=SIZE)]),
    "superscript": one_font_pdf(b"BT /F1 20 Tf 72 700 Td (E=mc) Tj 5 Ts (2) Tj 0 Ts ( here) Tj ET"),
    "accent": one_font_pdf(text_line(72, 700, b"[(r\xb4) 500 (esum\xb4) 500 (e)] TJ", size=SIZE)),
}


@pytest.mark.parametrize("name", list(PAGES))
def test_the_map_holds_the_page_text_that_extraction_makes_chunk_by_chunk(name: str) -> None:
    glyphs, _box = text_glyphs(pipeline.PdfFile(PAGES[name]), 1)
    params = pipeline.DEFAULT_PARAMS
    text = assemble(glyphs, params)
    assert text.text == pipeline.extract(PAGES[name]).pages[0].text
    chunked = PageText(params)
    for k in range(0, len(glyphs), 2):
        chunked.add(glyphs[k:k + 2])
    assert chunked.text() == text.text
    assert len(text.owners) == len(text.text)
    assert all(owner is None or 0 <= owner < len(text.glyphs) for owner in text.owners)
    assert len(text.lines) == len(text.glyphs)


def test_inserted_spaces_and_line_breaks_belong_to_no_glyph() -> None:
    glyphs, _box = text_glyphs(pipeline.PdfFile(PAGES["lines and a TJ gap"]), 1)
    text = assemble(glyphs, pipeline.DEFAULT_PARAMS)
    assert text.text == "Free culture\nsecond line"
    for ch, owner in zip(text.text, text.owners, strict=True):
        if ch in " \n":
            assert owner is None
        else:
            assert owner is not None and text.glyphs[owner].text == ch


def test_line_texts_give_each_lines_part_of_the_text() -> None:
    glyphs, _box = text_glyphs(pipeline.PdfFile(PAGES["blank line between"]), 1)
    text = assemble(glyphs, pipeline.DEFAULT_PARAMS)
    assert text.text == "alpha\nbeta gamma"
    assert text.line_texts() == {0: "alpha", 2: "beta gamma"}  # line 1, white space alone, has none


def test_tidy_keeps_every_character_but_white_space_in_order() -> None:
    """What ``_tidied_owners`` relies on: tidy collapses, trims and drops white space
    and expands ligatures, and leaves every other character where it was."""
    alphabet = ["a", "b", "é", " ", "  ", "\t", "\u00a0", "\u3000", "\u2003", "\n", "\u00ad", "\ufb01", "\ufb03",
                "\u05e9", "\u2028"]
    rng = random.Random(21)
    for _ in range(2000):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 14)))
        text = tidy(raw)
        owners = _tidied_owners(raw, list(range(len(raw))), text)
        assert len(owners) == len(text)
        for ch, owner in zip(text, owners, strict=True):
            if ch in " \n":
                assert owner is None, (raw, text)
            else:
                assert owner is not None and ch in raw[owner].translate(LIGATURES), (raw, text, owners)
        drawn = [o for o in owners if o is not None]
        assert drawn == sorted(drawn), (raw, text, owners)


class WordBox(NamedTuple):
    """A recognised word, as OCR gives it: its text, its box, its writing direction."""

    text: str
    quad: Quad
    direction: Point


def _word(text: str, x: float, y: float) -> WordBox:
    w = 10.0 * len(text)
    return WordBox(text, (x, y, x + w, y, x + w, y + 12, x, y + 12), (1.0, 0.0))


def test_a_word_box_from_ocr_can_be_a_glyph_of_the_map() -> None:
    words = (_word("free", 72, 700), _word("culture", 122, 700), _word("runs", 72, 680))
    text = "free culture\nruns"
    owners = (0, 0, 0, 0, None, *[1] * 7, None, 2, 2, 2, 2)
    page = TextMap(text, owners, words, (0, 0, 1))
    assert page.glyphs_of(0, 12) == [0, 1]
    assert page.line_texts() == {0: "free culture", 1: "runs"}
    one_line, two_lines = span_quads(page, [(0, 12)]), span_quads(page, [(5, 17)])
    assert one_line == [(72.0, 700.0, 192.0, 700.0, 192.0, 712.0, 72.0, 712.0)]
    assert two_lines == [(122.0, 700.0, 192.0, 700.0, 192.0, 712.0, 122.0, 712.0),
                         (72.0, 680.0, 112.0, 680.0, 112.0, 692.0, 72.0, 692.0)]
