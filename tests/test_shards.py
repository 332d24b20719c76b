"""A sharded index (indexer/shards.py, indexer/sharded_writer.py) ranks exactly like
one index over the same pages: the same hits with the same scores in the same order
(equal scores may come in another order: ties follow document numbers, which
follow the shards),
the same totals, groups and listings; routing is stable across processes; a
changed file whose new content lands in another shard takes its path with it;
reindex changes the shard count; remove, status and check work per shard."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pdfindex.indexer import ListFilters, PageIndex, SearchOptions, SearchResult, StorageError
from pdfindex.indexer.shards import shard_of
from tests.index_helpers import page, record, sha

ROOT = Path(__file__).resolve().parents[1]
_WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which but "
          "river stone market winter signal harbour copper lantern meadow orchard falcon glacier beacon "
          "quarry timber velvet saddle anchor compass thistle").split()
_CJK = ["中文", "检索", "系统", "全文", "社会", "城市", "教育", "公告"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return "".join(rng.choice(_CJK) for _ in range(rng.randint(4, 30)))
    weights = [1 / (r + 1) for r in range(len(_WORDS))]
    words = rng.choices(_WORDS, weights=weights, k=rng.randint(8, 160))
    return "\n".join(" ".join(words[i:i + 11]) for i in range(0, len(words), 11))


def _corpus() -> list[tuple[object, list[object]]]:
    rng = random.Random(1201)
    docs = []
    for n in range(90):
        pages = [page(p, _text(rng), coverage=rng.choice((1.0, 0.5))) for p in range(1, rng.randint(1, 5) + 1)]
        doc = record(f"shard-doc-{n}", f"/archive/{2000 + n % 4}/doc{n:03d}.pdf", pages,
                     title=" ".join(rng.sample(_WORDS[20:], 2)).title(), created=1.6e9 + n * 86400.0)
        docs.append((doc, pages))
    return docs


def _build(root: Path, shards: int) -> PageIndex:
    ix = PageIndex(root, "en", new_shards=shards)
    with ix.writer(batch_pages=60) as writer:  # several commits: several segments per shard
        for doc, pages in _corpus():
            writer.add(doc, pages)  # type: ignore[arg-type]
    return ix


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[int, PageIndex]:
    base = tmp_path_factory.mktemp("shards")
    return {n: _build(base / f"ix{n}", n) for n in (1, 2, 4)}


_QUERIES = ["river", "the", "harbour copper", '"of the"', '"river stone"', '"stone of the"', "lantern OR falcon",
            "glacier -harbour", "mead*", "title:falcon", "系统", "中文检索", "beacon AND quarry",
            "compass~1", '"in a"']


def _ranked(result: SearchResult) -> tuple[list[float], set[tuple[str, int]]]:
    """The hits' scores in order, and which pages they are: equal scores may come
    in another order (ties follow document numbers), and the exact-form re-ranking
    of the best 30 may then take in another of the pages tied at its edge."""
    return [round(h.score, 6) for h in result.hits], {(h.doc_hash, h.page) for h in result.hits}


@pytest.mark.parametrize("query", _QUERIES)
@pytest.mark.parametrize("shards", [2, 4])
def test_same_hits_scores_and_order_as_one_index(indexes: dict[int, PageIndex], shards: int, query: str) -> None:
    options = SearchOptions(limit=10_000, highlight=True, exact_count=True)
    one, many = indexes[1].search(query, options), indexes[shards].search(query, options)
    assert one.total > 0, query
    assert many.total == one.total
    assert _ranked(many) == _ranked(one)
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


def _other_shard_label(label: str, shards: int) -> str:
    home = shard_of(sha(label), shards)
    return next(f"{label}-v{n}" for n in range(100) if shard_of(sha(f"{label}-v{n}"), shards) != home)


def test_a_changed_file_takes_its_path_to_another_shard(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix", new_shards=3)
    old = [page(1, "first version words")]
    ix.add(record("moving", "/moving.pdf", old), old)
    new_label = _other_shard_label("moving", 3)
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
    first, second = "copied", _other_shard_label("copied", 3)
    pages_a, pages_b = [page(1, "alpha text")], [page(1, "beta text")]
    with ix.writer() as writer:
        writer.add(record(first, "/a.pdf", pages_a), pages_a)
        writer.add_path(sha(first), "/b.pdf")
        writer.add(record(second, "/b.pdf", pages_b), pages_b)
    assert ix.check() == []
    by_hash = {d.doc_hash: d.all_paths for d in ix.documents()}
    assert by_hash == {sha(first): ["/a.pdf"], sha(second): ["/b.pdf"]}


def test_remove_and_delete_reach_the_right_shard(indexes: dict[int, PageIndex], tmp_path: Path) -> None:
    ix = _build(tmp_path / "ix", 3)
    doc, _ = _corpus()[5]
    with ix.writer() as writer:
        writer.remove_path(doc.doc_hash, doc.path)  # type: ignore[attr-defined]
    assert ix.document(doc.doc_hash) is None  # type: ignore[attr-defined]
    other, _ = _corpus()[6]
    assert ix.delete_document(other.doc_hash)  # type: ignore[attr-defined]
    assert ix.check() == []
    assert ix.stats().documents == indexes[1].stats().documents - 2


@pytest.mark.parametrize(("before", "after"), [(4, 1), (1, 3)])
def test_reindex_changes_the_shard_count_and_keeps_the_ranking(indexes: dict[int, PageIndex], tmp_path: Path,
                                                                before: int, after: int) -> None:
    ix = _build(tmp_path / "ix", before)
    assert ix.reindex(shards=after) > 0
    assert ix.shards == after and ix.check() == []
    assert PageIndex(tmp_path / "ix").shards == after
    options = SearchOptions(limit=10_000, exact_count=True)
    for query in ("river", '"of the"', "中文"):
        assert _ranked(ix.search(query, options)) == _ranked(indexes[1].search(query, options))


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
