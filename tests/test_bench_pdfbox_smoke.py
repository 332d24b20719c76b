"""Keeps bench/pdfbox_expected.py honest where it decides things itself: which files
pair with which expected texts (PDFBox's TestTextStripper rule: ``X.pdf`` directly in the
folder, ``X.pdf.txt`` and ``X.pdf-sorted.txt`` beside it, read past their byte order
mark), when a file is listed, and that the bench runs end to end on a folder built here
with hand-written expected texts. PDFBox's own files are not needed: they stay outside
the project."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.pdfwriter import PdfWriter

from bench import ocr, pdfbox_expected
from bench.pdfbox_expected import Case, is_listed
from bench.peer_agreement import OURS, Extraction

LINES = ["The quick brown fox jumps over the lazy dog.", "Every morning the baker opens his shop early."]
BOM = "\ufeff"


def prose_pdf(path: Path, lines: list[str]) -> Path:
    """One page of Helvetica lines."""
    w = PdfWriter(file_id=path.stem.encode().ljust(16, b"-")[:16])
    font = w.standard_font("Helvetica", encoding="WinAnsiEncoding")
    shows = b" T* ".join(b"(%s) Tj" % line.encode("latin-1") for line in lines)
    w.add_page(b"BT /F1 11 Tf 14 TL 72 720 Td " + shows + b" ET\n", resources={"Font": {"F1": font}})
    return w.save(path)


@pytest.fixture(scope="module")
def scorer(producers: Path) -> ModuleType:
    return ocr.load_scorer(producers / "score.py")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out as PDFBox's ``src/test/resources/input``, with its odd cases."""
    root = tmp_path_factory.mktemp("pdfbox-input")
    prose_pdf(root / "prose.pdf", LINES)
    # TestTextStripper writes a byte order mark and a trailing space before each line break
    (root / "prose.pdf.txt").write_text(BOM + "".join(line + " \n" for line in LINES), encoding="utf-8")
    (root / "prose.pdf-sorted.txt").write_text(BOM + "\n".join(LINES) + "\n", encoding="utf-8")
    prose_pdf(root / "unsorted-only.pdf", LINES[:1])
    (root / "unsorted-only.pdf.txt").write_text("The quick brown fox jumps over the lazy dog\n", encoding="utf-8")
    prose_pdf(root / "no-text.pdf", LINES[:1])  # a PDF PDFBox keeps no expected text for
    (root / "prose.pdf-tabula.txt").write_text("another test's file\n", encoding="utf-8")
    prose_pdf(root / "upper.PDF", LINES[:1])  # Java's endsWith(".pdf") is case-sensitive
    (root / "upper.PDF.txt").write_text("x\n", encoding="utf-8")
    (root / "sub").mkdir()  # TestTextStripper does not descend into sub-folders
    prose_pdf(root / "sub" / "inner.pdf", LINES[:1])
    (root / "sub" / "inner.pdf.txt").write_text("x\n", encoding="utf-8")
    return root


# ---- pairing ----------------------------------------------------------------------------------

def test_pdfs_pair_with_their_expected_texts_as_testtextstripper_pairs_them(folder: Path) -> None:
    found = pdfbox_expected.pair_files(folder)
    assert found.cases == [Case(folder / "prose.pdf", folder / "prose.pdf.txt", folder / "prose.pdf-sorted.txt"),
                           Case(folder / "unsorted-only.pdf", folder / "unsorted-only.pdf.txt", None)]
    assert found.without_expected == ["no-text.pdf"]
    assert found.unpaired == ["prose.pdf-tabula.txt", "upper.PDF.txt"]


def test_the_expected_text_is_read_past_its_byte_order_mark(folder: Path) -> None:
    text = pdfbox_expected.read_expected(folder / "prose.pdf.txt")
    assert text.startswith("The quick") and BOM not in text
    (folder / "bad.txt").write_bytes(b"caf\xe9\n")  # not UTF-8: one character lost, not the file
    try:
        assert pdfbox_expected.read_expected(folder / "bad.txt") == "caf\ufffd\n"
    finally:
        (folder / "bad.txt").unlink()


# ---- the listing rule, numbers by hand (binary fractions, so "exactly the margin" is exact) ----

def test_pdfindex_is_listed_more_than_the_margin_below_the_best_other() -> None:
    assert is_listed({OURS: 0.5, "a": 0.75, "b": 1.0}, margin=0.25, all_wrong=0.125)
    assert not is_listed({OURS: 0.75, "a": 0.5, "b": 1.0}, margin=0.25, all_wrong=0.125)  # exactly the margin
    assert not is_listed({OURS: 1.0, "a": 0.5}, margin=0.25, all_wrong=0.125)  # pdfindex best
    assert is_listed({OURS: 0.0, "a": 1.0}, margin=0.25, all_wrong=0.125)  # a failure scores 0
    assert not is_listed({OURS: 0.0}, margin=0.25, all_wrong=0.125)  # nobody to compare with


def test_nothing_is_listed_where_every_system_disagrees_with_the_reference() -> None:
    # every system, pdfindex too, more than all_wrong below 1.0: the reference is the suspect
    f1 = {OURS: 0.25, "a": 0.75, "b": 0.5}
    assert not is_listed(f1, margin=0.25, all_wrong=0.125) and pdfbox_expected.all_disagree(f1, 0.125)
    # one system within all_wrong of 1.0 is enough to judge; exactly all_wrong below counts as agreeing
    assert is_listed({**f1, "b": 0.875}, margin=0.25, all_wrong=0.125)
    assert not pdfbox_expected.all_disagree({**f1, "b": 0.875}, 0.125)
    # the default bounds are the brief's: 0.02 below the best other, all below 0.9
    assert is_listed({OURS: 0.875, "a": 0.9375})
    assert not is_listed({OURS: 0.5, "a": 0.875})


# ---- judging real texts -------------------------------------------------------------------------

def test_judge_scores_every_system_and_lists_lost_word_spaces(folder: Path, scorer: ModuleType) -> None:
    case = pdfbox_expected.pair_files(folder).cases[0]
    right = "\n".join(LINES)
    merged = LINES[0].replace(" ", "") + "\n" + LINES[1]
    runs = {OURS: Extraction(text=merged), "peer": Extraction(text=right), "broken": Extraction(error="crashed: x")}

    result = pdfbox_expected.judge(case, runs, scorer)

    assert result.reference_tokens == result.sorted_tokens == 17
    assert result.verdict == "listed"
    assert result.systems["peer"]["f1"] == result.systems["peer"]["f1_sorted"] == 1.0
    assert result.systems["broken"]["status"] == "crash" and result.systems["broken"]["f1"] == 0.0
    assert result.systems[OURS]["f1"] < 0.8
    assert result.hint is not None and result.hint.extra == ("Thequickbrownfoxjumpsoverthelazydog",)
    assert result.hint.missing[:3] == ("The", "quick", "brown") and result.hint.missing_count == 9
    # pdfindex right again: not listed, and the means count the crash as 0
    fixed = pdfbox_expected.judge(case, {**runs, OURS: Extraction(text=right)}, scorer)
    assert fixed.verdict == "ok"
    summary = pdfbox_expected.means([fixed], [OURS, "peer", "broken"])
    assert summary[OURS].mean == summary[OURS].weighted == 1.0 and summary["broken"].mean == 0.0
    assert pdfbox_expected.target(summary, [fixed])[0]
    assert not pdfbox_expected.target(summary, [result])[0]


def test_the_bench_runs_on_a_built_folder(folder: Path, producers: Path, tmp_path: Path) -> None:
    """As a user runs it, pdfindex and pypdf (a quick import) only; pdfindex reads the
    prose as written, and the PDFs without expected text are named, not scored."""
    out = tmp_path / "pdfbox.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = pdfbox_expected.main(["--input", str(folder), "--peers", "pypdf", "--timeout", "60",
                                     "--scorer", str(producers / "score.py"), "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [f["file"] for f in data["files"]] == ["prose.pdf", "unsorted-only.pdf"]
    prose = data["files"][0]
    assert prose["systems"][OURS]["status"] == "ok" and prose["systems"][OURS]["f1"] == 1.0, prose
    assert data["without_expected"] == ["no-text.pdf"] and data["listed"] == []
    assert data["summary"][OURS]["mean"] == 1.0
    text = printed.getvalue()
    assert "PDFs without X.pdf.txt, not scored: no-text.pdf" in text
    assert "Listed (pdfindex more than 0.02 below the best other): none" in text, text
