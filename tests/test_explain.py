"""``pdfindex explain`` (issue 11, item 3): each glyph's measured gap, threshold and
decision with its SPEC rule, the line moves, the glyphs the visible box dropped.
Byte-built pages: a TJ gap, a kerning pair, a crop-box slug."""
from __future__ import annotations

import json
from pathlib import Path

from pdfindex import pipeline
from pdfindex.pipeline.explain import Explanation, explain_page
from tests.builders import mono_font, one_page_pdf
from tests.ingest_helpers import run_cli, write
from tests.pdfwriter import PdfWriter


def _explain(content: bytes, near: str | None = None, **page_kw: object) -> Explanation:
    w = PdfWriter()
    data = one_page_pdf(content, {"F1": mono_font(w)}, w=w, **page_kw)
    return explain_page(pipeline.PdfFile(data), 1, near=near)


def _step(result: Explanation, text: str, nth: int = 0):  # type: ignore[no-untyped-def]
    return [s for s in result.steps if s.text == text][nth]


def test_a_tj_gap_is_a_word_space_and_says_so() -> None:
    result = _explain(b"BT /F1 10 Tf 72 700 Td [(Hello) -300 (world)] TJ ET")
    assert result.text == "Hello world"
    w = _step(result, "w")
    assert w.space and w.gap is not None and w.threshold is not None and w.gap > w.threshold
    assert "word space (R11)" in w.space_rule
    e = _step(result, "e")
    assert not e.space and "no space (R11)" in e.space_rule and e.gap == 0.0


def test_a_kerning_pair_is_no_space() -> None:
    result = _explain(b"BT /F1 10 Tf 72 700 Td [(A) 80 (V)] TJ ET")
    assert result.text == "AV"
    v = _step(result, "V")
    assert not v.space and v.gap is not None and v.gap < 0 and "within the threshold" in v.space_rule


def test_line_moves_and_white_space_glyphs() -> None:
    result = _explain(b"BT /F1 10 Tf 72 700 Td (one two) Tj 0 -14 Td (three) Tj ET")
    assert result.text == "one two\nthree"
    space = _step(result, " ")
    assert "white-space glyph" in space.space_rule
    t = _step(result, "t", 1)  # the first glyph of line 2 ("two" has the first t)
    assert t.line == 2 and t.new_line and "a new line (R12)" in t.line_rule and t.move == 14.0
    o = _step(result, "o", 1)
    assert o.line == 1 and "one baseline (R12)" in o.line_rule


def test_a_crop_box_slug_is_listed_as_dropped() -> None:
    content = b"BT /F1 10 Tf 72 700 Td (kept) Tj ET BT /F1 10 Tf 72 20 Td (slug) Tj ET"
    result = _explain(content, crop_box=[0, 100, 612, 792])
    assert result.text == "kept"
    assert "".join(t for t, _x, _y in result.dropped) == "slug"
    assert result.box == (0.0, 100.0, 612.0, 792.0)


def test_near_keeps_the_lines_holding_the_text() -> None:
    result = _explain(b"BT /F1 10 Tf 72 700 Td (alpha) Tj 0 -14 Td (beta gamma) Tj ET", near="GAMMA")
    assert {s.line for s in result.steps} == {2}
    assert "".join(s.text for s in result.steps) == "beta gamma"


def test_the_cli_prints_aligned_columns_and_json(tmp_path: Path) -> None:
    w = PdfWriter()
    pdf = write(tmp_path / "tj.pdf", one_page_pdf(b"BT /F1 10 Tf 72 700 Td [(Hello) -300 (world)] TJ ET",
                                                  {"F1": mono_font(w)}, w=w))
    r = run_cli("explain", pdf, "--page", "1")
    assert r.returncode == 0, r.stderr
    assert "word space (R11)" in r.stdout and "line 1:" in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("  '")]
    assert len(rows) == 10
    assert all(row[11:19].strip().replace(".", "", 1).isdigit() for row in rows), rows  # x in one column
    data = json.loads(run_cli("explain", pdf, "--page", "1", "--json").stdout)
    assert data["text"] == "Hello world" and len(data["steps"]) == 10
    bad = run_cli("explain", pdf, "--page", "9")
    assert bad.returncode == 2 and "out of range" in bad.stderr
