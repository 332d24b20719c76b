"""OCR (issue 22): scanned pages read by the real Tesseract from real PDF bytes, no
mocks. The scans are our own born-digital pages rendered and put back as image-only
PDFs (tests/scans.py), so each test knows exactly which words a page shows and where
the source drew them; the CJK pages come from the producers corpus (embedded Noto CJK
fonts, which no test can draw without a CJK font of its own).

What is checked: the text, confidence and provenance of an OCR'd page; each word's box
against the source's glyphs (full-page scans, fax pixels, turned placements, /Rotate,
a rendered region); orientation; the degradations; languages chosen without being
told; the per-page decisions (decide.py); hostile images (in a child process with an
address-space cap); a missing engine; and ``pdfindex extract --ocr``.

OCR costs about a second a page, so each scan is read once per session (``_read``) and
the pages are small (half letter) with large type.
"""
from __future__ import annotations

import difflib
import itertools
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageOps

from pdfindex import pipeline
from pdfindex.cli.extract_cmd import page_json
from pdfindex.contract.problems import ProblemCode, code_of
from pdfindex.pipeline.geometry import Rect
from pdfindex.pipeline.images import PlacedImage, area_share, full_page_image
from pdfindex.pipeline.ocr.acquire import PageImage, PixelMap
from pdfindex.pipeline.ocr.decide import decide
from pdfindex.pipeline.ocr.options import OcrSettings
from pdfindex.pipeline.ocr.prepare import MIN_SLOPE, slope, straightened
from pdfindex.pipeline.ocr.words import OcrWord
from pdfindex.pipeline.quality import Quality
from tests import scans
from tests.pdfwriter import PdfWriter, tounicode_cmap

ROOT = Path(__file__).resolve().parents[1]
PAGE = (306.0, 396.0)  # half letter: small renders, quick reads
#: Eight lines of 16 pt Helvetica from the top of the page to near its bottom (a page
#: whose text fills it, as most do: orientation is judged on a band of the middle).
LINES = ["Quarterly report on harbour freight", "Shipping volumes rose sharply",
         "Seven vessels docked before noon", "Customs cleared every container",
         "The pilot boarded at dawn", "Cranes lifted timber and steel",
         "Tugboats guided the tanker home", "Invoices follow within a week"]
ACCENTED = ["Grüße aus Zürich und München", "Die Brücke über den Fluss ist schön",
            "Der Bäcker öffnet früh am Morgen", "Le garçon a reçu une lettre",
            "Une crème brûlée au café", "Élève déçu à la fenêtre",
            "Ça coûte très cher à Noël", "Straße Größe Mädchen Übung"]
#: A word box lies within this many points of where the source drew the word (the
#: source's box runs from descent to ascent over the advance; OCR's is the ink).
TOLERANCE = 2.5

Point = tuple[float, float]


# ----------------------------------------------------------------- source pages
def _text_pdf(lines: list[str], *, size: float = 16, top: float = 350, step: float = 42,
              rotate: int | None = None, to_unicode: Callable[[int], str] | None = None,
              render_mode: int = 0, page: tuple[float, float] = PAGE) -> bytes:
    """``lines`` in Helvetica (WinAnsi, so German and French accents draw), one under
    the other from ``top``; ``to_unicode`` gives the font a ToUnicode map that says
    ``to_unicode(code)`` for each code drawn (a map that lies)."""
    w = PdfWriter()
    codes = {c for line in lines for c in line.encode("cp1252")}
    attrs = None
    if to_unicode is not None:
        cmap = tounicode_cmap([(bytes([c]), to_unicode(c)) for c in sorted(codes)])
        attrs = {"ToUnicode": w.add_stream(cmap)}
    font = w.standard_font("Helvetica", encoding="WinAnsiEncoding", font_attrs=attrs)
    content = b"".join(b"BT /F1 %g Tf %d Tr 30 %g Td (%s) Tj ET\n" % (size, render_mode, top - step * k,
                                                                   line.encode("cp1252"))
                       for k, line in enumerate(lines))
    w.add_page(content, media_box=(0, 0, *page), resources={"Font": {"F1": font}}, rotate=rotate)
    return w.to_bytes()


ENGLISH = _text_pdf(LINES)
WORDS = " ".join(LINES).split()


@cache
def _scan(variant: str, **params: Any) -> bytes:
    return scans.scanned(ENGLISH, variant, **params)


@cache
def _read(pdf: bytes, mode: str = "auto") -> pipeline.Document:
    """Each document extracted with OCR once per session (tests only read it)."""
    return pipeline.extract(pdf, ocr=OcrSettings(mode=mode))


def _recall(expected: list[str], text: str) -> float:
    """The share of ``expected`` words that the text holds as words."""
    found = set(text.split())
    return sum(word in found for word in expected) / len(expected)


def _box(quad: tuple[float, ...]) -> Rect:
    return (min(quad[0::2]), min(quad[1::2]), max(quad[0::2]), max(quad[1::2]))


def _source_words(pdf: bytes) -> list[tuple[str, Rect]]:
    """Each word the born-digital page draws and its box (its glyphs' boxes joined),
    from the glyph records: words end at a space glyph, a new baseline or a gap (a
    table's cells)."""
    glyphs = pipeline.extract(pdf, keep_glyphs=True).pages[0].glyphs
    words: list[list[pipeline.Glyph]] = [[]]
    for glyph in glyphs:
        last = words[-1][-1] if words[-1] else None
        if glyph.text.isspace() or (last is not None and (abs(glyph.oy - last.oy) > 1
                                                          or min(glyph.quad[0::2]) - max(last.quad[0::2]) > 3)):
            words.append([])
        if not glyph.text.isspace():
            words[-1].append(glyph)
    return [("".join(g.text for g in word), _box(tuple(c for g in word for c in g.quad)))
            for word in words if word]


def _mapped(words: list[tuple[str, Rect]], to_page: Callable[[float, float], Point]) -> list[tuple[str, Rect]]:
    """Source word boxes carried onto another page by a point map (a turn, a placement)."""
    out = []
    for text, (x0, y0, x1, y1) in words:
        corners = [to_page(x, y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        out.append((text, _box(tuple(c for point in corners for c in point))))
    return out


def _turned(quarter_turns: int, size: tuple[float, float] = PAGE) -> Callable[[float, float], Point]:
    """Source page point → the point of a page that is the source turned
    ``quarter_turns`` clockwise (scans.rotate)."""
    width, height = size
    return {0: lambda x, y: (x, y), 1: lambda x, y: (y, width - x),
            2: lambda x, y: (width - x, height - y), 3: lambda x, y: (height - y, x)}[quarter_turns % 4]


def _near(ocr: Rect, source: Rect, tolerance: float) -> bool:
    """OCR's ink box inside the source's word box (grown by ``tolerance``), and covering
    most of its length along the line, whichever way the line runs."""
    inside = (ocr[0] >= source[0] - tolerance and ocr[1] >= source[1] - tolerance
              and ocr[2] <= source[2] + tolerance and ocr[3] <= source[3] + tolerance)
    along = max(source[2] - source[0], source[3] - source[1])
    return inside and max(ocr[2] - ocr[0], ocr[3] - ocr[1]) >= 0.7 * along - tolerance


def _check_boxes(words: tuple[OcrWord, ...], source: list[tuple[str, Rect]], direction: Point,
                 tolerance: float = TOLERANCE) -> None:
    """Every source word read at its place, and no OCR word anywhere else."""
    assert words, "OCR read no words"
    missed = [text for text, rect in source
              if not any(w.text == text and _near(_box(w.quad), rect, tolerance) for w in words)]
    assert len(missed) <= len(source) // 20, f"not read at their place: {missed}"
    stray = [(w.text, [round(v, 1) for v in _box(w.quad)]) for w in words
             if not any(_near(_box(w.quad), rect, tolerance) for _, rect in source)]
    assert not stray, f"OCR words where the source drew none: {stray}"
    for word in words:
        assert word.direction == pytest.approx(direction, abs=1e-6), word
        assert 0 <= word.confidence <= 100


def _assert_ocr_page(page: pipeline.Page, expected: list[str], recall: float = 0.95) -> None:
    assert page.source == "ocr", page.ocr_decision
    assert page.ocr is not None and page.ocr.confidence > 80, page.ocr
    assert _recall(expected, page.text) >= recall, page.text
    assert not [p for p in page.problems if code_of(p) == ProblemCode.OCR_FAILED], page.problems


# ------------------------------------------------------------------------ text
def test_a_clean_scan_reads_its_words_as_the_page_text() -> None:
    page = _read(_scan("clean")).pages[0]
    _assert_ocr_page(page, WORDS, recall=1.0)
    assert page.ocr is not None
    assert [line for line in page.text.split("\n") if line] == LINES  # line by line (blocks: a blank line)
    assert page.ocr.engine.startswith("tesseract 5")
    assert page.ocr.languages == "fra+deu+eng"  # the default languages, Latin ones read together
    assert page.ocr.words == len(page.ocr.boxes) == len(WORDS)
    assert page.ocr.low_share < 0.1
    assert page.ocr_decision.startswith("no text layer and images over")
    assert page.problems == []
    # the text map: the page text, each character owned by the word that drew it
    mapped = page.text_map
    assert mapped is not None and mapped.text == page.text and mapped.glyphs == page.ocr.boxes
    for index, word in enumerate(mapped.glyphs):
        assert "".join(c for c, owner in zip(mapped.text, mapped.owners, strict=True) if owner == index) == word.text
    # extract --json: an OCR'd page no longer needs OCR; its source, engine and why
    shown = page_json(page)
    assert shown["needs_ocr"] is False and shown["source"] == "ocr" and shown["text"] == page.text
    assert isinstance(shown["ocr"], dict) and shown["ocr"]["confidence"] == page.ocr.confidence
    assert shown["ocr"]["words"] == len(WORDS) and shown["ocr"]["languages"] == "fra+deu+eng"
    assert shown["ocr_decision"] == page.ocr_decision and shown["problems"] == []


def test_a_scan_read_with_ocr_off_still_needs_ocr() -> None:
    page = _read(_scan("clean"), "off").pages[0]
    assert (page.text, page.source, page.ocr, page.ocr_decision) == ("", "text", None, "OCR is off")
    shown = page_json(page)
    assert shown["needs_ocr"] is True and shown["ocr"] is None and shown["source"] == "text"


# ----------------------------------------------------------------------- boxes
@pytest.mark.parametrize(("variant", "params"), [
    ("clean", {}),
    ("fax", {}),  # 200 x 100 dpi pixels, squared before reading
    ("rotated", {"quarter_turns": 1, "placement": True}),  # pixels stored sideways, the CTM turns them
    ("rotated", {"quarter_turns": 3, "placement": True}),
], ids=["clean", "fax", "placed-90", "placed-270"])
def test_word_boxes_lie_where_the_source_drew_the_words(variant: str, params: dict[str, Any]) -> None:
    """The page shows the source upright, so each word lies where the source drew it."""
    page = _read(_scan(variant, **params)).pages[0]
    _assert_ocr_page(page, WORDS)
    assert page.ocr is not None and page.text_map is not None
    assert page.text_map.glyphs == page.ocr.boxes
    _check_boxes(page.ocr.boxes, _source_words(ENGLISH), (1.0, 0.0))


def test_word_boxes_of_a_sideways_scan_shown_upright_by_rotate() -> None:
    """A scanner's sideways sheet: the image drawn as stored (its lines run down the
    page) and /Rotate 270 to show it upright. Words land in user space, along the
    lines as they run there, whatever /Rotate says."""
    img = scans.rotate(scans.render_pages(ENGLISH, 300)[0], 1)
    w = PdfWriter()
    image = scans.image_xobject(w, scans.ScanPage(img, (300, 300)))
    width, height = PAGE[1], PAGE[0]
    w.add_page(b"q %g 0 0 %g 0 0 cm /Im0 Do Q\n" % (width, height), media_box=(0, 0, width, height),
               resources={"XObject": {"Im0": image}}, rotate=270)
    page = _read(w.to_bytes()).pages[0]
    assert page.rotation == 270
    _assert_ocr_page(page, WORDS)
    assert page.ocr is not None
    _check_boxes(page.ocr.boxes, _mapped(_source_words(ENGLISH), _turned(1)), (0.0, -1.0))


def test_forced_ocr_of_a_rotated_page_puts_words_on_its_glyphs() -> None:
    """A born-digital page with /Rotate 90, OCR forced: it is rendered (no scan to read),
    its rotation undone, and each word lands on the glyphs of the text layer."""
    pdf = _text_pdf(LINES, rotate=90)
    page = _read(pdf, "force").pages[0]
    assert re.fullmatch(r"OCR forced; OCR's text indexed in place of the text layer \(confidence \d+ %\)",
                        page.ocr_decision), page.ocr_decision
    _assert_ocr_page(page, WORDS)
    assert page.ocr is not None and page.text_map is not None
    _check_boxes(page.ocr.boxes, _source_words(pdf), (1.0, 0.0))


# ----------------------------------------------------------------- orientation
#: A short memo: three lines at the top of the page, nothing in its middle band.
MEMO = _text_pdf(LINES[:3], top=340, step=30)


@pytest.mark.parametrize(("source", "quarter_turns"), [(ENGLISH, 1), (ENGLISH, 2), (ENGLISH, 3), (MEMO, 2)],
                         ids=["sideways-90", "upside-down", "sideways-270", "memo-upside-down"])
def test_a_sheet_put_in_turned_reads_right(source: bytes, quarter_turns: int) -> None:
    """The pixels turned (the sheet went in turned; the page is as turned): the text
    reads right, and each word lies where the turned page shows it."""
    page = _read(scans.scanned(source, "rotated", quarter_turns=quarter_turns)).pages[0]
    words = _source_words(source)
    _assert_ocr_page(page, [text for text, _ in words])
    assert page.ocr is not None and page.ocr.how.endswith(f"turned {quarter_turns * 90}°")  # counter-clockwise
    direction = {1: (0.0, -1.0), 2: (-1.0, 0.0), 3: (0.0, 1.0)}[quarter_turns]
    _check_boxes(page.ocr.boxes, _mapped(words, _turned(quarter_turns)), direction)


# ---------------------------------------------------------------- degradations
@pytest.mark.parametrize(("variant", "params"), [
    ("skew", {"degrees": 2.5}), ("skew", {"degrees": -1.0}), ("jpeg", {"quality": 40}),
    ("fax", {}), ("fax", {"g4": True}), ("phone", {"seed": 3}),
], ids=["skew-2.5", "skew--1", "jpeg-40", "fax", "fax-g4", "phone"])
def test_each_degradation_reads_its_words(variant: str, params: dict[str, Any]) -> None:
    page = _read(_scan(variant, **params)).pages[0]
    _assert_ocr_page(page, WORDS, recall=0.9)


#: A ruled table (reportlab's kind: a grid of 0.6 pt rules), alone on its page.
TABLE = [["Often", "Identify", "Suffix"], ["coffee", "8%", "1997"], ["identify", "245", "2001"],
         ["files", "2016", "5%"], ["five", "51,742", "18.74"], ["flight", "91%", "1995"], ["left", "2018", "50%"]]


def _table_pdf(x0: float = 40, top: float = 330, widths: tuple[float, ...] = (70, 60, 50),
               row: float = 18) -> bytes:
    w = PdfWriter()
    font = w.standard_font("Times-Roman", encoding="WinAnsiEncoding")
    edges = [x0 + sum(widths[:k]) for k in range(len(widths) + 1)]
    bottom = top - row * len(TABLE)
    content = [b"BT /F1 10 Tf %g %g Td (%s) Tj ET\n" % (edges[c] + 4, top - row * (r + 1) + 5, cell.encode())
               for r, cells in enumerate(TABLE) for c, cell in enumerate(cells)]
    content.append(b"0.6 w\n")
    content += [b"%g %g m %g %g l S\n" % (x0, top - row * r, edges[-1], top - row * r) for r in range(len(TABLE) + 1)]
    content += [b"%g %g m %g %g l S\n" % (x, top, x, bottom) for x in edges]
    w.add_page(b"".join(content), media_box=(0, 0, *PAGE), resources={"Font": {"F1": font}})
    return w.to_bytes()


def _askew(degrees: float, scan_page: Rect) -> Callable[[float, float], Point]:
    """Source page point → the point of its scan fed ``degrees`` askew (scans.skew: the
    render turned counter-clockwise about its centre, the canvas grown to hold it)."""
    cos, sin = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    width, height = PAGE
    grown_w, grown_h = scan_page[2] - scan_page[0], scan_page[3] - scan_page[1]

    def to_page(x: float, y: float) -> Point:
        dx, dy = x - width / 2, (height - y) - height / 2  # from the centre, y downwards as in the image
        return (grown_w / 2 + dx * cos + dy * sin, grown_h - (grown_h / 2 - dx * sin + dy * cos))
    return to_page


@pytest.mark.parametrize("degrees", [2.8, -2.8])
def test_a_ruled_table_fed_askew_is_straightened_and_read(degrees: float) -> None:
    """Tesseract copes with sloping running text, but took this table sloping 2.8° for a
    picture: it read nothing (or, unable to tell, Chinese). The page is straightened
    first; its words read, and each lies where the askew scan shows it."""
    pdf = _table_pdf()
    page = _read(scans.scanned(pdf, "skew", degrees=degrees)).pages[0]
    cells = [cell for cells in TABLE for cell in cells]
    _assert_ocr_page(page, cells, recall=1.0)
    assert page.ocr is not None and page.ocr.how.startswith("straightened by ")
    turn = float(page.ocr.how.split()[2].rstrip("°;"))
    assert turn == pytest.approx(-degrees, abs=0.3)
    source = _mapped(_source_words(pdf), _askew(degrees, page.box))
    for word in page.ocr.boxes:
        assert word.direction == pytest.approx((math.cos(math.radians(degrees)), math.sin(math.radians(degrees))),
                                               abs=0.01), word
        assert any(text == word.text and _near(_box(word.quad), rect, 4.0) for text, rect in source), word


def test_slope_finds_the_turn_that_straightens_lines_either_way() -> None:
    """The slope of lines across (rows of ink) and down (a sheet put in sideways), and
    none on a straight page, a blank one or noise."""
    straight = scans.render_pages(ENGLISH, 150)[0]
    assert slope(straight) == 0.0
    for degrees in (3.0, -1.2, 4.5):
        fed = scans.skew(straight, degrees)
        assert slope(fed) == pytest.approx(-degrees, abs=0.2)
        assert slope(scans.rotate(fed, 1)) == pytest.approx(-degrees, abs=0.2)
    assert abs(slope(Image.new("L", (800, 1000), 255))) < MIN_SLOPE
    assert abs(slope(scans.noise_image((800, 1000)))) < MIN_SLOPE


def test_straightened_pixels_still_map_to_their_page_points() -> None:
    """A pixel's place on the page survives the turn: the ink of one dot, found in the
    straightened image, maps to the page point the dot was drawn at."""
    image = Image.new("L", (600, 800), 255)
    image.paste(0, (400, 150, 406, 156))
    page = PageImage(image, (300.0, 300.0), PixelMap((0.24, 0.0, 0.0, -0.24, 10.0, 200.0)), "image")
    turned = straightened(page, 3.0)
    assert turned.straightened == 3.0 and turned.image.size[0] > 600
    left, top, right, bottom = ImageOps.invert(turned.image).point(lambda v: 255 if v > 128 else 0).getbbox()
    assert turned.map.point((left + right) / 2, (top + bottom) / 2) == pytest.approx(page.map.point(403, 153), abs=0.5)


# ------------------------------------------------------------------- languages
def test_german_and_french_accents_read_without_being_told_the_language() -> None:
    page = _read(scans.scanned(_text_pdf(ACCENTED), "clean")).pages[0]
    expected = " ".join(ACCENTED).split()
    _assert_ocr_page(page, expected, recall=0.7)
    assert page.ocr is not None and page.ocr.languages == "fra+deu+eng"
    read = set(page.text.split())
    assert {"Grüße", "Zürich", "Brücke", "über", "schön", "Straße", "Größe", "Mädchen", "Übung"} <= read
    assert {"garçon", "reçu", "crème", "café"} <= read


def _producer(producers: Path, name: str) -> tuple[bytes, str]:
    return (producers / f"{name}.pdf").read_bytes(), (producers / f"{name}.txt").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_korean_scan_reads_as_korean_with_its_spaces(producers: Path) -> None:
    pdf, truth = _producer(producers, "chromium__ko")
    page = _read(scans.scanned(pdf, "clean")).pages[0]
    _assert_ocr_page(page, truth.split(), recall=0.9)  # whole words: the spaces between them kept
    assert page.ocr is not None and page.ocr.languages == "kor"
    assert "OSD: " in page.ocr.how and "read as kor" in page.ocr.how


def _similarity(truth: str, text: str) -> float:
    """Characters in common, white space aside (Japanese writes none)."""
    a, b = re.sub(r"\s", "", truth), re.sub(r"\s", "", text)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@pytest.mark.slow
def test_a_vertical_japanese_scan_reads_in_columns(producers: Path) -> None:
    pdf, truth = _producer(producers, "chromium__ja_vertical")
    page = _read(scans.scanned(pdf, "clean")).pages[0]
    assert page.source == "ocr" and page.ocr is not None and page.ocr.confidence > 80, page.ocr
    assert page.ocr.languages == "jpn_vert"
    assert _similarity(truth, page.text) >= 0.9, page.text
    assert " " not in page.text.strip()  # no space between Han and kana
    # the words run down the page, in columns read from the right
    boxes = [_box(w.quad) for w in page.ocr.boxes]
    downwards = [w for w in page.ocr.boxes if w.direction == pytest.approx((0.0, -1.0), abs=1e-6)]
    assert len(downwards) >= 0.9 * len(boxes)
    middle = (page.box[0] + page.box[2]) / 2
    assert boxes[0][0] > middle > boxes[-1][2]
    same_column = [(a, b) for a, b in itertools.pairwise(boxes) if abs(a[0] - b[0]) < 5]
    assert sum(b[3] <= a[3] for a, b in same_column) >= 0.9 * len(same_column)


# ------------------------------------------------------------------- decisions
def _quality(glyphs: int = 0, coverage: float | None = None, suspect: str = "") -> Quality:
    needs = glyphs == 0 or bool(suspect) or (coverage is not None and coverage < 0.5)
    return Quality(glyphs, 0, coverage, needs, suspect)


def _image(box: Rect, pixels: tuple[int, int] = (1000, 1000), name: str = "/Im0") -> PlacedImage:
    x0, y0, x1, y1 = box
    return PlacedImage(name, 5, pixels[0], pixels[1], (x1 - x0, 0.0, 0.0, y1 - y0, x0, y0))


LETTER: Rect = (0.0, 0.0, 612.0, 792.0)
SCAN = _image(LETTER, (2550, 3300))


def test_decide_by_mode_and_by_what_the_page_holds() -> None:
    good, empty = _quality(500, 1.0), _quality()
    assert decide("off", empty, [SCAN], LETTER).action == "none"
    assert decide("off", empty, [SCAN], LETTER).why == "OCR is off"
    assert decide("force", good, [], LETTER).action == "page"
    assert decide("force", empty, [], LETTER).why == "OCR forced"
    scan = decide("auto", empty, [SCAN], LETTER)
    assert scan.action == "page" and scan.why == "no text layer and images over 100% of the page"
    poor = decide("auto", _quality(500, 0.3), [SCAN], LETTER)
    assert poor.action == "page" and poor.why.startswith("a text layer too poorly decoded to search")
    assert decide("auto", good, [SCAN], LETTER, texted=[(72, 700, 300, 712)]).why == "the text layer is good"
    assert decide("auto", good, [], LETTER, texted=[]).why == "the text layer is good"
    blank = decide("auto", empty, [], LETTER)
    assert blank.action == "none" and blank.why == "no text and no large image: nothing to read"
    logo = decide("auto", empty, [_image((72, 700, 144, 760))], LETTER)  # a logo is no scan
    assert logo.action == "none"
    suspect = decide("auto", _quality(500, 0.4, "text shifted"), [], LETTER)
    assert suspect.action == "page" and suspect.why == "its text layer is suspect (text shifted)"
    picture = _image((72, 100, 540, 500))  # a third of the page, no text over it
    regions = decide("auto", good, [picture], LETTER, texted=[(72, 700, 300, 712)])
    assert regions.action == "regions" and regions.regions == (picture,)
    covered = decide("auto", good, [picture], LETTER, texted=[(100, 300, 140, 312)])
    assert covered.action == "none"  # text over the image: a figure with labels, the layer has it


def test_a_good_text_page_is_never_ocrd_in_auto() -> None:
    page = _read(ENGLISH).pages[0]
    assert (page.source, page.ocr, page.ocr_decision) == ("text", None, "the text layer is good")
    assert page.text == "\n".join(LINES) and page.text_map is None


def test_a_blank_page_is_not_ocrd() -> None:
    w = PdfWriter()
    w.add_page(b"", media_box=(0, 0, *PAGE))
    page = _read(w.to_bytes()).pages[0]
    assert (page.text, page.source, page.ocr) == ("", "text", None)
    assert page.ocr_decision == "no text and no large image: nothing to read"
    assert page_json(page)["needs_ocr"] is True


def test_deferred_ocr_marks_the_page_and_reads_nothing() -> None:
    page = pipeline.extract(_scan("clean"), ocr=OcrSettings(defer=True)).pages[0]
    assert page.ocr_pending and page.ocr is None and page.text == "" and page.source == "text"
    assert page.ocr_decision.startswith("no text layer")


def test_a_mixed_file_reads_its_text_page_and_ocrs_its_scan() -> None:
    source = _two_pages()
    doc = _read(scans.scanned(source, "mixed"))
    first, second = doc.pages
    assert (first.source, first.ocr, first.ocr_decision) == ("text", None, "the text layer is good")
    assert first.text == "\n".join(LINES)
    _assert_ocr_page(second, " ".join(SECOND).split())


SECOND = ["Minutes of the harbour board", "Members approved the budget", "The meeting closed at four"]


def _two_pages() -> bytes:
    """The English page, then a second page of other words."""
    w = PdfWriter()
    font = w.standard_font("Helvetica")
    for lines in (LINES, SECOND):
        content = b"".join(b"BT /F1 16 Tf 30 %d Td (%s) Tj ET\n" % (350 - 42 * k, line.encode())
                           for k, line in enumerate(lines))
        w.add_page(content, media_box=(0, 0, *PAGE), resources={"Font": {"F1": font}})
    return w.to_bytes()


PASTED = ["Pasted receipt for lumber", "Paid in cash on Friday", "Signed by the foreman"]
#: Where the letter draws the pasted picture: 1.7 times the picture's own page.
PICTURE_AT = (68.0, 300.0, 1.7)


def _letter_with_a_pasted_scan() -> tuple[bytes, bytes]:
    """A typed letter (two lines of text) with a scanned receipt pasted below them,
    nothing typed over it; and the receipt's own born-digital page."""
    picture = _text_pdf(PASTED, top=150, step=40, page=(280, 180))
    w = PdfWriter()
    font = w.standard_font("Helvetica")
    image = scans.image_xobject(w, scans.ScanPage(scans.render_pages(picture, 300)[0], (300, 300)))
    x, y, scale = PICTURE_AT
    content = (b"BT /F1 14 Tf 72 720 Td (Dear committee members) Tj ET\n"
               b"BT /F1 14 Tf 72 700 Td (Please find the receipt below) Tj ET\n"
               b"q %g 0 0 %g %g %g cm /Im0 Do Q\n" % (280 * scale, 180 * scale, x, y))
    w.add_page(content, resources={"Font": {"F1": font}, "XObject": {"Im0": image}})
    return w.to_bytes(), picture


def test_an_image_without_text_on_a_text_page_is_read_and_appended() -> None:
    letter, picture = _letter_with_a_pasted_scan()
    page = _read(letter).pages[0]
    assert page.ocr_decision == "1 image without text on a page with a good text layer"
    assert page.source == "text+ocr"
    layer, _, pasted = page.text.partition("\n\n")
    assert layer == "Dear committee members\nPlease find the receipt below"  # the text layer first, as it was
    assert _recall(" ".join(PASTED).split(), pasted) == 1.0
    assert page.text_map is None  # the text map covers the text layer alone
    assert page.ocr is not None and page.ocr.confidence > 80
    x, y, scale = PICTURE_AT
    _check_boxes(page.ocr.boxes, _mapped(_source_words(picture), lambda u, v: (x + scale * u, y + scale * v)),
                 (1.0, 0.0), tolerance=TOLERANCE * scale)


#: The sentences of tests/test_plausibility.py: enough words for plausibility to judge.
SENTENCES = ["The quality of the text layer decides whether a page can be found by its words.",
             "Every extractor reads the same bytes, and most of them trust what the font says.",
             "When the map from codes to letters lies, the page looks fine and finds nothing.",
             "This sentence is here so that the page holds enough words for a fair judgement."]


def _lying(render_mode: int) -> bytes:
    """The sentences in Helvetica whose ToUnicode shifts every letter by three ("The"
    says "Wkh"), drawn (render mode 0: the real words are in the pixels) or not (3)."""
    return _text_pdf(SENTENCES, size=12, top=700, step=30, page=(612, 792), render_mode=render_mode,
                     to_unicode=lambda c: " " if c == 32 else chr(c + 3))


def test_a_suspect_text_layer_gives_way_to_the_words_in_its_pixels() -> None:
    page = _read(_lying(0)).pages[0]
    assert page.quality.suspect and "no vowel" in page.quality.suspect
    assert "Wkh" in pipeline.extract(_lying(0)).pages[0].text  # what the text layer says
    assert page.ocr_decision.startswith("its text layer is suspect (")
    assert re.search(r"; OCR's text indexed \(confidence \d+ %\)$", page.ocr_decision), page.ocr_decision
    _assert_ocr_page(page, re.sub(r"[.,]", "", " ".join(SENTENCES)).split(), recall=0.9)
    assert "Wkh" not in page.text
    assert ProblemCode.TEXT_SUSPECT in [code_of(p) for p in page.problems]  # the layer's problem stays said
    assert page_json(page)["needs_ocr"] is False


@pytest.mark.slow
def test_a_suspect_text_layer_is_kept_when_ocr_reads_worse() -> None:
    """The same lying layer, drawn invisibly over a blank page: OCR reads nothing, so
    the text layer, suspect as it is, stays the page's text, and the decision says so."""
    page = _read(_lying(3)).pages[0]
    assert page.quality.suspect
    assert page.source == "text" and page.text.startswith("Wkh txdolw|")
    assert page.ocr is not None and page.ocr.words == 0
    assert re.search(r"; the text layer kept \(coverage \d+% against OCR confidence 0 %\)$", page.ocr_decision)
    assert page_json(page)["needs_ocr"] is True


# ------------------------------------------------------------------ page images
def test_placed_image_geometry() -> None:
    fax = PlacedImage("/Im0", 5, 1700, 1100, (612.0, 0.0, 0.0, 792.0, 0.0, 0.0))
    assert fax.dpi == pytest.approx((200.0, 100.0))
    assert fax.quarter_turns == 0 and fax.bbox == (0.0, 0.0, 612.0, 792.0)
    for turns in range(4):  # the image's own sides, before the turn that makes it the page
        width, height = (612.0, 792.0) if turns % 2 == 0 else (792.0, 612.0)
        placed = PlacedImage("/Im0", 5, round(width * 300 / 72), round(height * 300 / 72),
                             scans.placement(width, height, turns))
        assert placed.quarter_turns == turns and placed.bbox == pytest.approx(LETTER)
        assert placed.dpi == pytest.approx((300.0, 300.0))
        assert full_page_image([placed], LETTER) is placed
    mirrored = PlacedImage("/Im0", 5, 100, 100, (-612.0, 0.0, 0.0, 792.0, 612.0, 0.0))
    assert mirrored.quarter_turns is None
    skewed = PlacedImage("/Im0", 5, 100, 100, (600.0, 20.0, -20.0, 780.0, 10.0, 0.0))
    assert skewed.quarter_turns is None and full_page_image([skewed], LETTER) is None
    assert full_page_image([SCAN], LETTER) is SCAN
    strips = [_image((0, 0, 612, 400)), _image((0, 400, 612, 792))]
    assert full_page_image(strips, LETTER) is None  # a page in strips is rendered
    assert area_share(strips, LETTER) == pytest.approx(1.0)
    assert area_share([_image((0, 0, 306, 792))], LETTER) == pytest.approx(0.5)
    assert area_share([], LETTER) == 0.0


# ---------------------------------------------------------------- hostile images
_CHILD = """
import json, sys, time
from pdfindex.workers.limits import limit_memory
limit_memory(int(sys.argv[2]))
from pdfindex.contract.problems import code_of
from pdfindex.pipeline import extract
from pdfindex.pipeline.ocr.options import OcrSettings
data = open(sys.argv[1], "rb").read()
started = time.monotonic()
page = extract(data, ocr=OcrSettings()).pages[0]
print(json.dumps({"seconds": time.monotonic() - started, "text": page.text, "source": page.source,
                  "decision": page.ocr_decision, "problems": [[code_of(p), str(p)] for p in page.problems]}))
"""
#: The child's address space: more than OCR of one page needs, far less than the
#: bomb's 1.6 GB, so that a regression fails the child and not the test machine.
CHILD_MEMORY_MB = 1024


#: The truncated JPEG smaller than its builder's default: OCR of 1000 x 1000 pixels of
#: noise costs 30-50 s (every language tried, band and whole page), for the same outcome.
HOSTILE_PARAMS: dict[str, dict[str, Any]] = {"truncated_jpeg": {"size": (300, 300)}}


@pytest.mark.slow
@pytest.mark.parametrize("kind", scans.HOSTILE_KINDS)
def test_a_hostile_image_is_a_page_problem_never_a_crash(kind: str, tmp_path: Path) -> None:
    """Each hostile image of tests/scans.py on a page whose text layer is HOSTILE_TEXT,
    read in a child process whose address space is capped."""
    path = tmp_path / f"{kind}.pdf"
    path.write_bytes(scans.hostile_pdf(kind, **HOSTILE_PARAMS.get(kind, {})))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDFINDEX_")}
    env.update(PDFINDEX_STRICT="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(CHILD_MEMORY_MB)], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["text"].startswith(scans.HOSTILE_TEXT.decode())  # the text layer survives
    failed = [message for code, message in result["problems"] if code == "ocr_failed"]
    assert failed or result["text"] == scans.HOSTILE_TEXT.decode(), result  # a problem, or nothing read
    assert result["seconds"] < 60, result
    if kind in ("flate_bomb", "huge_jpeg_header"):
        # refused from the declared size, before anything is decoded
        assert len(failed) == 1 and "over the OCR cap" in failed[0], result
        assert result["seconds"] < 2.0, result


# ------------------------------------------------------------ the command line
def _cli(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PDFINDEX_", "TESSDATA_"))}
    base.update(PYTHONIOENCODING="utf-8", PDFINDEX_STRICT="1", **env)
    return subprocess.run([sys.executable, "-m", "pdfindex.cli.main", *map(str, args)], cwd=ROOT, env=base,
                          capture_output=True, text=True, encoding="utf-8", timeout=180)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ocr")
    made = {"scan": _scan("clean"), "text": ENGLISH}
    for name, data in made.items():
        (folder / f"{name}.pdf").write_bytes(data)
    return {name: folder / f"{name}.pdf" for name in made}


def test_missing_language_data_is_one_clear_problem(files: dict[str, Path], tmp_path: Path) -> None:
    """No language data where PDFINDEX_TESSDATA points (the engine is one per process,
    hence a process of its own): the page stays needs_ocr with one problem saying what
    to install, and the command succeeds."""
    empty = tmp_path / "tessdata"
    empty.mkdir()
    done = _cli("extract", "--json", files["scan"], PDFINDEX_TESSDATA=str(empty))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (page,) = json.loads(done.stdout)["pages"]
    assert page["needs_ocr"] is True and page["source"] == "text" and page["ocr"] is None
    assert page["text"] == ""
    (problem,) = page["problems"]
    assert problem["code"] == "ocr_failed"
    assert "no Tesseract language data in the PDFINDEX_TESSDATA folder" in problem["message"], problem
    assert "apt-get install tesseract-ocr-{eng," in problem["message"] and "[cut]" not in problem["message"]


@pytest.mark.parametrize("languages", ["../x", "eng+../../etc/passwd"])
def test_a_bad_ocr_language_is_one_line_not_a_traceback(files: dict[str, Path], languages: str) -> None:
    done = _cli("extract", "--ocr-languages", languages, files["scan"])
    assert done.returncode in (1, 2)
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--ocr-languages" in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_cli_ocr_off_leaves_a_scan_without_text(files: dict[str, Path]) -> None:
    done = _cli("extract", "--ocr", "off", files["scan"])
    assert done.returncode == 0, done.stderr
    assert done.stdout == "\n"
    shown = _cli("extract", "--ocr", "off", "--json", files["scan"])
    (page,) = json.loads(shown.stdout)["pages"]
    assert (page["text"], page["needs_ocr"], page["source"], page["ocr"]) == ("", True, "text", None)
    assert page["ocr_decision"] == "OCR is off"


def test_cli_ocr_auto_reads_a_scan(files: dict[str, Path]) -> None:
    done = _cli("extract", files["scan"])
    assert done.returncode == 0, done.stderr
    assert _recall(WORDS, done.stdout) == 1.0


def test_cli_ocr_force_reads_a_born_digital_page(files: dict[str, Path]) -> None:
    done = _cli("extract", "--ocr", "force", "--json", files["text"])
    assert done.returncode == 0, done.stderr
    (page,) = json.loads(done.stdout)["pages"]
    assert {"source", "ocr", "ocr_decision", "needs_ocr"} <= page.keys()
    assert page["source"] == "ocr" and page["ocr_decision"].startswith("OCR forced")
    assert page["ocr"]["engine"].startswith("tesseract ") and page["ocr"]["confidence"] > 80
    assert {"languages", "low_confidence_share", "words", "how"} <= page["ocr"].keys()
    assert _recall(WORDS, page["text"]) >= 0.95 and page["needs_ocr"] is False
    plain = _cli("extract", "--json", files["text"])
    (page,) = json.loads(plain.stdout)["pages"]
    assert (page["source"], page["ocr"], page["ocr_decision"]) == ("text", None, "the text layer is good")
