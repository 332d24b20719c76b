"""Issue 7, end to end: storage faults and non-UTF-8 file names through the real
`pdfindex` command (a subprocess) and, in distributed mode, real `celery worker`
processes over the real Redis on 127.0.0.1:6379.

What the README promises ("Commands"): a fault of the index is one line on stderr
(`pdfindex: ...`, naming the index and the problem, never a traceback) and exit
status 4; a failed commit leaves nothing behind; what could not be written is
written once the fault is gone, and nothing is lost.

Faults are real: a small tmpfs filled by a file, a read-only bind mount, files
chowned to nobody, damaged files; they reuse the helpers of
tests/test_storage_faults.py. Mounting and chown need root: without it those tests
skip, except under CI=1, where they fail.

Redis: the run's own database (tests/redis_db.py),
flushed before and after each test; tests skip when no Redis answers.
"""
from __future__ import annotations

import io
import json
import os
import random
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import redis

from pdfindex.cli.main import main as cli_main
from pdfindex.indexer import PageIndex, Status
from tests import redis_db
from tests.builders import font_resources, mono_font, text_line
from pdfindex.workers.lanes import RESULTS, WRITER_ERROR, WRITER_LOCK, WRITING
from tests.celery_helpers import Cluster
from tests.fault_helpers import NOBODY, as_nobody, fill, read_only_view, tmpfs, unavailable
from tests.ingest_helpers import (
    ROOT,
    cli_argv,
    cli_env,
    corrupt_pdf,
    docs_by_path,
    find,
    ingest,
    kill_group,
    page_word,
    parse_summary,
    run_cli,
    snapshot,
    text_pdf,
    wait_for,
    write,
)
from tests.pdfwriter import PdfWriter

REDIS_URL = redis_db.url()

#: The progress log lines `pdfindex ingest` writes to a stderr that is not a terminal.
_PROGRESS = re.compile(r"pdfindex: \d+/\d+ files, ")


# ---- files and checks ----------------------------------------------------------------

def wordy_pdf(tag: str, pages: int, lines: int, seed: int) -> bytes:
    """Pages of random words (they do not compress: the index grows fast); page N
    also carries ``page_word(tag, N)``."""
    rng = random.Random(seed)
    w = PdfWriter()
    res = font_resources(mono_font(w))
    for n in range(1, pages + 1):
        body = [text_line(72, 760, b"(%s) Tj" % page_word(tag, n).encode())]
        for i in range(lines):
            words = " ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(4, 9)))
                             for _ in range(10))
            body.append(text_line(72, 740 - 12 * i, b"(%s) Tj" % words.encode()))
        w.add_page(b"".join(body), resources=res)
    return w.to_bytes()


def wordy_folder(folder: Path, files: int, pages: int = 2, lines: int = 40) -> dict[Path, str]:
    """``files`` wordy PDFs; path -> tag."""
    tags = {}
    for n in range(files):
        tag = f"fill{n:02d}x"
        tags[write(folder / f"doc{n:02d}.pdf", wordy_pdf(tag, pages, lines, n))] = tag
    return tags


def error_lines(stderr: str) -> list[str]:
    """stderr without the progress log lines."""
    return [line for line in stderr.splitlines() if line.strip() and not _PROGRESS.match(line)]


def assert_one_line(r: subprocess.CompletedProcess[str], status: int, *fragments: str) -> str:
    """The command failed with ``status`` and said so in exactly one `pdfindex: ...`
    line containing every fragment (case-insensitive); no traceback."""
    assert "Traceback" not in r.stderr, r.stderr
    lines = error_lines(r.stderr)
    assert r.returncode == status, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert line.startswith("pdfindex: "), line
    for fragment in fragments:
        assert fragment.lower() in line.lower(), (fragment, line)
    return line


def generation(index: Path) -> Path:
    return index / os.readlink(index / "current")


def orphans(index: Path) -> list[str]:
    """Files of the index that its table of contents does not reference: segment
    files of no listed segment, older or unfinished TOCs, the writer's temporary
    directory, generations other than the current one."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    gen = generation(index)
    toc = TOC.read(FileStorage(str(gen)), "MAIN")
    segments = {s.segment_id() for s in toc.segments}  # "MAIN_<id>": files "MAIN_<id>.<ext>"
    wanted = {f"_MAIN_{toc.generation}.toc", "MAIN_WRITELOCK", "pdfindex.json"}
    left = [name for name in os.listdir(gen) if name not in wanted and name.split(".")[0] not in segments]
    left += [p.name for p in index.iterdir() if p.name.startswith("gen-") and p.name != gen.name]
    return sorted(left)


def hidden_bytes(mount: Path) -> int:
    """Space the file system counts as used beyond the files it holds: removed files
    a process still keeps open (a writer's orphans keep a full disk full)."""
    st = os.statvfs(mount)
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    files = sum(-(-p.lstat().st_size // st.f_frsize) * st.f_frsize for p in mount.rglob("*") if p.is_file())
    return used - files


def assert_all_found(index: Path, tags: dict[Path, str], pages: int = 2) -> None:
    """Every file has one indexed record and each of its pages is found by its word,
    exactly once."""
    ix = PageIndex(index)
    records = docs_by_path(ix)
    for path, tag in tags.items():
        assert [str(d.status) for d in records.get(str(path), [])] == ["indexed"], (path, records.get(str(path)))
        for n in range(1, pages + 1):
            assert find(ix, page_word(tag, n)) == [(str(path), n)], (path, n)
    assert ix.check() == []


# ---- 1. a disk that fills up during an embedded ingest ----------------------------------

@pytest.mark.slow
def test_embedded_ingest_on_a_disk_that_fills_up_is_one_line_and_loses_nothing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    tags = wordy_folder(docs, 10)  # about 320 KB of index per file
    seed = write(tmp_path / "seed" / "seed.pdf", text_pdf("seed", 1))
    with tmpfs(tmp_path / "disk", "8m") as disk:
        index = disk / "index"
        ingest(index, seed)
        filler = fill(disk, 1100 * 1024)  # room for a few files, not for ten
        env = cli_env(PDFINDEX_BATCH_PAGES="4")  # a commit every two files: the disk fills mid-run
        full = run_cli("ingest", docs, "--index", index, "--workers", "1", env=env)
        assert_one_line(full, 4, str(index), "no space left")

        ix = PageIndex(index)
        assert ix.check() == []
        assert orphans(index) == []
        assert hidden_bytes(disk) < 64 * 1024
        committed = [path for path in tags if str(path) in docs_by_path(ix)]
        assert 0 < len(committed) < len(tags)  # some batches were committed before the disk filled up
        assert find(ix, page_word("seed", 1)) == [(str(seed), 1)]
        current = os.readlink(index / "current")
        filler = fill(disk, 16 * 1024)  # the same filler, now leaving no room for a copy of the index
        assert_one_line(run_cli("reindex", "--index", index), 4, str(index), "no space left")
        assert os.readlink(index / "current") == current and orphans(index) == []
        assert PageIndex(index).check() == []

        filler.unlink()
        again = ingest(index, docs, "--workers", "1", env=env)
        summary = parse_summary(again.stdout)
        assert (summary.indexed, summary.unchanged, summary.failed) == (len(tags) - len(committed), len(committed), 0)
        assert_all_found(index, tags)
        assert orphans(index) == []
        assert parse_summary(ingest(index, docs, env=env).stdout).unchanged == len(tags)


def test_creating_an_index_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    pdf = write(tmp_path / "docs" / "a.pdf", text_pdf("first", 1))
    with tmpfs(tmp_path / "disk", "1m") as disk:
        fill(disk, 0)
        r = run_cli("ingest", pdf, "--index", disk / "index")
        assert_one_line(r, 4, str(disk / "index"), "no space left")
        assert not list((disk / "index").glob("gen-*"))


# ---- 2. a read-only index ---------------------------------------------------------------

@pytest.mark.slow
def test_read_only_index_is_searched_and_refuses_writes_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "source"
    docs = tmp_path / "docs"
    kept = write(docs / "kept.pdf", text_pdf("kept", 2))
    gone = write(docs / "gone.pdf", text_pdf("gone", 1))
    ingest(source / "index", docs)
    gone.unlink()
    new = write(tmp_path / "new" / "new.pdf", text_pdf("fresh", 1))
    before = snapshot(source)
    with read_only_view(source, tmp_path / "ro") as view:
        index = view / "index"
        search = run_cli("search", page_word("kept", 2), "--index", index)
        assert search.returncode == 0 and search.stderr == "", search.stderr
        assert f"{kept}  p.2" in search.stdout
        hits = json.loads(run_cli("search", page_word("kept", 1), "--index", index, "--json").stdout)["hits"]
        assert [(h["path"], h["page"]) for h in hits] == [(str(kept), 1)]
        status = run_cli("status", "--json", "--index", index)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["documents"] == 2
        assert run_cli("ingest", docs, "--index", index).returncode == 0  # nothing changed: nothing to write

        for argv in (("ingest", new), ("reindex",), ("ingest", docs, "--prune")):
            r = run_cli(*argv, "--index", index)
            assert_one_line(r, 4, str(index), "read-only")
        r = run_cli("ingest", new, "--index", view / "another")
        assert_one_line(r, 4, str(view / "another"), "read-only")
    assert snapshot(source) == before
    assert PageIndex(source / "index").check() == []


def test_an_empty_path_is_a_bad_command_line_not_the_current_directory(tmp_path: Path) -> None:
    """``--index ""`` was the current directory: an index was created there and the
    folder made private (chmod 0700); ``ingest ""`` ingested the current directory."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    os.chmod(cwd, 0o755)
    write(cwd / "here.pdf", text_pdf("here", 1))
    pdf = write(tmp_path / "a.pdf", text_pdf("alpha", 1))
    env = cli_env(PYTHONPATH=str(ROOT))
    for argv in (("ingest", pdf, "--index", ""), ("search", "alpha", "--index", ""), ("status", "--index", ""),
                 ("reindex", "--index", ""), ("ingest", "", "--index", tmp_path / "index"),
                 ("ingest", pdf, "--password-file", "", "--index", tmp_path / "index")):
        r = subprocess.run(cli_argv(*argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "empty path" in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr)
    assert sorted(os.listdir(cwd)) == ["here.pdf"] and stat.S_IMODE(cwd.stat().st_mode) == 0o755
    assert not (tmp_path / "index").exists()


# ---- 3. damaged files, and an index someone else may have written --------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of one ingested two-page file (copied for each test, which spoils its copy)."""
    base = tmp_path_factory.mktemp("built")
    write(base / "docs" / "a.pdf", text_pdf("alpha", 2))
    ingest(base / "index", base / "docs")
    return base


def _copy(built: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(index, a folder with one new file) of this test's own copy."""
    index = tmp_path / "index"
    shutil.copytree(built / "index", index, symlinks=True)
    os.chmod(index, 0o700)
    write(tmp_path / "more" / "b.pdf", text_pdf("bravo", 1))
    return index, tmp_path / "more"


def _commands(index: Path, more: Path, every: bool) -> list[tuple[str | Path, ...]]:
    """Every command that opens the index, or (``every`` False) one that reads and
    one that writes."""
    some: list[tuple[str | Path, ...]] = [("search", page_word("alpha", 1), "--index", index),
                                          ("ingest", more, "--index", index)]
    if every:
        some += [("search", "alpha", "--json", "--index", index), ("status", "--index", index),
                 ("status", "--json", "--index", index), ("stats", "--index", index), ("reindex", "--index", index)]
    return some


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00", b"{" * 100_000])
def test_damaged_pdfindex_json_is_exit_4_and_one_line(built: Path, tmp_path: Path, content: bytes) -> None:
    index, more = _copy(built, tmp_path)
    meta = generation(index) / "pdfindex.json"
    good = meta.read_bytes()
    meta.write_bytes(content)
    for argv in _commands(index, more, every=content == b"{not json"):
        assert_one_line(run_cli(*argv), 4, str(index), "pdfindex.json", "damaged")
    meta.write_bytes(good)
    assert run_cli("search", page_word("alpha", 1), "--index", index).returncode == 0


@pytest.mark.parametrize("how", ["truncated", "random", "zeros"])
def test_damaged_table_of_contents_is_exit_4_and_one_line(built: Path, tmp_path: Path, how: str) -> None:
    index, more = _copy(built, tmp_path)
    toc = next(p for p in generation(index).iterdir() if p.name.endswith(".toc"))
    good = toc.read_bytes()
    toc.write_bytes({"truncated": good[: len(good) // 2], "random": random.Random(3).randbytes(len(good)),
                     "zeros": bytes(len(good))}[how])
    for argv in _commands(index, more, every=how == "truncated"):
        assert_one_line(run_cli(*argv), 4, str(index), "damaged")
    toc.write_bytes(good)
    assert PageIndex(index).check() == []


def _chown_tree(root: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.lchown(name, uid, uid)


def _spoil_trust(index: Path, how: str) -> None:
    gen = generation(index)
    segment = next(p for p in gen.iterdir() if p.name.endswith(".seg"))
    toc = next(p for p in gen.iterdir() if p.name.endswith(".toc"))
    if how.startswith("owned") and os.geteuid() != 0:
        unavailable("giving files to another user needs root")
    if how == "owned by nobody":
        _chown_tree(index, NOBODY)
    elif how == "toc owned by nobody":
        os.lchown(toc, NOBODY, NOBODY)
    elif how == "group-writable folder":
        os.chmod(index, 0o770)
    elif how == "group-writable generation":
        os.chmod(gen, 0o720)
    elif how == "world-writable segment":
        os.chmod(segment, 0o606)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize(("how", "why"), [
    ("owned by nobody", f"owned by uid {NOBODY}"), ("toc owned by nobody", f"owned by uid {NOBODY}"),
    ("group-writable folder", "writable by its group"), ("group-writable generation", "writable by its group"),
    ("world-writable segment", "writable by"),
])
def test_index_owned_or_writable_by_others_is_refused_in_one_line_that_says_how_to_fix(
        built: Path, tmp_path: Path, how: str, why: str) -> None:
    index, more = _copy(built, tmp_path)
    _spoil_trust(index, how)
    before = snapshot(index)
    fixes = set()
    for argv in _commands(index, more, every=how == "owned by nobody"):
        line = assert_one_line(run_cli(*argv), 4, str(index), "refusing", why)
        found = re.search(r"`([^`]+)`", line)
        assert found, line
        fixes.add(found.group(1))
    assert snapshot(index) == before  # nothing was written (or tightened) in an untrusted index
    assert len(fixes) == 1
    # The line's own fix, run as given, makes the index usable again.
    subprocess.run(shlex.split(fixes.pop()), check=True, timeout=30)
    r = run_cli("search", page_word("alpha", 1), "--index", index)
    assert r.returncode == 0 and f"{built / 'docs' / 'a.pdf'}  p.1" in r.stdout, r.stdout + r.stderr
    assert PageIndex(index).check() == []


def _cli_here(*args: str | Path) -> str:
    """`pdfindex ARGS` run by this process's own entry point (the forked child of
    ``as_nobody`` cannot exec the interpreter, which lies under /root): its exit
    status and stderr, as JSON."""
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        status = cli_main([str(a) for a in args])
    return json.dumps([status, err.getvalue()])


def test_permission_denied_as_a_plain_user_is_exit_4_and_one_line(built: Path) -> None:
    """As nobody (root is let through everywhere): an index whose folders or table of
    contents its own user may not write or read. The ingest that must write is a
    --prune of a removed file given by its path, as a prune reaches only the paths
    given (the child cannot start an extraction pool: see below)."""
    if os.geteuid() != 0:
        unavailable("dropping to another user needs root")
    base = Path(tempfile.mkdtemp(prefix="pdfindex-cli-perm-"))
    try:
        os.chmod(base, 0o755)  # nobody must reach the files (pytest's tmp_path is root's alone)
        index, scratch = base / "index", base / "scratch"
        shutil.copytree(built / "index", index, symlinks=True)
        gone = write(base / "gone.pdf", text_pdf("gone", 1))
        ingest(index, gone)
        shutil.copytree(index, scratch, symlinks=True)
        gone.unlink()
        # The same commands in this process first, as root on a scratch copy: the child,
        # as nobody, cannot import what they import lazily (the interpreter lies under /root).
        for argv in (("search", "alpha", "--index", scratch), ("status", "--index", scratch),
                     ("ingest", gone, "--prune", "--index", scratch), ("reindex", "--index", scratch)):
            assert json.loads(_cli_here(*argv))[0] == 0, argv
        _chown_tree(index, NOBODY)
        gen = generation(index)
        toc = next(p for p in gen.iterdir() if p.name.endswith(".toc"))

        def work() -> dict[str, str]:
            for key in [k for k in os.environ if k.startswith("PDFINDEX_")]:
                del os.environ[key]
            os.environ["HOME"] = str(base)
            out = {"search": _cli_here("search", page_word("alpha", 1), "--index", index)}
            os.chmod(gen, 0o500)
            out["ingest"] = _cli_here("ingest", gone, "--prune", "--index", index)
            os.chmod(gen, 0o700)
            os.chmod(toc, 0o000)
            out["search unreadable"] = _cli_here("search", page_word("alpha", 1), "--index", index)
            out["status unreadable"] = _cli_here("status", "--index", index)
            os.chmod(toc, 0o600)
            os.chmod(index, 0o500)
            out["reindex"] = _cli_here("reindex", "--index", index)
            os.chmod(index, 0o700)
            out["ingest after"] = _cli_here("ingest", gone, "--prune", "--index", index)
            return out

        out = as_nobody(work)
        assert out.get("child error") is None, out
        results = {key: json.loads(value) for key, value in out.items()}
        assert results["search"] == [0, ""]
        for key in ("ingest", "search unreadable", "status unreadable", "reindex"):
            status, stderr = results[key]
            assert_one_line(subprocess.CompletedProcess([key], status, "", stderr), 4, str(index),
                            "permission denied", "owner and mode")
        assert results["ingest after"] == [0, ""]  # the failures left no lock behind
        _chown_tree(index, 0)
        ix = PageIndex(index)
        assert str(gone) not in docs_by_path(ix)  # pruned at last
        assert ix.check() == [] and orphans(index) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---- Celery: real workers over the real Redis ---------------------------------------------------

@pytest.fixture
def clusters(broker: redis.Redis, tmp_path: Path) -> Iterator[list[Cluster]]:
    started: list[Cluster] = []
    yield started
    for cluster in started:
        cluster.stop()


def _cluster(clusters: list[Cluster], log_dir: Path, roots: Path, index: Path) -> Cluster:
    """One extraction worker and the index writer, with their own roots and index."""
    cluster = Cluster(REDIS_URL, log_dir, roots=str(roots), index_dir=str(index))
    clusters.append(cluster)
    cluster.start(("ex", "extract", 1), ("writer", "index", 1))
    return cluster


def _write_tasks_settled(cluster: Cluster) -> bool:
    """Every write task the writer received has finished (succeeded, failed or retried)."""
    lines = cluster.workers["writer"].log_text().splitlines()
    received = sum("Task pdfindex.write[" in line and "received" in line for line in lines)
    ended = sum("Task pdfindex.write[" in line and any(e in line for e in ("succeeded", "raised", "retry", "failed"))
                for line in lines)
    return received > 0 and received == ended


def _whoosh_lock_free(index: Path) -> bool:
    """The index's writer lock can be taken from here: no process holds it."""
    writer = PageIndex(index).writer(lock_timeout=0)
    try:
        writer.delete("0" * 64)  # takes the lock (IndexBusy if another process holds it)
    finally:
        writer.cancel()
    return True


@pytest.mark.slow
def test_celery_ingest_of_a_name_that_is_not_utf8_keeps_it_exactly_and_does_not_stall_the_writer(
        clusters: list[Cluster], broker: redis.Redis, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    folder = os.fsencode(docs)
    os.makedirs(folder)
    weird = os.fsdecode(folder + b"/caf\xe9 \xff.pdf")
    broken = os.fsdecode(folder + b"/bro\xfeken\x1b[2J.pdf")
    with open(os.fsencode(weird), "wb") as out:
        out.write(text_pdf("weird", 2))
    with open(os.fsencode(broken), "wb") as out:
        out.write(corrupt_pdf())
    plain = write(docs / "plain.pdf", text_pdf("plain", 1))
    other = write(docs / "other.pdf", text_pdf("other", 2))
    index = tmp_path / "index"
    cluster = _cluster(clusters, tmp_path, tmp_path, index)

    r = ingest(index, docs, env=cluster.env, timeout=120)
    summary = parse_summary(r.stdout)
    assert (summary.indexed, summary.failed) == (3, 1), r.stdout
    assert "bro\\xfeken\\x1b[2J.pdf" in r.stdout and "\x1b" not in r.stdout  # the FAILED line, escaped
    ix = PageIndex(index)
    records = docs_by_path(ix)
    assert set(records) == {weird, broken, str(plain), str(other)}
    assert str(records[weird][0].status) == "indexed" and records[broken][0].status == Status.FAILED
    assert find(ix, page_word("weird", 2)) == [(weird, 2)]

    as_json = run_cli("search", page_word("weird", 1), "--json", "--index", index, env=cluster.env)
    assert as_json.returncode == 0, as_json.stderr
    assert [(h["path"], h["page"]) for h in json.loads(as_json.stdout)["hits"]] == [(weird, 1)]
    text = run_cli("search", page_word("weird", 1), "--index", index, env=cluster.env)
    assert text.returncode == 0, text.stderr
    assert f"{docs}/caf\\xe9 \\xff.pdf  p.1" in text.stdout
    status = run_cli("status", "--index", index, env=cluster.env)
    assert status.returncode == 0 and "bro\\xfeken\\x1b[2J.pdf" in status.stdout and "\x1b" not in status.stdout
    failures = json.loads(run_cli("status", "--json", "--index", index, env=cluster.env).stdout)["failures"]
    assert [f["path"] for f in failures] == [broken]

    # The writer kept no lock: an unrelated ingest right after goes through at once.
    wait_for(lambda: _write_tasks_settled(cluster), 90, "the writer's last kicks")
    assert broker.exists(WRITER_LOCK) == 0
    assert _whoosh_lock_free(index)
    later = write(tmp_path / "later" / "late.pdf", text_pdf("late", 1))
    started = time.monotonic()
    r = ingest(index, later.parent, env=cluster.env, timeout=60)
    assert time.monotonic() - started < 30
    assert parse_summary(r.stdout).indexed == 1
    assert find(PageIndex(index), page_word("late", 1)) == [(str(later), 1)]
    log = cluster.workers["writer"].log_text()
    assert "IndexBusy" not in log and "given up" not in log and "Traceback" not in log
    assert PageIndex(index).check() == []


@pytest.mark.slow
def test_celery_writer_on_a_full_disk_keeps_the_batch_and_writes_it_once_space_is_freed(
        clusters: list[Cluster], broker: redis.Redis, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    tags = wordy_folder(docs, 6)
    seed = write(tmp_path / "seed" / "seed.pdf", text_pdf("seed", 1))
    with tmpfs(tmp_path / "disk", "6m") as disk:
        index = disk / "index"
        cluster = _cluster(clusters, tmp_path, tmp_path, index)
        ingest(index, seed, env=cluster.env, timeout=60)
        filler = fill(disk, 200 * 1024)  # less than one file needs
        client = subprocess.Popen(cli_argv("ingest", docs, "--index", index), cwd=ROOT, env=cluster.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            writer = cluster.workers["writer"]
            wait_for(lambda: "no space left" in writer.log_text(), 60, "the writer to log the full disk")
            # Every file extracted and handed off; the writer tried, keeps the batch and retries later.
            wait_for(lambda: broker.llen("extract") == 0 and broker.llen(RESULTS) == 0
                     and _write_tasks_settled(cluster), 60, "the extraction and the write kicks to end")
            assert "no space left" in broker.get(WRITER_ERROR).decode()  # what waiting clients are told
            log = writer.log_text()
            assert str(index) in log and "Traceback" not in log, log[-3000:]
            assert broker.llen(WRITING) == len(tags)  # the batch is kept, nothing dropped
            ix = PageIndex(index)
            assert [d.path for d in ix.documents()] == [str(seed)]  # no failure records either
            assert ix.check() == [] and orphans(index) == []
            assert hidden_bytes(disk) < 64 * 1024  # the live writer keeps no removed file open
            assert client.poll() is None  # still waiting for its files: none was reported failed

            filler.unlink()
            subprocess.run([sys.executable, "-c", "from pdfindex.workers.tasks import write; write.delay()"], cwd=ROOT,
                           env=cluster.env, check=True, timeout=60, capture_output=True)
            out, err = client.communicate(timeout=90)
        finally:
            if client.poll() is None:
                kill_group(client, grace=2)
                client.communicate()
        assert client.returncode == 0, out + err
        summary = parse_summary(out)
        assert (summary.indexed, summary.failed) == (len(tags), 0), out
        assert broker.llen(WRITING) == broker.llen(RESULTS) == 0
        assert_all_found(index, tags)
        assert len(list(PageIndex(index).documents())) == len(tags) + 1  # each file once
        assert orphans(index) == []
        again = ingest(index, docs, env=cluster.env, timeout=60)
        assert parse_summary(again.stdout).unchanged == len(tags)
