"""Keeps bench/ocr.py from rotting: its character error rate against distances worked
out by hand (and against the plain dynamic programme), its per-variant and
per-language tables against means taken by hand, and, marked slow, the bench itself
on one small scan with the tesseract CLI alone. No figure of any OCR is judged."""
from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.paths import ROOT

from bench import ocr, ocr_known_item

SMALL_SCAN = "chromium__ko__clean"  # one page, one language


# ---- CER ------------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "distance"), [
    ("", "", 0),
    ("abc", "abc", 0),
    ("", "abc", 3),
    ("abc", "", 3),
    ("kitten", "sitting", 3),  # k->s, e->i, +g
    ("flaw", "lawn", 2),  # -f, +n
    ("intention", "execution", 5),
    ("garçon", "garcon", 1),  # the fax's lost cedilla
    ("über", "iiber", 2),  # ü read as ii: one substitution, one insertion
    ("CO2", "CO", 1),  # a lost subscript
    ("日本語", "日本", 1),
    ("a" * 70, "b" * 70, 70),  # longer than a machine word
])
def test_levenshtein_gives_the_distances_worked_out_by_hand(a: str, b: str, distance: int) -> None:
    assert ocr.levenshtein(a, b) == distance
    assert ocr.levenshtein(b, a) == distance


def _plain_distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_levenshtein_agrees_with_the_plain_dynamic_programme() -> None:
    rng = random.Random(22)
    for _ in range(500):
        a = "".join(rng.choices("abé 数字", k=rng.randint(0, 90)))
        b = "".join(rng.choices("abé 数字", k=rng.randint(0, 90)))
        assert ocr.levenshtein(a, b) == _plain_distance(a, b), (a, b)


def test_cer_counts_characters_not_layout() -> None:
    assert ocr.cer("two  words\n\nand\fmore", "two words and more") == 0.0  # whitespace runs are one space
    assert ocr.cer("ﬁne", "fine") == 0.0  # NFKC: the ligature is f, i
    assert ocr.cer("abcd", "abed") == 0.25
    assert ocr.cer("garçon", "garcon") == pytest.approx(1 / 6)
    assert ocr.cer("text", "") == 1.0
    assert ocr.cer("ab", "abcdef") == 2.0  # more output than truth can cost more than 1
    assert ocr.cer("", "") == 0.0


# ---- tables ---------------------------------------------------------------------------

def _result(stem: str, system: str, variant: str, langs: str, pages: int, f1: float, cer: float, cpu: float,
            error: str | None = None) -> ocr.Result:
    return ocr.Result(stem, system, variant, langs, pages, f1, cer, cpu, cpu, error)


def test_summaries_are_means_over_files_per_variant_and_language() -> None:
    results = [
        _result("a__clean", "tesseract", "clean", "eng+deu+fra", 2, 0.9, 0.1, 8.0),
        _result("b__fax", "tesseract", "fax", "kor", 1, 0.5, 0.4, 3.0),
        _result("c__fax", "tesseract", "fax", "eng+deu+fra", 1, 0.7, 0.2, 5.0),
        _result("a__clean", "ocrmypdf", "clean", "eng+deu+fra", 2, 0.8, 0.2, 10.0),
        _result("b__fax", "ocrmypdf", "fax", "kor", 1, 0.0, 1.0, 99.0, error="exit 2: boom"),
        _result("c__fax", "ocrmypdf", "fax", "eng+deu+fra", 1, 0.6, 0.3, 2.0),
    ]
    summary = ocr.summarise(results)

    assert list(summary) == ["overall", "variant clean", "variant fax", "lang eng+deu+fra", "lang kor"]
    overall = summary["overall"]["tesseract"]
    assert overall.files == 3 and overall.failures == 0
    assert overall.f1 == pytest.approx((0.9 + 0.5 + 0.7) / 3)
    assert overall.cer == pytest.approx((0.1 + 0.4 + 0.2) / 3)
    assert overall.cpu_per_page == pytest.approx(16.0 / 4)
    fax = summary["variant fax"]["tesseract"]
    assert (fax.files, fax.f1, fax.cpu_per_page) == (2, pytest.approx(0.6), pytest.approx(4.0))
    # a failed file counts in the means (F1 0, CER 1) and not in the CPU per page
    ours = summary["variant fax"]["ocrmypdf"]
    assert (ours.failures, ours.f1, ours.cer, ours.cpu_per_page) == (1, pytest.approx(0.3), pytest.approx(0.65),
                                                                     pytest.approx(2.0))
    assert summary["lang kor"]["ocrmypdf"].cpu_per_page is None
    assert summary["lang eng+deu+fra"]["ocrmypdf"].f1 == pytest.approx(0.7)


def test_report_marks_partial_and_total_failures(capsys: pytest.CaptureFixture[str]) -> None:
    results = [_result("a__clean", "pdfindex", "clean", "kor", 1, 0.0, 1.0, 0.1, error="no --ocr"),
               _result("b__fax", "pdfindex", "fax", "kor", 1, 0.0, 1.0, 0.1, error="no --ocr"),
               _result("a__clean", "tesseract", "clean", "kor", 1, 0.9, 0.1, 2.0),
               _result("b__fax", "tesseract", "fax", "kor", 1, 0.0, 1.0, 0.0, error="timeout")]
    info = ocr.RunInfo("scans", 2, 2, ["pdfindex", "tesseract"], 1, {"tesseract": "5"}, {})
    ocr.print_report(results, ["pdfindex", "tesseract"], info)
    out = capsys.readouterr().out
    assert re.search(r"^overall \(2\)\s+failed\s+0\.450\*$", out, re.M), out
    assert re.search(r"^  pdfindex\s+2 files, e\.g\. a__clean: no --ocr$", out, re.M), out


def test_languages_are_what_a_user_would_pass() -> None:
    assert ocr.tesseract_langs("eng+deu", ["table", "accents"]) == "eng+deu+fra"
    assert ocr.tesseract_langs("jpn", ["vertical"]) == "jpn_vert"
    assert ocr.tesseract_langs("jpn", []) == "jpn"
    assert ocr.tesseract_langs("chi_sim", []) == "chi_sim"


def test_known_item_passes_over_a_files_twins() -> None:
    twins = ocr_known_item.twins({"x__clean": "same", "x__fax": "same", "y__clean": "other"})
    assert twins == {"x__clean": {"x__fax"}, "x__fax": {"x__clean"}, "y__clean": set()}
    query = ocr_known_item.Query("x__fax", ("one", "two", "three"))
    assert ocr_known_item.first_other_than_twins(["x__clean", "x__fax", "y__clean"], query, twins) == "x__fax"
    assert ocr_known_item.first_other_than_twins(["x__clean", "y__clean"], query, twins) == "y__clean"
    assert ocr_known_item.ingest_ocr_args("  --ocr {auto,off,force}  which pages") == ["--ocr", "force"]
    assert ocr_known_item.ingest_ocr_args("  --ocr   OCR the needs-OCR pages") == ["--ocr"]
    assert ocr_known_item.ingest_ocr_args("  --force  extract again") == []


def test_fts5_gets_the_search_pdfindex_gives_when_few_hold_every_word() -> None:
    """The peers' texts are searched as pdfindex searches (indexer/relaxed.py): after
    the few documents holding all three words, those holding most of them; the note
    keeps the figure of the three words alone."""
    twins = ocr_known_item.twins({"x__clean": "same", "x__fax": "same", "y__clean": "other", "z__clean": "z"})
    texts = {"x__clean": "one two three", "x__fax": "one twa three", "y__clean": "one other", "z__clean": "two"}
    query = ocr_known_item.Query("x__fax", ("one", "two", "three"))
    scorer = SimpleNamespace(HAN_KANA="\u4e00-\u9fff")
    score = ocr_known_item.fts5_score("peer", texts, [query], twins, scorer)  # type: ignore[arg-type]
    assert score.missed == [] and score.note.endswith("all three words alone: 0/1")
    lost = ocr_known_item.fts5_score("peer", {**texts, "x__fax": "one twa thre"}, [query], twins, scorer)  # type: ignore[arg-type]
    assert lost.missed == [query]  # one word of three: shorter pages holding one rank first


def test_query_words_are_rare_or_else_the_files_rarest() -> None:
    df = {"a": 1, "b": 2, "c": 2, "d": 3, "e": 5, "f": 9}
    assert ocr_known_item.word_pool(set(df), df, max_df=2, least=3) == ["a", "b", "c"]
    assert ocr_known_item.word_pool({"d", "e", "f"}, df, max_df=2, least=2) == ["d", "e"]
    assert ocr_known_item.word_pool({"b", "d", "e", "f"}, df, max_df=2, least=3) == ["b", "d", "e"]
    assert ocr_known_item.word_pool(set(), df) == []


# ---- the bench, once ------------------------------------------------------------------

@pytest.mark.slow
def test_bench_runs_the_tesseract_cli_on_one_scan(scans: Path, tmp_path: Path) -> None:
    """``python -m bench.ocr`` as the README runs it, on one one-page scan, the
    tesseract CLI alone: the tables print and the JSON holds the file's numbers."""
    missing = [tool for tool in ("tesseract", "pdftoppm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install tesseract-ocr poppler-utils)")
    out = tmp_path / "ocr.json"
    done = subprocess.run([sys.executable, "-m", "bench.ocr", "--corpus", str(scans), "--systems", "tesseract",
                           "--files", SMALL_SCAN, "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    assert re.search(r"^overall \(1\)\s+\d\.\d{3}$", done.stdout, re.M), done.stdout
    assert "Failures (scored F1 0, CER 1): none" in done.stdout, done.stdout
    data = json.loads(out.read_text(encoding="utf-8"))
    [result] = data["files"]
    assert (result["stem"], result["system"], result["langs"], result["error"]) == (SMALL_SCAN, "tesseract", "kor",
                                                                                     None)
    assert 0 < result["f1"] <= 1 and result["cer"] >= 0 and result["cpu"] > 0
    assert set(data["summary"]) == {"overall", "variant clean", "lang kor"}
