"""R12 line breaks: a new line starts when the move from the previous glyph's
origin to the current one, projected on the normal of the previous glyph's
writing direction, exceeds half the larger of the two box heights.

Geometry: mono font (tests/builders.py), 0.5 em advance, box height = font size.
At 10 pt a glyph is 5 units wide and the break threshold is 5 units.
"""
from __future__ import annotations

import math

import pytest

from pdfindex import pipeline
from pdfindex.pipeline.document import PdfFile
from pdfindex.pipeline.explain import explain_page
from tests.builders import mono_font, one_font_pdf, page_of
from tests.pdfwriter import PdfWriter


def _text(content: bytes) -> str:
    return pipeline.extract(one_font_pdf(content)).pages[0].text


def _tm(angle: float, x: float, y: float, scale: float = 1.0) -> bytes:
    c, s = math.cos(math.radians(angle)) * scale, math.sin(math.radians(angle)) * scale
    return b"%.6f %.6f %.6f %.6f %.3f %.3f Tm" % (c, s, -s, c, x, y)


# ---- the threshold -------------------------------------------------------------

@pytest.mark.parametrize(("dy", "expected"), [
    (-6, "abc\ndef"),  # 6 > 5: new line
    (-4, "abcdef"),  # 4 < 5: same line (glyph end to origin gap is 0)
    (6, "abc\ndef"),  # moving up counts the same
    (4, "abcdef"),
    (-14, "abc\ndef"),
])
def test_new_line_when_move_across_exceeds_half_the_height(dy: int, expected: str) -> None:
    # "abc" spans 72..87; the Td puts "def" at x 87, offset dy across the line.
    assert _text(b"BT /F1 10 Tf 72 700 Td (abc) Tj 15 %d Td (def) Tj ET" % dy) == expected


def test_threshold_uses_the_larger_height_small_then_big() -> None:
    # 10 pt "abc" then 30 pt "DEF" 12 units lower: 12 < 30 / 2, same line.
    assert _text(b"BT /F1 10 Tf 72 700 Td (abc) Tj /F1 30 Tf 15 -12 Td (DEF) Tj ET") == "abcDEF"
    # 16 units lower: 16 > 15, new line.
    assert _text(b"BT /F1 10 Tf 72 700 Td (abc) Tj /F1 30 Tf 15 -16 Td (DEF) Tj ET") == "abc\nDEF"


def test_threshold_uses_the_larger_height_big_then_small() -> None:
    # 30 pt "ABC" spans 72..117; 10 pt "def" 12 lower: 12 < 15, same line.
    assert _text(b"BT /F1 30 Tf 72 700 Td (ABC) Tj /F1 10 Tf 45 -12 Td (def) Tj ET") == "ABCdef"
    assert _text(b"BT /F1 30 Tf 72 700 Td (ABC) Tj /F1 10 Tf 45 -16 Td (def) Tj ET") == "ABC\ndef"


def test_threshold_uses_box_height_not_tf_operand() -> None:
    # "1 Tf" with a 10x text matrix (Word export): the same geometry as 10 pt.
    content = (b"BT /F1 1 Tf 10 0 0 10 72 700 Tm (abc) Tj 1.5 -0.4 Td (def) Tj "
               b"-1.5 -1.4 Td (ghi) Tj ET")
    assert _text(content) == "abcdef\nghi"


def test_line_operators_t_star_quote_and_doublequote() -> None:
    content = b"BT /F1 10 Tf 14 TL 72 700 Td (one) Tj T* (two) Tj (three) ' 0 0 (four) \" ET"
    assert _text(content) == "one\ntwo\nthree\nfour"


# ---- superscripts, subscripts, captions ----------------------------------------

@pytest.mark.parametrize("rise", [3, 4, 7, 9])
def test_superscript_raised_with_ts_stays_glued_to_its_base(rise: int) -> None:
    # 6 pt "2" raised by Ts; 7 and 9 exceed half the larger height (5): the rise
    # is text state, not a line move.
    content = (b"BT /F1 10 Tf 72 700 Td (E=mc) Tj /F1 6 Tf %d Ts (2) Tj "
               b"/F1 10 Tf 0 Ts ( is famous) Tj ET" % rise)
    assert _text(content) == "E=mc2 is famous"


@pytest.mark.parametrize("rise", [-2, -4, -7])
def test_subscript_lowered_with_ts_stays_on_the_line(rise: int) -> None:
    content = b"BT /F1 10 Tf 72 700 Td (H) Tj /F1 6 Tf %d Ts (2) Tj /F1 10 Tf 0 Ts (O is water) Tj ET" % rise
    assert _text(content) == "H2O is water"


def test_superscript_raised_by_a_small_td_move_stays_on_the_line() -> None:
    # "E=mc" spans 72..92; "2" (6 pt, 3 wide) is drawn 4 units higher at 92, then
    # the line resumes at 95 on the baseline: moves of 4 < 5.
    content = (b"BT /F1 10 Tf 72 700 Td (E=mc) Tj 20 4 Td /F1 6 Tf (2) Tj "
               b"3 -4 Td /F1 10 Tf ( is famous) Tj ET")
    assert _text(content) == "E=mc2 is famous"


def test_superscript_then_next_line() -> None:
    content = (b"BT /F1 10 Tf 14 TL 72 700 Td (x) Tj /F1 6 Tf 7 Ts (2) Tj 0 Ts /F1 10 Tf "
               b"T* (next line) Tj ET")
    assert _text(content) == "x2\nnext line"


def test_small_caption_on_a_big_words_baseline_stays_on_the_line() -> None:
    # 40 pt "BIG" spans 72..132; an 8 pt caption at 140 on the same baseline.
    content = (b"BT /F1 40 Tf 72 700 Td (BIG) Tj ET BT /F1 8 Tf 140 700 Td (caption text) Tj ET "
               b"BT /F1 8 Tf 72 650 Td (next line) Tj ET")
    assert _text(content) == "BIG caption text\nnext line"


def test_big_word_after_a_small_caption_on_the_same_baseline() -> None:
    content = b"BT /F1 8 Tf 72 700 Td (Fig. 1) Tj ET BT /F1 40 Tf 110 700 Td (BIG) Tj ET"
    assert _text(content) == "Fig. 1 BIG"


# ---- rotated runs ----------------------------------------------------------------

@pytest.mark.parametrize("angle", [0, 30, 45, 90, 180, 270, -45])
def test_rotated_text_lines_give_lines_not_letters(angle: int) -> None:
    # Two lines of one text object in a rotated text matrix; T* moves across the
    # rotated writing direction by the leading (14 > 5).
    content = (b"BT /F1 10 Tf 14 TL " + _tm(angle, 300, 400)
               + b" (First line) Tj T* [(Second)-400(line)] TJ T* (Third) Tj ET")
    assert _text(content) == "First line\nSecond line\nThird"


def test_45_degree_watermark_is_one_line_with_its_words() -> None:
    content = (b"BT /F1 10 Tf 72 700 Td (Body text) Tj ET\n"
               b"q 0.8 g BT /F1 40 Tf " + _tm(45, 150, 200) + b" [(DRAFT)-500(COPY)] TJ ET Q\n"
               b"BT /F1 10 Tf 400 100 Td (More body) Tj ET\n")
    text = _text(content)
    assert text.split("\n") == ["Body text", "DRAFT COPY", "More body"]


def test_45_degree_watermark_with_word_export_matrix() -> None:
    # "1 Tf" and the size folded into a rotated text matrix.
    content = b"BT /F1 1 Tf " + _tm(45, 150, 200, scale=60) + b" (CONFIDENTIAL) Tj ET"
    assert _text(content) == "CONFIDENTIAL"


def test_rotation_by_ctm_behaves_like_rotated_tm() -> None:
    c = math.cos(math.radians(45))
    content = (b"q %.6f %.6f %.6f %.6f 200 200 cm BT /F1 30 Tf 0 0 Td [(DO)-50(NOT)-500(COPY)] TJ ET Q"
               % (c, c, -c, c))
    assert _text(content) == "DONOT COPY"


def test_90_degree_labels_each_give_one_line() -> None:
    content = (b"BT /F1 10 Tf " + _tm(90, 50, 200) + b" [(Axis)-400(one)] TJ ET\n"
               b"BT /F1 10 Tf " + _tm(90, 100, 200) + b" (Axis two) Tj ET\n"
               b"BT /F1 10 Tf " + _tm(270, 560, 600) + b" (Margin note) Tj ET\n")
    assert _text(content) == "Axis one\nAxis two\nMargin note"


@pytest.mark.parametrize("angle", [45, 90, 180, 270])
def test_superscript_in_rotated_text_stays_on_the_line(angle: int) -> None:
    # The rise is across the rotated writing direction: still not a line move.
    content = (b"BT /F1 10 Tf " + _tm(angle, 300, 300) + b" (E=mc) Tj /F1 6 Tf 7 Ts (2) Tj "
               b"/F1 10 Tf 0 Ts ( is famous) Tj ET")
    assert _text(content) == "E=mc2 is famous"


# ---- lines of different sizes drawn interleaved (issue 11) --------------------------------

def test_big_and_small_lines_drawn_interleaved_are_separate_lines() -> None:
    """A 100 pt word, a 10 pt word 45 pt below it, another 100 pt word, another small
    one: each move is under half the big height, but the small boxes share no height
    with the big ones, so they are other lines."""
    content = (b"BT /F1 100 Tf 72 600 Td (Big) Tj /F1 10 Tf 0 -45 Td (Small) Tj "
               b"/F1 100 Tf 0 45 Td ( Text) Tj /F1 10 Tf 0 -45 Td ( text) Tj ET")
    assert _text(content).split("\n") == ["Big", "Small", "Text", "text"]


def test_a_small_caption_on_the_big_words_baseline_stays_on_the_line() -> None:
    """What R12 protects: the boxes overlap (same baseline, or a little lower)."""
    for drop in (b"0", b"-5"):
        content = (b"BT /F1 40 Tf 72 600 Td (Total) Tj /F1 8 Tf 120 " + drop + b" Td (net) Tj ET")
        assert _text(content) == "Total net", drop


# ---- tight leading (issue 23) ---------------------------------------------------

def _tall_font_text(content: bytes) -> str:
    """The mono font with a box of 1.5 em (Ascent 1100, Descent -400), as display
    faces with tall accents declare."""
    w = PdfWriter()
    font = mono_font(w, descriptor={"Ascent": 1100, "Descent": -400})
    return page_of(content, {"F1": font}, w=w).text


@pytest.mark.parametrize("leading", [36, 40, 48, 60])
def test_big_type_with_leading_under_its_box_height_breaks(leading: int) -> None:
    """48 pt lines 36 pt apart, in a 1.5 em box (72 units): half the box is 36, so R12
    alone keeps them on one line ("Firstamong"); the second line goes back to where
    the first began, which no text on one line does."""
    content = b"BT /F1 48 Tf 72 700 Td (First) Tj 0 -%d Td (among) Tj ET" % leading
    assert _tall_font_text(content) == "First\namong"


def test_tight_leading_with_tj_lines_and_an_indent() -> None:
    content = (b"BT /F1 48 Tf 90 700 Td [(First)] TJ -18 -36 Td [(among)] TJ 0 -36 Td [(equals)] TJ ET")
    assert _tall_font_text(content) == "First\namong\nequals"


@pytest.mark.parametrize(("content", "expected"), [
    # a superscript moved by Td (no rise) from its base, then a subscript
    (b"BT /F1 10 Tf 72 700 Td (x) Tj /F1 7 Tf 5 4 Td (2) Tj /F1 10 Tf 4 -4 Td (y) Tj /F1 7 Tf 5 -3 Td (i) Tj ET",
     "x2yi"),
    # a footnote mark at the line's start, its text after it
    (b"BT /F1 7 Tf 72 704 Td (1) Tj /F1 10 Tf 4 -4 Td (Note) Tj ET", "1Note"),
    # a small caption on the big word's baseline
    (b"BT /F1 30 Tf 72 700 Td (BIG) Tj /F1 8 Tf 50 0 Td (small) Tj ET", "BIG small"),
])
def test_scripts_and_captions_stay_on_their_line(content: bytes, expected: str) -> None:
    assert _text(content) == expected


# ---- a string that continues an earlier line (issue 23) ---------------------------

def _both(content: bytes) -> str:
    """The page text as extraction streams it and as explain assembles it whole:
    they must agree."""
    data = one_font_pdf(content)
    text = pipeline.extract(data).pages[0].text
    assert explain_page(PdfFile(data), 1).text == text
    return text


def test_big_and_small_lines_drawn_word_by_word_stay_lines() -> None:
    """116 pt "Big Text" over 12 pt "Small Text", drawn Big, Small, Text, Text: each
    word goes on where its line ended, so the lines are whole (pdftotext and
    pdfminer.six read it so)."""
    content = (b"BT /F1 116 Tf 72 600 Td (Big) Tj ET BT /F1 12 Tf 72 560 Td (Small) Tj ET "
               b"BT /F1 116 Tf 275 600 Td (Text) Tj ET BT /F1 12 Tf 108 560 Td (Text) Tj ET")
    assert _both(content) == "Big Text\nSmall Text"


def test_a_table_drawn_down_its_columns_reads_by_rows() -> None:
    cells = b"".join(b"BT /F1 10 Tf %d %d Td (%s) Tj ET " % (x, y, t) for x, y, t in [
        (72, 700, b"Name"), (72, 686, b"Alice"), (72, 672, b"Bob"),
        (102, 700, b"Qty"), (102, 686, b"12"), (102, 672, b"7")])
    assert _both(cells) == "Name Qty\nAlice 12\nBob 7"


def test_columns_drawn_one_after_the_other_keep_their_order() -> None:
    """Two columns of three lines, the second 20 units (two box heights) right of the
    first's line ends: a gutter, not a word gap; content order stays (R14)."""
    left = [b"aaaa", b"bbbb", b"cccc"]
    right = [b"dddd", b"eeee", b"ffff"]
    content = b"".join(b"BT /F1 10 Tf 72 %d Td (%s) Tj ET " % (700 - 14 * i, t) for i, t in enumerate(left))
    content += b"".join(b"BT /F1 10 Tf 112 %d Td (%s) Tj ET " % (700 - 14 * i, t) for i, t in enumerate(right))
    assert _both(content) == "aaaa\nbbbb\ncccc\ndddd\neeee\nffff"


def test_a_line_of_one_size_is_not_split_by_a_smaller_line_between() -> None:
    """Words of a big line and a small one under it, alternately: two lines, never
    one a word."""
    words = [(b"One", b"tiny"), (b"two", b"note"), (b"six", b"here")]
    content = b""
    x_big, x_small = 72, 72
    for big, small in words:
        content += b"BT /F1 40 Tf %d 600 Td (%s) Tj ET BT /F1 9 Tf %d 580 Td (%s) Tj ET " % (x_big, big, x_small, small)
        x_big += 20 * len(big) + 10
        x_small += int(4.5 * len(small)) + 2
    assert _both(content) == "One two six\ntiny note here"
