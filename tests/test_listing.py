"""Issue 8 items 3, 5 and 7: ``pdfindex list`` and ``search ''``/``'*'`` straight from
the index (status, OCR need, path forms, dates), bounded numeric options, and the
capped count of ``search`` with ``--exact-count``. Real indexes on disk, the real
``pdfindex`` command in subprocesses."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pdfindex.indexer import ListFilters, PageIndex, QueryError, SearchOptions, Status
from tests.index_helpers import extracted, page, record
from tests.builders import one_font_pdf, text_line

ROOT = Path(__file__).resolve().parents[1]


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.fixture(scope="module")
def corpus(engine: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Files of every status under two folders, dated by mtime, one of them a real
    PDF through the real extraction."""
    base = tmp_path_factory.mktemp("listing")
    docs, latex = base / "docs", base / "docs" / "latex"
    latex.mkdir(parents=True)
    paths = {
        "a": str(docs / "alpha.pdf"), "b": str(latex / "latex-beta.pdf"), "c": str(docs / "broken.pdf"),
        "d": str(docs / "locked.pdf"), "e": str(base / "empty.pdf"), "f": str(latex / "latex-real.pdf"),
    }
    root = base / "index"
    ix = PageIndex(root)
    with ix.writer() as writer:
        pages = [page(1, "alpha text page"), page(2, "", coverage=0.1, needs_ocr=True)]
        writer.add(record("a", paths["a"], pages, mtime=_epoch("2023-06-15T12:00:00")), pages)
        pages = [page(1, "beta text", needs_ocr=True, coverage=0.2), page(2, "beta more text")]
        writer.add(record("b", paths["b"], pages, mtime=_epoch("2020-01-01T00:00:00")), pages)
        writer.add(record("c", paths["c"], [], status=Status.FAILED, error="no startxref", page_count=0,
                          mtime=_epoch("2024-02-29T10:00:00")), [])
        writer.add(record("d", paths["d"], [], status=Status.ENCRYPTED, error="password needed", page_count=1,
                          mtime=_epoch("2024-03-01T10:00:00")), [])
        writer.add(record("e", paths["e"], [], status=Status.EMPTY, page_count=0,
                          mtime=_epoch("2022-05-05T05:00:00")), [])
        data = one_font_pdf(text_line(72, 700, b"(real extracted words)"))
        rec, pdf_pages = extracted(data, paths["f"], mtime=_epoch("2021-07-07T07:00:00"))
        writer.add(rec, pdf_pages)
    # The listing tests take the extraction's verdict on the real page as given.
    real_ocr = [(paths["f"], pg.number) for pg in pdf_pages if pg.needs_ocr]
    real_text = [(paths["f"], pg.number) for pg in pdf_pages if not pg.needs_ocr]
    return {"root": root, "base": base, "paths": paths, "real_ocr": real_ocr, "real_text": real_text}


def run(cwd: Path, *args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PDFINDEX_", "XDG_", "NO_COLOR"))}
    base.update(HOME=str(cwd), PYTHONIOENCODING="utf-8", PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-m", "pdfindex.cli.main", *map(str, args)], cwd=cwd, env=base,
                          capture_output=True, text=True, encoding="utf-8", timeout=60)


def list_json(corpus: dict[str, object], *args: str, cwd: Path | None = None) -> dict:  # type: ignore[type-arg]
    proc = run(cwd or corpus["base"], "list", "--json", "--index", corpus["root"], *args)  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_indexes_are_on_the_engine_under_test(engine: str, corpus: dict[str, object], big: Path) -> None:
    """Each index fixture asks for ``engine`` (tests/conftest.py): one that did not
    would be built once and kept for the other engine's tests."""
    assert {PageIndex(corpus["root"]).engine, PageIndex(big).engine} == {engine}  # type: ignore[arg-type]


def _doc_paths(out: dict) -> list[str]:  # type: ignore[type-arg]
    return [d["path"] for d in out["documents"]]


def _page_keys(out: dict) -> list[tuple[str, int]]:  # type: ignore[type-arg]
    return [(h["path"], h["page"]) for h in out["hits"]]


@pytest.mark.parametrize(("status", "letters"), [
    ("indexed", "abf"), ("failed", "c"), ("encrypted", "d"), ("empty", "e"),
])
def test_list_by_status(corpus: dict[str, object], status: str, letters: str) -> None:
    paths = corpus["paths"]
    out = list_json(corpus, "--status", status)
    assert _doc_paths(out) == sorted(paths[x] for x in letters)  # type: ignore[index]
    assert out["total"] == len(letters)
    assert {d["status"] for d in out["documents"]} == {status}


def test_list_needs_ocr_and_has_text(corpus: dict[str, object]) -> None:
    p = corpus["paths"]
    ocr = sorted([(p["a"], 2), (p["b"], 1), *corpus["real_ocr"]])  # type: ignore[index, misc]
    assert _page_keys(list_json(corpus, "--pages", "--needs-ocr")) == ocr
    has_text = _page_keys(list_json(corpus, "--pages", "--has-text"))
    assert has_text == sorted([(p["a"], 1), (p["b"], 2), *corpus["real_text"]])  # type: ignore[index, misc]
    # documents with at least one page needing OCR
    assert _doc_paths(list_json(corpus, "--needs-ocr")) == sorted({path for path, _ in ocr})
    with_coverage = {(p["a"], 1), (p["b"], 2)}  # type: ignore[index]
    assert with_coverage <= set(_page_keys(list_json(corpus, "--pages", "--min-coverage", "0.5")))


def test_search_empty_or_star_lists_pages_with_filters(corpus: dict[str, object]) -> None:
    p = corpus["paths"]
    for query in ("", "*", "  "):
        proc = run(corpus["base"], "search", query, "--needs-ocr", "--json", "--index", corpus["root"])  # type: ignore[arg-type]
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert _page_keys(out) == sorted([(p["a"], 2), (p["b"], 1), *corpus["real_ocr"]])  # type: ignore[index, misc]
        assert out["total"] == len(out["hits"])
    ix = PageIndex(corpus["root"])  # type: ignore[arg-type]
    every = ix.search("*", SearchOptions(limit=100))
    assert every.total == 5 and len(every.hits) == 5
    grouped = ix.search("*", SearchOptions(by_document=True, limit=1, offset=1))
    with pytest.raises(QueryError, match="empty"):  # an empty query without any filter is a mistake
        ix.search("", SearchOptions(by_document=True))
    assert grouped.total == 3  # documents with pages
    assert [g.path for g in grouped.groups] == [p["b"]]  # type: ignore[index]
    assert [h.page for h in grouped.groups[0].pages] == [1, 2]


@pytest.mark.parametrize(("form", "expected"), [
    ("docs", "abcdf"),                 # a folder, relative to the current directory
    ("docs/", "abcdf"),
    ("docs/latex", "bf"),
    ("./docs/../docs/alpha.pdf", "a"),  # a relative file, normalised
    ("docs/latex/latex*", "bf"),        # a relative glob
    ("*.pdf", "abcdef"),                # Whoosh's * crosses folders
])
def test_path_forms_from_the_current_directory(corpus: dict[str, object], form: str, expected: str) -> None:
    p = corpus["paths"]
    assert _doc_paths(list_json(corpus, "--path", form)) == sorted(p[x] for x in expected)  # type: ignore[index]


def test_path_glob_relative_to_a_subfolder_and_in_search(corpus: dict[str, object]) -> None:
    p = corpus["paths"]
    latex = Path(p["b"]).parent  # type: ignore[index]
    assert _doc_paths(list_json(corpus, "--path", "latex*", cwd=latex)) == sorted([p["b"], p["f"]])  # type: ignore[index]
    proc = run(latex, "search", "text", "--path", "latex*", "--json", "--index", corpus["root"])  # type: ignore[arg-type]
    assert proc.returncode == 0, proc.stderr
    assert {h["path"] for h in json.loads(proc.stdout)["hits"]} == {p["b"]}  # type: ignore[index]
    absolute = _doc_paths(list_json(corpus, "--path", str(latex)))
    assert absolute == sorted([p["b"], p["f"]])  # type: ignore[index]


@pytest.mark.parametrize(("args", "expected"), [
    (("--since", "2023"), "acd"),
    (("--until", "2021-07-07"), "bf"),              # the day given is included
    (("--since", "2024-02-29", "--until", "2024-02-29"), "c"),
    (("--since", "2021-07-07T08:00:00+02:00", "--until", "2021-07-07T09:00+02:00"), "f"),  # 07:00 UTC
    (("--since", "2024-03"), "d"),
])
def test_dates(corpus: dict[str, object], args: tuple[str, ...], expected: str) -> None:
    p = corpus["paths"]
    assert _doc_paths(list_json(corpus, *args)) == sorted(p[x] for x in expected)  # type: ignore[index]


def test_dates_filter_pages_too(corpus: dict[str, object]) -> None:
    p = corpus["paths"]
    assert _page_keys(list_json(corpus, "--pages", "--since", "2023-01-01")) == [(p["a"], 1), (p["a"], 2)]  # type: ignore[index]


def test_limit_and_offset(corpus: dict[str, object]) -> None:
    every = _doc_paths(list_json(corpus))
    assert len(every) == 6
    out = list_json(corpus, "--limit", "2", "--offset", "3")
    assert _doc_paths(out) == every[3:5] and out["total"] == 6
    assert _doc_paths(list_json(corpus, "--offset", "99")) == []


@pytest.mark.parametrize("args", [
    ("list", "--limit", "0"), ("list", "--limit", "-1"), ("list", "--limit", "10000000000"),
    ("list", "--offset", "-1"), ("list", "--limit", "nan"), ("list", "--min-coverage", "nan"),
    ("search", "x", "--min-coverage", "nan"), ("search", "x", "--min-coverage", "inf"),
    ("search", "x", "--min-coverage", "1.5"), ("search", "x", "--limit", "0"), ("search", "x", "--offset", "-3"),
    ("list", "--since", "2024-13-01"), ("list", "--until", "99999"), ("list", "--since", "nan"),
    ("list", "--status", "bogus"),
])
@pytest.mark.whoosh_only("the command line refuses these before an index is opened: no engine plays a part")
def test_bad_numbers_and_dates_are_a_bad_command_line(corpus: dict[str, object], args: tuple[str, ...]) -> None:
    proc = run(corpus["base"], *args, "--index", corpus["root"])  # type: ignore[arg-type]
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"pdfindex {args[0]}: error: argument")


def test_since_after_until_and_empty_or_nul_path(corpus: dict[str, object]) -> None:
    for args, status in ((("--since", "2024", "--until", "2023"), 2), (("--path", ""), 1), (("--path", "a\0b"), 1)):
        try:
            proc = run(corpus["base"], "list", *args, "--index", corpus["root"])  # type: ignore[arg-type]
        except ValueError:  # the OS refuses a NUL in an argument: nothing to test
            continue
        assert proc.returncode == status, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_path_shows_the_copy_inside_the_folder(engine: str, tmp_path: Path) -> None:
    """Issue 20: identical copies are one document with several paths; ``--path``
    shows (and orders by) the path that lies inside the filter, not the document's
    first one, in text, in JSON (the matching paths first in ``paths``, every path
    kept) and for pages."""
    from tests.ingest_helpers import cli_env, run_cli, text_pdf, write

    docs, index = tmp_path / "docs", tmp_path / "index"
    original = write(docs / "aa" / "report.pdf", text_pdf("copied", 1))
    copies = [write(docs / "zz" / name, original.read_bytes()) for name in ("report.pdf", "copy2.pdf")]
    beside = write(docs / "zz" / "b-other.pdf", text_pdf("beside", 1))
    r = run_cli("ingest", docs, "-r", "--workers", "1", "--index", index, env=cli_env(PDFINDEX_ENGINE=engine))
    assert r.returncode == 0, r.stdout + r.stderr
    (doc,) = [d for d in PageIndex(index).documents() if len(d.all_paths) == 3]
    assert doc.path == str(original)  # the first path recorded is outside docs/zz

    out = list_json({"root": index, "base": tmp_path}, "--path", "docs/zz")
    assert _doc_paths(out) == [str(beside), str(copies[1])]  # by the path shown
    shown = out["documents"][1]
    assert shown["paths"] == [str(copies[1]), str(copies[0]), str(original)]  # matching ones first, all kept
    text = run(tmp_path, "list", "--path", "docs/zz", "--index", index)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[:2] == [f"{beside}  indexed  1 pages",
                                            f"{copies[1]}  indexed  1 pages  also at {copies[0]}"], text.stdout

    pages = list_json({"root": index, "base": tmp_path}, "--pages", "--path", "docs/zz/report.pdf")
    assert [(h["path"], h["paths"][0]) for h in pages["hits"]] == [(str(copies[0]), str(copies[0]))]
    assert sorted(pages["hits"][0]["paths"]) == sorted(map(str, [original, *copies]))

    everything = list_json({"root": index, "base": tmp_path})  # no filter: the first path, as before
    assert str(original) in _doc_paths(everything) and str(copies[0]) not in _doc_paths(everything)


# ---- the count cap ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big(engine: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,300 pages holding "common" (every tenth needing OCR), and the file records."""
    root = tmp_path_factory.mktemp("big") / "index"
    ix = PageIndex(root)
    with ix.writer(batch_pages=5000) as writer:
        for d in range(13):
            pages = [page(n, f"common words page {n} of {d} " + ("rare" if n == 1 else ""),
                          needs_ocr=n % 10 == 0, coverage=0.1 if n % 10 == 0 else 1.0) for n in range(1, 101)]
            writer.add(record(f"big{d}", f"/big/doc{d:02d}.pdf", pages), pages)
    return root


def test_count_stops_at_the_cap_unless_exact(big: Path) -> None:
    ix = PageIndex(big)
    capped = ix.search("common", SearchOptions(limit=10))
    assert (capped.total, capped.total_is_lower_bound) == (1000, True)
    assert len(capped.hits) == 10
    exact = ix.search("common", SearchOptions(limit=10, exact_count=True))
    assert (exact.total, exact.total_is_lower_bound) == (1300, False)
    few = ix.search("rare", SearchOptions(limit=5))  # fewer than the cap: exact without asking
    assert (few.total, few.total_is_lower_bound) == (13, False)
    filtered = ix.search("common", SearchOptions(needs_ocr=True))
    assert (filtered.total, filtered.total_is_lower_bound) == (130, False)


def test_count_cap_in_the_cli(big: Path, tmp_path: Path) -> None:
    proc = run(tmp_path, "search", "common", "--index", big)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("1,000+ pages matched in ")
    out = json.loads(run(tmp_path, "search", "common", "--json", "--index", big).stdout)
    assert (out["total"], out["total_is_lower_bound"]) == (1000, True)
    out = json.loads(run(tmp_path, "search", "common", "--json", "--exact-count", "--index", big).stdout)
    assert (out["total"], out["total_is_lower_bound"]) == (1300, False)


def test_listing_needs_ocr_is_fast(big: Path) -> None:
    """Listing 130 of 1,300 pages reads postings, not every page: the previous
    session measured 5.0 s for ``search '*' --needs-ocr`` on 620 pages."""
    ix = PageIndex(big)
    ix.list_pages(ListFilters(needs_ocr=True), limit=1)  # opens the searcher
    started = time.process_time()
    listing = ix.list_pages(ListFilters(needs_ocr=True))
    took = time.process_time() - started
    assert listing.total == 130 and len(listing.pages) == 130
    assert [h.page for h in listing.pages[:3]] == [10, 20, 30]
    assert took < 0.5, took
    docs = ix.list_documents(ListFilters(needs_ocr=True), limit=3)
    assert docs.total == 13 and [d.path for d in docs.documents] == ["/big/doc00.pdf", "/big/doc01.pdf",
                                                                     "/big/doc02.pdf"]
