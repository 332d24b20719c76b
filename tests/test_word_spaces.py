"""R11 word spaces: a gap from the previous glyph's *glyph end* to the current
glyph's origin wider than 0.15 × the current glyph's box height is one space;
never next to a whitespace glyph, never between two ideographic characters;
Hangul does get spaces.

Geometry: the mono font (tests/builders.py) advances 0.5 em per glyph and its box
height equals the font size, so at 10 pt the threshold is 1.5 user-space units
and a TJ number n moves the pen by -n/100 units. The CJK fonts use the default
width of 1000 (1 em per glyph).
"""
from __future__ import annotations

import pytest

from pdfindex import pipeline
from pdfindex.pipeline.document import PdfFile
from pdfindex.pipeline.explain import explain_page
from tests.builders import font_resources, mono_font, one_font_pdf, page_of
from tests.pdfwriter import PdfWriter, tounicode_cmap


def _text(content: bytes) -> str:
    return pipeline.extract(one_font_pdf(content)).pages[0].text


def _line(show: bytes, size: float = 10, state: bytes = b"") -> str:
    return _text(b"BT /F1 %g Tf %s 72 700 Td %s ET" % (size, state, show))


def u16(s: str) -> bytes:
    """A UCS-2 hex string operand for the Uni*-UCS2 predefined CMaps."""
    return b"<" + s.encode("utf-16-be").hex().upper().encode() + b">"


def _cjk_text(content: bytes, cmap: str, ordering: tuple[str, str, int]) -> str:
    w = PdfWriter()
    font = w.type0_font(base_font="TestCJK", encoding=cmap, cid_subtype="CIDFontType0", ordering=ordering)
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes()).pages[0].text


def _gb(show: bytes, state: bytes = b"") -> str:
    return _cjk_text(b"BT /F1 10 Tf %s 72 700 Td %s ET" % (state, show), "UniGB-UCS2-H", ("Adobe", "GB1", 2))


def _ks(show: bytes, state: bytes = b"") -> str:
    return _cjk_text(b"BT /F1 10 Tf %s 72 700 Td %s ET" % (state, show), "UniKS-UCS2-H", ("Adobe", "Korea1", 2))


# ---- gaps made by TJ numbers and by positioning ----------------------------------

def test_tj_gaps_without_space_characters_become_spaces() -> None:
    assert _line(b"[(PDF)-333(Reference)-333(Manual)] TJ") == "PDF Reference Manual"


def test_gap_threshold_is_about_fifteen_percent_of_height() -> None:
    # 2.0 units (0.20 × height) is a space; 1.0 unit (0.10 × height) is not.
    assert _line(b"[(ab)-200(cd)] TJ") == "ab cd"
    assert _line(b"[(ab)-100(cd)] TJ") == "abcd"


def test_td_positioned_words_without_spaces() -> None:
    # "Hello" spans 72..97; "World" starts at 102: a 5-unit gap.
    assert _line(b"(Hello) Tj 30 0 Td (World) Tj 30 0 Td (again) Tj") == "Hello World again"


def test_tm_positioned_words_without_spaces() -> None:
    content = (b"BT /F1 10 Tf 1 0 0 1 72 700 Tm (Hello) Tj 1 0 0 1 102 700 Tm (World) Tj "
               b"1 0 0 1 131 700 Tm (s) Tj ET")  # "World" ends at 127: 4 units, then "s"
    assert _text(content) == "Hello World s"


def test_glyph_by_glyph_positioning_without_gaps_is_one_word() -> None:
    assert _line(b"(W) Tj 5 0 Td (o) Tj 5 0 Td (r) Tj 5 0 Td (d) Tj") == "Word"


@pytest.mark.parametrize(("show", "expected"), [
    (b"[(W)30(o)-20(r)15(d)] TJ", "Word"),
    (b"[(K)-20(e)-20(r)-20(n)30(i)30(n)-20(g)] TJ", "Kerning"),
    (b"[(A)80(V)80(A)] TJ", "AVA"),  # strong negative kerning (pen moves back)
])
def test_kerning_does_not_split_words(show: bytes, expected: str) -> None:
    assert _line(show) == expected


def test_thresholds_use_box_height_not_tf_operand() -> None:
    # R3: Word exports "1 Tf" with the size in the text matrix. The user-space
    # geometry is the same as at 10 pt: -333 is a space, -50 (0.5 unit) is not.
    content = b"BT /F1 1 Tf 10 0 0 10 72 700 Tm [(PDF)-333(Refer)-50(ence)] TJ ET"
    assert _text(content) == "PDF Reference"


# ---- negative Tc given back by TJ ("95后") --------------------------------------

def test_negative_tc_given_back_by_tj_is_not_a_space() -> None:
    # Tc -2: the pen ends 2 units before each glyph's end; -300 moves it 3 units on.
    # Gap from the pen position: 3 > 1.5 (would be a space). Gap from the glyph
    # end: 3 - 2 = 1 < 1.5 (no space). R11 measures from the glyph end.
    content = b"BT /F1 10 Tf -2 Tc 72 700 Td [(9)-300(5)-300(a)-300(b)] TJ ET"
    page = pipeline.extract(one_font_pdf(content), keep_glyphs=True).pages[0]
    threshold = 0.15 * page.glyphs[0].height
    assert page.glyphs[0].height == pytest.approx(10)
    for prev, cur in zip(page.glyphs, page.glyphs[1:], strict=False):  # the fixture is what it claims
        assert cur.ox - prev.ex == pytest.approx(3.0) and cur.ox - prev.ex > threshold
        assert cur.ox - prev.gx == pytest.approx(1.0) and cur.ox - prev.gx < threshold
    assert page.text == "95ab"


def test_negative_tc_with_a_real_gap_still_gets_a_space() -> None:
    # Same tracking, but -500 moves 5 units: 5 - 2 = 3 > 1.5 from the glyph end.
    assert _line(b"[(9)-300(5)-500(a)-300(b)] TJ", state=b"-2 Tc") == "95 ab"


def test_95hou_with_cjk_font() -> None:
    # 1-em glyphs at 10 pt; Tc -2 and -300 returns: pen gap 3 > 1.5, glyph-end gap
    # 1 < 1.5. "5" and "后" are not both ideographic, so only the measure decides.
    show = b"[" + u16("9") + b"-300" + u16("5") + b"-300" + u16("后") + b"] TJ"
    assert _gb(show, state=b"-2 Tc") == "95后"


# ---- existing whitespace glyphs ------------------------------------------------

@pytest.mark.parametrize("show", [
    b"[(PDF )-333(Reference)] TJ",
    b"[(PDF)-333( Reference)] TJ",
    b"[(PDF )-2000( Reference)] TJ",
])
def test_no_space_added_next_to_a_space_glyph(show: bytes) -> None:
    text = _line(show)
    assert text == "PDF Reference"
    assert "  " not in text


def test_tw_justified_line_keeps_single_spaces() -> None:
    # Tw 6 widens every space glyph by 6 units: the gap after each space glyph is
    # wide, but the space glyph itself already separates the words.
    text = _line(b"(Justified text with real spaces) Tj", state=b"6 Tw")
    assert text == "Justified text with real spaces"


def test_tw_and_tj_combined_keep_single_spaces() -> None:
    text = _line(b"[(Justified )-400(text )-400(here)] TJ", state=b"4 Tw")
    assert text == "Justified text here"


# ---- horizontal scaling --------------------------------------------------------

def test_tz_50_keeps_words_intact() -> None:
    # At 50 % every advance and TJ number is halved: -500 is 2.5 units (a space),
    # -20 and 30 are kerning.
    assert _line(b"[(Na)-20(rrow)-500(te)30(xt)] TJ", state=b"50 Tz") == "Narrow text"
    assert _line(b"(Horizontal scaling) Tj", state=b"50 Tz") == "Horizontal scaling"


def test_tz_200_keeps_words_intact() -> None:
    # At 200 % each glyph is 10 units wide and its glyph end moves with it: no
    # letter-by-letter gaps. -333 is 6.7 units (a space), -20 and 30 are kerning.
    assert _line(b"[(Wi)-20(de)-333(te)30(xt)] TJ", state=b"200 Tz") == "Wide text"
    assert _line(b"(Horizontal scaling) Tj", state=b"200 Tz") == "Horizontal scaling"


# ---- threshold from the current glyph's height -----------------------------------

def test_threshold_uses_the_current_glyphs_height_big_then_small() -> None:
    # "HEADING" at 40 pt spans 72..212. The 6 pt caption starts 3 units later on
    # the same baseline: 3 > 0.15 × 6 = 0.9, a space (a threshold from the 40 pt
    # heading, 6 units, would miss it).
    content = (b"BT /F1 40 Tf 72 700 Td (HEADING) Tj ET "
               b"BT /F1 6 Tf 215 700 Td (caption) Tj ET")
    assert _text(content) == "HEADING caption"


def test_threshold_uses_the_current_glyphs_height_small_then_big() -> None:
    # The 6 pt "small" spans 72..87; a 40 pt glyph 3 units later: 3 < 0.15 × 40 = 6,
    # no space (a threshold from the 6 pt glyph would insert one).
    content = (b"BT /F1 6 Tf 72 700 Td (small) Tj ET "
               b"BT /F1 40 Tf 90 700 Td (BIG) Tj ET")
    assert _text(content) == "smallBIG"


# ---- ideographs and Hangul ----------------------------------------------------

def test_no_space_between_ideographs_spread_by_tj() -> None:
    show = b"[" + b"-500".join(u16(c) for c in "中文排版") + b"] TJ"  # 5-unit gaps
    assert _gb(show) == "中文排版"


def test_no_space_between_ideographs_spread_by_tc() -> None:
    assert _gb(u16("中文排版") + b" Tj", state=b"5 Tc") == "中文排版"


def test_no_space_between_ideographs_kana_and_cjk_punctuation() -> None:
    show = b"[" + b"-600".join(u16(c) for c in "日本の文字，テスト。") + b"] TJ"
    assert _gb(show) == "日本の文字，テスト。"


def test_gap_between_latin_and_ideograph_is_a_space() -> None:
    # Only a pair of ideographs is exempt.
    show = b"[" + u16("PDF") + b"-500" + u16("文件") + b"-500" + u16("OK") + b"] TJ"
    assert _gb(show) == "PDF 文件 OK"


def test_hangul_words_separated_by_a_gap_get_a_space() -> None:
    show = b"[" + u16("한국어") + b"-500" + u16("텍스트") + b"-500" + u16("추출") + b"] TJ"
    assert _ks(show) == "한국어 텍스트 추출"


def test_hangul_syllables_without_gap_stay_one_word() -> None:
    show = b"[" + u16("한국") + b"-50" + u16("어") + b"] TJ"  # 0.5-unit kern
    assert _ks(show) == "한국어"


# ---- Tw after a code 32 that draws a letter (issue 11) ------------------------------------

def _code32_letter_page(ops: bytes) -> str:
    """A font whose code 32 draws an "e" (ToUnicode says so); other codes as usual."""
    w = PdfWriter()
    font = mono_font(w, to_unicode=tounicode_cmap([(b" ", "e")]))
    return page_of(b"BT /F1 10 Tf " + ops + b" 72 700 Td (Th cat) Tj ET", {"F1": font}, w=w).text


@pytest.mark.parametrize("tc", [b"0", b"1", b"-0.5"])
def test_tw_after_a_code_32_letter_is_a_word_gap(tc: bytes) -> None:
    """Tw moves the pen on after every single-byte code 32, whatever its glyph: the
    gap after the "e" is a word space, with or without Tc tracking around it."""
    assert _code32_letter_page(tc + b" Tc 5 Tw") == "The cat"


@pytest.mark.parametrize("tc", [b"0", b"1"])
def test_a_code_32_letter_without_tw_joins_its_word(tc: bytes) -> None:
    assert _code32_letter_page(tc + b" Tc 0 Tw") == "Thecat"


# ---- a line's own split between letter and word gaps (issue 23) ----------------------------

_WORDS = ("Some", "market", "watchers", "were", "seen", "because", "Samuel", "Cleveland", "has", "passed")


def _justified(word_gap: float, letter_gaps: tuple[float, ...] = (0.0,), words: tuple[str, ...] = _WORDS) -> bytes:
    """One TJ line drawn glyph by glyph without space glyphs: ``letter_gaps`` (box
    heights; cycled) between the letters of a word, ``word_gap`` between words. The
    mono font's box height is the font size, so a gap g is the TJ number -1000 g."""
    items: list[bytes] = []
    k = 0
    for w, word in enumerate(words):
        if w:
            items.append(b"%g" % (-1000 * word_gap))
        for i, ch in enumerate(word):
            if i:
                items.append(b"%g" % (-1000 * letter_gaps[k % len(letter_gaps)]))
                k += 1
            items.append(b"(" + ch.encode() + b")")
    return b"[" + b" ".join(items) + b"] TJ"


@pytest.mark.parametrize("word_gap", [0.09, 0.10, 0.11, 0.12, 0.13, 0.14, 0.15])
@pytest.mark.parametrize("letters", [(0.0,), (-0.01,), (-0.01, 0.0, 0.01), (0.02, -0.02, 0.0, 0.03)])
def test_tightly_justified_words_keep_their_spaces(word_gap: float, letters: tuple[float, ...]) -> None:
    """News columns and filings set word gaps of 0.09-0.13 box heights, under R11's
    0.15, while their letters nearly touch: the line's gaps form two groups, and
    the upper one is the word gaps."""
    assert _line(_justified(word_gap, letters)) == " ".join(_WORDS)


@pytest.mark.parametrize("word_gap", [0.09, 0.12])
def test_tight_words_of_varying_gaps_on_one_line(word_gap: float) -> None:
    """Justification gives each line its own word gap; kerning its letters their own."""
    show = _justified(word_gap, (0.0, -0.08, 0.01, -0.03, 0.0))
    assert _line(show) == " ".join(_WORDS)
    assert _line(show.replace(b"-%g" % (1000 * word_gap), b"-300", 2)) == " ".join(_WORDS)


def test_tex_kerning_with_gaps_of_exactly_the_threshold() -> None:
    """A TeX line whose word gaps measure exactly 0.15 (one of them), others wider,
    letters kerned both ways: every word gap is a space."""
    show = (b"[(exp)-10(erimen)20(ts)-150(at)-220(the)-180(trigger)-150(system)-330(V)80(A)-10(T)] TJ")
    assert _line(show) == "experiments at the trigger system VAT"


@pytest.mark.parametrize("spacing", [0.05, 0.06, 0.1, 0.12])
def test_letter_spaced_headings_stay_whole(spacing: float) -> None:
    """A heading tracked by positioning, its letters all equally apart: one group of
    gaps, no split; R11 keeps the word whole."""
    assert _line(_justified(0.5, (spacing,), ("HEADING", "TITLE")), 18) == "HEADING TITLE"
    assert _line(_justified(0.5, (spacing,), ("ANNUALREPORT",)), 18) == "ANNUALREPORT"


def test_a_few_gaps_are_not_enough_to_split_a_line() -> None:
    """Three gaps: too few to tell letter gaps from word gaps; R11 alone decides."""
    assert _line(b"[(ab)-100(cd)] TJ") == "abcd"


def test_gaps_between_the_groups_leave_r11_alone() -> None:
    """Letter gaps spread from 0 to 0.06: no clear split, so a 0.1 gap stays inside
    a word as before."""
    assert _line(_justified(0.1, (0.0, 0.06, 0.02))) == "".join(_WORDS)


def test_a_monospaced_table_keeps_its_cells() -> None:
    row = b"(Name) Tj 30 0 Td (Qty) Tj 20 0 Td (Price) Tj 30 0 Td (Total) Tj"
    assert _line(row) == "Name Qty Price Total"


def test_justified_cjk_gets_no_space_from_the_line_split() -> None:
    """Justified Japanese spreads kana and Latin alike; the split never spaces a gap
    next to an ideograph."""
    text = "PDFファイルの文字を取り出すABCDEF"
    items = []
    for ch in text:
        items.append(u16(ch))
        items.append(b"-100" if not ch.isascii() else b"0")
    assert _gb(b"[" + b"".join(items) + b"] TJ") == text


def test_explain_names_the_lines_split() -> None:
    pdf = PdfFile(one_font_pdf(b"BT /F1 10 Tf 72 700 Td %s ET" % _justified(0.11)))
    reasons = [s.space_rule for s in explain_page(pdf, 1).steps if s.space]
    assert any("line's own split" in r and "a word space" in r for r in reasons), reasons


def test_one_narrow_gap_among_wide_word_gaps_is_a_kern() -> None:
    """A heading whose words stand 0.34 apart and one of whose letters is placed 0.1
    after the one before (small capitals, freeculture's title page): the line's word
    gaps are the wide ones, and the narrow gap stays inside its word."""
    show = b"[(THE)-340(PE)-105(NGUIN)-340(PRESS)-340(BOOKS)] TJ"
    assert _line(show) == "THE PENGUIN PRESS BOOKS"


@pytest.mark.parametrize(("show", "expected"), [
    (b"[(C)-110(++)-110(and)-110(f)-110(,)-110(said)-110(they)] TJ", "C++ and f, said they"),
    (b"[(from)-110(5:00)-110(-)-110(6:00)-110(daily)-110(each)] TJ", "from 5:00-6:00 daily each"),
])
def test_the_line_split_leaves_punctuation_to_r11(show: bytes, expected: str) -> None:
    """A tightly justified line (word gaps 0.11): gaps before punctuation and after a
    dash, as narrow, are an italic's correction or a symbol's side bearing, not the
    text's word gaps."""
    assert _line(show) == expected


@pytest.mark.parametrize(("show", "expected"), [
    (b"[(It was the law.)-110(The next day came.)-95(So it went.)] TJ",
     "It was the law. The next day came. So it went."),
    (b"[(in the U.S.A. or)-110(e.g. here)] TJ", "in the U.S.A. ore.g. here"),  # only before a capital
    (b"[(Read Fig.)-30(The end is near)] TJ", "Read Fig.The end is near"),  # a kern-sized gap: no
])
def test_a_sentence_gap_set_without_a_space_glyph(show: bytes, expected: str) -> None:
    """A line that has space glyphs but sets a sentence's end apart by placement alone
    (freeculture, 241 times "content.That"): a gap over the line's letter gaps by 0.08
    before a capital after ".!?;:" is a space."""
    assert _line(show) == expected


def test_table_cells_set_apart_by_a_wide_tc() -> None:
    """Tc of 4 box heights sets a row's cells apart; TJ takes it back inside each number
    (NICS background-check tables): the cells are words, the numbers whole."""
    show = b"40 Tc [(0)(2)4000(,)4000(2)4000(4)4000(8)(1)4000(,)4000(1)4000(3)4000(5)] TJ"
    assert _line(show) == "0 2,248 1,135"


def test_letter_tracking_by_tc_is_still_no_gap() -> None:
    assert _line(b"0.5 Tc (TRACKED) Tj 0 Tc [( )] TJ") == "TRACKED"


def test_tight_words_set_by_placement_on_a_line_with_space_glyphs() -> None:
    """A court filing's line: its first words set apart by placement alone (0.10-0.11
    box heights), the rest with space glyphs; letters touch. The line's own split
    finds the placed word gaps too (PDFBox's PDFBOX-3042: medicalhistoryofdiabetes)."""
    show = (b"[(medical)-110(history)-100(of)-110(diabetes.)-310(Samuel was first seen by a nurse)] TJ")
    assert _line(show) == "medical history of diabetes. Samuel was first seen by a nurse"


def test_tight_gaps_before_brackets_section_signs_and_numbers() -> None:
    """Before an opening bracket or quote, "§" or a number, a tight word gap is a
    word gap too; the gaps inside "(FTCA)," and "U.S.C." stay."""
    show = (b"[(Claims)-120(Act)-120(\\(FTCA\\),)-130(28)-120(U.S.C.)-130(\\247)-130(1346)-120(et)-120(seq.)] TJ")
    assert _line(show) == "Claims Act (FTCA), 28 U.S.C. \u00a7 1346 et seq."
