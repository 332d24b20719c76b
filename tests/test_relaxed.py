"""After the few pages holding every word of a query, the pages that hold most of them
(indexer/relaxed.py; issue 22: an OCR'd fax reads ``August`` as ``Angnst``, and a
user who remembers three of its words must still find it, even when a clean copy
holds all three). On both engines."""
from __future__ import annotations

from collections.abc import Iterator
import pytest

from pdfindex.cli.search_cmd import _print_result
from pdfindex.contract.shapes import result_json
from pdfindex.indexer import PageIndex, SearchOptions
from pdfindex.indexer.relaxed import FEW, MAX_WORDS, narrower, plain_words
from tests.index_helpers import page, record

#: A fax whose OCR misread "August" and "Took", beside two other documents.
LIBRARY = [
    ("fax", "/scans/fax.pdf", [page(1, "In Angnst the major state ‘Look the slow road to school."),
                               page(2, "Appendix: tables of the major rivers.")]),
    ("letter", "/docs/letter.pdf", [page(1, "A slow letter about the state of the road, sent in August.")]),
    ("notes", "/docs/notes.pdf", [page(1, "Notes on rivers and bridges."),
                                  page(2, "Scanned page", coverage=None, needs_ocr=True)]),
    ("many", "/docs/many.pdf", [page(n, "alpha beta") for n in range(1, FEW + 1)] + [page(FEW + 1, "alpha gamma")]),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Iterator[PageIndex]:
    ix = PageIndex(tmp_path_factory.mktemp(f"relaxed-{engine}") / "ix", new_engine=engine)
    for label, path, pages in LIBRARY:
        ix.add(record(label, path, pages), pages)
    yield ix
    ix.close()


def _pages(result: object) -> list[tuple[str, int, tuple[str, ...]]]:
    return [(h.path, h.page, tuple(h.missing)) for h in result.hits]  # type: ignore[attr-defined]


def test_a_misread_word_leaves_the_page_found_by_the_others(index: PageIndex) -> None:
    result = index.search("major took state")
    assert _pages(result) == [("/scans/fax.pdf", 1, ("took",))]
    assert (result.total, result.all_words_total) == (1, 0) and not result.total_is_lower_bound
    assert "no page holds all 3 words: showing pages that hold 2 of them" in result.note
    assert result.hits[0].spans  # highlighted as any hit


def test_each_page_lacks_a_different_word_and_says_which(index: PageIndex) -> None:
    result = index.search("slow august school")
    assert set(_pages(result)) == {("/scans/fax.pdf", 1, ("august",)), ("/docs/letter.pdf", 1, ("school",))}
    assert result.total == 2


def test_down_to_one_word_when_no_page_holds_two(index: PageIndex) -> None:
    result = index.search("bridges zebra quokka")
    assert _pages(result) == [("/docs/notes.pdf", 1, ("zebra", "quokka"))]
    assert "hold 1 of them" in result.note


def test_a_page_holding_every_word_comes_first_then_those_holding_most(index: PageIndex) -> None:
    result = index.search("major rivers")
    assert _pages(result)[0] == ("/scans/fax.pdf", 2, ())
    assert set(_pages(result)[1:]) == {("/scans/fax.pdf", 1, ("rivers",)), ("/docs/notes.pdf", 1, ("major",))}
    assert (result.total, result.all_words_total) == (3, 1)
    assert all(h.spans for h in result.hits)
    assert not any(h.spans for h in index.search("major rivers", SearchOptions(highlight=False)).hits)
    assert "1 page holds all 2 words; then 2 that hold 1" in result.note


def test_nothing_follows_when_no_other_page_holds_any_word(index: PageIndex) -> None:
    result = index.search("slow road state")
    assert {(h.path, h.missing == []) for h in result.hits} == {("/scans/fax.pdf", True), ("/docs/letter.pdf", True)}
    assert result.note == "" and result.all_words_total is None


def test_enough_pages_holding_every_word_are_shown_alone(index: PageIndex) -> None:
    result = index.search("alpha beta", SearchOptions(limit=20))
    assert result.total == FEW and all(h.missing == [] for h in result.hits) and result.all_words_total is None


@pytest.mark.parametrize("query", ["+major +took +state", "major AND took AND state", '"major took" state',
                                   "title:major took state", "major took~1 state", "took OR zebra state"])
def test_a_query_written_exactly_is_never_relaxed(index: PageIndex, query: str) -> None:
    assert index.search(query).total == 0


def test_no_word_anywhere_finds_nothing_and_keeps_the_suggestion(index: PageIndex) -> None:
    result = index.search("zebra quokka")
    assert result.total == 0 and result.hits == [] and "hold" not in result.note


def test_filters_hold_for_the_narrower_searches(index: PageIndex) -> None:
    result = index.search("rivers took", SearchOptions(path_glob="/docs/*"))
    assert _pages(result) == [("/docs/notes.pdf", 1, ("took",))]


def test_ordered_by_date_is_not_relaxed(index: PageIndex) -> None:
    assert index.search("major took state", SearchOptions(sort="date")).total == 0


def test_by_document_each_document_once_with_what_its_best_page_lacks(index: PageIndex) -> None:
    result = index.search("major rivers took", SearchOptions(by_document=True))
    assert [(g.path, [h.page for h in g.pages], g.pages[0].missing) for g in result.groups] == \
        [("/scans/fax.pdf", [2], ["took"])]
    assert result.total == 1 and "showing documents" in result.note
    assert result.groups[0].pages[0].spans  # highlighted as any hit


def test_pages_of_the_merged_result(index: PageIndex) -> None:
    every = index.search("slow august school road")
    assert every.total == 2 and {h.missing[0] for h in every.hits} == {"august", "school"}
    first = index.search("slow august school road", SearchOptions(limit=1))
    second = index.search("slow august school road", SearchOptions(limit=1, offset=1))
    assert first.total == second.total == 2
    assert [h.path for h in first.hits + second.hits] == [h.path for h in every.hits]


def test_json_hits_name_what_they_lack(index: PageIndex) -> None:
    relaxed = result_json(index.search("major took state"))
    assert [h["missing"] for h in relaxed["hits"]] == [["took"]] and relaxed["all_words_total"] == 0
    exact = result_json(index.search("alpha beta"))
    assert exact["hits"][0]["missing"] == [] and exact["all_words_total"] is None


@pytest.mark.parametrize(("query", "words"), [
    ("a b", ["a", "b"]), ("a  b\tc", ["a", "b", "c"]), ("a b a", ["a", "b"]), ("señor café", ["señor", "café"]),
    ("one", None), ("a a", None), ("a -b", None), ("a +b", None), ("a AND b", None), ("a OR b", None),
    ("(a b)", None), ('"a b" c', None), ("a^2 b", None), ("a^1 b", None), ("a~ b", None), ("title:a b", None),
    ("a [b TO c]", None), ("NOT a b", None), ('a "b', None), (" ".join("abcdefg"), None),
])
def test_which_queries_are_plain_words(query: str, words: list[str] | None) -> None:
    assert plain_words(query) == words


def test_narrower_queries_level_by_level() -> None:
    levels = list(narrower(["a", "b", "c"]))
    assert levels == [[(("a", "b"), ("c",)), (("a", "c"), ("b",)), (("b", "c"), ("a",))],
                      [(("a",), ("b", "c")), (("b",), ("a", "c")), (("c",), ("a", "b"))]]
    assert sum(len(level) for level in narrower(list("abcdef"[:MAX_WORDS]))) == 2 ** MAX_WORDS - 2


def test_the_cli_prints_what_each_hit_lacks(index: PageIndex, capsys: pytest.CaptureFixture[str]) -> None:
    _print_result(index.search("major took state"), 0, bold=False)
    printed = capsys.readouterr().out
    assert "    missing: took\n" in printed and "note: no page holds all 3 words" in printed
