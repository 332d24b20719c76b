"""R16 whole documents (issue 11, item 2): a page range to a file or stream, a page
separator (default form feed), an optional UTF-8 BOM, the number of pages written;
and page ranges that say what is wrong with them. Real PDFs from tests/pdfwriter.py,
the real CLI."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from pdfindex import pipeline
from tests.ingest_helpers import page_word, run_cli, text_pdf, write

PAGES = 4


@pytest.fixture(scope="module")
def pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("export") / "four.pdf", text_pdf("exp", PAGES))


def _texts(pdf: Path) -> list[str]:
    return [page.text for page in pipeline.extract(pdf).pages]


def test_every_page_separated_by_form_feeds_and_the_count_returned(pdf: Path) -> None:
    out = io.BytesIO()
    assert pipeline.export_text(pdf, out) == PAGES
    data = out.getvalue()
    assert data.count(b"\f") == PAGES - 1 and not data.startswith(b"\xef\xbb\xbf")
    parts = data.decode("utf-8").split("\f")
    assert parts == _texts(pdf)
    assert all(page_word("exp", n) in part for n, part in enumerate(parts, 1))


def test_a_range_a_separator_and_a_bom(pdf: Path) -> None:
    out = io.BytesIO()
    pages = pipeline.parse_page_ranges("3-4,1", PAGES)
    assert pipeline.export_text(pdf, out, pages=pages, separator="\n=====\n", bom=True) == 3
    data = out.getvalue()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    texts = _texts(pdf)
    assert data[3:].decode("utf-8") == "\n=====\n".join([texts[2], texts[3], texts[0]])


def test_to_a_path_the_file_is_replaced_whole_or_not_at_all(pdf: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"previous contents")
    assert pipeline.export_text(pdf, target, pages=[2]) == 1
    assert target.read_text("utf-8") == _texts(pdf)[1]
    broken = write(tmp_path / "broken.pdf", b"%PDF-1.4\nnot really a pdf\n")
    with pytest.raises(pipeline.ExtractionError):
        pipeline.export_text(broken, target)
    assert target.read_text("utf-8") == _texts(pdf)[1]  # untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.pdf", "out.txt"]  # no part file left


@pytest.mark.parametrize(("spec", "message"), [
    ("20-30", "the document has 4 pages"), ("5", "the document has 4 pages"), ("2-9", "the document has 4 pages"),
    ("0", "numbered from 1"), ("0-2", "numbered from 1"), ("9-3", "runs backwards"), ("abc", "whole numbers"),
    ("1-x", "whole numbers"), ("-", "whole numbers"), ("1.5", "whole numbers"), ("١", "whole numbers"),
])
def test_bad_page_ranges_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pipeline.parse_page_ranges(spec, PAGES)


@pytest.mark.parametrize(("spec", "pages"), [
    ("", [1, 2, 3, 4]), (" ", [1, 2, 3, 4]), ("2-", [2, 3, 4]), ("-2", [1, 2]), ("1,3", [1, 3]), ("4,1-2", [4, 1, 2]),
    (" 2 - 3 ", [2, 3]),
])
def test_good_page_ranges(spec: str, pages: list[int]) -> None:
    assert pipeline.parse_page_ranges(spec, PAGES) == pages


def test_the_cli_writes_the_file_and_says_how_many_pages(pdf: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    r = run_cli("extract", pdf, "--pages", "2-3", "-o", target, "--separator", r"\n--\n", "--bom")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr.strip() == f"pdfindex: {pdf}: 2 pages written to {target}"
    texts = _texts(pdf)
    assert target.read_bytes() == b"\xef\xbb\xbf" + "\n--\n".join(texts[1:3]).encode("utf-8")


def test_the_cli_refuses_bad_ranges_with_a_usage_status(pdf: Path, tmp_path: Path) -> None:
    for spec, message in (("20-30", "the document has 4 pages"), ("abc", "whole numbers"), ("0", "from 1")):
        r = run_cli("extract", pdf, "--pages", spec, "-o", tmp_path / "x.txt")
        assert r.returncode == 2, (spec, r.stderr)
        assert r.stderr.startswith(f"pdfindex: {pdf}: bad page range {spec!r}: ") and message in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1  # one line, no traceback
        assert not (tmp_path / "x.txt").exists()
    r = run_cli("extract", pdf, "--json", "-o", tmp_path / "x.txt")
    assert r.returncode == 2 and "--json cannot be combined" in r.stderr
