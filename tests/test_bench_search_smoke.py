"""Keeps bench/search_speed.py from rotting: on ~200 generated pages, every query
class it times must find pages in pdfindex, in SQLite FTS5 and in raw Tantivy, and
each engine must return exactly the planted pages for rare terms. A whole run's
table must carry Tantivy's figures and ratios. Nothing is judged by its speed."""
from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from bench import search_speed


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return search_speed


def test_generator_is_deterministic_and_shaped(bench: ModuleType) -> None:
    a = bench.generate_corpus(200)
    b = bench.generate_corpus(200)
    assert a.pages == 200 == sum(len(d.pages) for d in a.documents)
    assert [p.text for d in a.documents for p in d.pages] == [p.text for d in b.documents for p in d.pages]
    assert all(1 <= len(d.pages) <= 40 for d in a.documents)
    assert a.cjk_pages >= 1 and a.rare


def test_each_query_class_finds_pages_in_both_engines(bench: ModuleType, tmp_path: Path) -> None:
    corpus = bench.generate_corpus(200)
    classes = bench.choose_queries(corpus, reps=3)
    assert [qc.key for qc in classes] == ["rare", "common", "and", "phrase", "cjk"]

    index, report = bench.build_pdfindex(corpus, tmp_path / "pdfindex", "en", batch_pages=50)
    assert report.pages == 200 and report.size_bytes > 0
    for qc in classes:
        for query in qc.queries:
            _, total, partial = bench.pdfindex_search(index, query.whoosh, True)
            assert total >= 1 and not partial, (qc.key, query.whoosh)

    support = bench.fts5_support()
    if not support.fts5:
        pytest.skip(support.note)
    fts = bench.Fts5Index(tmp_path / "fts5.sqlite3", support)
    try:
        assert fts.build(corpus, 50).pages == 200
        for qc in classes:
            for query in qc.queries:
                _, rows = fts.search(query, True)
                assert rows >= 1, (qc.key, query.fts5)
        for term, planted in corpus.rare.items():
            query = bench.Query(term, f'"{term}"')
            assert bench.pdfindex_pages(index, term) == planted, term
            assert fts.pages(query) == planted, term
    finally:
        fts.close()


def test_tantivy_finds_every_class_and_exactly_the_planted_pages(bench: ModuleType, tmp_path: Path) -> None:
    """The baseline really answers the bench's queries: a Tantivy that found nothing
    (a wrong field, tokenizer or query form) would still be fast."""
    corpus = bench.generate_corpus(200)
    classes = bench.choose_queries(corpus, reps=3)
    tv = bench.TantivyIndex(tmp_path / "tantivy")
    report = tv.build(corpus, 50)
    assert report.pages == 200 and report.size_bytes > 0 and report.cpu_seconds > 0
    for qc in classes:
        for query in qc.queries:
            _, total = tv.search(query.whoosh, True)
            assert total >= 1, (qc.key, query.whoosh)
            count, hits = tv.answer(query.whoosh, bench.LIMIT, highlight=True)
            assert count == total and 1 <= len(hits) <= bench.LIMIT
            assert all(h["snippet"] and "<b>" in h["snippet"] for h in hits), (qc.key, hits[0])
    for term, planted in corpus.rare.items():
        assert tv.pages(term) == planted, term
    # a CJK query is the phrase of its bigrams, never matched across punctuation
    cjk = next(qc for qc in classes if qc.key == "cjk").queries[0].whoosh
    cjk_pages = {(d.record.doc_hash, p.number) for d in corpus.documents for p in d.pages if cjk in p.text}
    assert tv.pages(cjk) == cjk_pages
    assert bench.cjk_bigrams("中国国家，发展") == "中国 国国 国家 | 发展"


def test_a_whole_run_prints_tantivy_beside_the_others(bench: ModuleType, capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    assert bench.main(["--pages", "300", "--reps", "2", "--batch", "100", "--keep", str(tmp_path / "kept")]) == 0
    out = capsys.readouterr().out
    assert "| metric | pdfindex (Whoosh) | SQLite FTS5 | raw Tantivy | × pdfindex / Tantivy | target | pdfindex |" in out
    rows = {line.split(" | ")[0].lstrip("| "): line.strip("|").split(" | ") for line in out.splitlines()
            if line.startswith("| ") and not line.startswith("| metric")}
    assert float(rows["indexing, pages per CPU-second"][3]) > 0
    assert float(rows["index size on disk, MB"][3]) > 0
    for key in ("rare term", "common term", "AND of two mid-frequency terms", "phrase of two common words",
                "CJK (Chinese) words"):
        assert float(rows[f"{key}: pages matched, median"][3]) >= 1, key
        for mode in ("off", "on"):
            p50, p95 = (float(x) for x in rows[f"{key}, highlights {mode}: p50 / p95 ms"][3].split(" / "))
            assert 0 <= p50 <= p95, (key, mode)
            assert " / " in rows[f"{key}, highlights {mode}: p50 / p95 ms"][4], (key, mode)  # the ratios
    assert (tmp_path / "kept" / "tantivy" / "meta.json").is_file()
