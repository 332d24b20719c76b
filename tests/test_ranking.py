"""Issue 8 item 2: a page holding the words as typed outranks one holding only other
forms of them, while stemming still finds both."""
from __future__ import annotations

from pathlib import Path

import pytest

from pdfindex.indexer import PageIndex, SearchOptions, exact
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
    monkeypatch.setattr(exact, "EXACT_WEIGHT", 0.0)
    assert _order(index, "personal change runs") == [OTHER, EXACT]


def test_phrases_wildcards_fields_and_cjk_still_work(index: PageIndex) -> None:
    assert set(_order(index, '"personal change"')) == {EXACT, OTHER}  # "personal changes" too: stems
    assert set(_order(index, "chang*")) == {EXACT, OTHER}
    assert _order(index, "检索") == ["/r/zh.pdf"]
    assert _order(index, "personal -runs") == []  # both pages hold a form of "run"


def test_a_query_without_stemming_is_not_reranked() -> None:
    from whoosh.query import Term

    assert exact.typed_forms(Term("text", "runs"), "runs", "none") is None


def test_share_held_counts_each_stem_once() -> None:
    from whoosh.query import And, Term

    query = And([Term("text", "person"), Term("text", "chang"), Term("text", "run")])
    forms = exact.typed_forms(query, "personal Changes runs running", "en")
    assert forms is not None
    assert forms.share_held("runs running RUNS and Running") == 1 / 3  # one stem, by two forms, many times
    assert forms.share_held("Personal runs: changed") == 2 / 3  # "changed" was not typed
    assert forms.share_held("personal changes, running") == 1.0
    assert forms.share_held("personality rerun") == 0.0  # whole words only


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


def test_phrases_rank_the_typed_forms_first(index: PageIndex) -> None:
    # other-forms.pdf holds "personal changes": the same stems, one form typed
    assert _order(index, '"personal change"') == [EXACT, OTHER]


def test_a_prefix_matches_the_stem_its_word_was_indexed_as(index: PageIndex) -> None:
    # "personal" is indexed as the stem "person": "personal*" must still find it
    assert set(_order(index, "personal*")) == {EXACT, OTHER}
    assert set(_order(index, "personal~1")) == {EXACT, OTHER}


def test_paging_through_reranked_results_shows_each_page_once(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix", "en")
    with ix.writer() as w:
        for n in range(exact.RERANK_WINDOW + 30):
            # every page holds the stem; every third the typed form
            text = ("personal " if n % 3 == 0 else "persons ") + "word " * (n % 7)
            pages = [page(1, text)]
            w.add(record(f"d{n}", f"/r/{n}.pdf", pages), pages)
    seen: list[str] = []
    for offset in range(0, exact.RERANK_WINDOW + 30, 25):
        seen += [h.path for h in ix.search("personal", SearchOptions(limit=25, offset=offset)).hits]
    assert len(seen) == exact.RERANK_WINDOW + 30 == len(set(seen))
    first = ix.search("personal", SearchOptions(limit=10)).hits
    assert all(int(h.path.split("/")[-1][:-4]) % 3 == 0 for h in first)  # typed form first
