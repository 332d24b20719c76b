"""The same scenarios on both index engines (issue 24, item 1; docs/engines.md).

Each test runs on a real index on disk, Whoosh's or Tantivy's, made the way users
make one (``PageIndex(root, new_engine=...)``, or PDFINDEX_ENGINE); what a user
sees must not depend on the engine: hits, totals, snippets and their code-point
spans, filters, folding, deletions, replacements, reindexing between engines, the
index's identity, one writer, private files. Where the Tantivy side cannot do a
thing yet it must say so, never answer differently.
"""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import tantivy

from pdfindex.config import SettingsError, load
from pdfindex.contract.problems import Problem
from pdfindex.indexer import (
    DocumentRecord,
    IndexBusy,
    ListFilters,
    PageIndex,
    PageRecord,
    SearchOptions,
    Status,
    UntrustedIndex,
    reindex,
)
from pdfindex.indexer.store import UnknownEngine, stored_engine
from pdfindex.indexer.tantivy_index import NotSupported, TantivyPageIndex
from pdfindex.indexer import tantivy_search
from pdfindex.indexer.tantivy_schema import count, open_tantivy, tantivy_schema
from tests.index_helpers import page, record, sha

ENGINES = ("whoosh", "tantivy")
DAY = 86_400.0

def _entry(label: str, path: str, pages: list[PageRecord], **kw: object) -> tuple[DocumentRecord, list[PageRecord]]:
    return record(label, path, pages, **kw), pages


#: Pages of three files, with metadata, dates, a needs-OCR page and CJK text.
LIBRARY = [
    _entry("report", "/docs/annual-report.pdf",
           [page(1, "The quick brown fox jumps over the lazy dog. Running runs."),
            page(2, "Revenue grew; the fox ran across the river.", coverage=0.4), page(3, "Nothing of note here.")],
           title="Annual report", author="Ada Lovelace", mtime=10 * DAY),
    _entry("culture", "/docs/free-culture.pdf",
           [page(1, "A fox of the hills; free culture movement and the café résumé"),
            page(2, "Scanned page", coverage=None, needs_ocr=True)],
           title="Free culture", author="Lawrence Lessig", mtime=20 * DAY),
    _entry("cjk", "/other/中文.pdf", [page(1, "PDF中文全文检索系统 und 検索エンジン"), page(2, "한국어 검색은 잘 된다")],
           title="中文", mtime=30 * DAY),
]

#: Queries whose hits, snippets and spans must be the same on both engines.
QUERIES = ["fox", '"brown fox"', "fox -lazy", "culture OR dog", "title:report", "report revenue", "检索", "全文检索",
           "中", "cult*", "run", "cafe resume", "author:lessig fox", "검색", "f?x", "+fox river", "NOT fox", "fxo~",
           "cultre~2", "[cat TO dog]", "title:[a TO m]", "r*"]


def make(tmp_path: Path, engine: str, name: str = "ix") -> PageIndex:
    index = PageIndex(tmp_path / name, new_engine=engine)
    for doc, pages in LIBRARY:
        index.add(doc, pages)
    return index


def shown(result: object) -> set[tuple[str, int, str, tuple[tuple[int, int], ...]]]:
    """The hits as a user reads them, without the order (scores differ by engine)."""
    return {(h.path, h.page, h.snippet, tuple((s.start, s.end) for s in h.spans)) for h in result.hits}  # type: ignore[attr-defined]


def test_the_engine_is_the_one_asked_for_and_stored(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    assert stored_engine(index.root) == engine
    assert isinstance(PageIndex(index.root), TantivyPageIndex) is (engine == "tantivy")
    meta = json.loads((index.path / "pdfindex.json").read_text())
    assert meta["engine"] == engine


def test_pdfindex_engine_chooses_the_engine_of_a_new_index(tmp_path: Path, engine: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDFINDEX_ENGINE", engine)
    assert load().engine == engine
    PageIndex(tmp_path / "ix").add(*LIBRARY[0])
    assert stored_engine(tmp_path / "ix") == engine
    monkeypatch.setenv("PDFINDEX_ENGINE", "whoosh" if engine == "tantivy" else "tantivy")
    assert type(PageIndex(tmp_path / "ix")).__name__ == ("TantivyPageIndex" if engine == "tantivy" else "PageIndex")


def test_words_phrases_and_fields_find_the_same_pages(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    found = {q: {(h.path, h.page) for h in index.search(q, SearchOptions(limit=50)).hits if not h.missing}
             for q in ("fox", '"brown fox"', '"fox brown"', '"quick fox"', '"quick fox"~2', "fox -lazy", "author:lovelace", "title:culture",
                       "report revenue", "cafe")}
    assert found["fox"] == {("/docs/annual-report.pdf", 1), ("/docs/annual-report.pdf", 2),
                            ("/docs/free-culture.pdf", 1)}
    assert found['"brown fox"'] == {("/docs/annual-report.pdf", 1)}
    assert found['"fox brown"'] == found['"quick fox"'] == set()
    assert found['"quick fox"~2'] == {("/docs/annual-report.pdf", 1)}  # one word between
    assert found["fox -lazy"] == {("/docs/annual-report.pdf", 2), ("/docs/free-culture.pdf", 1)}
    # a metadata word alone: one page per document (indexer/folding.py)
    assert found["author:lovelace"] == {("/docs/annual-report.pdf", 1)}
    assert found["title:culture"] == {("/docs/free-culture.pdf", 1)}
    # a title word and a page's own word: the page with its own word
    assert found["report revenue"] == {("/docs/annual-report.pdf", 2)}
    assert found["cafe"] == {("/docs/free-culture.pdf", 1)}


def test_filters_and_sorting(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)

    def pages(query: str, **options: object) -> list[tuple[str, int]]:
        return [(h.path, h.page) for h in index.search(query, SearchOptions(limit=50, **options)).hits]  # type: ignore[arg-type]

    assert set(pages("fox", path_glob="/docs/free-*")) == {("/docs/free-culture.pdf", 1)}
    assert set(pages("fox", min_coverage=0.5)) == {("/docs/annual-report.pdf", 1), ("/docs/free-culture.pdf", 1)}
    assert set(pages("scanned", needs_ocr=True)) == {("/docs/free-culture.pdf", 2)}
    assert pages("scanned", needs_ocr=False) == []
    assert set(pages("fox", since=15 * DAY)) == {("/docs/free-culture.pdf", 1)}
    assert set(pages("fox", until=15 * DAY)) == {("/docs/annual-report.pdf", 1), ("/docs/annual-report.pdf", 2)}
    assert pages("fox", sort="date")[0] == ("/docs/free-culture.pdf", 1)
    assert [p for p, _ in pages("fox", sort="path")] == sorted(p for p, _ in pages("fox", sort="path"))
    result = index.search("fox", SearchOptions(limit=1, by_document=True))
    assert result.total == 2 and len(result.groups) == 1


def test_hits_snippets_and_spans_are_the_same_on_both_engines(tmp_path: Path) -> None:
    whoosh, tantivy = make(tmp_path, "whoosh", "w"), make(tmp_path, "tantivy", "t")
    marked = 0
    for query in QUERIES:
        on_whoosh, on_tantivy = whoosh.search(query), tantivy.search(query)
        assert shown(on_tantivy) == shown(on_whoosh), query
        assert on_tantivy.total == on_whoosh.total, query
        marked += sum(bool(h.spans) for h in on_whoosh.hits)
    assert marked >= 15  # the comparison covers highlighted snippets, not only empty ones


def test_a_huge_pages_snippet_is_the_same_and_reads_only_its_start(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of a megabyte: its snippets are the same on both engines, and making
    them analyses only what the fragmenter reads (its first 32 KB), not every word."""
    from pdfindex.indexer.analysis import PageTokenizer

    text = "the fox ran, " * 90_000 + "and the river at the end"
    indexes = {}
    for engine in ENGINES:
        indexes[engine] = PageIndex(tmp_path / engine, new_engine=engine)
        indexes[engine].add(*_entry("huge", "/docs/huge.pdf", [page(1, text)]))
    longest = 0
    real_terms = PageTokenizer.shown_terms

    def shown_terms(self: PageTokenizer, value: str) -> list[str]:
        nonlocal longest
        longest = max(longest, len(value))
        return real_terms(self, value)

    monkeypatch.setattr(PageTokenizer, "shown_terms", shown_terms)
    on_whoosh, on_tantivy = indexes["whoosh"].search("fox"), indexes["tantivy"].search("fox")
    assert shown(on_tantivy) == shown(on_whoosh) and on_whoosh.hits[0].spans
    assert 0 < longest < 40_000  # the Tantivy side's marks: the part read, not the megabyte
    assert shown(indexes["tantivy"].search("river")) == shown(indexes["whoosh"].search("river"))


LISTINGS = [ListFilters(), ListFilters(needs_ocr=True), ListFilters(min_coverage=0.5), ListFilters(path_glob="/docs/*"),
            ListFilters(since=15 * DAY), ListFilters(status=Status.FAILED), ListFilters(problem=""),
            ListFilters(problem="font_missing"), ListFilters(doc_hash=sha("cjk")),
            ListFilters(path_glob="/copies/*", min_coverage=0.5)]


def test_listing_is_the_same_on_both_engines(tmp_path: Path) -> None:
    indexes = [make(tmp_path, engine, engine) for engine in ENGINES]
    for index in indexes:
        index.add(record("broken", "/docs/broken.pdf", [], status=Status.FAILED, error="damaged"), [])
        troubled = replace(page(1, "a page with a missing font"), problems=(Problem("font_missing", "F1"),))
        index.add(record("troubled", "/docs/troubled.pdf", [troubled]), [troubled])
        with index.writer() as writer:
            writer.add_path(sha("culture"), "/copies/culture.pdf")
    whoosh, tantivy = indexes
    listed = 0
    for filters in LISTINGS:
        for offset, limit in ((0, None), (1, 2)):
            pages = [(tantivy.list_pages(filters, limit, offset)), (whoosh.list_pages(filters, limit, offset))]
            assert pages[0].total == pages[1].total and pages[0].pages == pages[1].pages, filters
            docs = [(tantivy.list_documents(filters, limit, offset)), (whoosh.list_documents(filters, limit, offset))]
            assert docs[0].total == docs[1].total and docs[0].documents == docs[1].documents, filters
            listed += len(pages[1].pages) + len(docs[1].documents)
    assert listed > 30
    for options in (SearchOptions(limit=50), SearchOptions(path_glob="/docs/*", limit=3, offset=1),
                    SearchOptions(needs_ocr=True, by_document=True)):
        found = [index.search("*", options) for index in indexes]
        assert found[0].total == found[1].total and found[0].hits == found[1].hits
        assert found[0].groups == found[1].groups


def test_a_search_that_finds_nothing_suggests_the_same_words(tmp_path: Path) -> None:
    whoosh, tantivy = make(tmp_path, "whoosh", "w"), make(tmp_path, "tantivy", "t")
    for query, expected in (("foxx", "fox"), ("brwn fox", "brown fox"), ("revenu culturr", "revenu culture")):
        assert tantivy.search(query).suggestion == whoosh.search(query).suggestion == expected
    assert tantivy.search("fox").suggestion == ""


def test_totals_stop_at_the_same_cap(tmp_path: Path) -> None:
    """Whoosh stops counting a scored search at COUNT_CAP (a lower bound) once its
    top N has had to drop a page (pages of different lengths here); Tantivy shows the
    same count, though its own is exact."""
    totals = []
    for engine in ENGINES:
        index = PageIndex(tmp_path / engine, new_engine=engine)
        with index.writer() as writer:
            for d in range(11):
                pages = [page(n, f"common words page {n} of {d}" + " more" * (n % 7)) for n in range(1, 101)]
                writer.add(record(f"big{d}", f"/big/{d:02d}.pdf", pages), pages)
        totals.append([(r.total, r.total_is_lower_bound) for r in (
            index.search("common"), index.search("common", SearchOptions(exact_count=True)),
            index.search('"common words"'), index.search("common", SearchOptions(sort="date")),
            index.search("common", SearchOptions(by_document=True)))])
    assert totals[0] == totals[1] == [(1000, True), (1100, False), (1100, False), (1100, False), (11, False)]


def test_the_words_to_mark_are_the_same(tmp_path: Path) -> None:
    whoosh, tantivy = make(tmp_path, "whoosh", "w"), make(tmp_path, "tantivy", "t")
    marked = 0
    for query in [*QUERIES, "r*", "*e", "title:report fox", "-fox dog"]:
        terms = tantivy.terms_to_mark(query)
        assert terms == whoosh.terms_to_mark(query), query
        marked += len(terms)
    assert marked > 30


def test_cjk_bigrams(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    for query in ("检索", "全文检索", '"文全"', "中", "検索", "검색"):
        hits = index.search(query).hits
        assert hits and hits[0].path == "/other/中文.pdf", query
        text = index.page_texts(sha("cjk"))[hits[0].page]
        snippet_text = hits[0].snippet
        assert all(snippet_text[s.start:s.end] in text for s in hits[0].spans)
    assert index.search("文检").total == 1 and index.search("系统检").total == 0


def test_records_search_and_stats(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    index.add(record("broken", "/docs/broken.pdf", [], status=Status.FAILED, error="cannot open: damaged xref"), [])
    failed = index.search("status:failed")
    assert [h.path for h in failed.hits] == ["/docs/broken.pdf"]
    assert index.search("error:xref").total == 1
    stats = index.stats()
    assert (stats.documents, stats.pages, stats.by_status) == (4, 7, {"indexed": 3, "failed": 1})
    assert index.document(sha("broken")).status == Status.FAILED  # type: ignore[union-attr]
    assert {d.path for d in index.documents(Status.INDEXED)} == {doc.path for doc, _ in LIBRARY}


def test_delete_and_re_add(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    assert index.delete_document(sha("report"))
    assert not index.delete_document(sha("report"))
    assert index.search("fox").total == 1
    assert index.document(sha("report")) is None
    # the same content again replaces its pages
    doc, _ = LIBRARY[1]
    index.add(doc, [page(1, "A single new page about badgers")])
    assert index.search("fox").total == 0
    assert index.page_texts(doc.doc_hash) == {1: "A single new page about badgers"}
    # a changed file (new content at the same path) replaces the old content
    index.add(record("culture v2", doc.path, [page(1, "otters")]), [page(1, "otters")])
    assert index.search("badgers").total == 0 and index.search("otters").total == 1
    assert index.document(doc.doc_hash) is None
    assert index.stats().documents == 2
    assert index.check() == []
    with index.writer() as writer:  # a page without its record: found by the check
        writer.delete(sha("cjk"))
        writer.add(record("cjk", "/other/中文.pdf", [], page_count=3), LIBRARY[2][1])
    assert index.check() == ["/other/中文.pdf: 2 pages indexed of 3"]


@pytest.mark.parametrize("query", ["lighthouse", '"lighthouse keeper"', "lighthouse OR keeper", "title:keeper"])
def test_a_title_word_stands_for_the_first_page_the_filters_let_through(tmp_path: Path, engine: str,
                                                                        query: str) -> None:
    """A word found in the title alone gives one page of the document: its first
    page that the filters let through, not a first page they keep out, nor one the
    rest of the query keeps out (a word's title match inside a larger query)."""
    index = PageIndex(tmp_path / "ix", new_engine=engine)
    pages = [page(1, "alpha", coverage=0.1), page(2, "beta", coverage=0.9), page(3, "gamma", coverage=0.9)]
    index.add(*_entry("light", "/docs/light.pdf", pages, title="Lighthouse keeper"))
    assert [h.page for h in index.search(query).hits] == [1]
    assert [h.page for h in index.search(f"(({query}) -alpha) OR zebra").hits] == [2]
    for exact in (False, True):
        kept = index.search(query, SearchOptions(min_coverage=0.5, exact_count=exact))
        assert [h.page for h in kept.hits] == [2] and kept.total == 1


#: Folding's cases: a document whose pages match by its title alone (the first
#: stands for them), one whose single such page is its first (kept beside a page
#: matching by its text), one matching by its text alone, and one with pages of
#: both kinds around a text match.
FOLDED = [
    ("all-title", "Lighthouse keeper", ["alpha", "beta", "gamma"]),
    ("one-title", "Lighthouse log", ["the lighthouse lamp", "delta"]),
    ("text-only", "Harbour", ["lighthouse far away", "epsilon"]),
    ("both", "Lighthouse notes", ["zeta", "a lighthouse again", "eta"]),
]
FOLDED_HITS = {("/f/all-title.pdf", 1), ("/f/one-title.pdf", 1), ("/f/one-title.pdf", 2), ("/f/text-only.pdf", 1),
               ("/f/both.pdf", 1), ("/f/both.pdf", 2)}


def _add_folded(index: PageIndex) -> None:
    for label, title, texts in FOLDED:
        index.add(*_entry(label, f"/f/{label}.pdf", [page(n, text) for n, text in enumerate(texts, 1)], title=title))


def _folded_hits(index: PageIndex) -> set[tuple[str, int]]:
    return {(h.path, h.page) for h in index.search("lighthouse", SearchOptions(limit=100)).hits}


def test_each_document_shows_its_first_page_matching_by_its_title_alone(tmp_path: Path, engine: str) -> None:
    """Folding over several documents at once: a page matching by the title alone is
    shown only when it is its document's first such page, whatever other documents
    fold (a document with one such page keeps it)."""
    index = PageIndex(tmp_path / "ix", new_engine=engine)
    _add_folded(index)
    assert _folded_hits(index) == FOLDED_HITS


@pytest.mark.parametrize("most", [60_000, 3, 2])
def test_folding_groups_pages_by_document_in_parts_when_they_are_many(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      most: int) -> None:
    """Tantivy groups at most 65,000 documents in one aggregation: past
    ``AGGREGATED_PAGES`` pages, folding groups them by the content hash's first hex
    digits, 16 parts, then 256; where a part of 256 still holds too many, the pages'
    records are read. Shown here with the limit brought down to a few pages: each
    document's first page is found either way, and the hits are the same."""
    monkeypatch.setattr(tantivy_search, "AGGREGATED_PAGES", most)
    index = PageIndex(tmp_path / "ix", new_engine="tantivy")
    _add_folded(index)
    opened = open_tantivy(index.path)  # type: ignore[attr-defined]
    searcher, every_page = opened.searcher(), tantivy.Query.term_query(opened.schema, "kind", "page")
    grouped = tantivy_search._buckets(searcher, opened.schema, every_page, "", count(searcher, every_page))
    if most == 2:  # a document of three pages: no part of two holds it, however many digits
        assert grouped is None
    else:
        assert sorted(grouped or []) == sorted((sha(label), 1, len(texts)) for label, _, texts in FOLDED)
    firsts = tantivy_search._first_pages(searcher, opened.schema, every_page)  # the records, where not grouped
    assert sorted(firsts) == sorted(f"{sha(label)}:1" for label, _, _ in FOLDED)
    assert _folded_hits(index) == FOLDED_HITS


def test_folding_in_parts_misses_no_document_whose_key_is_not_hex(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python API takes any plain key for a document, not only a SHA-256 in hex;
    parts by hex digit would leave such a document out (its pages passed over, its
    first among them), so its pages' records are read instead."""
    monkeypatch.setattr(tantivy_search, "AGGREGATED_PAGES", 3)
    index = PageIndex(tmp_path / "ix", new_engine="tantivy")
    _add_folded(index)
    pages = [page(1, "theta"), page(2, "iota")]
    index.add(record("custom", "/f/custom.pdf", pages, title="Lighthouse extra", doc_hash="Custom-Key"), pages)
    assert _folded_hits(index) == FOLDED_HITS | {("/f/custom.pdf", 1)}


def test_an_older_tantivy_index_folds_alike(tmp_path: Path) -> None:
    """A Tantivy index written before the content hash was a fast column cannot
    group pages by an aggregation; its pages' records are read instead, with the
    same hits."""
    index = PageIndex(tmp_path / "ix", new_engine="tantivy")
    generation = index.path  # type: ignore[attr-defined]
    for name in ("meta.json", ".managed.json"):
        (generation / name).unlink(missing_ok=True)
    tantivy.Index(tantivy_schema(index.language, frozenset({"path"})), path=str(generation), reuse=False)
    older = PageIndex(tmp_path / "ix", create=False)
    _add_folded(older)
    with pytest.raises(ValueError, match="fast field"):  # the aggregation is refused: the records are read
        tantivy.Index.open(str(generation)).searcher().aggregate(
            tantivy.Query.all_query(), {"docs": {"terms": {"field": "doc_hash"}}})
    assert _folded_hits(older) == FOLDED_HITS


def test_a_search_sees_each_commit_of_another_writer_at_once(tmp_path: Path, engine: str) -> None:
    """An open index reloads only when the index changed (Tantivy: its meta.json);
    commits made one right after the other, by another index object, must each be
    seen by the next search."""
    reader = make(tmp_path, engine)
    other = PageIndex(tmp_path / "ix", create=False)
    assert reader.search("otters").total == 0
    for n in range(6):
        other.add(record(f"new {n}", f"/new/{n}.pdf", []), [page(1, f"otters number{n}")])
        assert reader.search("otters").total == n + 1
        assert [h.path for h in reader.search(f"number{n}").hits] == [f"/new/{n}.pdf"]
    assert other.delete_document(sha("new 0"))
    assert reader.search("otters").total == 5
    assert reader.stats().documents == len(LIBRARY) + 5


def test_copies_keep_their_paths(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    doc, _ = LIBRARY[0]
    with index.writer() as writer:
        writer.add_path(doc.doc_hash, "/copies/report.pdf")
    assert index.document(doc.doc_hash).all_paths == [doc.path, "/copies/report.pdf"]  # type: ignore[union-attr]
    hits = index.search("brown", SearchOptions(path_glob="/copies/*")).hits
    assert [h.page for h in hits] == [1]
    with index.writer() as writer:
        writer.remove_path(doc.doc_hash, doc.path)
    assert index.document(doc.doc_hash).all_paths == ["/copies/report.pdf"]  # type: ignore[union-attr]
    with index.writer() as writer:
        writer.release("/copies/report.pdf")
    assert index.document(doc.doc_hash) is None and index.search("brown").total == 0


@pytest.mark.parametrize(("start", "target"), [("whoosh", "tantivy"), ("tantivy", "whoosh")])
def test_reindex_between_engines_keeps_the_pages(tmp_path: Path, start: str, target: str) -> None:
    index = make(tmp_path, start)
    identity = index.identity()
    before = {q: shown(index.search(q)) for q in QUERIES}
    copied = reindex(index.root, engine=target)
    assert copied == 3 + 7 and stored_engine(index.root) == target
    again = PageIndex(index.root)
    assert isinstance(again, TantivyPageIndex) is (target == "tantivy")
    assert {q: shown(again.search(q)) for q in QUERIES} == before
    assert again.identity() == identity
    assert len(list(index.root.glob("gen-*"))) == 1
    # back through the command line, which keeps the language; status names the engine
    cli = [sys.executable, "-m", "pdfindex"]
    done = subprocess.run([*cli, "reindex", "--engine", start, "--index", str(index.root)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and f"engine {start})" in done.stdout, done.stderr
    assert stored_engine(index.root) == start
    assert {q: shown(PageIndex(index.root).search(q)) for q in QUERIES} == before
    status = subprocess.run([*cli, "status", "--json", "--index", str(index.root)], capture_output=True, text=True,
                            timeout=120, check=False, env={**os.environ, "PDFINDEX_BROKER_URL": ""})
    assert json.loads(status.stdout)["engine"] == start, status.stderr


def test_reindex_waits_for_a_writer_and_keeps_its_batch(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    writer = index.writer()
    writer.add(record("late", "/late.pdf", [page(1, "latecomer")]), [page(1, "latecomer")])  # holds the lock
    finishing = threading.Timer(0.5, writer.commit)
    finishing.start()
    try:
        reindex(index.root, engine="whoosh" if engine == "tantivy" else "tantivy", lock_timeout=10)
    finally:
        finishing.join()
    assert PageIndex(index.root).search("latecomer").total == 1


def test_an_unknown_engine_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnknownEngine, match="unknown index engine 'lucene'; the engines are whoosh, tantivy"):
        PageIndex(tmp_path / "new", new_engine="lucene")
    monkeypatch.setenv("PDFINDEX_ENGINE", "lucene")
    with pytest.raises(SettingsError, match="PDFINDEX_ENGINE"):
        load()
    index = make(tmp_path, "tantivy")
    meta_path = index.path / "pdfindex.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "engine": "lucene"}))
    with pytest.raises(UnknownEngine, match="made with the engine 'lucene', which this version of pdfindex does not"):
        PageIndex(index.root)
    with pytest.raises(UnknownEngine):
        reindex(index.root)


def test_one_writer_at_a_time(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    with index.writer() as first:
        first.delete(sha("cjk"))
        with pytest.raises(IndexBusy), PageIndex(index.root).writer(lock_timeout=0.2) as second:
            second.delete(sha("report"))
    assert index.search("fox").total == 3 and index.search("检索").total == 0


def test_a_failed_batch_leaves_nothing(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    with pytest.raises(RuntimeError), index.writer() as writer:
        writer.delete(sha("report"))
        writer.add(record("new", "/docs/new.pdf", [page(1, "zebras")]), [page(1, "zebras")])
        raise RuntimeError("stop")
    assert index.search("zebras").total == 0 and index.search("brown").total == 1
    with index.writer() as writer:  # and the lock is free
        writer.delete(sha("report"))
    assert index.search("brown").total == 0


def test_a_record_the_index_cannot_take_becomes_a_failure_record(tmp_path: Path, engine: str) -> None:
    """On both engines the same records are refused, by the field named, and the
    rest of the batch is written (Tantivy's writer checks a document by making it,
    not with Whoosh's check: issue 24)."""
    index = make(tmp_path, engine)
    bad = [(record("title", "/title.pdf", [page(1, "x")], title=5), [page(1, "x")], "title"),
           (record("page", "/page.pdf", [page(2**40, "x")]), [page(2**40, "x")], "page"),
           (record("text", "/text.pdf", [page(1, "x")]), [replace(page(1, "x"), text=b"bytes")], "text")]
    with index.writer() as writer:
        for doc, pages, _ in bad:
            writer.add(doc, pages)  # type: ignore[arg-type]
        writer.add(record("fine", "/fine.pdf", [page(1, "zebras")]), [page(1, "zebras")])
    assert {r.path for r in writer.rejected} == {doc.path for doc, _, _ in bad}
    for doc, _, field in bad:
        failed = PageIndex(index.root).document(doc.doc_hash)
        assert failed is not None and failed.status == Status.FAILED and failed.page_count == 0
        assert failed.error.startswith("cannot be indexed") and field in failed.error, failed.error
    assert index.search("zebras").total == 1 and index.search("error:indexed").total == 3


_KILLED_WRITER = """
import sys, time
from pathlib import Path
from pdfindex.indexer import PageIndex
from tests.index_helpers import page, record
writer = PageIndex(Path(sys.argv[1])).writer().__enter__()
for i in range(50):
    writer.add(record(f"b{i}", f"/b{i}.pdf", [page(1, "beta")]), [page(1, "beta")])
print("added", flush=True)
time.sleep(60)
"""


def test_a_killed_writer_leaves_the_last_commit_and_a_free_lock(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    with subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(index.root)], stdout=subprocess.PIPE,
                          text=True, cwd=Path(__file__).resolve().parents[1]) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "added"
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
    again = PageIndex(index.root)
    assert again.search("beta").total == 0 and again.search("fox").total == 3
    with again.writer(lock_timeout=2.0) as writer:
        writer.add(record("c", "/c.pdf", [page(1, "gamma")]), [page(1, "gamma")])
    assert again.search("gamma").total == 1 and again.stats().pages == 8


def test_the_files_are_private(tmp_path: Path, engine: str) -> None:
    old = os.umask(0o002)
    try:
        index = make(tmp_path, engine)
    finally:
        os.umask(old)
    loose = [p for p in index.path.rglob("*") if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert loose == []
    PageIndex(index.root).search("fox")  # the trust checks pass


def test_expansion_caps_and_notes_are_the_same(tmp_path: Path) -> None:
    whoosh, tantivy = make(tmp_path, "whoosh", "w"), make(tmp_path, "tantivy", "t")
    for index in (whoosh, tantivy):
        with index.writer() as writer:
            pages = [page(n, " ".join(f"x{n:02d}{k:03d}" for k in range(40))) for n in range(1, 31)]
            writer.add(record("many", "/many.pdf", pages), pages)
    for query in ("x*", "x* fox", "x0* OR x1* OR x2*"):
        on_whoosh, on_tantivy = whoosh.search(query), tantivy.search(query)
        assert on_tantivy.note == on_whoosh.note and on_whoosh.note, query
        assert shown(on_tantivy) == shown(on_whoosh) and on_tantivy.total == on_whoosh.total, query
    assert tantivy.estimated_postings("x01*") == whoosh.estimated_postings("x01*") == 40


def test_an_index_file_others_may_write_is_refused(tmp_path: Path, engine: str) -> None:
    index = make(tmp_path, engine)
    segment = next(p for p in sorted(index.path.iterdir()) if p.is_file() and p.name != "pdfindex.json")
    os.chmod(segment, 0o620)
    with pytest.raises(UntrustedIndex, match="writable by its group"):
        PageIndex(index.root)


def test_what_tantivy_cannot_do_yet_it_says(tmp_path: Path) -> None:
    tantivy = make(tmp_path, "tantivy", "t")
    with pytest.raises(NotSupported, match="not supported on the tantivy engine yet: a wildcard with a"):
        tantivy.search("fox", SearchOptions(path_glob="/docs/[af]*"))
    with pytest.raises(NotSupported, match="sharded indexes"):
        PageIndex(tmp_path / "sharded", new_engine="tantivy", new_shards=2)
