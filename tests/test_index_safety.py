"""Issue 7: the index as a trust boundary (an index is code: Whoosh unpickles it),
private files, file names that are not UTF-8, and documents the index cannot take.
Real indexes on disk, real ownership and modes (the suite runs as root in CI; the
ownership tests need it), a real non-UTF-8 file name."""
from __future__ import annotations

import os
import pickle
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pdfindex import indexer
from pdfindex.indexer import PageIndex, PageRecord, SearchOptions, Status, StorageError, UntrustedIndex
from pdfindex.indexer import store
from tests.builders import one_font_pdf, text_line
from tests.index_helpers import extracted, page, record, sha

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534


def _need_root() -> None:
    if os.geteuid() != 0:
        reason = "changing a file's owner needs root"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI=1: this test must run)")
        pytest.skip(reason)


def _doc(label: str, path: str, *texts: str, **kw: object) -> tuple:  # type: ignore[type-arg]
    pages = [page(n, text) for n, text in enumerate(texts, 1)]
    return record(label, path, pages, **kw), pages


def _built(root: Path) -> Path:
    """An index with one document; returns its generation directory."""
    PageIndex(root).add(*_doc("base", "/base.pdf", "base words"))
    return root / os.readlink(root / "current")


class _Payload:
    """Unpickling this creates a marker file: stands for any code an attacker runs."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:  # type: ignore[type-arg]
        return (os.mkdir, (str(self.marker),))


def _poison_toc(generation: Path, marker: Path) -> None:
    """Rewrite the generation's table of contents, as Whoosh writes one, with a
    pickled schema that runs code when it is read."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import _CURRENT_TOC_VERSION, _FLOAT_SIZE, _INT_SIZE, _LONG_SIZE

    toc = next(p for p in generation.iterdir() if p.name.endswith(".toc"))
    gen = int(toc.name.split("_")[-1].split(".")[0])
    toc.unlink()
    stream = FileStorage(str(generation)).create_file(toc.name)
    for size in (_INT_SIZE, _LONG_SIZE, _FLOAT_SIZE):
        stream.write_varint(size)
    stream.write_int(-12345)
    stream.write_int(_CURRENT_TOC_VERSION)
    for number in (2, 7, 5):
        stream.write_varint(number)
    stream.write_string(pickle.dumps(_Payload(marker), 2))
    stream.write_int(gen)
    stream.write_int(0)
    stream.write_pickle([])
    stream.close()
    os.chmod(toc, 0o600)


# ---- private files --------------------------------------------------------------------

def test_index_is_private_whatever_the_umask(tmp_path: Path) -> None:
    root = tmp_path / "data" / "index"
    old = os.umask(0)
    try:
        ix = PageIndex(root)
        with ix.writer() as writer:
            for n in range(3):
                writer.add(*_doc(f"d{n}", f"/d{n}.pdf", f"secret text {n}"))
        ix.add(*_doc("late", "/late.pdf", "late secret"))
        indexer.reindex(root, "en")
        PageIndex(root).add(*_doc("after", "/after.pdf", "after reindex"))
    finally:
        os.umask(old)
    seen = 0
    for folder, _dirs, files in os.walk(root):
        assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700, folder
        for name in files:
            path = Path(folder, name)
            if path.is_symlink():
                continue
            seen += 1
            assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600, path
    assert seen >= 4  # segments, TOC, metadata, lock


def test_an_older_world_readable_index_is_made_private_when_opened(tmp_path: Path) -> None:
    root = tmp_path / "index"
    generation = _built(root)
    os.chmod(root, 0o755)
    os.chmod(generation, 0o755)
    for f in generation.iterdir():
        os.chmod(f, 0o644)
    assert PageIndex(root).search("base").total == 1
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in generation.iterdir()} == {0o600}


# ---- refused before anything is unpickled -------------------------------------------------

def test_a_poisoned_toc_runs_code_when_trusted(tmp_path: Path) -> None:
    """The premise of the refusals below: opening this TOC runs the payload."""
    root = tmp_path / "index"
    marker = tmp_path / "marker"
    _poison_toc(_built(root), marker)
    with pytest.raises(StorageError):  # the "schema" is a file object: damaged
        PageIndex(root)
    assert marker.exists()


def _foreign_root(root: Path) -> None:
    os.chown(root, NOBODY, NOBODY)


def _foreign_generation(root: Path) -> None:
    os.chown(root / os.readlink(root / "current"), NOBODY, NOBODY)


def _foreign_file(root: Path) -> None:
    os.chown(root / os.readlink(root / "current") / "pdfindex.json", NOBODY, NOBODY)


def _group_writable_root(root: Path) -> None:
    os.chmod(root, 0o770)


def _world_writable_generation(root: Path) -> None:
    os.chmod(root / os.readlink(root / "current"), 0o777)


def _group_writable_toc(root: Path) -> None:
    generation = root / os.readlink(root / "current")
    os.chmod(next(p for p in generation.iterdir() if p.name.endswith(".toc")), 0o620)


def _current_is_a_directory(root: Path) -> None:
    os.unlink(root / "current")
    os.mkdir(root / "current", 0o700)


@pytest.mark.parametrize("spoil", [_foreign_root, _foreign_generation, _foreign_file, _group_writable_root,
                                   _world_writable_generation, _group_writable_toc],
                         ids=lambda f: f.__name__.strip("_"))
def test_index_of_another_user_or_writable_by_others_is_refused_before_unpickling(tmp_path: Path, spoil) -> None:  # type: ignore[no-untyped-def]
    _need_root()
    root = tmp_path / "index"
    marker = tmp_path / "marker"
    _poison_toc(_built(root), marker)
    spoil(root)
    for attempt in (lambda: PageIndex(root), lambda: PageIndex(root, create=False),
                    lambda: indexer.reindex(root, "en"), lambda: store.stored_language(root)):
        with pytest.raises(UntrustedIndex) as info:
            attempt()
        message = str(info.value)
        assert str(root) in message and "\n" not in message
        assert "chown" in message or "chmod" in message
    assert not marker.exists()


def test_search_command_refuses_a_foreign_index_without_running_it(tmp_path: Path) -> None:
    _need_root()
    root = tmp_path / "index"
    marker = tmp_path / "marker"
    _poison_toc(_built(root), marker)
    _foreign_generation(root)
    env = {**os.environ, "PDFINDEX_INDEX_DIR": str(root), "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pdfindex.cli.main", "search", "words", "--index", str(root)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert not marker.exists()


@pytest.mark.parametrize("target", ["../outside/gen-000001", "{outside}/gen-000001", "gen-000001/..",
                                    "gen-1", "."])
def test_current_pointing_anywhere_but_a_generation_inside_is_refused(tmp_path: Path, target: str) -> None:
    root = tmp_path / "index"
    outside = tmp_path / "outside"
    _built(root)
    _built(outside)
    outside_gen = outside / "gen-000001"
    before = sorted(p.name for p in outside_gen.iterdir())
    os.unlink(root / "current")
    os.symlink(target.format(outside=outside), root / "current")
    with pytest.raises(UntrustedIndex, match="current"):
        PageIndex(root)
    with pytest.raises(UntrustedIndex):
        indexer.reindex(root, "en")
    assert sorted(p.name for p in outside_gen.iterdir()) == before
    assert PageIndex(outside).search("base").total == 1


def test_a_generation_that_is_a_link_elsewhere_is_refused_and_never_removed(tmp_path: Path) -> None:
    root = tmp_path / "index"
    outside = tmp_path / "outside"
    generation = _built(root)
    _built(outside)
    os.rename(generation, tmp_path / "moved")
    os.symlink(outside / "gen-000001", generation)
    with pytest.raises(UntrustedIndex):
        PageIndex(root)
    with pytest.raises(UntrustedIndex):
        indexer.reindex(root, "en")
    store.remove_generation(root, generation)  # a link: left alone, and its target too
    store.remove_generation(outside, outside / "gen-000001" / "..")
    store.remove_generation(root, outside / "gen-000001")  # not inside this root
    assert (outside / "gen-000001").is_dir() and generation.is_symlink()
    assert PageIndex(outside).search("base").total == 1


def test_a_link_inside_the_generation_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "index"
    generation = _built(root)
    os.symlink("/etc/passwd", generation / "MAIN_zzzz.seg")
    with pytest.raises(UntrustedIndex, match="not a regular file"):
        PageIndex(root)


def test_reindex_removes_only_the_old_generation(tmp_path: Path) -> None:
    root = tmp_path / "index"
    _built(root)
    (root / "gen-notes").mkdir()  # not a generation name: never touched
    indexer.reindex(root, "en")
    assert sorted(p.name for p in root.iterdir()) == ["current", "gen-000002", "gen-notes", "index-id"]
    assert PageIndex(root).search("base").total == 1


# ---- names that are not UTF-8 ----------------------------------------------------------------

def test_a_non_utf8_file_name_round_trips_exactly(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path)
    raw = folder + b"/caf\xe9 r\xe9sum\xe9.pdf"
    other = folder + b"/caf\xe8 r\xe9sum\xe9.pdf"  # differs in one undecodable byte
    data = one_font_pdf(text_line(72, 700, b"(latin one name) Tj"))
    with open(raw, "wb") as f:
        f.write(data)
    path = os.fsdecode(raw)
    assert "\udce9" in path
    root = tmp_path / "index"
    ix = PageIndex(root)
    doc, pages = extracted(data, path)
    other_doc = record("other", os.fsdecode(other), [page(1, "the other name")])
    # A valid name that looks like the escaped form must stay a different file.
    lookalike = record("lookalike", path.replace("\udce9", "\x00e9"), [page(1, "lookalike name")])
    with ix.writer() as writer:
        writer.add(doc, pages)
        writer.add(other_doc, [page(1, "the other name")])
        writer.add(lookalike, [page(1, "lookalike name")])
        assert writer.rejected == []
    stored = {d.doc_hash: d.path for d in PageIndex(root).documents()}
    assert stored[doc.doc_hash] == path
    assert os.fsencode(stored[doc.doc_hash]) == raw
    with open(stored[doc.doc_hash], "rb") as f:
        assert f.read() == data
    hit = ix.search("latin").hits[0]
    assert hit.path == path
    assert [h.path for h in ix.search("latin", SearchOptions(path_glob=path)).hits] == [path]
    assert ix.search("name", SearchOptions(path_glob=os.fsdecode(folder + b"/caf\xe9*"))).total == 1
    assert ix.search("filename:caf").total == 3  # all three names begin with the word "caf"
    # Replacing by path: the same name with new content replaces the old record only.
    ix.add(*_doc("new content", path, "changed words"))
    assert ix.document(doc.doc_hash) is None
    assert {d.path for d in ix.documents()} == {path, os.fsdecode(other), lookalike.path}
    assert ix.check() == []
    # Another process reads the same name back.
    script = f"from pdfindex.indexer import PageIndex; print(ascii(sorted(d.path for d in PageIndex({str(root)!r}).documents())))"
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == ascii(sorted([path, os.fsdecode(other), lookalike.path]))
    # Reindex recomputes the terms from the stored path, and they still work.
    indexer.reindex(root, "en")
    assert [h.path for h in PageIndex(root).search("changed", SearchOptions(path_glob=path)).hits] == [path]


# ---- documents the index cannot take -----------------------------------------------------------

def test_a_bad_document_becomes_a_failure_record_and_the_batch_is_written(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    good = _doc("good", "/good.pdf", "good words", "more good words")
    huge_page = record("huge page", "/huge.pdf", [page(2**40, "page number out of range")])
    wrong_title = record("wrong title", "/title.pdf", [page(1, "title is a number")], title=5)
    bad_text = record("bad text", "/text.pdf", [page(1, "x")])
    bad_text_pages = [PageRecord(1, b"bytes, not text", 1.0, 1, 0, False)]  # type: ignore[arg-type]
    later = _doc("later", "/later.pdf", "later words")
    with ix.writer() as writer:
        writer.add(*good)
        writer.add(huge_page, [page(2**40, "page number out of range")])
        writer.add(wrong_title, [page(1, "title is a number")])
        writer.add(bad_text, bad_text_pages)
        writer.add(*later)
    assert {r.doc_hash for r in writer.rejected} == {sha("huge page"), sha("wrong title"), sha("bad text")}
    fresh = PageIndex(root)
    for label, path, field in (("huge page", "/huge.pdf", "page"), ("wrong title", "/title.pdf", "title"),
                               ("bad text", "/text.pdf", "text")):
        failed = fresh.document(sha(label))
        assert failed is not None and failed.path == path
        assert failed.status == Status.FAILED and failed.page_count == 0
        assert failed.error.startswith("cannot be indexed") and field in failed.error
        assert fresh.page_texts(sha(label)) == {}
    assert fresh.search("good").total == 2 and fresh.search("later").total == 1
    assert fresh.search("error:indexed").total == 3
    assert fresh.check() == []


def test_a_document_hash_that_is_not_text_is_left_out_and_the_rest_written(tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    bad = record("bad", "/bad.pdf", [page(1, "bad hash")], doc_hash="ab\udcff")
    with ix.writer() as writer:
        writer.add(bad, [page(1, "bad hash")])
        writer.add(*_doc("fine", "/fine.pdf", "fine words"))
    assert [r.path for r in writer.rejected] == ["/bad.pdf"]
    assert ix.search("fine").total == 1 and ix.search("bad").total == 0
    assert ix.check() == []


# ---- signals during a commit ------------------------------------------------------------------

def test_sigusr1_during_a_commit_is_delivered_after_it(tmp_path: Path) -> None:
    """Celery's soft time limit is SIGUSR1; its handler raises inside whatever runs.
    Arriving mid-commit it must wait, so the batch is written whole."""
    root = tmp_path / "index"
    ix = PageIndex(root)
    seen: list[bool] = []

    class SoftLimit(Exception):
        pass

    def on_usr1(_signum: int, _frame: object) -> None:
        seen.append(PageIndex(root).document(sha("doc 0")) is not None)
        raise SoftLimit

    previous = signal.signal(signal.SIGUSR1, on_usr1)
    try:
        writer = ix.writer(batch_pages=10**9)
        for n in range(300):
            writer.add(*_doc(f"doc {n}", f"/doc{n}.pdf", *(f"page {p} of document {n} words" for p in range(5))))
        sender = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGUSR1))
        started = time.monotonic()
        sender.start()
        with pytest.raises(SoftLimit):
            writer.commit()
        took = time.monotonic() - started
        sender.join()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert took > 0.1  # the signal came during the commit
    assert seen == [True]
    assert PageIndex(root).search("document", SearchOptions(exact_count=True)).total == 1500
    assert ix.check() == []


def test_a_folder_of_other_files_is_not_made_into_an_index(tmp_path: Path) -> None:
    """`--index ~/Documents` by mistake must not chmod the folder 0700 and fill it."""
    folder = tmp_path / "Documents"
    folder.mkdir(mode=0o755)
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(StorageError, match="not an index and not empty"):
        PageIndex(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    empty = tmp_path / "empty"
    empty.mkdir()
    PageIndex(empty)  # an empty folder is fine
    assert (empty / "current").is_symlink()


def test_only_others_write_bit_is_named_as_such(tmp_path: Path) -> None:
    root = tmp_path / "index"
    PageIndex(root)
    root.chmod(0o702)
    with pytest.raises(UntrustedIndex, match=r"writable by others \(mode 0702\)"):
        PageIndex(root)


def test_an_index_opens_while_another_process_commits(tmp_path: Path) -> None:
    """Opening reads the newest table of contents, then the files it names; a commit
    in between (another process's) removes the older table and the segments it
    merged away. The server's search processes met it opening the index during an
    ingest (CI: "No such file or directory while opening the index"). An open must
    take the newer commit instead, however often the writer commits."""
    root = tmp_path / "ix"
    PageIndex(root).add(record("first", "/docs/first.pdf", []), [page(1, "harbour lights")])
    writer = subprocess.Popen([sys.executable, "-c", _COMMITTING, str(root)], stdout=subprocess.DEVNULL)
    try:
        opened = 0
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and writer.poll() is None:
            assert PageIndex(root, create=False).search("harbour").total >= 1
            opened += 1
    finally:
        writer.kill()
        writer.wait()
    assert opened >= 20, opened


#: Another process: a commit of one page after another, merging as it goes.
_COMMITTING = """
import sys
from pathlib import Path
from pdfindex.indexer import PageIndex
from tests.index_helpers import page, record
index = PageIndex(Path(sys.argv[1]), create=False)
for n in range(100000):
    index.add(record(f"more {n}", f"/docs/more{n}.pdf", []), [page(1, f"harbour number{n}")])
"""
