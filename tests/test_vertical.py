"""R13 vertical writing (WMode 1): glyphs are grouped into columns, columns are
read right to left and each top to bottom, with a line break at every column
change.

Every fixture draws its columns in content order left to right on purpose, so
content order (R14) alone would give the wrong answer. Fonts use the default
vertical metrics (DW2 [880 -1000]): each glyph moves the pen 1 em down, so a
20 pt column advances 20 units per glyph; columns are 50 units apart.
"""
from __future__ import annotations

import pytest

from pdfindex import pipeline
from tests.builders import font_resources, mono_font
from tests.pdfwriter import PdfWriter, tounicode_cmap

RIGHT, MIDDLE, LEFT = "日本語の", "縦書きを", "読む順番"
EXPECTED = f"{RIGHT}\n{MIDDLE}\n{LEFT}"


def u16(s: str) -> bytes:
    return b"<" + s.encode("utf-16-be").hex().upper().encode() + b">"


def _column(x: float, y: float, operand: bytes, size: float = 20) -> bytes:
    return b"BT /F1 %g Tf 1 0 0 1 %g %g Tm %s Tj ET\n" % (size, x, y, operand)


def _unijis(content: bytes) -> pipeline.Page:
    w = PdfWriter()
    font = w.type0_font(base_font="TestMincho-V", encoding="UniJIS-UCS2-V",
                        cid_subtype="CIDFontType0", ordering=("Adobe", "Japan1", 6))
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes(), keep_glyphs=True).pages[0]


# Identity-V: code = CID = index in this string + 1, text from the ToUnicode CMap.
_CHARS = "".join(dict.fromkeys(RIGHT + MIDDLE + LEFT + "、。縦横" + "Helowrd"))


def _ident(s: str) -> bytes:
    return b"<" + b"".join(b"%04X" % (_CHARS.index(c) + 1) for c in s) + b">"


def _identity_v(content: bytes) -> pipeline.Page:
    w = PdfWriter()
    cmap = tounicode_cmap([(b"%c%c" % divmod(i + 1, 256), c) for i, c in enumerate(_CHARS)],
                          codespace=[(b"\x00\x00", b"\xff\xff")])
    font = w.type0_font(base_font="TestGothic-V", encoding="Identity-V", to_unicode=cmap)
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes(), keep_glyphs=True).pages[0]


def test_unijis_v_columns_read_right_to_left_top_to_bottom() -> None:
    content = (_column(100, 700, u16(LEFT)) + _column(150, 700, u16(MIDDLE))
               + _column(200, 700, u16(RIGHT)))
    page = _unijis(content)
    assert page.text == EXPECTED
    assert all(g.vertical for g in page.glyphs)


def test_identity_v_with_tounicode_columns_read_right_to_left() -> None:
    content = (_column(100, 700, _ident(LEFT)) + _column(150, 700, _ident(MIDDLE))
               + _column(200, 700, _ident(RIGHT)))
    page = _identity_v(content)
    assert page.text == EXPECTED
    assert page.quality.unresolved == 0


def test_vertical_pen_moves_down_the_page() -> None:
    # Sanity of the fixture: consecutive glyphs of a column go downwards.
    page = _unijis(_column(200, 700, u16(RIGHT)))
    ys = [g.oy for g in page.glyphs]
    assert ys == sorted(ys, reverse=True) and ys[0] > ys[-1]
    assert page.text == RIGHT


def test_columns_in_one_text_object_moved_by_td() -> None:
    # One BT..ET: each Td moves to the next column to the right (content order
    # left to right), starting again at the top.
    content = (b"BT /F1 20 Tf 1 0 0 1 100 700 Tm " + u16(LEFT) + b" Tj 50 0 Td "
               + u16(MIDDLE) + b" Tj 50 0 Td " + u16(RIGHT) + b" Tj ET")
    assert _unijis(content).text == EXPECTED


def test_column_drawn_bottom_half_first_reads_top_to_bottom() -> None:
    # Right column's lower half ("語の" at 660 and 640) drawn before its top half.
    content = (_column(100, 700, u16(LEFT)) + _column(150, 700, u16(MIDDLE))
               + _column(200, 660, u16(RIGHT[2:])) + _column(200, 700, u16(RIGHT[:2])))
    assert _unijis(content).text == EXPECTED


def test_ragged_columns_starting_at_different_heights() -> None:
    # An indented middle column (starts 40 units lower) is still its own column.
    content = (_column(100, 700, u16(LEFT)) + _column(150, 660, u16(MIDDLE))
               + _column(200, 700, u16(RIGHT)))
    assert _unijis(content).text == EXPECTED


@pytest.mark.parametrize("gap", [b"500", b"1000"])
def test_gaps_inside_a_column_are_not_spaces_between_ideographs(gap: bytes) -> None:
    # In vertical writing a positive TJ number moves the pen down (ty = (w1 -
    # n/1000)·Tfs, §9.4.4): 10 and 20 units of extra spread; ideographs get no
    # word spaces.
    spread = b"[" + gap.join(_ident(c) for c in RIGHT) + b"] TJ"
    content = (_column(100, 700, _ident(LEFT)) + b"BT /F1 20 Tf 1 0 0 1 200 700 Tm " + spread + b" ET\n")
    assert _identity_v(content).text == f"{RIGHT}\n{LEFT}"


def test_many_columns_drawn_left_to_right() -> None:
    cols = ["縦", "横", "日本", "語の", "読む"]  # drawn left to right at x 100..300
    content = b"".join(_column(100 + 50 * i, 700, u16(c)) for i, c in enumerate(cols))
    assert _unijis(content).text == "\n".join(reversed(cols))


# ---- a vertical font drawn horizontally (issue 11) ----------------------------------------

def _one_tm_each(text: str, x: float, y: float, step: float, size: float = 20) -> bytes:
    """Each glyph with a Tm of its own, left to right on one row."""
    return b"".join(_column(x + step * i, y, _ident(c), size) for i, c in enumerate(text) if c != " ")


def test_identity_v_glyphs_placed_left_to_right_are_one_line() -> None:
    page = _identity_v(_one_tm_each("縦書きを", 100, 700, 20))
    assert page.text == "縦書きを"
    assert all(g.vertical for g in page.glyphs)  # the records keep what the font said


def test_identity_v_latin_placed_across_reads_forward_with_its_word_space() -> None:
    assert _identity_v(_one_tm_each("Hello world", 100, 700, 12)).text == "Hello world"


def test_real_columns_next_to_a_line_placed_across_stay_columns() -> None:
    """Columns, then a line of the same font placed across below them, then two
    glyphs side by side (too few to be a line): the columns read as columns."""
    content = (_column(300, 700, _ident(LEFT)) + _column(350, 700, _ident(MIDDLE))
               + _column(400, 700, _ident(RIGHT)) + _one_tm_each("、。縦", 100, 300, 20))
    assert _identity_v(content).text.split("\n") == [RIGHT, MIDDLE, LEFT, "、。縦"]
    pair = _column(300, 700, _ident(LEFT)) + _one_tm_each("縦横", 100, 300, 20)
    assert _identity_v(pair).text.split("\n") == [LEFT, "横", "縦"]


# ---- a word drawn partly in a vertical font (issue 23) -------------------------------------

_MIXED = "ilAprl2015()\ufe35\ufe36"


def _mixed_page(content: bytes) -> pipeline.Page:
    """F1: the mono font, across; F2: an Identity-V font (code = index in _MIXED + 1,
    ToUnicode) whose glyphs the content turns a quarter so they run along the line."""
    w = PdfWriter()
    cmap = tounicode_cmap([(b"%c%c" % divmod(i + 1, 256), c) for i, c in enumerate(_MIXED)],
                          codespace=[(b"\x00\x00", b"\xff\xff")])
    vertical = w.type0_font(base_font="TestGothic-V", encoding="Identity-V", to_unicode=cmap)
    w.add_page(content, resources=font_resources(mono_font(w), F2=vertical))
    return pipeline.extract(w.to_bytes(), keep_glyphs=True).pages[0]


def _word(parts: list[tuple[str, str]], x: float = 100, y: float = 700, size: float = 20) -> bytes:
    """Each (font, text) part at the pen: F1 glyphs across, 0.5 em each; F2 glyphs each
    with a Tm turned 90° counter-clockwise (so the vertical writing runs to the right)
    at the same 0.5 em pitch, its vertical origin 0.35 em above the baseline."""
    out = b""
    for font, text in parts:
        for ch in text:
            if font == "F1":
                out += b"BT /F1 %g Tf 1 0 0 1 %g %g Tm (%s) Tj ET\n" % (size, x, y, ch.encode())
            else:
                code = b"<%04X>" % (_MIXED.index(ch) + 1)
                out += b"BT /F2 %g Tf 0 1 -1 0 %g %g Tm %s Tj ET\n" % (size, x, y + 0.35 * size, code)
            x += 0.5 * size
    return out


@pytest.mark.parametrize(("parts", "expected"), [
    ([("F1", "w"), ("F2", "il"), ("F1", "l")], "will"),
    ([("F1", "Ap"), ("F2", "r"), ("F1", "i"), ("F2", "l")], "April"),
    ([("F2", "Apr"), ("F1", "il")], "April"),
    ([("F1", "1"), ("F2", "\ufe35"), ("F1", "20"), ("F2", "\ufe36")], "1(20)"),
])
def test_a_word_drawn_partly_in_a_vertical_font_stays_one_word(parts: list[tuple[str, str]], expected: str) -> None:
    """Letters of an Identity-V font turned a quarter and set along a horizontal word
    belong to that word, in pen order; its vertical brackets read as brackets."""
    page = _mixed_page(_word(parts))
    assert page.text == expected
    assert any(g.vertical for g in page.glyphs)


def test_a_real_column_beside_a_line_stays_a_column() -> None:
    """An upright Identity-V column next to a horizontal line: still a column (R13)."""
    column = b"BT /F2 20 Tf 1 0 0 1 300 700 Tm <0001000200030004> Tj ET\n"
    page = _mixed_page(_word([("F1", "will")]) + column)
    assert page.text == "will\nilAp"


_LINE = "Aprwil5()\ufe35\ufe36 "
#: Advance widths (1/1000 em) of _LINE's letters: "i" and "l" narrow, as in a real face.
_WIDTHS = {"A": 667, "p": 556, "r": 333, "w": 722, "i": 222, "l": 222, "5": 556, "(": 333, ")": 333,
           "\ufe35": 1000, "\ufe36": 1000, " ": 278}


def _vertical_line_page(content: bytes) -> str:
    """An Identity-V font only (code = index in _LINE + 1) with real widths."""
    w = PdfWriter()
    cmap = tounicode_cmap([(b"%c%c" % divmod(i + 1, 256), c) for i, c in enumerate(_LINE)],
                          codespace=[(b"\x00\x00", b"\xff\xff")])
    widths = [x for i, c in enumerate(_LINE) for x in (i + 1, [_WIDTHS[c]])]
    font = w.type0_font(base_font="TestGothic-V", encoding="Identity-V", to_unicode=cmap, w=widths)
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes()).pages[0].text


def _placed_line(text: str, x: float = 100, top: float = 700, size: float = 14) -> bytes:
    """Each glyph with a Tm of its own, left to right, as a producer sets a horizontal
    line in a vertical font (PDFBox's VFont file): upright glyphs at their vertical
    origin (the top, half a width right of their left edge); the brackets ︵︶ turned a
    quarter so that they write along the line, their middle on the line's."""
    out = b""
    for ch in text:
        code = b"<%04X>" % (_LINE.index(ch) + 1)
        advance = _WIDTHS[ch] / 1000 * size
        if ch in "\ufe35\ufe36":
            out += b"BT /F1 %g Tf 0 1 -1 0 %g %g Tm %s Tj ET\n" % (size, x, top - size / 2, code)
            advance = size
        else:
            out += b"BT /F1 %g Tf 1 0 0 1 %g %g Tm %s Tj ET\n" % (size, x + advance / 2, top, code)
        x += advance
    return out


def test_a_line_set_in_a_vertical_font_keeps_its_narrow_letters() -> None:
    """Narrow letters ("i", "l") step less than a third of the glyph height: they are
    still the line's, not columns of their own (PDFBox's VFont file gave "wi / ll")."""
    assert _vertical_line_page(_placed_line("April will")) == "April will"


def test_turned_brackets_in_a_line_set_in_a_vertical_font() -> None:
    """Vertical brackets turned to write along the line read as brackets, in place."""
    assert _vertical_line_page(_placed_line("will \ufe355\ufe36 April")) == "will (5) April"
