"""Issue 3: ``pdfindex search``, ``stats`` and ``reindex`` run as real processes
against an index built here with the API."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from pdfindex.indexer import PageIndex, Status
from tests.index_helpers import GB, cjk_pdf, extracted, folded, page, record
from tests.ingest_helpers import run_in_home as run

REPORT = "/docs/finance/report-2023.pdf"
LETTER = "/docs/letters/letter-to-bank.pdf"
ZH = "/docs/cjk/zh.pdf"
BROKEN = "/docs/broken/bad-file.pdf"


def _build(root: Path, language: str = "en") -> PageIndex:
    ix = PageIndex(root, language)
    with ix.writer() as writer:
        pages = [page(1, "revenue grew strongly this year"),
                 page(2, "revenue table scanned badly", coverage=0.3, needs_ocr=True)]
        writer.add(record("report", REPORT, pages, title="Annual Report"), pages)
        pages = [page(1, "the revenue of the bank", coverage=0.8)]
        writer.add(record("letter", LETTER, pages), pages)
        writer.add(*extracted(cjk_pdf([["PDF中文全文检索系统"]], GB), ZH))
        writer.add(record("broken", BROKEN, [], status=Status.FAILED, error="no startxref", page_count=0), [])
    return ix


@pytest.fixture(scope="module")
def index(engine: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "index"
    _build(root)
    return root


def test_the_index_is_on_the_engine_under_test(engine: str, index: Path) -> None:
    """The index fixture asks for ``engine`` (tests/conftest.py): else it
    would be built once and kept for the other engine's tests."""
    assert PageIndex(index).engine == engine


def search_json(home: Path, index: Path, query: str, *options: str) -> dict:  # type: ignore[type-arg]
    proc = run(home, "search", query, "--json", "--index", index, *options)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return json.loads(proc.stdout)


def _pages(out: dict) -> set[tuple[str, int]]:  # type: ignore[type-arg]
    return {(h["path"], h["page"]) for h in out["hits"]}


def _one_error_line(proc: subprocess.CompletedProcess[str], status: int = 1) -> str:
    assert proc.returncode == status, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("pdfindex: ")
    return lines[0]


# ---- search ---------------------------------------------------------------------------------

def test_search_json_structure(home: Path, index: Path) -> None:
    out = search_json(home, index, "revenue")
    assert set(out) == {"version", "query", "total", "total_is_lower_bound", "took", "partial", "note", "hits",
                        "documents", "suggestion", "all_words_total"}  # as docs/json.md lists them
    assert (out["version"], out["total_is_lower_bound"], out["documents"], out["suggestion"], out["all_words_total"]) \
        == (1, False, [], "", None)
    assert out["query"] == "revenue"
    assert out["total"] == 3
    assert out["partial"] is False
    assert isinstance(out["took"], (int, float)) and out["took"] >= 0
    assert _pages(out) == {(REPORT, 1), (REPORT, 2), (LETTER, 1)}
    scores = [h["score"] for h in out["hits"]]
    assert scores == sorted(scores, reverse=True)
    for hit in out["hits"]:
        assert {"path", "page", "score", "coverage", "needs_ocr", "snippet", "highlights"} <= set(hit)
        assert isinstance(hit["page"], int) and isinstance(hit["needs_ocr"], bool)
        assert hit["highlights"], hit
        for start, end in hit["highlights"]:
            assert folded(hit["snippet"][start:end]) == "revenue"
    by_page = {(h["path"], h["page"]): h for h in out["hits"]}
    assert by_page[(REPORT, 2)]["coverage"] == 0.3 and by_page[(REPORT, 2)]["needs_ocr"] is True
    assert by_page[(LETTER, 1)]["coverage"] == 0.8 and by_page[(LETTER, 1)]["needs_ocr"] is False
    assert by_page[(REPORT, 1)]["snippet"] == "revenue grew strongly this year"


def test_search_json_cjk(home: Path, index: Path) -> None:
    out = search_json(home, index, "全文检索")
    assert _pages(out) == {(ZH, 1)}
    hit = out["hits"][0]
    assert [hit["snippet"][s:e] for s, e in hit["highlights"]] == ["全文检索"]


def test_search_by_document_json(home: Path, index: Path) -> None:
    out = search_json(home, index, "revenue", "--by-document")
    assert out["total"] == 2
    docs = {d["path"]: d for d in out["documents"]}
    assert set(docs) == {REPORT, LETTER}
    assert sorted(docs[REPORT]["pages"]) == [1, 2]
    hits = {(h["path"], h["page"]): h for h in out["hits"]}  # one hit shape, grouped or not
    assert set(hits) == {(REPORT, 1), (REPORT, 2), (LETTER, 1)}
    for doc in out["documents"]:
        pages = [hits[(doc["path"], n)] for n in doc["pages"]]
        scores = [h["score"] for h in pages]
        assert scores == sorted(scores, reverse=True) and doc["score"] == scores[0]
        assert pages[0]["snippet"] and pages[0]["highlights"]
        assert all(h["snippet"] == "" for h in pages[1:])
    assert docs[REPORT]["title"] == "Annual Report"


def test_search_plain_output(home: Path, index: Path) -> None:
    proc = run(home, "search", "revenue", "--index", index)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"3 pages matched in \d+\.\d+ s", lines[-1])
    listed = [(m.group(1), int(m.group(2))) for m in map(re.compile(r"^(\S+)  p\.(\d+)  ").match, lines) if m]
    assert set(listed) == {(REPORT, 1), (REPORT, 2), (LETTER, 1)}
    assert "\x1b[" not in proc.stdout  # no bold when stdout is not a terminal
    assert "    revenue grew strongly this year" in lines


def test_search_plain_by_document(home: Path, index: Path) -> None:
    proc = run(home, "search", "revenue", "--by-document", "--index", index)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"2 documents matched in \d+\.\d+ s", proc.stdout.splitlines()[-1])
    assert REPORT in proc.stdout and LETTER in proc.stdout


def test_search_no_match(home: Path, index: Path) -> None:
    out = search_json(home, index, "nonexistentword")
    assert out["total"] == 0 and out["hits"] == []
    proc = run(home, "search", "nonexistentword", "--index", index)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].startswith("0 pages matched")


@pytest.mark.parametrize(("options", "expected"), [
    (["--needs-ocr"], {(REPORT, 2)}),
    (["--has-text"], {(REPORT, 1), (LETTER, 1)}),
    (["--min-coverage", "0.5"], {(REPORT, 1), (LETTER, 1)}),
    (["--min-coverage", "0.9"], {(REPORT, 1)}),
    (["--path", "/docs/letters/*"], {(LETTER, 1)}),
    (["--path", "/docs/*/report*", "--has-text"], {(REPORT, 1)}),
    (["--limit", "1", "--offset", "1"], None),
])
def test_search_filters(home: Path, index: Path, options: list[str], expected: set | None) -> None:  # type: ignore[type-arg]
    out = search_json(home, index, "revenue", *options)
    if expected is None:  # pagination: the second of the three
        everything = search_json(home, index, "revenue")
        assert [(h["path"], h["page"]) for h in out["hits"]] == [
            (h["path"], h["page"]) for h in everything["hits"]][1:2]
        assert out["total"] == 3
    else:
        assert _pages(out) == expected
        assert out["total"] == len(expected)


def test_needs_ocr_and_has_text_are_exclusive(home: Path, index: Path) -> None:
    proc = run(home, "search", "revenue", "--needs-ocr", "--has-text", "--index", index)
    assert proc.returncode == 2  # argparse usage error
    assert "not allowed with" in proc.stderr


@pytest.mark.parametrize("query", ['"', "(revenue", "nosuchfield:x"])
def test_malformed_query_is_one_line_and_exit_2(home: Path, index: Path, query: str) -> None:
    line = _one_error_line(run(home, "search", query, "--index", index), status=2)
    assert "query" in line
    assert run(home, "search", query, "--json", "--index", index).stdout == ""


def test_bad_limit_is_a_bad_command_line(home: Path, index: Path) -> None:
    for option, value in (("--limit", "0"), ("--offset", "-1"), ("--min-coverage", "nan")):
        proc = run(home, "search", "revenue", option, value, "--index", index)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert option in proc.stderr.splitlines()[-1]


def test_missing_index(home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-index"
    for args in (["search", "revenue"], ["stats"], ["reindex"]):
        line = _one_error_line(run(home, *args, "--index", missing))
        assert str(missing) in line and "no index" in line
    assert not missing.exists()  # reading commands never create an index


def test_bad_setting_is_one_line(home: Path, index: Path) -> None:
    line = _one_error_line(run(home, "search", "revenue", "--index", index, PDFINDEX_SEARCH_TIMEOUT="soon"))
    assert "PDFINDEX_SEARCH_TIMEOUT" in line


# ---- stats ---------------------------------------------------------------------------------------

def test_stats_json(home: Path, index: Path) -> None:
    proc = run(home, "stats", "--json", "--index", index)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["documents"] == 4
    assert out["pages"] == 4
    assert out["by_status"] == {"indexed": 3, "failed": 1}
    assert out["size_bytes"] > 0
    assert Path(out["location"]) == index


def test_stats_plain(home: Path, index: Path) -> None:
    proc = run(home, "stats", "--index", index)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^documents: 4\b.*failed: 1.*indexed: 3", proc.stdout, re.M)
    assert re.search(r"^pages:\s+4$", proc.stdout, re.M)
    assert str(index) in proc.stdout


# ---- reindex --------------------------------------------------------------------------------------

@pytest.mark.usefixtures("engine")
def test_reindex_changes_language_and_search_follows_the_index(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    _build(root)
    proc = run(home, "reindex", "--language", "none", "--index", root)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"reindexed 8 records", proc.stdout)  # 4 file records and 4 pages
    assert os.readlink(root / "current") == "gen-000002"
    # The index's own language is used to search, whatever PDFINDEX_LANGUAGE says.
    assert _pages(search_json(home, root, "revenue")) == {(REPORT, 1), (REPORT, 2), (LETTER, 1)}
    assert json.loads(run(home, "stats", "--json", "--index", root).stdout)["language"] == "none"
    # reindex without --language keeps it; with one, switches back.
    assert run(home, "reindex", "--index", root).returncode == 0
    assert os.readlink(root / "current") == "gen-000003"
    assert json.loads(run(home, "stats", "--json", "--index", root).stdout)["language"] == "none"
    assert run(home, "reindex", "--language", "en", "--index", root).returncode == 0
    assert json.loads(run(home, "stats", "--json", "--index", root).stdout)["language"] == "en"
    assert _pages(search_json(home, root, "revenue")) == {(REPORT, 1), (REPORT, 2), (LETTER, 1)}


# ---- where the index is -------------------------------------------------------------------------

def test_index_dir_from_environment(home: Path, index: Path) -> None:
    proc = run(home, "search", "revenue", "--json", PDFINDEX_INDEX_DIR=str(index))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total"] == 3
    stats = json.loads(run(home, "stats", "--json", PDFINDEX_INDEX_DIR=str(index)).stdout)
    assert Path(stats["location"]) == index


def test_index_option_wins_over_environment(home: Path, index: Path, tmp_path: Path) -> None:
    proc = run(home, "stats", "--json", "--index", index, PDFINDEX_INDEX_DIR=str(tmp_path / "elsewhere"))
    assert proc.returncode == 0, proc.stderr
    assert Path(json.loads(proc.stdout)["location"]) == index


@pytest.mark.usefixtures("engine")
def test_default_index_dir_is_under_xdg_data_home(home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    _build(data / "pdfindex" / "index")
    proc = run(home, "stats", "--json", XDG_DATA_HOME=str(data))
    assert proc.returncode == 0, proc.stderr
    assert Path(json.loads(proc.stdout)["location"]) == data / "pdfindex" / "index"
    # Without XDG_DATA_HOME: ~/.local/share/pdfindex/index, absent in this fresh home.
    line = _one_error_line(run(home, "stats"))
    assert str(home / ".local" / "share" / "pdfindex" / "index") in line


# ---- issue 20: what a search shows -------------------------------------------------------------

@pytest.mark.parametrize("sort", ["date", "path"])
def test_hits_sorted_by_date_or_path_have_no_score(home: Path, index: Path, sort: str) -> None:
    """Sorted by date or path, a hit is not scored: Whoosh's sort key (-9.2e18 for a
    date) used to be shown as its score."""
    out = search_json(home, index, "revenue", "--sort", sort)
    assert len(out["hits"]) == 3 and all(h["score"] is None for h in out["hits"]), out["hits"]
    grouped = search_json(home, index, "revenue", "--sort", sort, "--by-document")
    assert grouped["documents"] and all(d["score"] is None for d in grouped["documents"])
    assert all(h["score"] is None for h in grouped["hits"])
    for extra in ([], ["--by-document"]):
        proc = run(home, "search", "revenue", "--sort", sort, *extra, "--index", index)
        assert proc.returncode == 0, proc.stderr
        assert REPORT in proc.stdout and "score" not in proc.stdout, proc.stdout
    scored = search_json(home, index, "revenue")
    assert all(isinstance(h["score"], float) and 0 < h["score"] < 100 for h in scored["hits"])
    assert "  score " in run(home, "search", "revenue", "--index", index).stdout


@pytest.mark.parametrize("words", [["-free"], ["revenue", "-table"], ["-quality"], ["-vague"], ["-hello"],
                                   ["--free"], ["-x"]])
def test_a_query_word_starting_with_a_dash_asks_for_double_dash(home: Path, index: Path, words: list[str]) -> None:
    """``search -free`` printed argparse's usage (or read -quality as -q, -hello as
    -h): one line now, saying that such a query goes after ``--``."""
    proc = run(home, "search", *words, "--index", index)
    line = _one_error_line(proc, status=2)
    dashed = next(w for w in words if w.startswith("-"))
    assert f"{dashed} is not an option" in line and "pdfindex search -- " in line, line
    assert proc.stdout == "" and "usage" not in proc.stderr
    after = run(home, "search", "--index", index, "--", *words)  # what the line says to do
    assert after.returncode == 0, after.stderr


def test_short_options_still_work_beside_query_words(home: Path, index: Path) -> None:
    for options in (["-v"], ["-vv"], ["-q"]):
        proc = run(home, "search", *options, "revenue", "--index", index)
        assert proc.returncode == 0, (options, proc.stderr)
        assert "3 pages matched" in proc.stdout


def _summary(home: Path, index: Path, *args: str) -> str:
    proc = run(home, "search", *args, "--index", index)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()[-1]


def test_the_count_line_says_page_or_pages_and_what_is_shown(home: Path, index: Path) -> None:
    assert re.fullmatch(r"1 page matched in \d+\.\d+ s", _summary(home, index, "strongly"))
    assert re.fullmatch(r"1 document matched in \d+\.\d+ s", _summary(home, index, "strongly", "--by-document"))
    assert re.fullmatch(r"3 pages matched in \d+\.\d+ s", _summary(home, index, "revenue"))
    assert re.fullmatch(r"3 pages matched in \d+\.\d+ s, showing 1-2 \(--offset 2 for more\)",
                        _summary(home, index, "revenue", "--limit", "2"))
    assert re.fullmatch(r"3 pages matched in \d+\.\d+ s, showing 3",
                        _summary(home, index, "revenue", "--limit", "2", "--offset", "2"))
    assert re.fullmatch(r"3 pages matched in \d+\.\d+ s, showing none \(--offset 5 is past the last\)",
                        _summary(home, index, "revenue", "--offset", "5"))
    assert re.fullmatch(r"2 documents matched in \d+\.\d+ s, showing 1 \(--offset 1 for more\)",
                        _summary(home, index, "revenue", "--by-document", "--limit", "1"))


def test_fail_if_none_exits_1_when_nothing_matched(home: Path, index: Path) -> None:
    """Like grep: a script can test for hits. Off by default (a search that finds
    nothing has done its job)."""
    for extra in ([], ["--json"]):
        proc = run(home, "search", "nonexistentword", "--fail-if-none", *extra, "--index", index)
        assert proc.returncode == 1 and proc.stderr == "", proc.stderr
        if extra:
            assert json.loads(proc.stdout)["total"] == 0
        else:
            assert proc.stdout.splitlines()[-1].startswith("0 pages matched")
        assert run(home, "search", "revenue", "--fail-if-none", *extra, "--index", index).returncode == 0
        assert run(home, "search", "nonexistentword", *extra, "--index", index).returncode == 0
    beyond = run(home, "search", "revenue", "--offset", "10", "--fail-if-none", "--index", index)
    assert beyond.returncode == 0  # pages matched, though none is shown
    some = run(home, "search", "revenue nonexistentword", "--json", "--fail-if-none", "--index", index)
    assert some.returncode == 1, some.stderr  # pages hold one of the words, none holds both
    assert json.loads(some.stdout)["total"] == 3 and json.loads(some.stdout)["all_words_total"] == 0


def test_the_dash_check_knows_the_one_letter_options_of_search() -> None:
    import argparse

    from pdfindex.cli.main import build_parser
    from pdfindex.cli.parsers import SHORT_OPTIONS

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    search = sub.choices["search"]
    assert {o[1] for a in search._actions for o in a.option_strings if len(o) == 2 and o[1] != "-"} == SHORT_OPTIONS


def test_a_title_word_is_one_hit_for_its_document(home: Path, index: Path) -> None:
    """Issue 20: a word only in the title matched every page of the report."""
    out = search_json(home, index, "title:annual")
    assert _pages(out) == {(REPORT, 1)} and out["total"] == 1
    grouped = search_json(home, index, "title:annual", "--by-document")
    assert [d["pages"] for d in grouped["documents"]] == [[1]] and grouped["total"] == 1
    assert re.fullmatch(r"1 page matched in \d+\.\d+ s", _summary(home, index, "title:annual"))
