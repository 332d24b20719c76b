"""R7, beyond (issue 11): quality that lies. A ToUnicode map that gives every code a
Unicode value scores full coverage whatever it says; the text's plausibility catches
the ones that lie (shifted by a constant, private-use code points, look-alike
letters of another script). Byte-built fonts; and the shared corpora, whose pages
must not be flagged."""
from __future__ import annotations

from pathlib import Path

import pytest

from pdfindex import pipeline
from pdfindex.pipeline.params import DEFAULT_PARAMS
from pdfindex.pipeline.plausibility import suspicion
from pdfindex.contract.problems import ProblemCode, code_of
from tests.builders import font_resources, mono_font, text_line
from tests.pdfwriter import PdfWriter, tounicode_cmap

SENTENCES = [
    "The quality of the text layer decides whether a page can be found by its words.",
    "Every extractor reads the same bytes, and most of them trust what the font says.",
    "When the map from codes to letters lies, the page looks fine and finds nothing.",
    "This sentence is here so that the page holds enough words for a fair judgement.",
]


def _page(mapping: dict[int, str] | None) -> pipeline.Page:
    """The sentences drawn with a font whose ToUnicode gives each code ``mapping``'s
    value (None: no ToUnicode, the codes read as WinAnsi, which is right here)."""
    w = PdfWriter()
    to_unicode = None if mapping is None else tounicode_cmap([(bytes([c]), t) for c, t in mapping.items()])
    font = mono_font(w, to_unicode=to_unicode)
    content = b"".join(text_line(72, 700 - 14 * i, b"(%s) Tj" % s.encode("latin-1")) for i, s in enumerate(SENTENCES))
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes()).pages[0]


def _codes() -> set[int]:
    return {b for s in SENTENCES for b in s.encode("latin-1")}


def _assert_suspect(page: pipeline.Page, words: str) -> None:
    q = page.quality
    assert q.suspect and words in q.suspect, q.suspect
    assert q.needs_ocr and q.coverage is not None and q.coverage < 0.8
    assert q.unresolved == 0  # every glyph has a Unicode value: coverage alone would say 1.0
    assert [code_of(p) for p in page.problems] == [ProblemCode.TEXT_SUSPECT]


def test_the_right_text_is_not_suspect() -> None:
    page = _page(None)
    assert page.text.split("\n") == SENTENCES
    assert page.quality.suspect == "" and page.quality.coverage == 1.0 and not page.quality.needs_ocr
    assert page.problems == []


def test_text_shifted_by_a_constant_is_suspect() -> None:
    page = _page({c: chr(c + 3) for c in _codes() if c != 32})  # "The" -> "Wkh"
    assert "wkh" in page.text
    _assert_suspect(page, "have no vowel")


def test_private_use_code_points_are_suspect() -> None:
    page = _page({c: chr(0xE000 + c) for c in _codes() if c != 32})
    _assert_suspect(page, "private-use")


def test_look_alike_letters_of_another_script_are_suspect() -> None:
    cyrillic = {ord("a"): "а", ord("e"): "е", ord("o"): "о", ord("p"): "р", ord("c"): "с"}
    page = _page(cyrillic)
    assert "а" in page.text
    _assert_suspect(page, "mix Latin, Greek or Cyrillic")


def test_a_page_mostly_in_another_script_is_not_judged_by_its_few_latin_words() -> None:
    """URLs on a Chinese page (www, cn, hk) have no vowels; they say nothing about it."""
    text = "东北电气发展股份有限公司报告全文" * 20 + " www cninfo com cn hkexnews hk" * 5
    assert suspicion(text, DEFAULT_PARAMS) is None
    assert suspicion(" ".join(["wkh", "dqg", "zlwk", "text"] * 10), DEFAULT_PARAMS) is not None


def _all_pages(folder: Path) -> list[tuple[str, int, str]]:
    flagged = []
    for pdf in sorted(folder.glob("*.pdf")):
        try:
            doc = pipeline.extract(pdf)
        except pipeline.ExtractionError:
            continue  # encrypted or broken as a whole: no page text to judge
        flagged += [(pdf.name, p.number, p.quality.suspect) for p in doc.pages if p.quality.suspect]
    return flagged


def test_no_page_of_the_producers_corpus_is_suspect(producers: Path) -> None:
    assert _all_pages(producers) == []


@pytest.mark.slow
def test_no_page_of_the_real_world_corpus_is_suspect(realworld: Path) -> None:
    assert _all_pages(realworld) == []
