"""Issue 8 item 2: a page holding the words as typed outranks one holding only other
forms of them, while stemming still finds both."""
from __future__ import annotations

from pathlib import Path

import pytest

from indexer import PageIndex, SearchOptions, analysis
from tests.index_helpers import GB, cjk_pdf, extracted, page, record

EXACT = "/r/exact.pdf"
OTHER = "/r/other-forms.pdf"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> PageIndex:
    ix = PageIndex(tmp_path_factory.mktemp("rank") / "ix", "en")
    with ix.writer() as w:
        # The tempting page comes first and repeats the other forms, so stems alone
        # would rank it first.
        other = [page(1, "the person changed the run; a person changed every run of the personal changes")]
        w.add(record("other", OTHER, other), other)
        exact = [page(1, "notes about how personal change runs through a team")]
        w.add(record("exact", EXACT, exact), exact)
        w.add(*extracted(cjk_pdf([["全文检索系统"]], GB), "/r/zh.pdf"))
    return ix


def _order(ix: PageIndex, query: str) -> list[str]:
    return [h.path for h in ix.search(query, SearchOptions(limit=10)).hits]


@pytest.mark.parametrize("query", ["personal change runs", "runs", "change runs personal", "personal AND runs"])
def test_typed_forms_rank_first(index: PageIndex, query: str) -> None:
    assert _order(index, query) == [EXACT, OTHER]  # both found (stemming), the typed forms first


def test_other_forms_typed_rank_their_page_first(index: PageIndex) -> None:
    assert _order(index, "person changed run") == [OTHER, EXACT]


def test_stems_alone_would_rank_the_other_page_first(index: PageIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pair does tempt the stemmer: without the exact forms' weight the order
    flips, so the test above fails without the change."""
    monkeypatch.setattr(analysis, "EXACT_BOOST", 0.0)
    assert _order(index, "personal change runs") == [OTHER, EXACT]


def test_phrases_wildcards_fields_and_cjk_still_work(index: PageIndex) -> None:
    assert set(_order(index, '"personal change"')) == {EXACT, OTHER}  # "personal changes" too: stems
    assert set(_order(index, "chang*")) == {EXACT, OTHER}
    assert _order(index, "检索") == ["/r/zh.pdf"]
    assert _order(index, "personal -runs") == []  # both pages hold a form of "run"


def test_exact_forms_leave_a_query_without_stemming_alone() -> None:
    from whoosh.query import Term

    query = Term("text", "runs")
    assert analysis.exact_forms(query, "runs", "none") is query


def test_reindexed_index_keeps_the_ranking(tmp_path: Path) -> None:
    root = tmp_path / "ix"
    ix = PageIndex(root, "en")
    with ix.writer() as w:
        for label, path, text in (("o", OTHER, "person changed run person changed run"),
                                  ("e", EXACT, "personal change runs")):
            pages = [page(1, text)]
            w.add(record(label, path, pages), pages)
    ix.reindex()
    assert _order(PageIndex(root, "en"), "personal change runs") == [EXACT, OTHER]
