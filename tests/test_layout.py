"""R15 layout text (issue 11): columns side by side, table cells aligned, indentation,
blank lines for large vertical gaps, full-width CJK as two cells, rotated text kept
out of the lines; the same decoding as reading flow. Byte-built pages."""
from __future__ import annotations

import unicodedata
from collections import Counter
from pathlib import Path

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
