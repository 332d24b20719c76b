"""Keeps bench/search_speed.py from rotting: on ~200 generated pages, every query
class it times must find pages in pdfindex and in SQLite FTS5, and both engines
must return exactly the planted pages for rare terms. Nothing is timed."""
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
