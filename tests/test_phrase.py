"""indexer/phrase.py: the fast adjacent-phrase matcher finds exactly the pages and
scores Whoosh's own phrase matcher finds, in one segment and across several, and
its top N (with block skipping) equals the top N of all matches."""
from __future__ import annotations

import random

import pytest
from whoosh.query import Phrase

from pdfindex.indexer import PageIndex
from pdfindex.indexer.phrase import AdjacentPhrase
from tests.index_helpers import page, record

_WORDS = ["alpha", "beta", "gamma", "delta", "echo", "fox", "golf", "hotel"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> PageIndex:
    rng = random.Random(7)
    ix = PageIndex(tmp_path_factory.mktemp("phrase") / "ix", "en")
    for batch in range(3):  # three commits: three segments
        with ix.writer() as w:
            for n in range(150):
                pages = [page(1, " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 200))))]
                w.add(record(f"b{batch}n{n}", f"/r/{batch}-{n}.pdf", pages), pages)
    return ix


def _phrases() -> list[list[str]]:
    rng = random.Random(11)
    return [[rng.choice(_WORDS) for _ in range(rng.choice((2, 2, 3)))] for _ in range(25)] + [["alpha", "alpha"]]


@pytest.mark.parametrize("words", _phrases(), ids=" ".join)
def test_same_pages_and_scores_as_whoosh(index: PageIndex, words: list[str]) -> None:
    searcher = index._searcher()
    ours = searcher.search(AdjacentPhrase("text", words), limit=None)
    theirs = searcher.search(Phrase("text", words), limit=None)
    assert len(theirs) > 0
    assert sorted((d, round(s, 9)) for s, d in ours.top_n) == sorted((d, round(s, 9)) for s, d in theirs.top_n)
    # a top 5 with block-quality skipping is the top 5 of everything
    top = searcher.search(AdjacentPhrase("text", words), limit=5)
    assert [round(s, 9) for s, _ in top.top_n] == [round(s, 9) for s, _ in sorted(theirs.top_n, reverse=True)[:5]]


def test_missing_word_and_slop(index: PageIndex) -> None:
    searcher = index._searcher()
    assert len(searcher.search(AdjacentPhrase("text", ["alpha", "zulu"]), limit=None)) == 0
    slop = searcher.search(AdjacentPhrase("text", ["alpha", "beta"], slop=3), limit=None)
    assert len(slop) == len(searcher.search(Phrase("text", ["alpha", "beta"], slop=3), limit=None)) > 0


def test_search_uses_it_and_counts_like_whoosh(index: PageIndex) -> None:
    result = index.search('"alpha beta"')
    searcher = index._searcher()
    assert result.total == len(searcher.search(Phrase("text", ["alpha", "beta"]), limit=None))
