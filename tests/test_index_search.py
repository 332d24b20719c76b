"""Issue 3: searching a real on-disk page index (no mocks).

One module-scoped index holds a small library whose every page text is written
below (or extracted by the pipeline from CJK PDFs drawn with predefined Unicode
CMaps), so each expected hit set is read off the construction. Tests that change
the index get a fresh one.
"""
from __future__ import annotations

import itertools
import random
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pdfindex.indexer import (
    DocumentRecord,
    IndexBusy,
    PageIndex,
    PageRecord,
    QueryError,
    SearchOptions,
    SearchResult,
    Status,
)
from pdfindex.indexer.analysis import PageTokenizer
from pdfindex.indexer.mapped import MappedFile
from tests.builders import font_resources, mono_font, text_line
from tests.index_helpers import GB, JIS, KS, cjk_pdf, extracted, folded, page, record, sha
from tests.pdfwriter import PdfWriter

# ---- the library -------------------------------------------------------------------

ANNUAL = "/library/finance/annual-report.pdf"
NOTES = "/library/travel/notes.pdf"
GUIDE = "/library/travel/city-guide.pdf"
RECEIPT = "/library/scans/receipt-0042.pdf"
INVOICE = "/library/finance/invoice.pdf"
DAMAGED = "/library/broken/damaged.pdf"
LOCKED = "/library/secret/locked.pdf"
ZH = "/library/cjk/zh.pdf"
JA = "/library/cjk/ja.pdf"
KO = "/library/cjk/ko.pdf"

TEXTS: dict[str, list[str]] = {
    ANNUAL: [
        "The quick brown fox jumps over the lazy dog near the ledger",
        "Quarterly figures: the \ufb01nance team closed the books",  # "ﬁ" ligature
        "Financial statements were audited; the ledger ledger ledger balanced",
    ],
    NOTES: [
        "She runs along the river every morning",
        "Running shoes were bought for the ledger keeper",
        "The connection failed, so we connected again after connecting twice",
    ],
    GUIDE: [
        "Breakfast at the café near the station",
        "An Über driver took us to the cafe",
        "\uff30\uff24\uff26 manuals printed in fullwidth letters",  # "ＰＤＦ"
    ],
    RECEIPT: ["", "Recei t tota  paid quick"],
    INVOICE: ["Invoice total quick payment noted in the ledger"],
}
QUALITY: dict[str, list[tuple[float | None, bool]]] = {  # (coverage, needs_ocr) per page
    RECEIPT: [(None, True), (0.2, True)],
    INVOICE: [(0.6, False)],
}
TITLES = {ANNUAL: "Annual Report 2023", NOTES: "Travel Notes", GUIDE: "City Guide"}
PRODUCERS = {ANNUAL: "LibreOffice Writer", NOTES: "Microsoft Word", GUIDE: "LibreOffice Impress",
             RECEIPT: "Scanner", INVOICE: "Billing"}

CJK_PAGES = {
    ZH: (GB, [["PDF中文全文检索系统"], ["全文和检索"]]),
    JA: (JIS, [["日本語の全文検索エンジン"]]),
    KO: (KS, [["한국어 검색은 빠르다"]]),
}

FAILED_ERROR = "xref table damaged beyond repair"

pytestmark = pytest.mark.usefixtures("engine")  # every test on each engine (tests/conftest.py)


@dataclass
class Library:
    ix: PageIndex
    records: dict[str, DocumentRecord]
    pages: dict[str, list[PageRecord]]

    def hash(self, path: str) -> str:
        return self.records[path].doc_hash


def _text_records() -> Iterable[tuple[DocumentRecord, list[PageRecord]]]:
    for path, texts in TEXTS.items():
        quality = QUALITY.get(path, [(1.0, False)] * len(texts))
        pages = [page(n, text, cov, ocr) for n, (text, (cov, ocr)) in enumerate(zip(texts, quality, strict=True), 1)]
        yield record(path, path, pages, title=TITLES.get(path, ""), producer=PRODUCERS.get(path, "")), pages


@pytest.fixture(scope="module")
def library(engine: str, tmp_path_factory: pytest.TempPathFactory) -> Library:
    ix = PageIndex(tmp_path_factory.mktemp("library") / "index")
    records: dict[str, DocumentRecord] = {}
    all_pages: dict[str, list[PageRecord]] = {}
    with ix.writer() as writer:
        for rec, pages in _text_records():
            writer.add(rec, pages)
            records[rec.path], all_pages[rec.path] = rec, pages
        for path, (cmap, lines) in CJK_PAGES.items():
            rec, pages = extracted(cjk_pdf(lines, cmap), path)
            writer.add(rec, pages)
            records[path], all_pages[path] = rec, pages
        for path, status, error in [(DAMAGED, Status.FAILED, FAILED_ERROR), (LOCKED, Status.ENCRYPTED, "password required")]:
            rec = record(path, path, [], status=status, error=error, attempts=3)
            writer.add(rec, [])
            records[path], all_pages[path] = rec, []
    return Library(ix, records, all_pages)


def test_the_indexes_are_on_the_engine_under_test(engine: str, library: Library, big: PageIndex, shelf: PageIndex,
                                                  fresh: PageIndex) -> None:
    """Each index fixture asks for ``engine`` (tests/conftest.py): one that did not
    would be built once and kept for the other engine's tests."""
    assert {library.ix.engine, big.engine, shelf.engine, fresh.engine} == {engine}


def found(result: SearchResult) -> set[tuple[str, int]]:
    return {(h.path, h.page) for h in result.hits}


def search(lib: Library, query: str, **options: object) -> set[tuple[str, int]]:
    options.setdefault("limit", 100)
    return found(lib.ix.search(query, SearchOptions(**options)))  # type: ignore[arg-type]


def pages_of(path: str, *numbers: int) -> set[tuple[str, int]]:
    return {(path, n) for n in numbers}


# ---- the CJK pages really come from extraction ----------------------------------------

def test_cjk_page_texts_come_from_extracting_the_pdfs(library: Library) -> None:
    for path, (_, lines) in CJK_PAGES.items():
        texts = [p.text for p in library.pages[path]]
        assert texts == ["\n".join(page_lines) for page_lines in lines]
        assert all(p.coverage == 1.0 and not p.needs_ocr for p in library.pages[path])


# ---- words, phrases, prefixes, fuzzy terms, fields ---------------------------------

def test_word(library: Library) -> None:
    assert search(library, "fox") == pages_of(ANNUAL, 1)
    assert search(library, "quick") == pages_of(ANNUAL, 1) | pages_of(RECEIPT, 2) | pages_of(INVOICE, 1)


def test_words_are_anded_by_default(library: Library) -> None:
    result = library.ix.search("quick ledger", SearchOptions(limit=100))
    assert {(h.path, h.page) for h in result.hits if not h.missing} == pages_of(ANNUAL, 1) | pages_of(INVOICE, 1)
    assert result.hits[:2] == [h for h in result.hits if not h.missing]  # then pages with one of the two
    assert search(library, "+quick +ledger") == pages_of(ANNUAL, 1) | pages_of(INVOICE, 1)
    assert search(library, "quick OR river") == (pages_of(ANNUAL, 1) | pages_of(RECEIPT, 2) | pages_of(INVOICE, 1)
                                                 | pages_of(NOTES, 1))


def test_phrase_needs_the_words_adjacent_and_in_order(library: Library) -> None:
    assert search(library, '"quick brown"') == pages_of(ANNUAL, 1)
    assert search(library, '"brown fox jumps"') == pages_of(ANNUAL, 1)
    assert search(library, '"brown quick"') == set()
    assert search(library, '"quick fox"') == set()


def test_prefix(library: Library) -> None:
    # ﬁnance (ligature), Financial; nothing else in the library starts with "fin".
    assert search(library, "fin*") == pages_of(ANNUAL, 2, 3)
    assert search(library, "FIN*") == pages_of(ANNUAL, 2, 3)


def test_fuzzy(library: Library) -> None:
    quick = pages_of(ANNUAL, 1) | pages_of(RECEIPT, 2) | pages_of(INVOICE, 1)
    assert search(library, "quik") == set()
    assert search(library, "quik~") == quick
    assert search(library, "qiuck~2") == quick


def test_title_field(library: Library) -> None:
    # A word found only in the title: one hit for the document, its first page.
    assert search(library, "title:annual") == pages_of(ANNUAL, 1)
    assert search(library, "title:guide") == pages_of(GUIDE, 1)
    # Titles are searched by default too.
    assert pages_of(NOTES, 1) <= search(library, "travel")


def test_filename_field(library: Library) -> None:
    assert search(library, "filename:annual") == pages_of(ANNUAL, 1)
    assert search(library, "filename:city") == pages_of(GUIDE, 1)


def test_filename_field_finds_the_last_word_before_the_extension(library: Library) -> None:
    assert search(library, "filename:notes") == pages_of(NOTES, 1)
    assert search(library, "filename:guide") == pages_of(GUIDE, 1)


def test_producer_field(library: Library) -> None:
    assert search(library, "producer:libreoffice") == pages_of(ANNUAL, 1) | pages_of(GUIDE, 1)
    assert search(library, "producer:word") == pages_of(NOTES, 1)


def test_field_and_text_combined(library: Library) -> None:
    assert search(library, "title:annual ledger") == pages_of(ANNUAL, 1, 3)


# ---- analysis: stemming, folding ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Running runs; the U.S.A. isn't O'Brien’s. 1,485.1 and 3.14, 42nd", "café CAFÉ über \ufb01nance \uff30\uff24\uff26",
    "PDF中文全文检索系统 und 検索エンジン", "中\n文 全\n", "한국어 검색은 잘 된다", "一", "x_y snake_case __init__", "",
    "Ünïcödé ΑΘΗΝΑ ελληνικά Москва", "end.' 'quoted' ’", "ｶﾀｶﾅ ㈱ ① ²", "mixed中文words한글text",
    "ASCII only: U.S.A. isn't O'Brien's; 1,485.1 3.14.15 1.2x x1.5 a.b.'c d''e 42nd __x__ _a_b 9_9 e.g.. x. .y",
    "tabs\tand\nlines\r\n1,000,000 v2.0.1 A1b2 it's. 'tis",
])
def test_the_writers_terms_are_the_querys_terms(text: str) -> None:
    """``PageTokenizer.terms`` (indexing: its own loop, a cache of words seen) must
    give the terms the tokenizer gives a query, or a page is not found by its words."""
    tokenizer = PageTokenizer("en")
    expected = [t.text for t in tokenizer(text, mode="index")]
    assert tokenizer.terms(text) == expected
    assert tokenizer.terms(text + " ") == expected  # again, from the words seen

@pytest.mark.parametrize("query", ["run", "runs", "running", "RUNNING"])
def test_english_stemming_conflates_run_runs_running(library: Library, query: str) -> None:
    assert search(library, query) == pages_of(NOTES, 1, 2)


@pytest.mark.whoosh_only("the analysis alone: no index, no engine")
@pytest.mark.parametrize("alphabet", ["aZ9_.,' \n-x1", "aZ9_.,' \n-é’ﬁΑ²", "aZ9_.,' \n-é’中文\u3000",
                                      "中文检索 \n가\u1100\u1161\u11a8\uf900\uff76\u3131\u3005"])
def test_words_alone_give_the_same_terms_by_a_shorter_pattern(alphabet: str) -> None:
    """Seeded random text made of what the pattern's edges turn on (digits, dots,
    commas, apostrophes, underscores, spaces; accents, curly quotes, ligatures; CJK
    runs with wrapped lines, jamo that compose, compatibility forms NFKC changes):
    the terms of the writer's fast paths (ASCII; no CJK; CJK runs already in NFKC)
    and of the snippets' are the query tokenizer's."""
    rng = random.Random(24)
    tokenizer = PageTokenizer("en")
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        expected = [t.text for t in tokenizer(text, mode="index")]
        assert tokenizer.terms(text) == expected, repr(text)
        assert tokenizer.shown_terms(text) == expected, repr(text)  # a snippet's: from the split of word_spans


@pytest.mark.parametrize("query", ["connect", "connection", "connected", "connecting"])
def test_english_stemming_conflates_connect_forms(library: Library, query: str) -> None:
    assert search(library, query) == pages_of(NOTES, 3)


@pytest.mark.parametrize("query", ["cafe", "café", "CAFÉ", "Cafe"])
def test_accent_folding_cafe(library: Library, query: str) -> None:
    assert search(library, query) == pages_of(GUIDE, 1, 2)


@pytest.mark.parametrize("query", ["uber", "Über", "ÜBER"])
def test_accent_folding_uber(library: Library, query: str) -> None:
    assert search(library, query) == pages_of(GUIDE, 2)


@pytest.mark.parametrize("query", ["finance", "\ufb01nance", "FINANCE"])
def test_ligature_folding(library: Library, query: str) -> None:
    assert search(library, query) == pages_of(ANNUAL, 2)


@pytest.mark.parametrize("query", ["pdf", "PDF", "\uff30\uff24\uff26", "\uff50\uff44\uff46"])
def test_fullwidth_letters_fold_by_nfkc(library: Library, query: str) -> None:
    # ZH's page 1 starts with "PDF" too.
    assert search(library, query) == pages_of(GUIDE, 3) | pages_of(ZH, 1)


# ---- Chinese, Japanese, Korean --------------------------------------------------------

def test_chinese_word_inside_unsegmented_text(library: Library) -> None:
    # "全文检索" is adjacent on page 1 ("PDF中文全文检索系统"); page 2 ("全文和检索")
    # has both halves apart.
    assert search(library, "全文检索") == pages_of(ZH, 1)
    assert search(library, "中文") == pages_of(ZH, 1)
    assert search(library, "检索系统") == pages_of(ZH, 1)


def test_chinese_characters_present_but_not_adjacent_do_not_match(library: Library) -> None:
    assert search(library, "检索全文") == set()  # every character is on page 1, in another order
    assert search(library, "中检") == set()  # 中 and 检 both on page 1, apart
    assert search(library, "全检") == set()  # 全 and 检 on both pages, never adjacent
    assert search(library, "文索") == set()


def test_chinese_and_japanese_share_han_words(library: Library) -> None:
    assert search(library, "全文") == pages_of(ZH, 1, 2) | pages_of(JA, 1)


def test_japanese(library: Library) -> None:
    assert search(library, "全文検索") == pages_of(JA, 1)  # 検 (Japanese) is not 检 (simplified)
    assert search(library, "エンジン") == pages_of(JA, 1)
    assert search(library, "検索エンジン") == pages_of(JA, 1)
    assert search(library, "日本語") == pages_of(JA, 1)


def test_korean_stem_matches_word_with_particle(library: Library) -> None:
    assert search(library, "검색") == pages_of(KO, 1)  # the text has 검색은
    assert search(library, "한국") == pages_of(KO, 1)  # the text has 한국어
    assert search(library, "빠르다") == pages_of(KO, 1)
    assert search(library, "검색어") == set()


def test_mixed_latin_and_chinese_query(library: Library) -> None:
    assert search(library, "PDF中文") == pages_of(ZH, 1)


def test_single_han_character_query(library: Library) -> None:
    assert search(library, "检") == pages_of(ZH, 1, 2)


def test_chinese_word_across_a_line_break(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    rec, pages = extracted(cjk_pdf([["PDF中文全文检", "索系统"]], GB), "/wrapped.pdf")
    assert pages[0].text == "PDF中文全文检\n索系统"
    ix.add(rec, pages)
    assert found(ix.search("全文检索")) == {("/wrapped.pdf", 1)}


# ---- filters ---------------------------------------------------------------------------

QUICK = pages_of(ANNUAL, 1) | pages_of(RECEIPT, 2) | pages_of(INVOICE, 1)  # coverage 1.0, 0.2, 0.6


@pytest.mark.parametrize(("minimum", "expected"), [
    (0.0, QUICK),
    (0.2, QUICK),
    (0.5, pages_of(ANNUAL, 1) | pages_of(INVOICE, 1)),
    (0.6, pages_of(ANNUAL, 1) | pages_of(INVOICE, 1)),
    (0.61, pages_of(ANNUAL, 1)),
    (1.0, pages_of(ANNUAL, 1)),
])
def test_min_coverage(library: Library, minimum: float, expected: set[tuple[str, int]]) -> None:
    result = library.ix.search("quick", SearchOptions(min_coverage=minimum))
    assert found(result) == expected
    assert result.total == len(expected)
    assert all(h.coverage is not None and h.coverage >= minimum for h in result.hits)


def test_needs_ocr_filter(library: Library) -> None:
    ocr = library.ix.search("quick", SearchOptions(needs_ocr=True))
    assert found(ocr) == pages_of(RECEIPT, 2)
    assert all(h.needs_ocr for h in ocr.hits)
    text = library.ix.search("quick", SearchOptions(needs_ocr=False))
    assert found(text) == pages_of(ANNUAL, 1) | pages_of(INVOICE, 1)
    assert not any(h.needs_ocr for h in text.hits)
    assert found(library.ix.search("quick", SearchOptions(needs_ocr=None))) == QUICK


def test_page_without_text_layer_is_kept_by_needs_ocr_and_dropped_by_min_coverage(library: Library) -> None:
    # filename:receipt matches both pages of the scan, including page 1 (no glyphs,
    # coverage None); by the file name alone, so as one hit: the first page let through.
    assert search(library, "filename:receipt") == pages_of(RECEIPT, 1)
    assert search(library, "filename:receipt", needs_ocr=True) == pages_of(RECEIPT, 1)
    assert search(library, "filename:receipt", min_coverage=0.0) == pages_of(RECEIPT, 2)
    hit = next(h for h in library.ix.search("filename:receipt").hits if h.page == 1)
    assert hit.coverage is None and hit.needs_ocr


@pytest.mark.parametrize(("glob", "expected"), [
    ("/library/scans/*", pages_of(RECEIPT, 2)),
    ("/library/finance/*", pages_of(ANNUAL, 1) | pages_of(INVOICE, 1)),
    ("*/finance/invoice.pdf", pages_of(INVOICE, 1)),
    (INVOICE, pages_of(INVOICE, 1)),
    ("*.pdf", QUICK),
    ("/library/*/receipt-????.pdf", pages_of(RECEIPT, 2)),
])
def test_path_glob(library: Library, glob: str, expected: set[tuple[str, int]]) -> None:
    result = library.ix.search("quick", SearchOptions(path_glob=glob))
    assert found(result) == expected
    assert result.total == len(expected)


@pytest.mark.parametrize("options", [
    {"path_glob": "/elsewhere/*"},
    {"min_coverage": 1.5},
    {"path_glob": "/library/finance/*", "needs_ocr": True},
])
def test_filter_that_excludes_every_page_finds_nothing(library: Library, options: dict) -> None:  # type: ignore[type-arg]
    result = library.ix.search("quick", SearchOptions(**options))
    assert result.hits == []


@pytest.mark.parametrize("options", [
    {"path_glob": "/elsewhere/*"},
    {"min_coverage": 1.5},
    {"path_glob": "/library/finance/*", "needs_ocr": True},
])
def test_filter_that_excludes_every_page_counts_zero(library: Library, options: dict) -> None:  # type: ignore[type-arg]
    assert library.ix.search("quick", SearchOptions(**options)).total == 0


def test_filters_combine(library: Library) -> None:
    assert search(library, "quick", path_glob="/library/finance/*", min_coverage=0.9) == pages_of(ANNUAL, 1)
    assert search(library, "quick", path_glob="/library/finance/*", needs_ocr=True) == set()


def test_file_records_are_never_page_hits(library: Library) -> None:
    # Every record carries title, filename and producer too; only pages are hits.
    result = library.ix.search("title:annual", SearchOptions(limit=100))
    assert result.total == 1
    assert found(result) == pages_of(ANNUAL, 1)


# ---- pagination, grouping ----------------------------------------------------------------

LEDGER = pages_of(ANNUAL, 1, 3) | pages_of(NOTES, 2) | pages_of(INVOICE, 1)


def test_pagination_of_pages(library: Library) -> None:
    everything = library.ix.search("ledger", SearchOptions(limit=100))
    assert found(everything) == LEDGER and everything.total == 4
    order = [(h.path, h.page) for h in everything.hits]
    scores = [h.score for h in everything.hits]
    assert scores == sorted(scores, reverse=True)
    first = library.ix.search("ledger", SearchOptions(limit=2, offset=0))
    second = library.ix.search("ledger", SearchOptions(limit=2, offset=2))
    assert [(h.path, h.page) for h in first.hits + second.hits] == order
    assert first.total == second.total == 4
    beyond = library.ix.search("ledger", SearchOptions(limit=2, offset=4))
    assert beyond.hits == [] and beyond.total == 4


def test_by_document_groups_pages_best_first(library: Library) -> None:
    result = library.ix.search("ledger", SearchOptions(by_document=True))
    assert result.total == 3  # documents, not pages
    assert result.hits == []
    assert {g.path: {h.page for h in g.pages} for g in result.groups} == {
        ANNUAL: {1, 3}, NOTES: {2}, INVOICE: {1}}
    for group in result.groups:
        assert {h.doc_hash for h in group.pages} == {group.doc_hash} == {library.hash(group.path)}
        assert {h.path for h in group.pages} == {group.path}
        scores = [h.score for h in group.pages]
        assert scores == sorted(scores, reverse=True)
        assert group.score == scores[0]
    annual = next(g for g in result.groups if g.path == ANNUAL)
    assert annual.pages[0].page == 3  # "ledger" three times beats once on the same-length page
    group_scores = [g.score for g in result.groups]
    assert group_scores == sorted(group_scores, reverse=True)


def test_by_document_paginates_documents(library: Library) -> None:
    everything = library.ix.search("ledger", SearchOptions(by_document=True, limit=100))
    order = [g.doc_hash for g in everything.groups]
    assert len(order) == 3
    pages = [library.ix.search("ledger", SearchOptions(by_document=True, limit=1, offset=k)) for k in range(4)]
    assert [g.doc_hash for p in pages for g in p.groups] == order
    assert [p.total for p in pages] == [3, 3, 3, 3]
    assert pages[3].groups == []
    two = library.ix.search("ledger", SearchOptions(by_document=True, limit=2, offset=1))
    assert [g.doc_hash for g in two.groups] == order[1:3]
    # A grouped page keeps all of its document's matching pages.
    assert sum(len(g.pages) for g in everything.groups) == len(LEDGER)


def test_by_document_with_filters(library: Library) -> None:
    result = library.ix.search("ledger", SearchOptions(by_document=True, path_glob="/library/finance/*"))
    assert {g.path for g in result.groups} == {ANNUAL, INVOICE} and result.total == 2
    result = library.ix.search("quick", SearchOptions(by_document=True, needs_ocr=True))
    assert [(g.path, [h.page for h in g.pages]) for g in result.groups] == [(RECEIPT, [2])]


# ---- highlights ----------------------------------------------------------------------------

def _span_texts(hit_snippet: str, spans: list) -> list[str]:  # type: ignore[type-arg]
    return [hit_snippet[s.start:s.end] for s in spans]


@pytest.mark.parametrize(("query", "term", "path", "number"), [
    ("fox", "fox", ANNUAL, 1),
    ("cafe", "cafe", GUIDE, 1),
    ("uber", "uber", GUIDE, 2),
    ("finance", "finance", ANNUAL, 2),
    ("pdf", "pdf", GUIDE, 3),
    ("全文检索", "全文检索", ZH, 1),
    ("検索エンジン", "検索エンジン", JA, 1),
    ("검색", "검색", KO, 1),
])
def test_snippet_spans_cover_the_query_terms(library: Library, query: str, term: str, path: str,
                                             number: int) -> None:
    result = library.ix.search(query, SearchOptions(limit=100))
    hit = next(h for h in result.hits if (h.path, h.page) == (path, number))
    assert hit.spans, hit
    original = library.pages[path][number - 1].text
    texts = _span_texts(hit.snippet, hit.spans)
    assert all(t in original for t in texts), texts
    assert all(0 <= s.start < s.end <= len(hit.snippet) for s in hit.spans)
    assert all(term in folded(t) for t in texts), texts
    assert any(folded(t) == term for t in texts) or folded("".join(texts)) == term, texts


def test_spans_of_a_stemmed_query_mark_the_inflected_words(library: Library) -> None:
    result = library.ix.search("running", SearchOptions(limit=100))
    marked = {folded(t) for h in result.hits for t in _span_texts(h.snippet, h.spans)}
    assert marked == {"runs", "running"}


def test_spans_do_not_overlap_and_are_ordered(library: Library) -> None:
    for query in ["ledger", "the", "全文", "quick OR ledger"]:
        for hit in library.ix.search(query, SearchOptions(limit=100)).hits:
            ends = [(s.start, s.end) for s in hit.spans]
            assert ends == sorted(ends)
            assert all(a[1] <= b[0] for a, b in itertools.pairwise(ends)), (query, hit)


def test_highlights_only_for_shown_hits(library: Library) -> None:
    result = library.ix.search("the", SearchOptions(limit=3))
    assert result.total > 3
    assert len(result.hits) == 3
    assert all(h.spans and all(folded(t) == "the" for t in _span_texts(h.snippet, h.spans)) for h in result.hits)


def test_by_document_highlights_only_each_groups_best_page(library: Library) -> None:
    result = library.ix.search("ledger", SearchOptions(by_document=True))
    annual = next(g for g in result.groups if g.path == ANNUAL)
    assert len(annual.pages) == 2
    for group in result.groups:
        best, rest = group.pages[0], group.pages[1:]
        assert best.spans and "ledger" in best.snippet.lower()
        assert all(h.snippet == "" and h.spans == [] for h in rest)


def test_highlight_off_gives_no_spans(library: Library) -> None:
    result = library.ix.search("ledger", SearchOptions(highlight=False))
    assert len(result.hits) == 4
    assert all(h.spans == [] for h in result.hits)


# ---- query errors: a QueryError or a result, nothing else ---------------------------------

@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_query_is_a_query_error(library: Library, query: str) -> None:
    with pytest.raises(QueryError) as info:
        library.ix.search(query)
    message = str(info.value)
    assert "query" in message and "\n" not in message


@pytest.mark.parametrize("query", [
    '"', '"quick', 'quick"', "text:\"", "AND", "OR", "NOT", "quick AND", "AND quick", "quick OR", "NOT quick",
    "(", ")", "(quick", "quick)", "title:", "nosuchfield:quick", "nosuchfield:", ":", "::", "*", "?", "~",
    "quik~99", "quick^", "quick^x", "page:abc", "page:[1 TO", "page:[a TO b]", "coverage:[x TO y]", "[", "]",
    "{", "}", "\\", "'", "!", "fin*~", "\x00", "a" * 3000, " ".join(["quick"] * 300), "needs_ocr:maybe",
])
def test_odd_queries_raise_query_error_or_return_a_result(library: Library, query: str) -> None:
    try:
        result = library.ix.search(query, SearchOptions(limit=5))
    except QueryError as exc:
        assert str(exc).strip(), "a QueryError must say what is wrong"
        assert "\n" not in str(exc)
    else:
        assert isinstance(result, SearchResult)
        assert result.total >= len(result.hits)
        assert all(h.page >= 1 for h in result.hits)


def test_query_error_is_a_search_index_error() -> None:
    from pdfindex.indexer import SearchIndexError

    assert issubclass(QueryError, SearchIndexError)
    assert issubclass(IndexBusy, SearchIndexError)


# ---- records of failures, stats, documents -----------------------------------------------------

def test_documents_lists_records_by_status(library: Library) -> None:
    failed = list(library.ix.documents(Status.FAILED))
    assert [(d.path, d.error, d.attempts, d.page_count) for d in failed] == [(DAMAGED, FAILED_ERROR, 3, 0)]
    assert [d.path for d in library.ix.documents(Status.ENCRYPTED)] == [LOCKED]
    indexed = {d.path for d in library.ix.documents(Status.INDEXED)}
    assert indexed == set(TEXTS) | set(CJK_PAGES)
    assert len(list(library.ix.documents())) == len(library.records)


def test_document_record_round_trip(library: Library) -> None:
    for rec in library.records.values():
        assert library.ix.document(rec.doc_hash) == rec
    assert library.ix.document(sha("never added")) is None


def test_page_texts_round_trip(library: Library) -> None:
    for path, pages in library.pages.items():
        assert library.ix.page_texts(library.hash(path)) == {p.number: p.text for p in pages}


def test_failed_records_are_searchable_by_error(library: Library) -> None:
    result = library.ix.search("error:xref", SearchOptions(limit=100))
    assert DAMAGED in {h.path for h in result.hits}
    assert LOCKED in {h.path for h in library.ix.search("error:password", SearchOptions(limit=100)).hits}


def test_error_text_is_not_page_text(library: Library) -> None:
    # The failure text lives in the error field only: a plain word search does not
    # turn a failed file into a page hit.
    assert search(library, "xref") == set()


def test_stats(library: Library) -> None:
    stats = library.ix.stats()
    indexed_pages = sum(len(p) for p in library.pages.values())
    assert stats.documents == len(library.records) == len(TEXTS) + len(CJK_PAGES) + 2
    assert stats.pages == indexed_pages == 3 + 3 + 3 + 2 + 1 + 2 + 1 + 1
    assert stats.by_status == {"indexed": len(TEXTS) + len(CJK_PAGES), "failed": 1, "encrypted": 1}
    assert stats.size_bytes > 0
    assert Path(stats.location) == library.ix.root


def test_check_finds_nothing_wrong(library: Library) -> None:
    assert library.ix.check() == []


# ---- replacing and deleting (fresh indexes) ------------------------------------------------------

@pytest.fixture
def fresh(engine: str, tmp_path: Path) -> PageIndex:
    return PageIndex(tmp_path / "index")


def test_readding_a_document_with_fewer_pages_drops_the_old_extra_pages(fresh: PageIndex) -> None:
    doc_hash = sha("shrinking")
    fresh.add(record("shrinking", "/a.pdf", [], page_count=3),
              [page(1, "alpha one"), page(2, "alpha two"), page(3, "alpha three omega")])
    assert found(fresh.search("alpha")) == {("/a.pdf", 1), ("/a.pdf", 2), ("/a.pdf", 3)}
    fresh.add(record("shrinking", "/a.pdf", [], page_count=1), [page(1, "alpha again")])
    assert found(fresh.search("alpha")) == {("/a.pdf", 1)}
    assert fresh.search("omega").total == 0
    assert fresh.page_texts(doc_hash) == {1: "alpha again"}
    assert fresh.stats().pages == 1 and fresh.stats().documents == 1
    assert fresh.check() == []


def test_changed_file_at_the_same_path_replaces_the_old_one(fresh: PageIndex) -> None:
    fresh.add(record("v1", "/docs/contract.pdf", [page(1, "first draft wording"), page(2, "appendix")]),
              [page(1, "first draft wording"), page(2, "appendix")])
    fresh.add(record("v2", "/docs/contract.pdf", [page(1, "final signed wording")]), [page(1, "final signed wording")])
    assert fresh.search("draft").total == 0
    assert fresh.search("appendix").total == 0
    assert found(fresh.search("wording")) == {("/docs/contract.pdf", 1)}
    assert fresh.search("wording").hits[0].doc_hash == sha("v2")
    assert fresh.document(sha("v1")) is None
    assert [d.doc_hash for d in fresh.documents()] == [sha("v2")]
    assert fresh.check() == []


def test_moved_file_keeps_one_record(fresh: PageIndex) -> None:
    pages = [page(1, "moved content")]
    fresh.add(record("moved", "/old/place.pdf", pages), pages)
    fresh.add(record("moved", "/new/place.pdf", pages), pages)
    assert found(fresh.search("moved")) == {("/new/place.pdf", 1)}
    assert [d.path for d in fresh.documents()] == ["/new/place.pdf"]


def test_delete_document(fresh: PageIndex) -> None:
    keep = [page(1, "keeper shared"), page(2, "keeper")]
    gone = [page(1, "goner shared"), page(2, "goner"), page(3, "goner")]
    fresh.add(record("keep", "/keep.pdf", keep), keep)
    fresh.add(record("gone", "/gone.pdf", gone), gone)
    assert fresh.delete_document(sha("gone")) is True
    assert fresh.search("goner").total == 0
    assert found(fresh.search("shared")) == {("/keep.pdf", 1)}
    assert fresh.document(sha("gone")) is None
    assert fresh.page_texts(sha("gone")) == {}
    assert fresh.stats().documents == 1 and fresh.stats().pages == 2
    assert fresh.delete_document(sha("gone")) is False
    assert fresh.delete_document(sha("never")) is False
    assert fresh.check() == []


def test_failed_record_replaced_by_a_successful_retry(fresh: PageIndex) -> None:
    fresh.add(record("retry", "/retry.pdf", [], status=Status.FAILED, error="timeout", page_count=0), [])
    assert [d.path for d in fresh.documents(Status.FAILED)] == ["/retry.pdf"]
    pages = [page(1, "recovered text")]
    fresh.add(record("retry", "/retry.pdf", pages, attempts=2), pages)
    assert list(fresh.documents(Status.FAILED)) == []
    assert fresh.stats().by_status == {"indexed": 1}
    assert found(fresh.search("recovered")) == {("/retry.pdf", 1)}


# ---- time-bounded search on a few thousand pages -----------------------------------------------------

BIG_DOCS, BIG_PAGES = 250, 10


@pytest.fixture(scope="module")
def big(engine: str, tmp_path_factory: pytest.TempPathFactory) -> PageIndex:
    ix = PageIndex(tmp_path_factory.mktemp("big") / "index")
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    with ix.writer(batch_pages=100_000) as writer:
        for d in range(BIG_DOCS):
            pages = [page(p, "common " + " ".join(words[(d * 7 + p * 3 + k) % 10] for k in range(30)))
                     for p in range(1, BIG_PAGES + 1)]
            writer.add(record(f"big{d}", f"/big/{d:04d}.pdf", pages), pages)
    return ix


def test_untimed_broad_search_is_complete(big: PageIndex) -> None:
    result = big.search("common", SearchOptions(limit=10, timeout=30, exact_count=True))
    assert result.partial is False and result.note == ""
    assert result.total == BIG_DOCS * BIG_PAGES and not result.total_is_lower_bound
    grouped = big.search("common", SearchOptions(limit=10, timeout=30, by_document=True))
    assert grouped.partial is False and grouped.total == BIG_DOCS


@pytest.mark.whoosh_only("Tantivy shows the capped count (1,000, a lower bound) even when every match scores "
                         "alike (docs/engines.md, Totals)")
def test_a_count_is_exact_when_no_page_had_to_beat_the_top(big: PageIndex) -> None:
    capped = big.search("common", SearchOptions(limit=10, timeout=30))
    # Every page scores the same, so none had to beat the top 10: nothing was skipped
    # and the count kept on the way is exact (test_listing.py has the cap).
    assert (capped.total, capped.total_is_lower_bound) == (BIG_DOCS * BIG_PAGES, False)


@pytest.mark.whoosh_only("Tantivy's matching is not interrupted by the time limit: complete results, "
                         "partial False (docs/engines.md, Time limit)")
@pytest.mark.parametrize("by_document", [False, True])
def test_tiny_timeout_returns_partial_results_quickly(big: PageIndex, by_document: bool) -> None:
    started = time.monotonic()
    result = big.search("common OR alpha", SearchOptions(limit=10, timeout=1e-6, by_document=by_document))
    assert time.monotonic() - started < 5
    assert result.partial is True
    assert re.search(r"partial", result.note) and re.search(r"time", result.note)
    shown = result.groups if by_document else result.hits
    assert len(shown) <= 10
    for hit in result.hits + [h for g in result.groups for h in g.pages]:
        assert re.fullmatch(r"/big/\d{4}\.pdf", hit.path) and 1 <= hit.page <= BIG_PAGES


def test_readers_work_while_a_writer_holds_the_lock(big: PageIndex) -> None:
    # Searching while a writer holds the lock works (readers take no lock).
    with big.writer(lock_timeout=0.1) as writer:
        writer.add(record("extra", "/big/extra.pdf", [page(1, "uncommitted")]), [page(1, "uncommitted")])
        assert big.search("common", SearchOptions(timeout=30, exact_count=True)).total == BIG_DOCS * BIG_PAGES
        assert big.search("uncommitted").total == 0
        writer.cancel()
    assert big.search("uncommitted").total == 0


# ---- segment files mapped, not copied -------------------------------------------------------

@pytest.mark.whoosh_only("reads Whoosh's segment readers and the compound files they map")
@pytest.mark.parametrize("query", ["cat", "quarterly report", '"hello world"', "qu*", "title:annual", "东京", "*"])
def test_segments_are_read_from_maps_without_copies(library: Library, query: str) -> None:
    """Every segment a searcher opens reads its compound file through our map
    (indexer/mapped.py), not through Whoosh's map, which copied each sub-file into
    memory; a fresh index's answers are those of the long-open one."""
    fresh = PageIndex(library.ix.root, None, create=False)

    def answer(ix: PageIndex) -> list[tuple[str, int, float, str]]:
        result = ix.search(query, SearchOptions(limit=50, exact_count=True))
        return [(h.path, h.page, round(h.score, 6), h.snippet) for h in result.hits] + [("total", result.total, 0, "")]

    try:
        assert answer(fresh) == answer(library.ix)
        leaves = [reader for reader, _ in fresh._searcher().reader().leaf_readers()]
        compound = [reader._storage.a for reader in leaves]  # the segment's files over the folder's
        assert compound and all(isinstance(files._file, MappedFile) and files._source is None for files in compound)
        first = sha(next(iter(library.records)))
        assert fresh.document(first) == library.ix.document(first)
    finally:
        fresh.close()


# ---- a word found only in a document's metadata: one hit for the document (issue 20) -------------------

BOOK = "/shelf/free-culture.pdf"  # title "Free Culture", author Lessig; "culture" in the text of pages 3 and 7
ESSAY = "/shelf/essay.pdf"  # "culture" in the text of page 1
MANY = "/shelf/many.pdf"  # "culture" n times on page n
BOOK_PAGES = 40


def _lines_pdf(pages: list[list[str]]) -> bytes:
    w = PdfWriter()
    res = font_resources(mono_font(w))
    for lines in pages:
        w.add_page(b"".join(text_line(72, 700 - 20 * i, b"(%s) Tj" % line.encode()) for i, line in enumerate(lines)),
                   resources=res)
    return w.to_bytes()


def _book_page(n: int) -> list[str]:
    if n == 1:
        return ["preface and thanks"]
    return [f"chapter {n} of the book", "culture is what we share" if n in (3, 7) else "plain filler words"]


@pytest.fixture(scope="module")
def shelf(engine: str, tmp_path_factory: pytest.TempPathFactory) -> PageIndex:
    ix = PageIndex(tmp_path_factory.mktemp("shelf") / "index")
    with ix.writer() as writer:
        writer.add(*extracted(_lines_pdf([_book_page(n) for n in range(1, BOOK_PAGES + 1)]), BOOK,
                              title="Free Culture", author="Lawrence Lessig"))
        writer.add(*extracted(_lines_pdf([["culture culture and more culture"], ["an essay page"]]), ESSAY,
                              title="An Essay"))
        writer.add(*extracted(_lines_pdf([[" ".join(["culture"] * n + ["word"] * (30 - n))] for n in range(1, 21)]),
                              MANY))
    return ix


def _shown(result: SearchResult) -> list[tuple[str, int]]:
    return [(h.path, h.page) for h in result.hits]


@pytest.mark.parametrize("query", ["title:culture", "author:lessig", 'title:"free culture"', "filename:free",
                                   "free", '"free culture"'])
def test_a_word_only_in_the_metadata_is_one_hit_for_the_document(shelf: PageIndex, query: str) -> None:
    """``title:culture`` gave every page of the book, all with one score; now its
    first page, once, in the hits, the total and the count."""
    for exact in (False, True):
        result = shelf.search(query, SearchOptions(limit=100, exact_count=exact))
        assert _shown(result) == [(BOOK, 1)], query
        assert result.total == 1 and not result.total_is_lower_bound
    for sort in ("date", "path"):
        assert _shown(shelf.search(query, SearchOptions(sort=sort))) == [(BOOK, 1)]
    grouped = shelf.search(query, SearchOptions(by_document=True))
    assert grouped.total == 1 and [[h.page for h in g.pages] for g in grouped.groups] == [[1]]


def test_the_first_page_the_query_lets_through_stands_for_the_document(shelf: PageIndex) -> None:
    assert _shown(shelf.search("title:culture -preface")) == [(BOOK, 2)]
    assert _shown(shelf.search("title:culture -chapter")) == [(BOOK, 1)]


def test_pages_whose_own_text_matches_keep_their_hits(shelf: PageIndex) -> None:
    result = shelf.search("culture", SearchOptions(limit=100))
    book = [page for path, page in _shown(result) if path == BOOK]
    assert sorted(book) == [1, 3, 7]  # 3 and 7 by their text, 1 for the title alone
    assert book[-1] == 1  # ranked as the one title match it is, below the pages that also hold the word
    assert {page for path, page in _shown(result) if path == MANY} == set(range(1, 21))
    assert {page for path, page in _shown(result) if path == ESSAY} == {1}
    assert result.total == len(result.hits) == 20 + 3 + 1
    hits = {(h.path, h.page): h for h in result.hits}
    assert hits[(BOOK, 3)].spans and not hits[(BOOK, 1)].spans  # the title's page has no match in its text
    assert hits[(BOOK, 1)].snippet.startswith("preface")
    assert _shown(shelf.search("title:culture culture", SearchOptions(limit=100))) == [(BOOK, 3), (BOOK, 7), (BOOK, 1)]


@pytest.mark.parametrize("exact", [False, True])
def test_totals_and_pages_agree_when_the_top_is_full(shelf: PageIndex, exact: bool) -> None:
    """A limit below the matches: the total is counted in a second pass over every
    match (the top-N collector skips blocks), which folds the title's pages too."""
    everything = _shown(shelf.search("culture", SearchOptions(limit=100)))
    paged: list[tuple[str, int]] = []
    for offset in range(0, 30, 4):
        part = shelf.search("culture", SearchOptions(limit=4, offset=offset, exact_count=exact))
        assert part.total == 24 and not part.total_is_lower_bound
        paged += _shown(part)
    assert paged == everything
    grouped = shelf.search("culture", SearchOptions(by_document=True, limit=1, offset=1))
    assert grouped.total == 3
    whole = shelf.search("culture", SearchOptions(by_document=True))
    assert {g.path: sorted(h.page for h in g.pages) for g in whole.groups}[BOOK] == [1, 3, 7]
