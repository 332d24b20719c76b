"""Issue 10, the marked page image (``pages/{n}.png``): which terms a query marks
(asked of a real index on disk), where their glyphs lie, and the PNG pdfium draws
with the boxes, checked by its pixels; then the bounded, cached pool of render
processes.

Where a box should be is computed independently of the code under test: the word's
rectangle from the mono font's construction (tests/builders.py: a glyph is 0.5 em
wide, its box from 0.2 em below to 0.8 em above the baseline), mapped to pixels by
pdfium's own FPDF_PageToDevice, the transform it drew the page with.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import math
import os
import re
import signal
import statistics
import threading
import time
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image, ImageChops, ImageDraw

from pdfindex import pipeline
from pdfindex.indexer import PageIndex, QueryError
from pdfindex.indexer.marks import matching_spans, token_spans
from pdfindex.indexer.query import MAX_EXPANDED_TERMS
from pdfindex.server.marks import mark_quads, page_words, span_quads
from pdfindex.server.page_glyphs import text_glyphs
from pdfindex.server.page_image import (
    MAX_HEIGHT,
    MAX_WIDTH,
    MIN_WIDTH,
    DocumentChanged,
    DocumentEncrypted,
    DocumentGone,
    DocumentUnreadable,
    PageOutOfRange,
    file_png,
    marked_png,
    page_marks,
    to_pixels,
)
from pdfindex.server.render import (
    PageRenderer,
    PngCache,
    RendererBusy,
    RendererClosed,
    RenderFailed,
    RenderTimeout,
)
from tests.builders import font_resources, mono_font, one_font_pdf, text_line
from tests.index_helpers import GB, cjk_pdf, extracted, page, record
from tests.pdfwriter import Name, PdfWriter, tounicode_cmap

Rect = tuple[float, float, float, float]
SIZE = 20.0  # font size of the mono test lines


# ---- building pages and indexes ----------------------------------------------------------------

def mono_pdf(lines: Sequence[tuple[float, float, bytes]], size: float = SIZE, **page_kw: object) -> bytes:
    """One page drawing each (x, y, text) line with the mono font."""
    return one_font_pdf([text_line(x, y, b"(%s) Tj" % text, size=size) for x, y, text in lines], **page_kw)


def word_rect(x: float, y: float, line: bytes, word: bytes, size: float = SIZE) -> Rect:
    """The user-space rectangle of ``word`` in a mono line drawn at (x, y)."""
    k = line.index(word)
    return (x + k * 0.5 * size, y - 0.2 * size, x + (k + len(word)) * 0.5 * size, y + 0.8 * size)


def index_of(root: Path, *pdfs: bytes) -> PageIndex:
    """A real index on disk holding these PDFs as the pipeline extracts them."""
    index = PageIndex(root / "index")
    for n, data in enumerate(pdfs):
        rec, pages = extracted(data, f"/docs/{n}.pdf")
        index.add(rec, pages)
    return index


def text_index(root: Path, *texts: str, title: str = "Annual report", author: str = "Ada Lovelace") -> PageIndex:
    index = PageIndex(root / "index")
    for n, text in enumerate(texts):
        index.add(record(f"t{n}", f"/docs/annual_{n}.pdf", [page(1, text)], title=title, author=author),
                  [page(1, text)])
    return index


# ---- reading the image ------------------------------------------------------------------------------

def image_of(png: bytes) -> Image.Image:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(png)).convert("RGB")


def marked(img: Image.Image) -> Image.Image:
    """255 where a pixel is tinted by a mark: yellow over white is (255, 246, 165),
    over black (90, 75, 0); anything the page itself draws here is grey."""
    r, g, b = img.split()
    red = ImageChops.subtract(r, b).point(lambda v: 255 if v >= 60 else 0)
    green = ImageChops.subtract(g, b).point(lambda v: 255 if v >= 45 else 0)
    return ImageChops.multiply(red, green)


def device_rect(data: bytes, rect: Rect, size: tuple[int, int]) -> Rect:
    """Where pdfium puts the user-space ``rect`` on a bitmap of ``size`` pixels."""
    document = pdfium.PdfDocument(data)
    try:
        pdf_page = document[0]
        xs, ys = [], []
        for x, y in ((rect[0], rect[1]), (rect[2], rect[1]), (rect[2], rect[3]), (rect[0], rect[3])):
            dx, dy = ctypes.c_int(), ctypes.c_int()
            assert pdfium_c.FPDF_PageToDevice(pdf_page, 0, 0, size[0], size[1], 0, x, y,
                                              ctypes.byref(dx), ctypes.byref(dy))
            xs.append(dx.value)
            ys.append(dy.value)
        pdf_page.close()
    finally:
        document.close()
    return (min(xs), min(ys), max(xs), max(ys))


def _grow(rect: Rect, by: float) -> tuple[int, int, int, int]:
    return (math.floor(rect[0] - by), math.floor(rect[1] - by), math.ceil(rect[2] + by), math.ceil(rect[3] + by))


def assert_marks_exactly(img: Image.Image, expected: Sequence[Rect], ink: bool = True) -> None:
    """Each expected pixel rectangle is tinted all over (a 2 px margin for rounding),
    holds the page's ink of the word (``ink``), and nothing else is tinted at all."""
    mask = marked(img)
    for rect in expected:
        inner = _grow(rect, -2)
        assert inner[2] > inner[0] and inner[3] > inner[1], f"rectangle {rect} too small to check"
        area = (inner[2] - inner[0]) * (inner[3] - inner[1])
        tinted = mask.crop(inner).histogram()[255]
        assert tinted >= 0.97 * area, f"only {tinted} of {area} pixels of {rect} are marked"
        if ink:
            darkest = img.crop(inner).convert("L").getextrema()[0]
            assert darkest < 120, f"no ink of the word under the mark at {rect}"
    rest = mask.copy()
    draw = ImageDraw.Draw(rest)
    for rect in expected:
        draw.rectangle(_grow(rect, 2), fill=0)
    assert rest.getbbox() is None, f"marks outside the expected places, within {rest.getbbox()}"


LINE = b"Free culture runs fast"
X, Y = 72.0, 700.0


# ---- terms_to_mark: what a query marks ---------------------------------------------------------------

@pytest.fixture(scope="module")
def library(engine: str, tmp_path_factory: pytest.TempPathFactory) -> PageIndex:
    root = tmp_path_factory.mktemp("marks")
    return text_index(root, "Free culture runs the résumé of a cult; cultivate cucumbers",
                      "中文全文检索系统 and running notes", "unrelated zebra page")


def test_the_index_is_on_the_engine_under_test(engine: str, library: PageIndex) -> None:
    """The index fixture asks for ``engine`` (tests/conftest.py): else it
    would be built once and kept for the other engine's tests."""
    assert library.engine == engine


@pytest.mark.parametrize(("query", "terms"), [
    ("culture", {"cultur"}),
    ("Running", {"run"}),
    ("RÉSUMÉ", {"resum"}),
    ("resume", {"resum"}),
    ("free culture", {"free", "cultur"}),
    ("free OR zebra", {"free", "zebra"}),
    ("(free OR zebra) +culture", {"free", "zebra", "cultur"}),
    ("culture^3", {"cultur"}),
    ("text:culture", {"cultur"}),
])
def test_words_give_the_terms_the_index_holds(library: PageIndex, query: str, terms: set[str]) -> None:
    assert library.terms_to_mark(query) == terms


@pytest.mark.parametrize("query", ['"free culture"', '"free culture"~3', '"Free CULTURE"'])
def test_a_phrase_gives_its_words(library: PageIndex, query: str) -> None:
    assert library.terms_to_mark(query) == {"free", "cultur"}


@pytest.mark.parametrize(("query", "terms"), [
    ("cult*", {"cult", "cultur", "cultiv"}),   # expanded against the lexicon: never "cucumb"
    ("cultivates*", {"cultiv"}),               # as typed and as its stem, as search does
    ("cu?umb*", {"cucumb"}),
    ("cucumbr~", {"cucumb"}),
    ("cultre~2", {"cultur", "cult", "cultiv"}),
    ("[cult TO cultz]", {"cult", "cultur", "cultiv"}),
    ("zz*", set()),
])
def test_prefixes_wildcards_fuzzy_and_ranges_expand_against_the_lexicon(
        library: PageIndex, query: str, terms: set[str]) -> None:
    assert library.terms_to_mark(query) == terms


@pytest.mark.parametrize(("query", "terms"), [
    ("-culture free", {"free"}),
    ("free -culture", {"free"}),
    ("NOT culture", set()),
    ("-culture", set()),
    ("free OR -culture", {"free"}),
    ('free -"free culture"', {"free"}),
    ("free NOT (culture OR zebra)", {"free"}),
    ("free -cult*", {"free"}),
    ("NOT NOT culture", set()),  # as the search reads it: NOT culture
])
def test_negated_words_give_nothing(library: PageIndex, query: str, terms: set[str]) -> None:
    assert library.terms_to_mark(query) == terms


@pytest.mark.parametrize("query", [
    "title:report", "author:ada", "author:lovelace", "filename:annual", "subject:x", "keywords:x",
    "producer:x", "error:x", "status:indexed", "problem:font_missing", "title:(report OR annual)", "title:rep*",
    "*",
])
def test_other_fields_and_match_all_give_nothing(library: PageIndex, query: str) -> None:
    assert library.terms_to_mark(query) == frozenset()


def test_a_field_beside_words_gives_only_the_words(library: PageIndex) -> None:
    assert library.terms_to_mark("title:report culture author:ada") == {"cultur"}


@pytest.mark.parametrize(("query", "terms"), [
    ("文", {"文"}),  # one character: itself, not the bigrams it stands in
    ("文检", {"文检"}),
    ("全文检索", {"全文", "文检", "检索"}),
])
def test_cjk_terms_are_bigrams_and_a_lone_character_itself(library: PageIndex, query: str, terms: set[str]) -> None:
    assert library.terms_to_mark(query) == terms


@pytest.mark.usefixtures("engine")
def test_expansion_stays_within_the_search_cap(tmp_path: Path) -> None:
    words = [f"w{n:04d}x" for n in range(MAX_EXPANDED_TERMS + 200)]
    index = text_index(tmp_path, " ".join(words))
    assert len(index.terms_to_mark("w*")) == MAX_EXPANDED_TERMS
    assert index.terms_to_mark("w*") <= set(words)
    assert index.terms_to_mark("w0007x") == {"w0007x"}


@pytest.mark.usefixtures("engine")
def test_expansion_stops_at_its_deadline(tmp_path: Path) -> None:
    words = [f"w{n:04d}x" for n in range(MAX_EXPANDED_TERMS)]
    index = text_index(tmp_path, " ".join(words))
    full = index.terms_to_mark("w*")
    cut = index.terms_to_mark("w*", timeout=0.0)
    assert len(full) == MAX_EXPANDED_TERMS
    assert cut < full  # fewer words, never other ones


@pytest.mark.parametrize("query", ["", "   ", '"unclosed', "title:", "(free", "x" * 1001, "free AND", "-"])
def test_queries_the_search_refuses_are_refused(library: PageIndex, query: str) -> None:
    with pytest.raises(QueryError):
        library.terms_to_mark(query)


# ---- token_spans and matching_spans: the analyser with offsets ------------------------------------

def test_token_spans_are_offsets_into_the_text_as_given() -> None:
    text = "Résumé ﬁnance, U.S.A. 1,485.1 runs 中文"
    spans = token_spans("en", text)
    assert [(text[s:e], term) for s, e, term in spans] == [
        ("Résumé", "resum"), ("ﬁnance", "financ"), ("U.S.A", "u.s.a"), ("1,485.1", "1,485.1"),
        ("runs", "run"), ("中文", "中文")]


def test_token_spans_follow_the_index_language() -> None:
    assert [t for _, _, t in token_spans("none", "running runs")] == ["running", "runs"]
    assert [t for _, _, t in token_spans("en", "running runs")] == ["run", "run"]


def test_a_lone_cjk_character_marks_only_itself_inside_a_run() -> None:
    assert matching_spans("en", "中文全文检索", {"文"}) == [(1, 2), (3, 4)]
    assert matching_spans("en", "文", {"文"}) == [(0, 1)]
    assert matching_spans("en", "中文全文检索", {"文检"}) == [(3, 5)]


def test_a_one_letter_term_does_not_mark_letters_inside_words() -> None:
    assert matching_spans("none", "a banana a", {"a"}) == [(0, 1), (9, 10)]


def test_a_cjk_bigram_across_a_wrapped_line_spans_the_break() -> None:
    assert matching_spans("en", "中文\n全文", {"文全"}) == [(1, 4)]


def test_nothing_to_mark() -> None:
    assert matching_spans("en", "free culture", set()) == []
    assert matching_spans("en", "", {"free"}) == []
    assert matching_spans("en", "free culture", {"zebra"}) == []


# ---- page_words: the page text rebuilt from glyphs, each character with its glyph -------------------------

def _ligature_page() -> bytes:
    w = PdfWriter()
    cmap = tounicode_cmap([(b"A", "\ufb01"), (b"n", "n"), (b"a", "a"), (b"c", "c"), (b"e", "e"), (b" ", " ")])
    w.add_page(text_line(72, 700, b"(Anance ace) Tj", size=SIZE), resources=font_resources(mono_font(w, to_unicode=cmap)))
    return w.to_bytes()


def _hebrew_page() -> bytes:
    """Hebrew drawn in visual order (each glyph right of the one before): assembly
    reverses the run into reading order."""
    w = PdfWriter()
    letters = "שלום עולם"
    cmap = tounicode_cmap([(bytes([0x41 + i]), ch) for i, ch in enumerate(letters) if ch != " "] + [(b" ", " ")])
    codes = bytes(0x41 + i if ch != " " else 0x20 for i, ch in enumerate(letters))
    visual = bytes(reversed(codes))
    w.add_page(text_line(72, 700, b"(" + visual + b") Tj", size=SIZE), resources=font_resources(mono_font(w, to_unicode=cmap)))
    return w.to_bytes()


def _vertical_page() -> bytes:
    w = PdfWriter()
    font = w.type0_font(base_font="TestMincho-V", encoding="UniJIS-UCS2-V", cid_subtype="CIDFontType0",
                        ordering=("Adobe", "Japan1", 6))
    content = b"".join(b"BT /F1 20 Tf 1 0 0 1 %d 700 Tm <%s> Tj ET\n" % (x, s.encode("utf-16-be").hex().encode())
                       for x, s in ((100, "読む順番"), (150, "縦書きを"), (200, "日本語の")))
    w.add_page(content, resources=font_resources(font))
    return w.to_bytes()


def _form_page() -> bytes:
    """The words drawn inside a Form XObject (placed by its /Matrix), beside one in
    the page stream: their glyph records are not ``Page.glyphs`` (R2)."""
    w = PdfWriter()
    font = mono_font(w)
    form = w.form_xobject(b"BT /F1 20 Tf 0 0 Td (inside culture) Tj ET", bbox=(0, 0, 400, 50),
                          matrix=(1, 0, 0, 1, 72, 500), resources=font_resources(font))
    w.add_page(text_line(X, Y, b"(page culture) Tj", size=SIZE) + b"q /Fm1 Do Q\n",
               resources=font_resources(font, xobjects={"Fm1": form}))
    return w.to_bytes()


def _annotation_page() -> bytes:
    """A FreeText comment whose appearance draws a word: a viewer shows it, the
    index has it."""
    w = PdfWriter()
    font = mono_font(w)
    appearance = w.form_xobject(b"BT /F1 20 Tf 0 5 Td (noted culture) Tj ET", bbox=(0, 0, 200, 30),
                                resources=font_resources(font))
    annot = w.add({"Type": Name("Annot"), "Subtype": Name("FreeText"), "Rect": [72, 400, 272, 430],
                   "AP": {"N": appearance}, "Contents": b"noted culture"})
    w.add_page(text_line(X, Y, b"(page text) Tj", size=SIZE), resources=font_resources(font),
               page_attrs={"Annots": [annot]})
    return w.to_bytes()


#: "Mit" + a space glyph whose /ActualText is a soft hyphen + "arbeiter": the index
#: holds one word, Mitarbeiter (pdf.js issue 13226 draws its words so).
ACTUAL_TEXT = one_font_pdf(b"BT /F1 20 Tf 72 700 Td (Mit) Tj /Span <</ActualText <FEFF00AD>>> BDC ( ) Tj EMC "
                           b"(arbeiter hier) Tj ET")

PAGES = {
    "plain lines": mono_pdf([(72, 700, b"Free culture runs"), (72, 650, b"second line  here"), (72, 600, b"  ")]),
    "words placed by TJ gaps": one_font_pdf(text_line(72, 700, b"[(Free) -800 (culture) -800 (runs)] TJ", size=SIZE)),
    "words placed by Td": one_font_pdf(b"BT /F1 20 Tf 72 700 Td (Free) Tj 60 0 Td (culture) Tj 90 0 Td (runs) Tj ET"),
    "kerning inside a word": one_font_pdf(text_line(72, 700, b"[(cul) 30 (ture) -20 (s)] TJ", size=SIZE)),
    "accent drawn over its letter": one_font_pdf(text_line(72, 700, b"[(r\xb4) 500 (esum\xb4) 500 (e)] TJ", size=SIZE)),
    "ligature glyph": _ligature_page(),
    "cjk": cjk_pdf([["中文全文检索系统", "第二行文字"]], GB),
    "vertical columns": _vertical_page(),
    "hebrew in visual order": _hebrew_page(),
    "superscript": one_font_pdf(b"BT /F1 20 Tf 72 700 Td (E=mc) Tj 5 Ts (2) Tj 0 Ts ( here) Tj ET"),
    "outside the crop box": mono_pdf([(72, 700, b"kept"), (72, 100, b"cropped")], crop_box=(0, 400, 612, 792)),
    "form xobject": _form_page(),
    "annotation appearance": _annotation_page(),
    "actual text": ACTUAL_TEXT,
}


@pytest.mark.parametrize("name", list(PAGES))
def test_page_words_rebuild_the_page_text_with_each_characters_glyph(name: str) -> None:
    extracted_page = pipeline.extract(PAGES[name], keep_glyphs=True).pages[0]
    glyphs, box = text_glyphs(pipeline.PdfFile(PAGES[name]), 1)
    assert box == extracted_page.box
    words = page_words(glyphs, box)
    assert words.text == extracted_page.text
    assert extracted_page.text.strip()
    assert len(words.owners) == len(words.text)
    for ch, owner in zip(words.text, words.owners, strict=True):
        if owner is None:
            assert ch in " \n", f"{ch!r} has no glyph"
            continue
        glyph_text = unicodedata.normalize("NFKC", words.glyphs[owner].text)
        assert unicodedata.normalize("NFKC", ch) in glyph_text, f"{ch!r} said to come from {glyph_text!r}"


@pytest.mark.parametrize("name", ["form xobject", "annotation appearance", "actual text"])
def test_the_page_streams_own_glyphs_alone_would_miss_words(name: str) -> None:
    """Why marks take text_glyphs, not Page.glyphs: forms, annotation appearances
    and ActualText are in the indexed text, not in the kept records."""
    extracted_page = pipeline.extract(PAGES[name], keep_glyphs=True).pages[0]
    assert page_words(extracted_page.glyphs, extracted_page.box).text != extracted_page.text


def test_text_glyphs_keep_at_most_their_limit() -> None:
    glyphs, _ = text_glyphs(pipeline.PdfFile(PAGES["plain lines"]), 1, limit=5)
    assert [g.text for g in glyphs] == list("Free ")


def test_a_composed_accent_and_a_ligature_lead_to_their_glyphs() -> None:
    accent = pipeline.extract(PAGES["accent drawn over its letter"], keep_glyphs=True).pages[0]
    words = page_words(accent.glyphs, accent.box)
    assert words.text == "résumé"
    assert [words.glyphs[o].text for o in words.owners] == ["r", "é", "s", "u", "m", "é"]
    liga = pipeline.extract(PAGES["ligature glyph"], keep_glyphs=True).pages[0]
    words = page_words(liga.glyphs, liga.box)
    assert words.text == "finance ace"
    assert words.owners[0] is not None and words.owners[0] == words.owners[1]  # "f" and "i": one glyph
    assert words.glyphs_of(0, 7) == list(range(6))


def test_hebrew_characters_lead_to_the_glyphs_that_drew_them() -> None:
    hebrew = pipeline.extract(PAGES["hebrew in visual order"], keep_glyphs=True).pages[0]
    words = page_words(hebrew.glyphs, hebrew.box)
    assert words.text == "שלום עולם"
    for ch, owner in zip(words.text, words.owners, strict=True):
        assert owner is None or words.glyphs[owner].text == ch


def test_a_token_across_two_lines_gets_a_box_on_each() -> None:
    data = cjk_pdf([["中文", "全文"]], GB)
    extracted_page = pipeline.extract(data, keep_glyphs=True).pages[0]
    words = page_words(extracted_page.glyphs, extracted_page.box)
    assert words.text == "中文\n全文"
    quads = span_quads(words, matching_spans("en", words.text, {"文全"}))
    assert len(quads) == 2
    (first, second) = quads
    assert first[0] == pytest.approx(84) and first[2] == pytest.approx(96) and first[1] == pytest.approx(717.6)
    assert second[0] == pytest.approx(72) and second[2] == pytest.approx(84) and second[1] == pytest.approx(693.6)


def test_boxes_are_capped_per_page() -> None:
    data = mono_pdf([(X, 700 - 30 * i, b"a a a a a a a a a a") for i in range(5)])
    pdf = pipeline.PdfFile(data)
    glyphs, box = text_glyphs(pdf, 1)
    assert len(mark_quads(glyphs, box, lambda text: matching_spans("none", text, {"a"}))) == 50
    assert len(mark_quads(glyphs, box, lambda text: matching_spans("none", text, {"a"}), limit=7)) == 7


def test_an_unknown_language_still_marks_unstemmed_words() -> None:
    quads = page_marks(pipeline.PdfFile(PAGES["plain lines"]), 1, {"culture"}, "xx")
    assert len(quads) == 1
    assert page_marks(pipeline.PdfFile(PAGES["plain lines"]), 1, {"cultur"}, "xx") == []


def test_page_marks_of_no_terms_extract_nothing() -> None:
    assert page_marks(pipeline.PdfFile(PAGES["plain lines"]), 1, set(), "en") == []


# ---- the image: boxes where the words are --------------------------------------------------------------------

@pytest.mark.usefixtures("engine")
def test_a_plain_word_is_boxed_where_it_is_drawn(tmp_path: Path) -> None:
    data = mono_pdf([(X, Y, LINE), (X, 600, b"another line")])
    index = index_of(tmp_path, data)
    png = marked_png(data, 1, index.terms_to_mark("culture"), index.language)
    img = image_of(png)
    assert img.size == (1000, round(792 * 1000 / 612))
    assert_marks_exactly(img, [device_rect(data, word_rect(X, Y, LINE, b"culture"), img.size)])


@pytest.mark.parametrize(("drawn", "query"), [(b"r\xe9sum\xe9", "resume"), (b"resume", "Résumé"),
                                              (b"CAF\xc9", "café")])
@pytest.mark.usefixtures("engine")
def test_a_folded_accent_is_marked(tmp_path: Path, drawn: bytes, query: str) -> None:
    line = b"the " + drawn + b" here"
    data = mono_pdf([(X, Y, line)])
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark(query), index.language))
    assert_marks_exactly(img, [device_rect(data, word_rect(X, Y, line, drawn), img.size)])


@pytest.mark.usefixtures("engine")
def test_a_stem_is_marked(tmp_path: Path) -> None:
    line = b"she runs and ran"
    data = mono_pdf([(X, Y, line)])
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark("running"), index.language))
    assert_marks_exactly(img, [device_rect(data, word_rect(X, Y, line, b"runs"), img.size)])


@pytest.mark.usefixtures("engine")
def test_words_drawn_by_a_form_and_an_annotation_are_marked(tmp_path: Path) -> None:
    form, note = PAGES["form xobject"], PAGES["annotation appearance"]
    index = index_of(tmp_path, form, note)
    terms = index.terms_to_mark("culture")
    img = image_of(marked_png(form, 1, terms, index.language))
    assert_marks_exactly(img, [device_rect(form, word_rect(X, Y, b"page culture", b"culture"), img.size),
                               device_rect(form, word_rect(72, 500, b"inside culture", b"culture"), img.size)])
    img = image_of(marked_png(note, 1, terms, index.language))
    assert_marks_exactly(img, [device_rect(note, word_rect(72, 405, b"noted culture", b"culture"), img.size)])


@pytest.mark.usefixtures("engine")
def test_a_word_joined_by_actual_text_is_one_box(tmp_path: Path) -> None:
    index = index_of(tmp_path, ACTUAL_TEXT)
    terms = index.terms_to_mark("Mitarbeiter")
    assert terms == {"mitarbeit"}
    img = image_of(marked_png(ACTUAL_TEXT, 1, terms, index.language))
    # "Mit", the space glyph standing for the soft hyphen, "arbeiter": one box
    assert_marks_exactly(img, [device_rect(ACTUAL_TEXT, (72, 696, 72 + 12 * 10, 716), img.size)])


@pytest.mark.usefixtures("engine")
def test_every_occurrence_and_a_phrase_word_elsewhere_are_marked(tmp_path: Path) -> None:
    data = mono_pdf([(X, Y, b"free culture"), (X, 600, b"culture is free")])
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark('"free culture"'), index.language))
    rects = [word_rect(X, Y, b"free culture", b"free"), word_rect(X, Y, b"free culture", b"culture"),
             word_rect(X, 600, b"culture is free", b"culture"),
             word_rect(X, 600, b"culture is free", b"free")]
    assert_marks_exactly(img, [device_rect(data, r, img.size) for r in rects])


def _cjk_char_rect(k: int, n: int = 1) -> Rect:
    """Characters k..k+n-1 of the first line of cjk_pdf: 12 pt apart from x 72."""
    return (72 + 12 * k, 720 - 2.4, 72 + 12 * (k + n), 720 + 9.6)


@pytest.mark.parametrize(("query", "chars"), [("文检", [(3, 2)]), ("文", [(1, 1), (3, 1)]), ("检索系统", [(4, 4)])])
@pytest.mark.usefixtures("engine")
def test_a_cjk_word_inside_a_run_marks_just_its_characters(tmp_path: Path, query: str,
                                                          chars: list[tuple[int, int]]) -> None:
    data = cjk_pdf([["中文全文检索系统"]], GB)
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark(query), index.language))
    # pdfium has no font for the CID font here: boxes without ink
    assert_marks_exactly(img, [device_rect(data, _cjk_char_rect(k, n), img.size) for k, n in chars], ink=False)


ROTATIONS = [0, 90, 180, 270]
CROP = (100.0, 200.0, 400.0, 750.0)


@pytest.mark.parametrize("crop", [None, CROP], ids=["media box", "crop box off the origin"])
@pytest.mark.parametrize("rotate", ROTATIONS)
@pytest.mark.usefixtures("engine")
def test_boxes_follow_the_page_rotation_and_crop_box(tmp_path: Path, rotate: int, crop: Rect | None) -> None:
    line = b"Free culture"
    data = mono_pdf([(150, 600, line)], rotate=rotate, crop_box=crop)
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark("culture"), index.language, 800))
    box = crop or (0, 0, 612, 792)
    w, h = box[2] - box[0], box[3] - box[1]
    if rotate in (90, 270):
        w, h = h, w
    assert img.size == (800, round(h * 800 / w))
    expected = device_rect(data, word_rect(150, 600, line, b"culture"), img.size)
    if rotate in (90, 270):  # the word's box stands upright on the image
        assert expected[3] - expected[1] > expected[2] - expected[0]
    assert_marks_exactly(img, [expected])


def test_boxes_of_our_own_mapping_agree_with_pdfium_everywhere() -> None:
    for rotate in ROTATIONS:
        for crop in (None, CROP, (-50.0, 20.0, 300.0, 500.0)):
            data = mono_pdf([(150, 300, b"x")], rotate=rotate, crop_box=crop)
            document = pdfium.PdfDocument(data)
            pdf_page = document[0]
            box = pdf_page.get_bbox()
            size = (700, 900) if rotate in (0, 180) else (900, 700)
            for x, y in ((box[0], box[1]), (box[2], box[3]), (150.0, 300.0), (box[0] + 7.0, box[3] - 11.0)):
                dx, dy = ctypes.c_int(), ctypes.c_int()
                pdfium_c.FPDF_PageToDevice(pdf_page, 0, 0, size[0], size[1], 0, x, y,
                                           ctypes.byref(dx), ctypes.byref(dy))
                ((px, py),) = to_pixels((x, y), box, rotate, size)
                assert abs(px - dx.value) <= 1 and abs(py - dy.value) <= 1, (rotate, crop, (x, y))
            pdf_page.close()
            document.close()


@pytest.mark.usefixtures("engine")
def test_a_rotated_line_gets_a_rotated_box(tmp_path: Path) -> None:
    """A line drawn at 45°: the box is the rotated rectangle of its glyphs (a
    polygon), not the upright rectangle around them."""
    c = math.cos(math.pi / 4)
    data = one_font_pdf(b"BT /F1 20 Tf %f %f %f %f 200 300 Tm (go culture) Tj ET" % (c, c, -c, c))
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark("culture"), index.language))
    mask = marked(img)

    def user(a: float, b: float) -> tuple[float, float]:  # a along the line, b across it
        return (200 + a * c - b * c, 300 + a * c + b * c)

    corners = [user(3 * 10, -4), user(10 * 10, -4), user(10 * 10, 16), user(3 * 10, 16)]
    scale = img.size[0] / 612
    pixels = [(x * scale, (792 - y) * scale) for x, y in corners]
    centre = (sum(p[0] for p in pixels) / 4, sum(p[1] for p in pixels) / 4)
    assert mask.getpixel((round(centre[0]), round(centre[1]))) == 255
    xs, ys = [p[0] for p in pixels], [p[1] for p in pixels]
    bbox = mask.getbbox()
    assert bbox is not None
    assert abs(bbox[0] - min(xs)) <= 2 and abs(bbox[2] - max(xs)) <= 2
    assert abs(bbox[1] - min(ys)) <= 2 and abs(bbox[3] - max(ys)) <= 2
    # the corners of the upright rectangle around it stay clear
    for x, y in ((min(xs) + 4, min(ys) + 4), (max(xs) - 4, max(ys) - 4)):
        assert mask.getpixel((round(x), round(y))) == 0
    # the word "go" before it is not marked
    go = user(10, 6)
    assert mask.getpixel((round(go[0] * scale), round((792 - go[1]) * scale))) == 0


@pytest.mark.parametrize("terms", [set(), {"zebra"}, {"cultur"}])
def test_a_page_without_a_match_has_no_box(terms: set[str]) -> None:
    data = mono_pdf([(X, Y, b"Free runs fast")])
    img = image_of(marked_png(data, 1, terms, "en"))
    assert marked(img).getbbox() is None
    assert img.convert("L").getextrema()[0] < 120  # the page itself was drawn


# ---- bounds and errors of one render ---------------------------------------------------------------

@pytest.mark.parametrize(("media_box", "width", "size"), [
    ((0, 0, 1, 100000), 1000, (1, MAX_HEIGHT)),       # a thread-thin page: capped in height
    ((0, 0, 100000, 1), 1000, (1000, 1)),
    ((0, 0, 14400, 14400), 5000, (MAX_WIDTH, MAX_WIDTH)),
    ((0, 0, 200, 14400), 2000, (56, MAX_HEIGHT)),
    ((0, 0, 612, 792), 10**9, (MAX_WIDTH, round(792 * MAX_WIDTH / 612))),
    ((0, 0, 612, 792), 1, (MIN_WIDTH, round(792 * MIN_WIDTH / 612))),
    ((0, 0, 612, 792), -5, (MIN_WIDTH, round(792 * MIN_WIDTH / 612))),
])
def test_image_size_is_clamped_in_pixels(media_box: Rect, width: int, size: tuple[int, int]) -> None:
    data = mono_pdf([(0, 0.5, b"culture")], size=0.5, media_box=media_box)
    started = time.perf_counter()
    img = image_of(marked_png(data, 1, {"cultur"}, "en", width))
    assert img.size == size
    assert img.size[0] * img.size[1] <= MAX_WIDTH * MAX_HEIGHT
    assert time.perf_counter() - started < 10


@pytest.mark.usefixtures("engine")
def test_a_crop_box_outside_the_media_box_draws_the_media_box(tmp_path: Path) -> None:
    data = mono_pdf([(X, Y, LINE)], crop_box=(700, 900, 800, 1000))
    index = index_of(tmp_path, data)
    img = image_of(marked_png(data, 1, index.terms_to_mark("culture"), index.language))
    assert img.size == (1000, round(792 * 1000 / 612))
    rect = word_rect(X, Y, LINE, b"culture")
    scale = 1000 / 612
    assert_marks_exactly(img, [(rect[0] * scale, (792 - rect[3]) * scale, rect[2] * scale, (792 - rect[1]) * scale)])


@pytest.mark.parametrize("number", [0, -1, 2, 10**12])
def test_a_page_out_of_range_is_refused(number: int) -> None:
    with pytest.raises(PageOutOfRange, match=r"<bytes>: no page -?\d+; the document has 1 page$"):
        marked_png(PAGES["plain lines"], number, {"free"}, "en")


def _encrypted(user: str) -> bytes:
    w = PdfWriter()
    w.encrypt(user, "owner-secret")
    w.add_page(text_line(X, Y, b"(Free culture runs fast) Tj", size=SIZE), resources=font_resources(mono_font(w)))
    return w.to_bytes()


def test_an_encrypted_file_needs_a_known_password() -> None:
    data = _encrypted("secret")
    with pytest.raises(DocumentEncrypted, match="encrypted; a password is required"):
        marked_png(data, 1, {"cultur"}, "en")
    with pytest.raises(DocumentEncrypted, match="no known password opens it"):
        marked_png(data, 1, {"cultur"}, "en", passwords=["wrong"])
    img = image_of(marked_png(data, 1, {"cultur"}, "en", passwords=["wrong", "secret"]))
    assert_marks_exactly(img, [device_rect(_encrypted(""), word_rect(X, Y, LINE, b"culture"), img.size)])


def test_a_file_with_an_empty_user_password_opens_without_one() -> None:
    img = image_of(marked_png(_encrypted(""), 1, {"cultur"}, "en"))
    assert marked(img).getbbox() is not None


@pytest.mark.parametrize("data", [b"", b"hello", b"%PDF-1.7\n" + b"\x00" * 100])
def test_what_is_not_a_pdf_is_unreadable(data: bytes) -> None:
    with pytest.raises(DocumentUnreadable, match=r"^<bytes>: "):
        marked_png(data, 1, {"free"}, "en")


def test_a_file_gone_or_changed_since_indexing_is_refused(tmp_path: Path) -> None:
    data = PAGES["plain lines"]
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    doc_hash = hashlib.sha256(data).hexdigest()
    assert file_png(path, doc_hash, 1, {"free"}, "en").startswith(b"\x89PNG")
    path.write_bytes(data + b"\n% appended\n")
    with pytest.raises(DocumentChanged, match=f"^{re.escape(str(path))}: the file has changed since it was indexed"):
        file_png(path, doc_hash, 1, {"free"}, "en")
    path.unlink()
    with pytest.raises(DocumentGone, match=f"^{re.escape(str(path))}: the file is gone"):
        file_png(path, doc_hash, 1, {"free"}, "en")
    with pytest.raises(DocumentGone, match="not a regular file"):
        file_png(tmp_path, doc_hash, 1, {"free"}, "en")
    with pytest.raises(DocumentGone, match="cannot read the file"):
        file_png(f"{tmp_path}/nul\0.pdf", doc_hash, 1, {"free"}, "en")


# ---- the pool: bounded, replaced when killed, cached ----------------------------------------------------

@pytest.fixture(scope="module")
def renderer() -> Iterator[PageRenderer]:
    with PageRenderer(processes=2, timeout=30.0, max_memory_mb=1024) as pool:
        yield pool


def _file(tmp_path: Path, data: bytes, name: str = "doc.pdf") -> tuple[Path, str]:
    path = tmp_path / name
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def _slow_pdf(lines: int = 20000) -> bytes:
    """A page whose glyph extraction takes seconds (26 glyphs a line, 1 pt each)."""
    line = b"BT /F1 1 Tf %d %d Td (abcdefghijklmnopqrstuvwxyz) Tj ET\n"
    return one_font_pdf(b"".join(line % (i % 600, (i // 600) % 790) for i in range(lines)))


def test_the_pool_renders_what_the_function_renders_and_caches_it(renderer: PageRenderer, tmp_path: Path) -> None:
    data = mono_pdf([(X, Y, LINE)])
    path, doc_hash = _file(tmp_path, data)
    before = renderer.renders
    png = renderer.png(path, 1, {"cultur"}, "en", 1000, doc_hash=doc_hash)
    assert png == marked_png(data, 1, {"cultur"}, "en", 1000)
    assert renderer.renders == before + 1
    assert renderer.png(path, 1, frozenset({"cultur"}), "en", 1000, doc_hash=doc_hash) == png
    assert renderer.png(path, 1, ["cultur", "cultur"], "en", 1000, doc_hash=doc_hash) == png
    assert renderer.renders == before + 1  # served from the cache
    renderer.png(path, 1, {"cultur"}, "en", 999, doc_hash=doc_hash)
    renderer.png(path, 1, {"cultur", "run"}, "en", 1000, doc_hash=doc_hash)
    renderer.png(path, 1, set(), "en", 1000, doc_hash=doc_hash)
    assert renderer.renders == before + 4
    # the width is clamped before the cache is asked: 5000 and 2000 are one image
    renderer.png(path, 1, set(), "en", 5000, doc_hash=doc_hash)
    renderer.png(path, 1, set(), "en", 2000, doc_hash=doc_hash)
    assert renderer.renders == before + 5


def test_the_pool_reports_each_error_as_its_own_kind(renderer: PageRenderer, tmp_path: Path) -> None:
    path, doc_hash = _file(tmp_path, PAGES["plain lines"])
    with pytest.raises(PageOutOfRange, match=f"^{re.escape(str(path))}: no page 3"):
        renderer.png(path, 3, {"free"}, "en", doc_hash=doc_hash)
    with pytest.raises(DocumentChanged):
        renderer.png(path, 1, {"free"}, "en", doc_hash="0" * 64)
    locked, locked_hash = _file(tmp_path, _encrypted("secret"), "locked.pdf")
    with pytest.raises(DocumentEncrypted, match=f"^{re.escape(str(locked))}: encrypted"):
        renderer.png(locked, 1, {"free"}, "en", doc_hash=locked_hash)
    broken, broken_hash = _file(tmp_path, b"%PDF-1.7\nnothing here", "broken.pdf")
    with pytest.raises(DocumentUnreadable, match=f"^{re.escape(str(broken))}: "):
        renderer.png(broken, 1, {"free"}, "en", doc_hash=broken_hash)
    with pytest.raises(DocumentGone, match="the file is gone"):
        renderer.png(tmp_path / "missing.pdf", 1, {"free"}, "en", doc_hash=doc_hash)
    with pytest.raises(DocumentGone, match="cannot read the file"):
        renderer.png(f"{tmp_path}/nul\0.pdf", 1, {"free"}, "en", doc_hash=doc_hash)
    with pytest.raises(DocumentGone, match="not a regular file"):
        renderer.png(tmp_path, 1, {"free"}, "en", doc_hash=doc_hash)
    fifo = tmp_path / "fifo.pdf"
    os.mkfifo(fifo)  # would block a reader for good
    started = time.monotonic()
    with pytest.raises(DocumentGone, match="not a regular file"):
        renderer.png(fifo, 1, {"free"}, "en", doc_hash=doc_hash)
    assert time.monotonic() - started < 5


def test_a_changed_or_deleted_file_is_not_served_from_the_cache(renderer: PageRenderer, tmp_path: Path) -> None:
    data = mono_pdf([(X, Y, LINE)])
    path, doc_hash = _file(tmp_path, data)
    renderer.png(path, 1, {"cultur"}, "en", 640, doc_hash=doc_hash)
    path.write_bytes(mono_pdf([(X, Y, b"Other culture here, longer")]))
    with pytest.raises(DocumentChanged):
        renderer.png(path, 1, {"cultur"}, "en", 640, doc_hash=doc_hash)
    path.unlink()
    with pytest.raises(DocumentGone):
        renderer.png(path, 1, {"cultur"}, "en", 640, doc_hash=doc_hash)


def test_the_cache_keeps_the_most_recent_within_its_bytes() -> None:
    cache = PngCache(max_bytes=100)
    cache.put("a", b"a" * 60)
    cache.put("b", b"b" * 30)
    assert cache.get("a") == b"a" * 60  # now the most recent
    cache.put("c", b"c" * 30)
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    assert cache.bytes == 90 <= cache.max_bytes
    cache.put("a", b"A" * 10)  # replaced, its bytes counted once
    assert cache.bytes == 40 and cache.get("a") == b"A" * 10
    cache.put("big", b"x" * 101)  # larger than the whole cache: not kept
    assert cache.get("big") is None and cache.bytes == 40
    cache.put("d", b"d" * 100)
    assert len(cache) == 1 and cache.bytes == 100
    nothing = PngCache(max_bytes=0)
    nothing.put("a", b"a")
    assert nothing.get("a") is None and nothing.bytes == 0


def test_the_renderers_cache_stays_within_its_bytes(tmp_path: Path) -> None:
    path, doc_hash = _file(tmp_path, mono_pdf([(X, Y, LINE)]))
    with PageRenderer(processes=1, timeout=30.0, cache_bytes=40_000) as pool:
        sizes = [len(pool.png(path, 1, {"cultur"}, "en", width, doc_hash=doc_hash)) for width in range(600, 1000, 50)]
        assert sum(sizes) > 40_000
        assert 0 < pool.cache.bytes <= 40_000
        assert len(pool.cache) < len(sizes)


def test_a_render_past_the_time_limit_is_killed_and_the_pool_goes_on(tmp_path: Path) -> None:
    slow, slow_hash = _file(tmp_path, _slow_pdf(), "slow.pdf")
    quick, quick_hash = _file(tmp_path, mono_pdf([(X, Y, LINE)]), "quick.pdf")
    with PageRenderer(processes=1, timeout=1.0, max_memory_mb=1024) as pool:
        assert pool.png(quick, 1, {"cultur"}, "en", doc_hash=quick_hash)  # started and warm
        (pid,) = pool.process_ids()
        started = time.monotonic()
        with pytest.raises(RenderTimeout, match=f"^{re.escape(str(slow))}: page 1 took longer than 1 s to render; stopped$"):
            pool.png(slow, 1, {"abcdefghijklmnopqrstuvwxyz"}, "en", doc_hash=slow_hash)
        assert time.monotonic() - started < 2.5
        (new_pid,) = pool.process_ids()
        assert new_pid != pid
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # the stuck one is gone, not left running
        img = image_of(pool.png(quick, 1, {"cultur"}, "en", 700, doc_hash=quick_hash))
        assert marked(img).getbbox() is not None


def test_a_render_process_that_dies_is_replaced(tmp_path: Path) -> None:
    slow, slow_hash = _file(tmp_path, _slow_pdf(), "slow.pdf")
    quick, quick_hash = _file(tmp_path, mono_pdf([(X, Y, LINE)]), "quick.pdf")
    with PageRenderer(processes=1, timeout=30.0) as pool:
        assert pool.png(quick, 1, set(), "en", doc_hash=quick_hash)
        (pid,) = pool.process_ids()
        errors: list[BaseException] = []

        def render() -> None:
            try:
                pool.png(slow, 1, {"abcdefghijklmnopqrstuvwxyz"}, "en", doc_hash=slow_hash)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=render)
        thread.start()
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)  # as the kernel does to a process over its memory
        thread.join(10)
        assert not thread.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], RenderFailed)
        assert "the render process died" in str(errors[0])
        assert pool.process_ids() != [pid]
        assert pool.png(quick, 1, {"cultur"}, "en", doc_hash=quick_hash).startswith(b"\x89PNG")


def test_render_processes_run_under_the_memory_cap(tmp_path: Path) -> None:
    quick, quick_hash = _file(tmp_path, mono_pdf([(X, Y, LINE)]))
    with PageRenderer(processes=2, timeout=30.0, max_memory_mb=700) as pool:
        pool.png(quick, 1, set(), "en", doc_hash=quick_hash)
        pool.png(quick, 1, {"cultur"}, "en", doc_hash=quick_hash)
        pids = pool.process_ids()
        assert len(pids) == 2
        for pid in pids:
            for _ in range(100):  # the second may still be starting
                limits = Path(f"/proc/{pid}/limits").read_text()
                line = next(row for row in limits.splitlines() if row.startswith("Max address space"))
                if line.split()[3] != "unlimited":
                    break
                time.sleep(0.05)
            assert line.split()[3] == str(700 * 1024 * 1024)


def test_a_busy_pool_refuses_after_waiting(tmp_path: Path) -> None:
    slow, slow_hash = _file(tmp_path, _slow_pdf(8000), "slow.pdf")
    quick, quick_hash = _file(tmp_path, mono_pdf([(X, Y, LINE)]), "quick.pdf")
    with PageRenderer(processes=1, timeout=30.0, wait=0.3) as pool:
        assert pool.png(quick, 1, set(), "en", doc_hash=quick_hash)
        done: list[bytes] = []
        thread = threading.Thread(target=lambda: done.append(
            pool.png(slow, 1, {"abcdefghijklmnopqrstuvwxyz"}, "en", doc_hash=slow_hash)))
        thread.start()
        time.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(RendererBusy, match=r"busy for 0\.3 s"):
            pool.png(quick, 1, {"cultur"}, "en", doc_hash=quick_hash)
        assert time.monotonic() - started < 1.5
        thread.join(30)
        assert done and done[0].startswith(b"\x89PNG")


def test_requests_from_many_threads_are_all_answered(renderer: PageRenderer, tmp_path: Path) -> None:
    data = mono_pdf([(X, Y, LINE)])
    path, doc_hash = _file(tmp_path, data)
    results: dict[int, bytes] = {}
    errors: list[BaseException] = []

    def request(width: int) -> None:
        try:
            results[width] = renderer.png(path, 1, {"cultur"}, "en", width, doc_hash=doc_hash)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=request, args=(300 + 10 * n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert sorted(results) == [300 + 10 * n for n in range(8)]
    for width, png in results.items():
        assert image_of(png).size[0] == width


def test_a_closed_renderer_refuses_and_its_processes_are_gone(tmp_path: Path) -> None:
    path, doc_hash = _file(tmp_path, mono_pdf([(X, Y, LINE)]))
    pool = PageRenderer(processes=2, timeout=30.0)
    pool.png(path, 1, set(), "en", doc_hash=doc_hash)
    pids = pool.process_ids()
    pool.close()
    with pytest.raises(RendererClosed):
        pool.png(path, 1, {"cultur"}, "en", doc_hash=doc_hash)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    pool.close()  # twice is harmless


def test_renderer_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="at least one process"):
        PageRenderer(processes=0)
    with pytest.raises(ValueError, match="timeout must be positive"):
        PageRenderer(timeout=0)


# ---- how long a marked page takes -----------------------------------------------------------------

def _text_page_pdf() -> bytes:
    """A page of running text in Helvetica (pdfium's own standard font), 52 lines."""
    w = PdfWriter()
    font = w.standard_font("Helvetica")
    words = ("the culture of free software grows where people share what they learn and running "
             "code runs everywhere").split()
    lines = [" ".join(words[(i + k) % len(words)] for k in range(14)) for i in range(52)]
    content = b"".join(b"BT /F1 10.5 Tf 54 %d Td (%s) Tj ET\n" % (750 - 13 * i, line.encode()) for i, line in enumerate(lines))
    w.add_page(content, resources=font_resources(font))
    return w.to_bytes()


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[math.ceil(0.95 * len(ordered)) - 1]


def test_render_time_of_a_marked_text_page(tmp_path: Path) -> None:
    data = _text_page_pdf()
    index = index_of(tmp_path, data)
    terms = index.terms_to_mark("culture running")
    assert terms == {"cultur", "run"}
    path, doc_hash = _file(tmp_path, data)
    assert marked(image_of(marked_png(data, 1, terms, index.language))).getbbox() is not None
    runs = 20
    inline = []
    for _ in range(runs):
        started = time.perf_counter()
        marked_png(data, 1, terms, index.language, 1000)
        inline.append(time.perf_counter() - started)
    pooled = []
    with PageRenderer(processes=1, timeout=30.0, cache_bytes=0) as pool:
        pool.png(path, 1, terms, index.language, 1000, doc_hash=doc_hash)  # start-up not counted
        for _ in range(runs):
            started = time.perf_counter()
            pool.png(path, 1, terms, index.language, 1000, doc_hash=doc_hash)
            pooled.append(time.perf_counter() - started)
        assert pool.renders == runs + 1
    p50, p95 = _percentiles(inline)
    q50, q95 = _percentiles(pooled)
    print(f"\nmarked text page, width 1000, {runs} renders: in-process p50 {p50 * 1000:.0f} ms, "
          f"p95 {p95 * 1000:.0f} ms; through the pool p50 {q50 * 1000:.0f} ms, p95 {q95 * 1000:.0f} ms")
    assert p95 < 1.0 and q95 < 1.0  # the issue's target for the served image is p95 <= 0.5 s


def test_each_error_suggests_the_status_the_api_documents() -> None:
    statuses = {PageOutOfRange: 404, DocumentGone: 404, DocumentChanged: 409, DocumentEncrypted: 409,
                DocumentUnreadable: 422, RenderTimeout: 503, RendererBusy: 503, RendererClosed: 503,
                RenderFailed: 500}
    assert {kind: kind.status for kind in statuses} == statuses
