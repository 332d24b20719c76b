"""Issue 3: the single index writer, crash safety and reindexing, on real on-disk
indexes (no mocks). A writer process is SIGKILLed mid-batch for real."""
from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from pdfindex import indexer
from pdfindex.indexer import IndexBusy, PageIndex, ReindexNeeded, SearchIndexError, SearchOptions, Status
from tests.index_helpers import index_dirs, page, record, sha, wait_for_shard_writers_to_end

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures("engine")  # every test on each engine (tests/conftest.py)


def _doc(label: str, path: str, *texts: str, **kw: object) -> tuple:  # type: ignore[type-arg]
    pages = [page(n, text) for n, text in enumerate(texts, 1)]
    return record(label, path, pages, **kw), pages


def _visible(root: Path, label: str) -> bool:
    """Whether a fresh reader (as another process would open it) sees the record."""
    return PageIndex(root).document(sha(label)) is not None


# ---- one writer at a time ---------------------------------------------------------------

def test_second_writer_gets_index_busy_after_its_lock_timeout(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    with ix.writer() as first:
        first.add(*_doc("first", "/first.pdf", "first writer"))
        other = PageIndex(root)
        started = time.monotonic()
        with pytest.raises(IndexBusy) as info, other.writer(lock_timeout=0.3) as second:
            second.add(*_doc("second", "/second.pdf", "second writer"))
        waited = time.monotonic() - started
        assert 0.25 <= waited < 5
        assert "writ" in str(info.value)
    assert _visible(root, "first")
    assert not _visible(root, "second")
    # The lock is free again: a writer gets it at once.
    with ix.writer(lock_timeout=0.1) as third:
        third.add(*_doc("third", "/third.pdf", "third writer"))
    assert _visible(root, "third")


def test_waiting_writer_gets_the_lock_when_it_is_released(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    holder = ix.writer()
    holder.add(*_doc("held", "/held.pdf", "held"))
    timer = threading.Timer(0.3, holder.commit)
    timer.start()
    try:
        with PageIndex(root).writer(lock_timeout=10) as waiter:
            waiter.add(*_doc("waited", "/waited.pdf", "waited"))
    finally:
        timer.join()
    assert _visible(root, "held") and _visible(root, "waited")


def test_readers_never_wait_for_the_writer(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    ix.add(*_doc("old", "/old.pdf", "committed words"))
    with ix.writer() as writer:
        writer.add(*_doc("new", "/new.pdf", "pending words"))
        started = time.monotonic()
        assert PageIndex(root).search("words").total == 1
        assert time.monotonic() - started < 2
    assert PageIndex(root).search("words").total == 2


# ---- batches ------------------------------------------------------------------------------

def test_batches_commit_every_batch_pages(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    with ix.writer(batch_pages=6) as writer:
        writer.add(*_doc("one", "/one.pdf", "a", "b", "c"))  # 3 pages: below the batch size
        assert not _visible(root, "one")
        writer.add(*_doc("two", "/two.pdf", "d", "e", "f"))  # 6 pages: a batch is full
        assert _visible(root, "one") and _visible(root, "two")
        assert PageIndex(root).stats().pages == 6
        writer.add(*_doc("three", "/three.pdf", "g"))
        assert not _visible(root, "three")
    assert _visible(root, "three")
    assert PageIndex(root).stats().pages == 7


def test_many_small_batches(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    with ix.writer(batch_pages=5) as writer:
        for i in range(40):
            writer.add(*_doc(f"d{i}", f"/many/{i}.pdf", f"token{i:03d} shared", "second page shared"))
    assert ix.stats().documents == 40 and ix.stats().pages == 80
    assert ix.search("shared", SearchOptions(limit=1)).total == 80
    assert all(ix.search(f"token{i:03d}").total == 1 for i in range(40))
    assert ix.check() == []


def test_exception_cancels_the_batch_and_reraises(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    ix.add(*_doc("kept", "/kept.pdf", "kept words"))
    with pytest.raises(RuntimeError, match="boom"), ix.writer(batch_pages=1000) as writer:
        writer.add(*_doc("lost", "/lost.pdf", "lost words", "more lost words"))
        writer.delete(sha("kept"))
        writer.add(*_doc("kept-changed", "/kept.pdf", "replacement"))
        raise RuntimeError("boom")
    reader = PageIndex(root)
    assert reader.search("lost").total == 0
    assert reader.document(sha("lost")) is None
    assert reader.search("kept").total == 1  # the delete and the replacement were cancelled too
    assert reader.document(sha("kept-changed")) is None
    assert reader.stats().documents == 1 and reader.stats().pages == 1
    assert reader.check() == []
    # The cancelled writer released the lock.
    with ix.writer(lock_timeout=0.1) as writer:
        writer.add(*_doc("after", "/after.pdf", "after words"))
    assert _visible(root, "after")


def test_explicit_cancel(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    with ix.writer() as writer:
        writer.add(*_doc("cancelled", "/c.pdf", "cancelled"))
        writer.cancel()
        writer.add(*_doc("committed", "/k.pdf", "committed"))
    assert not _visible(root, "cancelled") and _visible(root, "committed")


def test_same_document_twice_in_one_batch_is_indexed_once(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    with ix.writer() as writer:
        writer.add(*_doc("twice", "/twice.pdf", "duplicate words", "page two"))
        writer.add(*_doc("twice", "/twice.pdf", "duplicate words", "page two"))
    assert ix.search("duplicate").total == 1
    assert ix.stats().documents == 1 and ix.stats().pages == 2


def test_changed_file_in_one_batch_replaces_the_old_version(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    with ix.writer() as writer:
        writer.add(*_doc("v1", "/same.pdf", "first version"))
        writer.add(*_doc("v2", "/same.pdf", "second version"))
    assert [(h.path, h.doc_hash) for h in ix.search("version").hits] == [("/same.pdf", sha("v2"))]
    assert [d.doc_hash for d in ix.documents()] == [sha("v2")]


# ---- documents new to the index are added at once; what touches them later commits first ----

def test_a_copy_of_a_document_added_in_the_same_batch_joins_its_paths(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    with ix.writer() as writer:
        writer.add(*_doc("copy", "/a/copy.pdf", "copied words"))
        writer.add(*_doc("copy", "/b/copy.pdf", "copied words"))
    (doc,) = ix.documents()
    assert sorted(doc.all_paths) == ["/a/copy.pdf", "/b/copy.pdf"]
    assert ix.search("copied").total == 1


def test_path_changes_and_deletions_reach_documents_added_in_the_same_batch(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    with ix.writer() as writer:
        writer.add(*_doc("moved", "/old/moved.pdf", "moved words"))
        writer.add_path(sha("moved"), "/new/moved.pdf")
        writer.remove_path(sha("moved"), "/old/moved.pdf")
        writer.add(*_doc("gone", "/gone.pdf", "gone words"))
        writer.delete(sha("gone"))
        writer.add(*_doc("kept", "/kept.pdf", "kept words"))
    assert {d.doc_hash: d.all_paths for d in ix.documents()} == {
        sha("moved"): ["/new/moved.pdf"], sha("kept"): ["/kept.pdf"]}
    assert ix.search("gone").total == 0


def test_new_documents_and_a_changed_file_in_one_batch(tmp_path: Path) -> None:
    """The changed file's path is in the index, so it waits for the commit; the new
    documents beside it are added at once; all land in one commit."""
    ix = PageIndex(tmp_path / "index")
    with ix.writer() as writer:
        writer.add(*_doc("v1", "/changing.pdf", "first version"))
    with ix.writer() as writer:
        writer.add(*_doc("new1", "/new1.pdf", "fresh words one"))
        writer.add(*_doc("v2", "/changing.pdf", "second version"))
        writer.add(*_doc("new2", "/new2.pdf", "fresh words two"))
        assert not _visible(tmp_path / "index", "new1")  # added, not committed
    assert sorted(d.path for d in ix.documents()) == ["/changing.pdf", "/new1.pdf", "/new2.pdf"]
    assert [h.doc_hash for h in ix.search("version").hits] == [sha("v2")]
    assert ix.search("fresh").total == 2


# ---- a writer process killed mid-batch ----------------------------------------------------

# Adds 3-page documents forever. The first `commits` batches of `per_commit` documents
# are committed (and reported); after that one endless batch is written, never
# committed, and announced once it has begun.
_CHILD = r"""
import sys
from pathlib import Path
from pdfindex.indexer import PageIndex
from tests.index_helpers import page, record

root, per_commit, commits, processes = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
writer = PageIndex(root).writer(batch_pages=10**9, lock_timeout=10, processes=processes)
i = 0
while True:
    pages = [page(p, f"marker{i:05d} page{p} shared words") for p in (1, 2, 3)]
    writer.add(record(f"doc{i}", f"/kill/{i:05d}.pdf", pages), pages)
    i += 1
    if i <= per_commit * commits:
        if i % per_commit == 0:
            writer.commit()
            print(f"committed {i}", flush=True)
    elif i == per_commit * commits + 20:
        print(f"writing {i}", flush=True)
"""


def _spawn(root: Path, per_commit: int, commits: int, processes: bool) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(root), str(per_commit), str(commits),
                             "1" if processes else "0"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _read_until(proc: subprocess.Popen[str], prefix: str) -> list[str]:
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"child ended before {prefix!r}: {lines} {proc.stderr.read() if proc.stderr else ''}")


def _kill_path(i: int) -> str:
    return f"/kill/{i:05d}.pdf"


def _assert_whole_prefix(ix: PageIndex, committed: int, written: int | None = None) -> int:
    """The index holds documents 0..M-1 (M >= committed), each with all its pages.
    With shards, each shard commits its share on its own: a kill during a commit
    may leave some of the last batch's documents (``written`` at most), each whole."""
    assert ix.check() == []
    present = {d.path for d in ix.documents()}
    count = len(present)
    assert count >= committed
    if written is None:
        assert present == {_kill_path(i) for i in range(count)}
    else:
        assert {_kill_path(i) for i in range(committed)} <= present <= {_kill_path(i) for i in range(written)}
    assert ix.stats().pages == 3 * count
    for path in present:
        i = int(path.rsplit("/", 1)[1][:5])
        result = ix.search(f"marker{i:05d}")
        assert {(h.path, h.page) for h in result.hits} == {(_kill_path(i), p) for p in (1, 2, 3)}
    return count


#: One writer; three shards written from one process; three shards with a writer
#: process each (indexer/shard_processes.py), which outlive their killed caller
#: only until they notice it is gone, cancelling what they had not committed.
_SHARDED = pytest.mark.whoosh_only("sharded indexes: NotSupported on Tantivy (docs/engines.md)")
_WRITERS = pytest.mark.parametrize(("shards", "processes"), [
    pytest.param(1, False, id="one"),
    pytest.param(3, False, id="shards", marks=_SHARDED),
    pytest.param(3, True, id="shard-processes", marks=_SHARDED),
])


@_WRITERS
def test_writer_process_killed_mid_batch(tmp_path: Path, shards: int, processes: bool) -> None:
    root = tmp_path / "index"
    PageIndex(root, new_shards=shards)  # created before the child starts, so both agree on the generation
    proc = _spawn(root, per_commit=10, commits=4, processes=processes)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        lines = _read_until(proc, "writing")
        assert lines[:4] == ["committed 10", "committed 20", "committed 30", "committed 40"]
        # The child holds the writer lock while it writes its endless batch.
        with pytest.raises(IndexBusy), PageIndex(root).writer(lock_timeout=0.3) as writer:
            writer.add(*_doc("intruder", "/intruder.pdf", "intruder"))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == -signal.SIGKILL
    wait_for_shard_writers_to_end(root)

    ix = PageIndex(root)
    # Exactly the committed documents: nothing of the killed batch, nothing partial.
    assert _assert_whole_prefix(ix, committed=40) == 40
    assert ix.document(sha("intruder")) is None

    # The lock died with the process: a new writer can write at once, and
    # re-adding the lost documents completes the index.
    with ix.writer(lock_timeout=1.0) as writer:
        for i in range(40, 60):
            pages = [page(p, f"marker{i:05d} page{p} shared words") for p in (1, 2, 3)]
            writer.add(record(f"doc{i}", _kill_path(i), pages), pages)
    assert _assert_whole_prefix(ix, committed=60) == 60
    assert ix.search("shared", SearchOptions(limit=1)).total == 180


@_WRITERS
def test_writer_process_killed_while_committing_often(tmp_path: Path, shards: int, processes: bool) -> None:
    # One document per commit: the kill most likely lands inside a commit.
    root = tmp_path / "index"
    PageIndex(root, new_shards=shards)
    proc = _spawn(root, per_commit=1, commits=10**6, processes=processes)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        lines = _read_until(proc, "committed 25")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert lines[-1] == "committed 25"
    wait_for_shard_writers_to_end(root)
    ix = PageIndex(root)
    assert ix.shards == shards
    count = _assert_whole_prefix(ix, committed=25, written=None if shards == 1 else 10**6)
    last = max(int(d.path.rsplit("/", 1)[1][:5]) for d in ix.documents()) + 1
    with ix.writer(lock_timeout=1.0) as writer:  # what the kill lost is added again
        for i in range(last):
            if ix.document(sha(f"doc{i}")) is None:
                pages = [page(p, f"marker{i:05d} page{p} shared words") for p in (1, 2, 3)]
                writer.add(record(f"doc{i}", _kill_path(i), pages), pages)
    assert count <= last
    assert _assert_whole_prefix(ix, committed=last) == last


# ---- reindex and generations ------------------------------------------------------------------

def _build_for_reindex(root: Path) -> PageIndex:
    ix = PageIndex(root, "en")
    with ix.writer() as writer:
        writer.add(*_doc("stems", "/stems.pdf", "alpha she runs", "beta running late", "gamma the run"))
        pages = [page(1, "delta scanned", coverage=0.1, needs_ocr=True), page(2, "", coverage=None, needs_ocr=True)]
        writer.add(record("scan", "/scan-2024.pdf", pages), pages)
        writer.add(record("broken", "/broken.pdf", [], status=Status.FAILED, error="bad xref", page_count=0), [])
        writer.add(*_doc("deleted", "/deleted.pdf", "epsilon removed"))
    ix.delete_document(sha("deleted"))
    return ix


def _assert_everything_findable(ix: PageIndex) -> None:
    assert {(h.path, h.page) for h in ix.search("alpha OR beta OR gamma OR delta", SearchOptions(limit=100)).hits} == {
        ("/stems.pdf", 1), ("/stems.pdf", 2), ("/stems.pdf", 3), ("/scan-2024.pdf", 1)}
    # Both pages hold the file name: one hit for the document, its first page (issue 20);
    # page 2 (no text) is found where page 1 is not let through.
    assert {(h.path, h.page) for h in ix.search("filename:scan", SearchOptions(limit=100)).hits} == {
        ("/scan-2024.pdf", 1)}
    assert ix.search("epsilon").total == 0  # deleted before the reindex: not resurrected
    assert [d.path for d in ix.documents(Status.FAILED)] == ["/broken.pdf"]
    assert ix.document(sha("broken")).error == "bad xref"  # type: ignore[union-attr]
    assert {(h.path, h.page) for h in ix.search("filename:scan -delta", SearchOptions(needs_ocr=True)).hits} == {
        ("/scan-2024.pdf", 2)}
    assert {h.page for h in ix.search("filename:scan", SearchOptions(min_coverage=0.05)).hits} == {1}
    assert ix.page_texts(sha("stems")) == {1: "alpha she runs", 2: "beta running late", 3: "gamma the run"}
    stats = ix.stats()
    assert (stats.documents, stats.pages, stats.by_status) == (3, 5, {"indexed": 2, "failed": 1})
    assert ix.check() == []


def test_reindex_language_round_trip_swaps_generations(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = _build_for_reindex(root)
    assert os.readlink(root / "current") == "gen-000001"
    assert {h.page for h in ix.search("run").hits} == {1, 2, 3}  # stemmed: runs, running, run

    copied = ix.reindex("none")
    assert copied == 3 + 5  # file records and pages
    assert (root / "current").is_symlink() and os.readlink(root / "current") == "gen-000002"
    assert index_dirs(root) == ["gen-000002"]
    none = PageIndex(root, "none")
    _assert_everything_findable(none)
    assert {h.page for h in none.search("run").hits} == {3}  # no stemming any more
    assert {h.page for h in none.search("runs").hits} == {1}

    assert none.reindex("en") == copied
    assert os.readlink(root / "current") == "gen-000003"
    assert index_dirs(root) == ["gen-000003"]
    en = PageIndex(root, "en")
    _assert_everything_findable(en)
    assert {h.page for h in en.search("run").hits} == {1, 2, 3}


@pytest.mark.parametrize(("built", "opened"), [("en", "none"), ("none", "en"), ("en", "de")])
def test_other_language_needs_reindex(tmp_path: Path, built: str, opened: str) -> None:
    root = tmp_path / "index"
    PageIndex(root, built).add(*_doc("doc", "/doc.pdf", "words"))
    with pytest.raises(ReindexNeeded) as info:
        PageIndex(root, opened)
    assert "pdfindex reindex" in str(info.value)
    assert isinstance(info.value, SearchIndexError)
    indexer.reindex(root, opened)
    assert PageIndex(root, opened).search("words").total == 1


def test_old_schema_version_needs_reindex_and_reindex_repairs_it(tmp_path: Path) -> None:
    root = tmp_path / "index"
    PageIndex(root).add(*_doc("doc", "/doc.pdf", "words"))
    meta = root / "current" / "pdfindex.json"
    settings = json.loads(meta.read_text())  # the engine kept: an index from before engines was Whoosh's
    meta.write_text(json.dumps({**settings, "schema_version": 0}))
    with pytest.raises(ReindexNeeded, match="pdfindex reindex"):
        PageIndex(root)
    assert indexer.reindex(root, "en") == 2
    assert PageIndex(root).search("words").total == 1
    assert index_dirs(root) == ["gen-000002"]


def test_missing_index_is_not_created_when_create_is_false(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        PageIndex(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()


def test_index_that_ran_reindex_keeps_working(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    ix.add(*_doc("doc", "/doc.pdf", "words"))
    ix.reindex()
    assert ix.search("words").total == 1
    ix.add(*_doc("more", "/more.pdf", "words"))
    assert ix.search("words").total == 2


def test_reader_opened_before_reindex_gets_results_or_an_index_error(tmp_path: Path) -> None:
    root = tmp_path / "index"
    PageIndex(root).add(*_doc("doc", "/doc.pdf", "words"))
    reader = PageIndex(root)
    indexer.reindex(root, "en")
    with contextlib.suppress(SearchIndexError):  # an index error is an acceptable answer
        assert reader.search("words").total == 1


def test_reindex_does_not_lose_a_concurrent_writers_batch(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    ix.add(*_doc("base", "/base.pdf", "base words"))
    writer = ix.writer()
    writer.add(*_doc("late", "/late.pdf", "late words"))  # holds the lock, not yet committed
    errors: list[str] = []  # text only: a kept traceback would keep the writer's files open

    def finish() -> None:
        time.sleep(0.5)
        try:
            writer.commit()
        except Exception as exc:
            errors.append(repr(exc))

    thread = threading.Thread(target=finish)
    thread.start()
    try:
        indexer.reindex(root, "en")
    except IndexBusy:
        pass  # refusing while a writer runs is fine too
    finally:
        thread.join()
        if errors:  # close what the failed commit left open before any assertion
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                with contextlib.suppress(Exception):
                    writer.cancel()
                del writer
                gc.collect()
    assert errors == []
    assert PageIndex(root).search("late").total == 1
    assert PageIndex(root).search("base").total == 1
