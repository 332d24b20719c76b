"""A sharded index (indexer/shards.py, indexer/sharded_writer.py) ranks exactly like
one index over the same pages: the same hits with the same scores in the same order
(equal scores may come in another order: ties follow document numbers, which
follow the shards),
the same totals, groups and listings; routing is stable across processes; a
changed file whose new content lands in another shard takes its path with it;
reindex changes the shard count; remove, status and check work per shard."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pdfindex.indexer import ListFilters, PageIndex, SearchOptions, StorageError
from pdfindex.indexer.shards import shard_of
from tests.index_helpers import page, record, sha
from tests.shard_helpers import QUERIES, build, corpus, other_shard_label, ranked

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[int, PageIndex]:
    base = tmp_path_factory.mktemp("shards")
    return {n: build(base / f"ix{n}", n) for n in (1, 2, 4)}


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("shards", [2, 4])
def test_same_hits_scores_and_order_as_one_index(indexes: dict[int, PageIndex], shards: int, query: str) -> None:
    options = SearchOptions(limit=10_000, highlight=True, exact_count=True)
    one, many = indexes[1].search(query, options), indexes[shards].search(query, options)
    assert one.total > 0, query
    assert many.total == one.total
    assert ranked(many) == ranked(one)
    snippets = {(h.doc_hash, h.page): (h.snippet, h.spans) for h in one.hits}
    assert all(snippets[(h.doc_hash, h.page)] == (h.snippet, h.spans) for h in many.hits)


@pytest.mark.parametrize("shards", [2, 4])
def test_top_ten_filters_and_grouping_match(indexes: dict[int, PageIndex], shards: int) -> None:
    for options in (SearchOptions(limit=10), SearchOptions(limit=10, offset=10),
                    SearchOptions(limit=50, min_coverage=0.9), SearchOptions(limit=50, path_glob="/archive/2001/*"),
                    SearchOptions(limit=50, since=1.6e9 + 30 * 86400.0)):
        one, many = indexes[1].search("the river", options), indexes[shards].search("the river", options)
        assert [round(h.score, 6) for h in many.hits] == [round(h.score, 6) for h in one.hits]
        assert many.total == one.total
    grouped = SearchOptions(limit=1000, by_document=True)
    one, many = indexes[1].search("harbour", grouped), indexes[shards].search("harbour", grouped)
    assert [round(g.pages[0].score, 6) for g in many.groups] == [round(g.pages[0].score, 6) for g in one.groups]
    assert sorted((g.doc_hash, [h.page for h in g.pages]) for g in many.groups) == \
           sorted((g.doc_hash, [h.page for h in g.pages]) for g in one.groups)
    listing = ListFilters(path_glob="/archive/2002/*")
    assert [(p.doc_hash, p.page) for p in indexes[shards].list_pages(listing).pages] == \
           [(p.doc_hash, p.page) for p in indexes[1].list_pages(listing).pages]


def test_documents_land_in_their_shard_and_status_counts_each(indexes: dict[int, PageIndex]) -> None:
    ix = indexes[4]
    assert ix.shards == 4 and ix.check() == []
    stats, flat = ix.stats(), indexes[1].stats()
    assert stats.pages == flat.pages and stats.documents == flat.documents
    assert len(stats.shard_pages) == 4 and sum(stats.shard_pages) == stats.pages
    assert all(n > 0 for n in stats.shard_pages)
    assert flat.shard_pages == (flat.pages,)


def test_routing_is_the_same_in_another_process() -> None:
    hashes = [sha(f"route-{i}") for i in range(50)]
    code = ("import sys; from pdfindex.indexer.shards import shard_of; "
            "print(' '.join(str(shard_of(h, 7)) for h in sys.argv[1:]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code, *hashes], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert [int(k) for k in out] == [shard_of(h, 7) for h in hashes]
    assert len(set(out)) > 1  # and it spreads


def test_a_changed_file_takes_its_path_to_another_shard(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix", new_shards=3)
    old = [page(1, "first version words")]
    ix.add(record("moving", "/moving.pdf", old), old)
    new_label = other_shard_label("moving", 3)
    new = [page(1, "second version words")]
    with ix.writer() as writer:
        writer.add(record(new_label, "/moving.pdf", new), new)
    assert ix.check() == []
    assert [d.doc_hash for d in ix.documents()] == [sha(new_label)]
    assert [h.doc_hash for h in ix.search("version").hits] == [sha(new_label)]


def test_a_copy_in_another_shard_keeps_the_first_content(tmp_path: Path) -> None:
    """A path taken by a content in another shard leaves the first content its
    other paths; in one batch, before any commit, as well."""
    ix = PageIndex(tmp_path / "ix", new_shards=3)
    first, second = "copied", other_shard_label("copied", 3)
    pages_a, pages_b = [page(1, "alpha text")], [page(1, "beta text")]
    with ix.writer() as writer:
        writer.add(record(first, "/a.pdf", pages_a), pages_a)
        writer.add_path(sha(first), "/b.pdf")
        writer.add(record(second, "/b.pdf", pages_b), pages_b)
    assert ix.check() == []
    by_hash = {d.doc_hash: d.all_paths for d in ix.documents()}
    assert by_hash == {sha(first): ["/a.pdf"], sha(second): ["/b.pdf"]}


def test_remove_and_delete_reach_the_right_shard(indexes: dict[int, PageIndex], tmp_path: Path) -> None:
    ix = build(tmp_path / "ix", 3)
    doc, _ = corpus()[5]
    with ix.writer() as writer:
        writer.remove_path(doc.doc_hash, doc.path)  # type: ignore[attr-defined]
    assert ix.document(doc.doc_hash) is None  # type: ignore[attr-defined]
    other, _ = corpus()[6]
    assert ix.delete_document(other.doc_hash)  # type: ignore[attr-defined]
    assert ix.check() == []
    assert ix.stats().documents == indexes[1].stats().documents - 2


@pytest.mark.parametrize(("before", "after"), [(4, 1), (1, 3)])
def test_reindex_changes_the_shard_count_and_keeps_the_ranking(indexes: dict[int, PageIndex], tmp_path: Path,
                                                                before: int, after: int) -> None:
    ix = build(tmp_path / "ix", before)
    assert ix.reindex(shards=after) > 0
    assert ix.shards == after and ix.check() == []
    assert PageIndex(tmp_path / "ix").shards == after
    options = SearchOptions(limit=10_000, exact_count=True)
    for query in ("river", '"of the"', "中文"):
        assert ranked(ix.search(query, options)) == ranked(indexes[1].search(query, options))


def test_a_shard_count_out_of_range_is_refused(tmp_path: Path) -> None:
    for bad in (0, 65):
        with pytest.raises(StorageError, match="shard count"):
            PageIndex(tmp_path / f"ix{bad}", new_shards=bad)
        assert not (tmp_path / f"ix{bad}").exists() or not any((tmp_path / f"ix{bad}").iterdir())


def test_a_damaged_shard_count_is_one_line(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix", new_shards=2)
    meta = ix.path / "pdfindex.json"
    meta.write_text(meta.read_text().replace('"shards": 2', '"shards": "two"'))
    with pytest.raises(StorageError, match="shards"):
        PageIndex(tmp_path / "ix")
