"""Issue 7: storage faults on real file systems. A full disk (a small tmpfs, filled
to several levels), a read-only bind mount, directories a non-root user may not
write (a forked child that drops to nobody: root bypasses permissions), a damaged
pdfindex.json and a damaged table of contents. Each gives one StorageError line,
never a traceback; a failed commit leaves no files behind and frees the lock; the
index stays consistent (``check()`` clean) and works again once the fault is gone.

Mounting needs root: without it these tests skip, except under CI=1, where they fail.
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pdfindex import indexer
from pdfindex.indexer import IndexBusy, PageIndex, StorageError
from pdfindex.indexer import store
from tests.fault_helpers import NOBODY, as_nobody, fill, read_only_view, tmpfs, unavailable
from tests.index_helpers import page, record, sha

ROOT = Path(__file__).resolve().parents[1]


def _doc(label: str, path: str, *texts: str) -> tuple:  # type: ignore[type-arg]
    pages = [page(n, text) for n, text in enumerate(texts, 1)]
    return record(label, path, pages), pages


def _batch(seed: int, documents: int, pages: int, words: int) -> list[tuple]:  # type: ignore[type-arg]
    """Documents of words drawn from a random vocabulary: little compresses."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
                  for _ in range(3000)]
    return [_doc(f"batch {seed} {n}", f"/batch/{seed}/{n}.pdf",
                 *(" ".join(rng.choices(vocabulary, k=words)) for _ in range(pages)))
            for n in range(documents)]


def _files(root: Path) -> dict[str, list[str]]:
    return {folder: sorted(files + dirs) for folder, dirs, files in os.walk(root)}


def _lock_free_in_another_process(root: Path) -> str:
    script = (
        "import sys; from pdfindex.indexer import PageIndex, IndexBusy\n"
        f"w = PageIndex({str(root)!r}).writer(lock_timeout=0)\n"
        "try:\n    w.delete('nothing')\nexcept IndexBusy:\n    print('busy'); sys.exit()\n"
        "w.cancel(); print('locked')\n"
    )
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          timeout=60).stdout.strip()


# ---- a full disk ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("leave_kib", [0, 8, 96, 400, 900])
def test_commit_on_a_full_disk_fails_cleanly_and_works_once_space_is_freed(tmp_path: Path, leave_kib: int) -> None:
    with tmpfs(tmp_path / "disk", "6m") as disk:
        root = disk / "index"
        ix = PageIndex(root)
        ix.add(*_doc("base", "/base.pdf", "base words stay"))
        before = _files(root)
        batch = _batch(leave_kib, documents=24, pages=4, words=700)  # about 1.8 MB on disk
        filler = fill(disk, leave_kib * 1024)
        writer = ix.writer(batch_pages=10**9)
        with pytest.raises(StorageError) as info:  # new documents are written as they are added
            for doc in batch:
                writer.add(*doc)
            writer.commit()
        message = str(info.value)
        assert "no space left" in message and str(root) in message and "\n" not in message
        # Nothing left behind, the lock free here and elsewhere, the index as it was.
        assert _files(root) == before
        again = PageIndex(root).writer(lock_timeout=0)
        again.delete("nothing")  # takes the lock (IndexBusy if it were still held)
        again.cancel()  # a commit would need space for a new table of contents
        assert _lock_free_in_another_process(root) == "locked"
        fresh = PageIndex(root)
        assert fresh.check() == []
        assert fresh.search("base").total == 1
        assert fresh.document(batch[0][0].doc_hash) is None
        # Space freed: the same batch goes in.
        filler.unlink()
        with ix.writer(batch_pages=10**9) as writer:
            for doc in batch:
                writer.add(*doc)
        fresh = PageIndex(root)
        assert fresh.check() == []
        assert all(fresh.document(doc.doc_hash) is not None for doc, _ in batch)
        assert fresh.stats().pages == 1 + 24 * 4


def test_the_writer_context_cancels_on_a_full_disk_and_a_batch_commit_frees_the_lock(tmp_path: Path) -> None:
    """The batch-size commit inside ``add`` fails; the ``with`` block then cancels."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        root = disk / "index"
        ix = PageIndex(root)
        ix.add(*_doc("base", "/base.pdf", "base words"))
        before = _files(root)
        fill(disk, 0)
        with pytest.raises(StorageError), ix.writer(batch_pages=20) as writer:
            for doc in _batch(7, documents=20, pages=4, words=300):
                writer.add(*doc)
        assert _files(root) == before
        assert _lock_free_in_another_process(root) == "locked"
        assert PageIndex(root).check() == []


def test_creating_an_index_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "1m") as disk:
        fill(disk, 0)
        with pytest.raises(StorageError, match="no space left"):
            PageIndex(disk / "index")
        assert not any((disk / "index").glob("gen-*"))


def test_reindex_on_a_full_disk_keeps_the_old_generation(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "disk", "4m") as disk:
        root = disk / "index"
        ix = PageIndex(root)
        with ix.writer() as writer:
            for doc in _batch(3, documents=10, pages=4, words=700):
                writer.add(*doc)
        current = os.readlink(root / "current")
        filler = fill(disk, 64 * 1024)
        with pytest.raises(StorageError, match="no space left"):
            indexer.reindex(root, "en")
        assert sorted(p.name for p in root.iterdir() if p.name.startswith("gen-")) == [current]
        assert os.readlink(root / "current") == current
        assert PageIndex(root).check() == [] and PageIndex(root).stats().pages == 40
        filler.unlink()
        assert indexer.reindex(root, "en") == 50
        assert PageIndex(root).check() == []


# ---- a read-only file system ------------------------------------------------------------------

def test_read_only_index_searches_and_refuses_writes_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    PageIndex(source / "index").add(*_doc("base", "/base.pdf", "base words"))
    before = _files(source)
    with read_only_view(source, tmp_path / "ro") as view:
        root = view / "index"
        ix = PageIndex(root)
        assert ix.search("base").total == 1
        assert store.stored_language(root) == "en"
        for attempt, doing in ((lambda: ix.add(*_doc("new", "/new.pdf", "new words"))), "writer lock"), \
                               ((lambda: ix.delete_document(sha("base"))), "writer lock"), \
                               ((lambda: indexer.reindex(root, "en")), "reindexing"), \
                               ((lambda: PageIndex(view / "other")), "creating"):
            with pytest.raises(StorageError) as info:
                attempt()
            assert "read-only file system" in str(info.value) and doing in str(info.value)
        assert ix.search("base").total == 1
    assert _files(source) == before
    assert PageIndex(source / "index").check() == []


# ---- permissions, as a user root's bypass does not hide ----------------------------------------------

def _outcome(attempt: object) -> str:
    try:
        attempt()  # type: ignore[operator]
    except StorageError as exc:
        return f"StorageError: {exc}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def test_unwritable_and_unreadable_index_files_give_one_line_as_a_plain_user(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        unavailable("dropping to another user needs root")
    base = Path(tempfile.mkdtemp(prefix="pdfindex-perm-"))
    try:
        root = base / "index"
        ix = PageIndex(root)
        ix.add(*_doc("base", "/base.pdf", "base words"))
        generation = root / os.readlink(root / "current")
        toc = next(p for p in generation.iterdir() if p.name.endswith(".toc"))
        for folder, dirs, files in os.walk(base):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, NOBODY, NOBODY)
        before = _files(root)

        def work() -> dict[str, str]:
            out = {"search": _outcome(lambda: PageIndex(root).search("base").total)}
            os.chmod(generation, 0o500)
            out["write"] = _outcome(lambda: PageIndex(root).add(*_doc("new", "/new.pdf", "new words")))
            os.chmod(generation, 0o700)
            os.chmod(toc, 0o000)
            out["open"] = _outcome(lambda: PageIndex(root))
            os.chmod(toc, 0o600)
            os.chmod(root, 0o500)
            out["reindex"] = _outcome(lambda: indexer.reindex(root, "en"))
            out["create"] = _outcome(lambda: PageIndex(root / "nested"))
            out["writer after"] = _outcome(lambda: PageIndex(root).add(*_doc("late", "/late.pdf", "late words")))
            os.chmod(root, 0o700)
            return out

        out = as_nobody(work)
        assert out.get("child error") is None, out
        assert out["search"] == "ok"
        for key in ("write", "reindex", "open", "create"):
            assert out[key].startswith("StorageError: ") and "permission denied" in out[key], (key, out[key])
            assert "\n" not in out[key]
        assert out["writer after"] == "ok"  # nothing the failures left holds the lock
        for folder, dirs, files in os.walk(base):  # ours again, to be opened here
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, 0, 0)
        after = PageIndex(root)
        assert after.check() == []
        assert after.search("late").total == 1 and after.document(sha("new")) is None
        assert set(_files(root)) == set(before)
        with PageIndex(root).writer(lock_timeout=0) as writer:
            writer.delete("nothing")
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---- damaged files -------------------------------------------------------------------------------

def _spoil(path: Path, how: str) -> None:
    data = path.read_bytes()
    spoiled = {
        "empty": b"",
        "truncated": data[: len(data) // 2],
        "random": random.Random(7).randbytes(len(data)),
        "one byte flipped": data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[len(data) // 2 + 1:],
    }[how]
    path.write_bytes(spoiled)


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe\x00garbage", b"", b'"text"'])
def test_damaged_pdfindex_json_is_one_line(tmp_path: Path, content: bytes) -> None:
    root = tmp_path / "index"
    PageIndex(root).add(*_doc("base", "/base.pdf", "base words"))
    meta = root / os.readlink(root / "current") / "pdfindex.json"
    good = meta.read_bytes()
    meta.write_bytes(content)
    for attempt in (lambda: PageIndex(root), lambda: store.stored_language(root)):
        with pytest.raises(StorageError) as info:
            attempt()
        assert "pdfindex.json" in str(info.value) and "damaged" in str(info.value) and str(root) in str(info.value)
    proc = subprocess.run([sys.executable, "-m", "pdfindex.cli.main", "search", "base", "--index", str(root)], cwd=ROOT,
                          env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "pdfindex.json" in proc.stderr
    meta.write_bytes(good)
    assert PageIndex(root).check() == []


@pytest.mark.parametrize("how", ["empty", "truncated", "random", "one byte flipped"])
def test_damaged_table_of_contents_is_one_line(tmp_path: Path, how: str) -> None:
    root = tmp_path / "index"
    PageIndex(root).add(*_doc("base", "/base.pdf", "base words"))
    generation = root / os.readlink(root / "current")
    toc = next(p for p in generation.iterdir() if p.name.endswith(".toc"))
    good = toc.read_bytes()
    _spoil(toc, how)
    for attempt in (lambda: PageIndex(root).search("base"), lambda: indexer.reindex(root, "en")):
        try:
            attempt()
        except StorageError as exc:
            assert str(root) in str(exc) and "\n" not in str(exc)
        else:  # a flipped byte inside a stored name may still read
            assert how == "one byte flipped"
    if not (generation / toc.name).exists():  # reindex did read it: put the generation back
        return
    toc.write_bytes(good)
    assert PageIndex(root).check() == []


@pytest.mark.parametrize("how", ["empty", "truncated", "random"])
def test_damaged_segment_is_one_line_when_searched(tmp_path: Path, how: str) -> None:
    root = tmp_path / "index"
    PageIndex(root).add(*_doc("base", "/base.pdf", "base words"))
    generation = root / os.readlink(root / "current")
    segment = next(p for p in generation.iterdir() if p.name.endswith(".seg"))
    _spoil(segment, how)
    for attempt in (lambda: PageIndex(root).search("base"), lambda: list(PageIndex(root).documents()),
                    lambda: PageIndex(root).check()):
        with pytest.raises(StorageError) as info:
            attempt()
        assert str(root) in str(info.value) and "\n" not in str(info.value)


def test_busy_is_still_busy_not_a_storage_error(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    with ix.writer() as holder:
        holder.add(*_doc("held", "/held.pdf", "held"))
        with pytest.raises(IndexBusy), PageIndex(root).writer(lock_timeout=0) as other:
            other.delete("x")
