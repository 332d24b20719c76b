"""R15 layout text (issue 11): columns side by side, table cells aligned, indentation,
blank lines for large vertical gaps, full-width CJK as two cells, rotated text kept
out of the lines; the same decoding as reading flow. Byte-built pages."""
from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from pdfindex import pipeline
from tests.builders import font_resources, mono_font, text_line
from tests.index_helpers import JIS, u16
from tests.ingest_helpers import run_cli, write
from tests.pdfwriter import PdfWriter


def _mono_pdf(content: bytes) -> bytes:
    w = PdfWriter()
    w.add_page(content, resources=font_resources(mono_font(w)))
    return w.to_bytes()


def _layout(data: bytes) -> list[str]:
    return pipeline.extract(data, layout=True).pages[0].text.split("\n")


def _show(x: float, y: float, text: str, size: float = 10) -> bytes:
    return text_line(x, y, b"(%s) Tj" % text.encode("latin-1"), size)


LEFT = ["left column line one", "the second left line", "and a third"]
RIGHT = ["right column first", "second on the right", "third right"]


def test_two_columns_sit_side_by_side_and_the_right_one_lines_up() -> None:
    content = b"".join(_show(72, 700 - 12 * i, left) + _show(320, 700 - 12 * i, right)
                       for i, (left, right) in enumerate(zip(LEFT, RIGHT, strict=True)))
    lines = _layout(_mono_pdf(content))
    assert [line.split("  ")[0] for line in lines] == LEFT
    starts = {line.index(right) for line, right in zip(lines, RIGHT, strict=True)}
    assert len(starts) == 1 and starts.pop() > max(map(len, LEFT)) + 1
    reading = pipeline.extract(_mono_pdf(content)).pages[0].text
    assert Counter(" ".join(lines).split()) == Counter(reading.split())  # the same words, only placed


def test_table_cells_line_up_and_indentation_survives() -> None:
    rows = [("item", "qty", "price"), ("apples", "12", "3.50"), ("kiwi", "7", "12.00")]
    content = b"".join(_show(72, 700 - 14 * r, a) + _show(200, 700 - 14 * r, b) + _show(300, 700 - 14 * r, c)
                       for r, (a, b, c) in enumerate(rows))
    content += _show(72, 640, "Notes:") + _show(108, 626, "indented by half an inch")
    lines = _layout(_mono_pdf(content))
    for column in (1, 2):
        assert len({line.index(row[column]) for line, row in zip(lines, rows, strict=False)}) == 1, lines
    notes = lines.index("Notes:")
    indented = lines[notes + 1]
    assert indented.strip() == "indented by half an inch" and 6 <= len(indented) - len(indented.lstrip()) <= 9


def test_large_vertical_gaps_become_blank_lines() -> None:
    content = _show(72, 700, "first") + _show(72, 688, "second") + _show(72, 640, "after a gap")
    assert _layout(_mono_pdf(content)) == ["first", "second", "", "", "", "after a gap"]


def test_full_width_cjk_takes_two_cells() -> None:
    w = PdfWriter()
    cjk = w.type0_font(base_font="TestCJK", encoding=JIS[0], cid_subtype="CIDFontType0", ordering=JIS[1])
    mono = mono_font(w)
    # Two rows: 6 ideographs of 10 pt (60 pt), or 12 Latin letters of 5 pt (60 pt), then a second column.
    content = (b"BT /F2 10 Tf 72 700 Td %s Tj ET\n" % u16("東京都の天気") + _show(200, 700, "next")
               + _show(72, 686, "abcdefghijkl") + _show(200, 686, "next"))
    w.add_page(content, resources=font_resources(mono, F2=cjk))
    first, second = pipeline.extract(w.to_bytes(), layout=True).pages[0].text.split("\n")
    assert first.startswith("東京都の天気") and second.startswith("abcdefghijkl")
    # the column lines up on the grid, a full-width character counting two cells
    assert _cells(first[:first.index("next")]) == _cells(second[:second.index("next")])


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def test_rotated_text_is_not_mixed_into_the_lines() -> None:
    content = (_show(72, 700, "body line one") + _show(72, 688, "body line two")
               + b"BT /F1 10 Tf 0 1 -1 0 300 690 Tm (SIDEWAYS) Tj ET\n")
    lines = _layout(_mono_pdf(content))
    assert lines[:2] == ["body line one", "body line two"]
    assert lines[-1] == "SIDEWAYS" and lines[-2] == ""


def test_the_cli_writes_layout_text(tmp_path: Path) -> None:
    content = b"".join(_show(72, 700 - 12 * i, left) + _show(320, 700 - 12 * i, right)
                       for i, (left, right) in enumerate(zip(LEFT, RIGHT, strict=True)))
    pdf = write(tmp_path / "columns.pdf", _mono_pdf(content))
    out = tmp_path / "columns.txt"
    r = run_cli("extract", pdf, "--layout", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_text("utf-8").split("\n") == _layout(pdf.read_bytes())
    r = run_cli("extract", pdf, "--layout")
    assert r.stdout.rstrip("\n").split("\n") == _layout(pdf.read_bytes())


# ---- /Rotate: the grid in the page's displayed orientation -----------------------------

TABLE = [("item", "qty", "price"), ("apples", "12", "3.50"), ("kiwi", "7", "12.00")]
#: For each /Rotate, the cm that draws upright-shown content on a 612 x 792 page:
#: the inverse of the turn a viewer applies (clockwise), as producers of landscape
#: pages write it, so the displayed page shows the table upright.
UPRIGHT_CM = {0: None, 90: (0, 1, -1, 0, 612, 0), 180: (-1, 0, 0, -1, 612, 792), 270: (0, -1, 1, 0, 0, 792)}


def _table(by_column: bool) -> bytes:
    """The table in display coordinates (it fits the 612-point-high landscape
    page), drawn row by row or column by column."""
    cells = [(r, c) for c in range(3) for r in range(3)] if by_column else [(r, c) for r in range(3) for c in range(3)]
    return b"".join(_show((72, 200, 300)[c], 500 - 14 * r, TABLE[r][c]) for r, c in cells)


def _rotated_pdf(rotate: int, turn: int, content: bytes) -> bytes:
    cm = UPRIGHT_CM[turn]
    if cm is not None:
        content = b"q %d %d %d %d %d %d cm\n" % cm + content + b"Q\n"
    w = PdfWriter()
    w.add_page(content, resources=font_resources(mono_font(w)), rotate=rotate or None)
    return w.to_bytes()


@pytest.mark.parametrize("by_column", [False, True], ids=["rows", "columns"])
@pytest.mark.parametrize(("rotate", "turn"), [(90, 90), (180, 180), (270, 270), (-90, 270), (-270, 90),
                                              (450, 90), (100, 90), (-100, 270), (45, 0)])
def test_a_rotated_page_is_laid_out_as_displayed(rotate: int, turn: int, by_column: bool) -> None:
    """A table drawn upright for the viewer of a /Rotate page comes out as on an
    unrotated page: the grid is built in the displayed orientation. A value that is
    not a multiple of 90 counts its whole quarter turns, as pdfium (the page images)
    reads it; a negative one turns the other way."""
    upright = _layout(_rotated_pdf(0, 0, _table(by_column)))
    assert [line.split() for line in upright] == [list(row) for row in TABLE]
    for column in (1, 2):
        assert len({line.index(row[column]) for line, row in zip(upright, TABLE, strict=True)}) == 1, upright
    rotated = _rotated_pdf(rotate, turn, _table(by_column))
    assert _layout(rotated) == upright
    # the reading flow never depended on the rotation
    assert pipeline.extract(rotated).pages[0].text == pipeline.extract(_rotated_pdf(0, 0, _table(by_column))).pages[0].text


def test_text_drawn_along_x_on_a_rotated_page_is_sideways_for_the_grid() -> None:
    """On a /Rotate 90 page, text drawn along the user-space x axis runs down the
    displayed page: it follows the grid as reading flow, as rotated text does."""
    w = PdfWriter()
    w.add_page(b"q 0 1 -1 0 612 0 cm\n" + _table(False) + b"Q\n" + _show(72, 700, "shown sideways"),
               resources=font_resources(mono_font(w)), rotate=90)
    lines = _layout(w.to_bytes())
    assert lines[:3] == _layout(_rotated_pdf(0, 0, _table(False)))
    assert lines[3:] == ["", "shown sideways"]


@pytest.mark.parametrize(("rotate", "turn"), [(90, 0), (0, 90), (0, 270), (270, 180)])
def test_a_table_shown_sideways_is_laid_out_along_its_text(rotate: int, turn: int) -> None:
    """When most of the page's text runs along another quarter turn of the
    displayed page (a /Rotate stamped on an upright page, a landscape table drawn
    turned on a page without /Rotate), the grid follows the text, as pdftotext
    -layout does: read sideways, the table would be only its cells in a column."""
    w = PdfWriter()
    cm = UPRIGHT_CM[turn]
    w.add_page((b"q %d %d %d %d %d %d cm\n" % cm if cm else b"q\n") + _table(True) + b"Q\n",
               resources=font_resources(mono_font(w)), rotate=rotate or None)
    assert _layout(w.to_bytes()) == _layout(_rotated_pdf(0, 0, _table(True)))


def test_the_displayed_orientation_wins_a_tie() -> None:
    """As many glyphs upright as displayed as along the user-space x axis: the
    page's /Rotate decides which are the grid."""
    def page(rotate: int | None) -> list[str]:
        w = PdfWriter()
        w.add_page(b"q 0 1 -1 0 612 0 cm\n" + _show(72, 500, "abc") + b"Q\n" + _show(300, 300, "xyz"),
                   resources=font_resources(mono_font(w)), rotate=rotate)
        return _layout(w.to_bytes())

    assert page(90) == ["abc", "", "xyz"]
    assert page(None) == ["xyz", "", "abc"]


def test_realworld_rotated_pages_lay_out_as_the_upright_one(realworld: Path) -> None:
    """pymupdf's test-2812: one table of cells on four pages, /Rotate 0, 90, 180 and
    270, drawn to show upright on each (pdftotext -layout gives one table four
    times)."""
    pages = pipeline.extract(realworld / "pymupdf__test-2812.pdf", layout=True).pages
    first = pages[0].text.split("\n")
    assert first[0].split() == [f"cell[0][{c}]" for c in range(5)]
    assert len({line.index("cell[", 1) for line in first if line.startswith("cell[")}) == 1
    assert [page.text for page in pages[1:]] == [pages[0].text] * 3


def test_realworld_rotate_stamped_on_a_landscape_table(realworld: Path) -> None:
    """pdfplumber's nics-…-rotated.pdf is the landscape table of nics-….pdf with
    /Rotate 90 added, so a viewer shows it sideways: its layout text is the
    upright file's, grid and all."""
    rotated = pipeline.extract(realworld / "pdfplumber__nics-background-checks-2015-11-rotated.pdf", layout=True)
    plain = pipeline.extract(realworld / "pdfplumber__nics-background-checks-2015-11.pdf", layout=True)
    assert rotated.pages[0].text == plain.pages[0].text
    assert any(line.split()[:3] == ["Alabama", "18,870", "23,022"] and "   " in line
               for line in plain.pages[0].text.split("\n"))
