"""Shard writers in processes of their own (indexer/shard_processes.py): the index
they write is the one the in-process sharded writer writes; paths move between
shards; what a shard writer fails with reaches the caller as that error; a shard
writer killed, or its caller killed, leaves each shard as its last commit left it,
and no process behind."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from pdfindex.indexer import IndexBusy, PageIndex, SearchOptions, StorageError
from pdfindex.indexer.shard_processes import ParallelShardedWriter
from pdfindex.indexer.shards import shard_of
from tests.index_helpers import page, record, sha, shard_writer_pids, wait_for_shard_writers_to_end
from tests.shard_helpers import QUERIES, build, corpus, other_shard_label, ranked


def _documents(ix: PageIndex) -> list[tuple[str, list[str], int]]:
    return sorted((d.doc_hash, d.all_paths, d.page_count) for d in ix.documents())


def test_the_same_index_as_the_in_process_writer(tmp_path: Path) -> None:
    here = build(tmp_path / "here", 3)
    root = tmp_path / "apart"
    apart = PageIndex(root, "en", new_shards=3)
    with apart.writer(batch_pages=60, processes=True) as writer:  # several commits per shard
        assert isinstance(writer, ParallelShardedWriter)
        assert len(shard_writer_pids(root)) == 3
        for doc, pages in corpus():
            writer.add(doc, pages)  # type: ignore[arg-type]
    wait_for_shard_writers_to_end(root)
    assert apart.check() == []
    assert _documents(apart) == _documents(here)
    assert apart.stats().shard_pages == here.stats().shard_pages
    for doc_hash, _paths, _count in _documents(here):
        assert apart.page_texts(doc_hash) == here.page_texts(doc_hash)
    options = SearchOptions(limit=10_000, highlight=True, exact_count=True)
    for query in QUERIES:
        assert ranked(apart.search(query, options)) == ranked(here.search(query, options)), query


def test_a_changed_file_and_a_copy_move_their_paths_between_shard_processes(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix", new_shards=3)
    old = [page(1, "first version words")]
    ix.add(record("moving", "/moving.pdf", old), old)
    new_label = other_shard_label("moving", 3)
    first, second = "copied", other_shard_label("copied", 3)
    pages_a, pages_b, new = [page(1, "alpha text")], [page(1, "beta text")], [page(1, "second version words")]
    with ix.writer(processes=True) as writer:
        writer.add(record(new_label, "/moving.pdf", new), new)
        writer.add(record(first, "/a.pdf", pages_a), pages_a)
        writer.add_path(sha(first), "/b.pdf")
        writer.add(record(second, "/b.pdf", pages_b), pages_b)
    assert ix.check() == []
    assert {d.doc_hash: d.all_paths for d in ix.documents()} == {
        sha(new_label): ["/moving.pdf"], sha(first): ["/a.pdf"], sha(second): ["/b.pdf"]}
    assert [h.doc_hash for h in ix.search("version").hits] == [sha(new_label)]


def test_remove_and_delete_reach_the_shard_processes(tmp_path: Path) -> None:
    ix = build(tmp_path / "ix", 2)
    (kept, _), (removed, _), (deleted, _) = corpus()[4:7]
    with ix.writer(processes=True) as writer:
        writer.remove_path(removed.doc_hash, removed.path)  # type: ignore[attr-defined]
        writer.delete(deleted.doc_hash)  # type: ignore[attr-defined]
    assert ix.document(removed.doc_hash) is None and ix.document(deleted.doc_hash) is None  # type: ignore[attr-defined]
    assert ix.document(kept.doc_hash) is not None  # type: ignore[attr-defined]
    assert ix.check() == [] and ix.stats().documents == len(corpus()) - 2


def test_documents_the_index_cannot_take_come_back_as_rejected(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix", new_shards=2)
    labels = [next(f"bad{n}" for n in range(100) if shard_of(sha(f"bad{n}"), 2) == k) for k in (0, 1)]
    bad = {label: record(label, f"/{label}.pdf", [page(1, "text")], title=5) for label in labels}
    good = [page(1, "good words")]
    with ix.writer(processes=True) as writer:
        for doc in bad.values():
            writer.add(doc, [page(1, "text")])
        writer.add(record("good", "/good.pdf", good), good)
    assert sorted(r.path for r in writer.rejected) == sorted(f"/{label}.pdf" for label in labels)  # from both
    assert all(r.error.startswith("cannot be indexed") for r in writer.rejected)
    assert ix.search("good").total == 1 and ix.check() == []


def test_a_busy_shard_raises_index_busy_and_leaves_no_writer(tmp_path: Path) -> None:
    root = tmp_path / "ix"
    ix = PageIndex(root, new_shards=2)
    holder = ix.writer()  # in this process: it holds every shard's lock after its first add
    holder.add(*_one("held"))
    try:
        with pytest.raises(IndexBusy, match="another process is writing"), \
                ix.writer(lock_timeout=0.3, processes=True) as writer:
            writer.add(*_one("blocked"))
    finally:
        holder.commit()
    wait_for_shard_writers_to_end(root)
    assert ix.document(sha("held")) is not None and ix.document(sha("blocked")) is None


def _one(label: str) -> tuple[object, list[object]]:
    pages = [page(p, f"{label}word page{p} shared words") for p in (1, 2, 3)]
    return record(label, f"/{label}.pdf", pages), pages


def test_a_killed_shard_writer_fails_the_commit_and_loses_nothing_committed(tmp_path: Path) -> None:
    root = tmp_path / "ix"
    ix = PageIndex(root, new_shards=2)
    writer = ix.writer(batch_pages=10**9, processes=True)
    for i in range(20):
        writer.add(*_one(f"early{i}"))
    writer.commit()
    for i in range(20):
        writer.add(*_one(f"late{i}"))
    victim = min(shard_writer_pids(root))
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(StorageError, match=r"the writer of shard \d ended"):
        writer.commit()
    writer.close()
    wait_for_shard_writers_to_end(root)
    assert ix.check() == []
    labels = {d.path.strip("/").removesuffix(".pdf") for d in ix.documents()}
    assert {f"early{i}" for i in range(20)} <= labels
    late = [f"late{i}" for i in range(20)]
    assert 0 < len([x for x in late if x not in labels]) < 20  # the other shard committed its share
    for label in labels:
        assert {h.page for h in ix.search(f"{label}word").hits} == {1, 2, 3}
    with ix.writer(processes=True) as again:  # the lock died with the writer: the rest goes in
        for label in late:
            if label not in labels:
                again.add(*_one(label))
    assert ix.stats().documents == 40 and ix.check() == []
