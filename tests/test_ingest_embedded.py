"""`pdfindex ingest` end to end without a broker (issue 4): the real command in a
subprocess, a billiard process pool extracting real PDFs, this process writing a real
Whoosh index; nothing mocked. The index is read back through ``PageIndex`` and the
`search` / `status` commands.

The folder mixes generated PDFs (tests/pdfwriter.py: several multi-page text files, an
encrypted one, a corrupt one, a text file named .pdf, a PDF without the .pdf name, an
image-only scan, a letter with a scanned page) with real-world corpus files.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pdfindex.indexer import PageIndex, Status
from tests.ingest_helpers import (
    REALWORLD_GOOD,
    REALWORLD_LOCKED,
    ROOT,
    USER_PASSWORD,
    Expected,
    assert_indexed_as_expected,
    bomb_pdf,
    book_pdf,
    build_mixed_folder,
    children_of,
    cli_argv,
    cli_env,
    docs_by_path,
    encrypted_pdf,
    expect_realworld,
    find,
    group_alive,
    ingest,
    page_word,
    parse_summary,
    reap,
    records,
    run_cli,
    slow_pdf,
    snapshot,
    status_json,
    text_pdf,
    wait_for,
    write,
)


def _realworld_or_none(request: pytest.FixtureRequest) -> Path | None:
    """The corpus when present; the generated part of the folder runs without it."""
    try:
        return request.getfixturevalue("realworld")
    except pytest.skip.Exception:
        return None


@dataclass
class MixedRun:
    folder: Path
    index: Path
    expected: dict[str, Expected]
    first: subprocess.CompletedProcess[str]
    first_status: dict[str, Any]
    after_first: dict[str, tuple[int, int]]
    records_first: list[Any]
    second: subprocess.CompletedProcess[str]
    after_second: dict[str, tuple[int, int]]
    records_second: list[Any]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> MixedRun:
    """Ingest the mixed folder (recursively, two extraction processes), then ingest
    it again unchanged."""
    base = tmp_path_factory.mktemp("embedded")
    folder, index = base / "docs", base / "index"
    expected = build_mixed_folder(folder, _realworld_or_none(request))
    first = ingest(index, folder, "--recursive", "--workers", "2")
    first_status = status_json(index)
    after_first, records_first = snapshot(index), records(index)
    second = ingest(index, folder, "--recursive", "--workers", "2")
    return MixedRun(folder, index, expected, first, first_status, after_first, records_first,
                    second, snapshot(index), records(index))


def _generated(run: MixedRun) -> list[Expected]:
    return [e for name, e in run.expected.items() if not name.startswith("realworld/")]


def test_summary_counts_files_and_names_each_failure_with_its_reason(mixed: MixedRun) -> None:
    summary = parse_summary(mixed.first.stdout)
    expected = mixed.expected.values()
    assert summary.done and not summary.interrupted
    assert summary.indexed == sum(e.status == "indexed" for e in expected)
    assert summary.empty == sum(e.status == "empty" for e in expected) == 1
    assert summary.unchanged == 0
    assert summary.failed == sum(e.failed for e in expected)
    assert summary.pages == sum(e.page_count for e in expected)
    failures = {str(e.path): e for e in expected if e.failed}
    assert set(summary.failures) == set(failures), mixed.first.stdout
    for path, reason in summary.failures.items():
        for fragment in failures[path].reason:
            assert fragment in reason.lower(), (path, reason)
    assert "password" in summary.failures[str(mixed.folder / "locked.pdf")]
    assert "not a pdf" in summary.failures[str(mixed.folder / "notes.pdf")].lower()


def test_every_page_of_the_generated_files_is_found_by_its_word(mixed: MixedRun) -> None:
    index = PageIndex(mixed.index)
    assert_indexed_as_expected(index, _generated(mixed))
    # Common words reach every text page of every generated text file, once each.
    hits = find(index, "Quarterly")
    expected = sorted((str(e.path), n) for e in _generated(mixed) if e.status == "indexed" and e.unique
                      and e.path.name != "letter-with-scan.pdf" for n in range(1, e.page_count + 1))
    assert sorted(hits) == expected


def test_realworld_files_are_stored_page_by_page_and_found(mixed: MixedRun, realworld: Path) -> None:
    real = [e for name, e in mixed.expected.items() if name.startswith("realworld/")]
    assert len(real) == len(REALWORLD_GOOD) + 1
    assert sum(e.page_count for e in real) >= 10
    assert_indexed_as_expected(PageIndex(mixed.index), real)


def test_pdf_found_by_content_and_other_files_ignored(mixed: MixedRun) -> None:
    paths = set(docs_by_path(PageIndex(mixed.index)))
    assert str(mixed.folder / "scan0042") in paths  # no .pdf name: found by its %PDF- header
    assert str(mixed.folder / "invoice.PDF") in paths
    assert str(mixed.folder / "notes.pdf") in paths  # named .pdf: its failure is recorded
    assert str(mixed.folder / "readme.txt") not in paths
    assert paths == {str(e.path) for e in mixed.expected.values()}


def test_scanned_pages_are_flagged_for_ocr(mixed: MixedRun) -> None:
    index = PageIndex(mixed.index)
    records_ = docs_by_path(index)
    scan = records_[str(mixed.folder / "scan-only.pdf")][0]
    assert scan.status == Status.EMPTY and scan.page_count == 1
    letter = records_[str(mixed.folder / "letter-with-scan.pdf")][0]
    assert letter.status == Status.INDEXED and letter.page_count == 2
    needing = re.search(r"^  pages needing OCR:\s+(\d+)$", mixed.first.stdout, re.M)
    assert needing, mixed.first.stdout
    assert int(needing.group(1)) == sum(len(e.needs_ocr_pages) for e in mixed.expected.values()) >= 2


def test_search_command_json_finds_the_page(mixed: MixedRun) -> None:
    r = run_cli("search", page_word("bravo", 3), "--json", "--index", mixed.index)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["total"] == 1
    (hit,) = data["hits"]
    assert (hit["path"], hit["page"]) == (str(mixed.folder / "minutes-2024.pdf"), 3)
    assert page_word("bravo", 3) in hit["snippet"]


def test_status_json_lists_failures_with_reasons(mixed: MixedRun) -> None:
    status = mixed.first_status
    expected = mixed.expected.values()
    assert status["documents"] == len(mixed.expected)
    assert status["pages"] == sum(e.page_count for e in expected)
    assert status["queues"] is None  # no broker
    by_status: dict[str, int] = {}
    for e in expected:
        by_status[e.status] = by_status.get(e.status, 0) + 1
    assert status["by_status"] == by_status
    failures = {f["path"]: f for f in status["failures"]}
    assert set(failures) == {str(e.path) for e in expected if e.failed}
    for e in expected:
        if e.failed:
            f = failures[str(e.path)]
            assert f["status"] == e.status
            assert f["attempts"] == 1
            assert all(fragment in f["error"].lower() for fragment in e.reason), f


def test_index_is_consistent(mixed: MixedRun) -> None:
    assert PageIndex(mixed.index).check() == []


def test_reingest_of_the_same_folder_is_a_no_op(mixed: MixedRun) -> None:
    summary = parse_summary(mixed.second.stdout)
    assert summary.done and mixed.second.returncode == 5
    failed = sum(e.failed for e in mixed.expected.values())
    assert summary.unchanged == len(mixed.expected) - failed
    # failed files are skipped until they change, and named again: they are still not indexed
    assert (summary.indexed, summary.empty, summary.failed, summary.pages) == (0, 0, failed, 0)
    assert summary.failures == parse_summary(mixed.first.stdout).failures
    assert mixed.records_second == mixed.records_first
    assert mixed.after_second == mixed.after_first  # not a byte of the index rewritten


# ---- changes between runs ------------------------------------------------------------

def test_changed_file_replaces_its_old_pages(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    changing = write(folder / "changing.pdf", text_pdf("oldtext", 3))
    write(folder / "stable.pdf", text_pdf("stable", 2))
    ingest(index, folder)
    before = docs_by_path(PageIndex(index))[str(changing)][0]

    changing.write_bytes(text_pdf("newtext", 2))
    os.utime(changing, (before.mtime + 10, before.mtime + 10))
    summary = parse_summary(ingest(index, folder).stdout)
    assert (summary.indexed, summary.unchanged, summary.failed) == (1, 1, 0)

    ix = PageIndex(index)
    for n in range(1, 4):
        assert find(ix, page_word("oldtext", n)) == []
    for n in range(1, 3):
        assert find(ix, page_word("newtext", n)) == [(str(changing), n)]
    (record,) = docs_by_path(ix)[str(changing)]
    assert record.doc_hash != before.doc_hash and record.page_count == 2
    assert sorted(ix.page_texts(record.doc_hash)) == [1, 2]
    assert ix.page_texts(before.doc_hash) == {}
    assert find(ix, page_word("stable", 2)) == [(str(folder / "stable.pdf"), 2)]
    assert ix.stats().pages == 4
    assert ix.check() == []


def test_prune_removes_a_deleted_files_document_and_pages(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    gone = write(folder / "gone.pdf", text_pdf("goner", 3))
    write(folder / "kept.pdf", text_pdf("keeper", 2))
    ingest(index, folder)
    gone_hash = docs_by_path(PageIndex(index))[str(gone)][0].doc_hash
    gone.unlink()

    summary = parse_summary(ingest(index, folder).stdout)  # without --prune: kept
    assert (summary.unchanged, summary.pruned) == (1, 0)
    assert find(PageIndex(index), page_word("goner", 1)) == [(str(gone), 1)]

    summary = parse_summary(ingest(index, folder, "--prune").stdout)
    assert (summary.unchanged, summary.pruned, summary.indexed) == (1, 1, 0)
    ix = PageIndex(index)
    assert str(gone) not in docs_by_path(ix)
    assert ix.document(gone_hash) is None and ix.page_texts(gone_hash) == {}
    for n in range(1, 4):
        assert find(ix, page_word("goner", n)) == []
    assert find(ix, page_word("keeper", 2)) == [(str(folder / "kept.pdf"), 2)]
    assert ix.stats().documents == 1 and ix.check() == []


def test_password_file_opens_encrypted_files_on_a_rerun(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    locked = write(folder / "locked.pdf", encrypted_pdf("sesame", 3))
    write(folder / "open.pdf", text_pdf("plain", 1))
    expected = [Expected(locked, "indexed", 3, {n: page_word("sesame", n) for n in range(1, 4)})]
    realworld = _realworld_or_none(request)
    if realworld is not None:  # a real encrypted file (AES, pdfplumber's tests) next to ours
        name, password = REALWORLD_LOCKED
        shutil.copyfile(realworld / name, folder / name)
        expected.append(expect_realworld(folder / name, password))

    first = parse_summary(ingest(index, folder).stdout)
    assert first.indexed == 1 and first.failed == len(expected)
    status = status_json(index)
    assert {f["path"]: f["status"] for f in status["failures"]} == {str(e.path): "encrypted" for e in expected}
    assert all("password" in f["error"] for f in status["failures"])

    wrong = tmp_path / "wrong.txt"
    wrong.write_text("guess\n")
    again = parse_summary(ingest(index, folder, "--password-file", wrong).stdout)
    assert again.indexed == 0 and again.unchanged == 1 and again.failed == len(expected)
    assert all("no password in the password file" in reason for reason in again.failures.values())

    passwords = tmp_path / "passwords.txt"
    passwords.write_text("guess\n\n" + USER_PASSWORD + "\n" + REALWORLD_LOCKED[1] + "\n")
    final = parse_summary(ingest(index, folder, "--password-file", passwords).stdout)
    assert (final.indexed, final.unchanged, final.failed) == (len(expected), 1, 0)
    ix = PageIndex(index)
    assert_indexed_as_expected(ix, expected)
    assert status_json(index)["failures"] == []
    assert ix.check() == []


# ---- limits ---------------------------------------------------------------------------

def test_file_over_the_time_limit_fails_while_the_others_complete(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    slow = write(folder / "slow.pdf", slow_pdf("sloth", 20, 20_000))  # tens of seconds of work
    quick = [write(folder / f"quick{i}.pdf", text_pdf(f"quick{i}", 2)) for i in range(3)]
    env = cli_env(PDFINDEX_FILE_TIMEOUT="1", PDFINDEX_FILE_HARD_TIMEOUT="3")
    started = time.monotonic()
    r = ingest(index, folder, "--workers", "2", env=env)
    assert time.monotonic() - started < 30  # the slow file was stopped, not waited for
    summary = parse_summary(r.stdout)
    assert (summary.indexed, summary.failed) == (3, 1)
    assert "time limit" in summary.failures[str(slow)]
    (failure,) = status_json(index)["failures"]
    assert failure["path"] == str(slow) and failure["status"] == "failed"
    assert "time limit" in failure["error"]
    ix = PageIndex(index)
    assert find(ix, "slothall") == []
    for i, path in enumerate(quick):
        assert find(ix, page_word(f"quick{i}", 2)) == [(str(path), 2)]
    assert ix.check() == []


def test_hard_time_limit_kill_is_reported_in_one_line(tmp_path: Path) -> None:
    """With the hard limit equal to the soft one billiard kills the process (its
    timeout handler checks the hard limit first): the path of a file that ignores
    the soft limit."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    slow = write(folder / "slow.pdf", slow_pdf("sloth", 20, 20_000))
    write(folder / "quick.pdf", text_pdf("quick", 2))
    r = ingest(index, folder, "--workers", "2",
               env=cli_env(PDFINDEX_FILE_TIMEOUT="1", PDFINDEX_FILE_HARD_TIMEOUT="1"))
    (failure,) = status_json(index)["failures"]
    assert failure["path"] == str(slow)
    assert "Traceback" not in r.stdout
    assert failure["error"] == "time limit of 1 s exceeded; extraction killed"
    assert parse_summary(r.stdout).failures == {str(slow): failure["error"]}


def test_decompression_bomb_fails_on_the_memory_limit_while_the_others_complete(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    # 1 GB inflated; the extractor stops a stream at its per-page cap (64 MB), so the
    # address-space cap is set below what even that needs (a pool process starts at
    # about 90 MB); the fine file needs far less.
    bomb = write(folder / "bomb.pdf", bomb_pdf("boom"))
    write(folder / "fine.pdf", text_pdf("fine", 2))
    r = ingest(index, folder, "--workers", "2", env=cli_env(PDFINDEX_MAX_MEMORY_MB="160"))
    summary = parse_summary(r.stdout)
    assert (summary.indexed, summary.failed) == (1, 1)
    assert "out of memory" in summary.failures[str(bomb)]
    (failure,) = status_json(index)["failures"]
    assert failure["path"] == str(bomb) and "out of memory" in failure["error"]
    ix = PageIndex(index)
    assert find(ix, page_word("fine", 2)) == [(str(folder / "fine.pdf"), 2)]
    assert find(ix, page_word("boom", 1)) == []
    assert ix.check() == []


def test_pool_process_killed_mid_file_is_recorded_with_a_reason(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    slow = write(folder / "slow.pdf", slow_pdf("doomed", 10, 20_000))
    write(folder / "fine.pdf", text_pdf("fine", 1))
    proc = _start_ingest(folder, index, tmp_path / "stderr", cli_env(PDFINDEX_BATCH_PAGES="1"), workers=1)
    try:
        wait_for(lambda: _documents(index) == 1, 60, "fine.pdf indexed (slow.pdf is next)")
        (child,) = children_of(proc.pid)
        time.sleep(0.3)
        os.kill(child, signal.SIGKILL)
        stdout, _ = proc.communicate(timeout=60)  # billiard reports a lost job after about 10 s
    finally:
        reap(proc)
    assert proc.returncode == 5  # finished, with a failure (cli/errors.py EXIT_INCOMPLETE)
    summary = parse_summary(stdout)
    assert (summary.indexed, summary.failed) == (1, 1)
    (failure,) = status_json(index)["failures"]
    assert failure["path"] == str(slow)
    assert failure["error"] == "the extraction process died (crash or memory exhaustion)"
    assert "Traceback" not in stdout


def test_reingest_with_two_copies_of_a_file_is_a_no_op(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    original = write(folder / "a.pdf", text_pdf("twin", 2))
    shutil.copy2(original, folder / "copy of a.pdf")
    write(folder / "b.pdf", text_pdf("single", 1))
    ingest(index, folder, "--workers", "2")
    before, files_before = records(index), snapshot(index)
    assert len(before) == 2  # docs/ingestion.md: identical content is indexed once
    summary = parse_summary(ingest(index, folder, "--workers", "2").stdout)
    assert (summary.indexed, summary.unchanged) == (0, 3)
    assert records(index) == before and snapshot(index) == files_before


# ---- Ctrl-C ---------------------------------------------------------------------------

def _default_sigint() -> None:
    """A shell starting pytest in the background may leave SIGINT ignored, which the
    child would inherit (and Python then installs no KeyboardInterrupt handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_ingest(folder: Path, index: Path, stderr: Path, env: dict[str, str],
                  workers: int = 2) -> subprocess.Popen[str]:
    with stderr.open("w") as err:
        return subprocess.Popen(cli_argv("ingest", folder, "--workers", str(workers), "--index", index), cwd=ROOT,
                                env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True,
                                preexec_fn=_default_sigint)  # noqa: PLW1509 - no threads started before


def _documents(index: Path) -> int:
    return sum(1 for _ in PageIndex(index).documents()) if (index / "current").exists() else 0


#: Issue 9: Ctrl-C returns within 2 s; the margin is for a loaded machine (2 cores).
CTRL_C_BOUND = 2.0 + 0.5


@pytest.mark.parametrize("shards", [1, 2])
def test_ctrl_c_stops_cleanly_and_a_rerun_resumes(tmp_path: Path, shards: int) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while the
    writer waits for slow files: "stopping..." at once, exit status 130 within 2 s
    (billiard's own stop took ~7 s), no traceback and none of billiard's "exited with
    signal 15" lines, an index that opens and is consistent, no process left (with
    two shards, their writer processes neither); the re-run skips what was done and
    does the rest."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    quick = [write(folder / f"a{i:02d}.pdf", text_pdf(f"early{i}", 2)) for i in range(10)]
    slow = [write(folder / f"z{i}.pdf", slow_pdf(f"late{i}", 3, 8_000)) for i in range(4)]  # last in order
    # a commit per file: progress is visible in the index
    env = cli_env(PDFINDEX_BATCH_PAGES="1", PDFINDEX_SHARDS=str(shards))
    proc = _start_ingest(folder, index, tmp_path / "stderr", env)
    try:
        wait_for(lambda: _documents(index) >= len(quick), 60, "the quick files to be committed")
        time.sleep(0.2)  # let the writer get back to waiting for results
        started = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        stdout, _ = proc.communicate(timeout=60)
        elapsed = time.monotonic() - started
    finally:
        reap(proc)
    stderr = (tmp_path / "stderr").read_text()
    assert proc.returncode == 130, stdout + stderr
    assert elapsed <= CTRL_C_BOUND, f"Ctrl-C took {elapsed:.2f} s"
    assert re.search(r"^pdfindex: stopping\.\.\. committing the 10 files done; 4 not done are left for the next run$",
                     stderr, re.M), stderr
    for noise in ("Traceback", "ForkPoolWorker", "exited with", "SIGTERM", "billiard"):
        assert noise not in stderr, stderr
    wait_for(lambda: not group_alive(proc.pid), 10, "the pool processes to end", interval=0.1)
    interrupted = parse_summary(stdout)
    assert interrupted.interrupted
    ix = PageIndex(index)
    assert ix.check() == [] and ix.shards == shards
    if shards > 1:
        assert all(n > 0 for n in ix.stats().shard_pages)
    done = _documents(index)
    assert done == interrupted.indexed == len(quick)  # everything counted is committed
    assert all(find(ix, page_word(f"late{i}", 1)) == [] for i in range(2))

    rerun = parse_summary(ingest(index, folder, "--workers", "2").stdout)
    assert rerun.done
    assert (rerun.unchanged, rerun.indexed, rerun.failed) == (done, len(slow), 0)
    ix = PageIndex(index)
    for i, path in enumerate(quick):
        assert find(ix, page_word(f"early{i}", 2)) == [(str(path), 2)]
    for i, path in enumerate(slow):
        assert sorted(find(ix, f"late{i}all")) == [(str(path), n) for n in (1, 2, 3)]
    assert ix.check() == []


def _writer_locked(pid: int) -> bool:
    """Whether the process holds Whoosh's write lock file open (writer in use)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").endswith("WRITELOCK"):
                return True
        except OSError:
            continue
    return False


def test_ctrl_c_while_the_index_is_being_written(tmp_path: Path) -> None:
    """Ctrl-C lands while the writer commits a long book (the Whoosh lock is held):
    still exit status 130, no traceback, a consistent index without duplicates. The
    interrupt is sent at a few offsets into the commit to cover its phases."""
    folder = tmp_path / "docs"
    book = write(folder / "book.pdf", book_pdf("tome", 400, 30))
    write(folder / "a-note.pdf", text_pdf("note", 1))
    for attempt, delay in enumerate((0.05, 0.15, 0.3, 0.45)):
        index = tmp_path / f"index{attempt}"
        proc = _start_ingest(folder, index, tmp_path / "stderr", cli_env(PDFINDEX_BATCH_PAGES="1"))
        try:
            wait_for(lambda index=index: _documents(index) >= 1, 60, "the note to be committed", interval=0.01)
            wait_for(lambda proc=proc: _writer_locked(proc.pid) or proc.poll() is not None, 60,
                     "the book's commit", interval=0.002)
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
            proc.communicate(timeout=60)
        finally:
            reap(proc)
        stderr = (tmp_path / "stderr").read_text()
        # A shell shows 130 for both 130 and death by SIGINT: the interpreter's last
        # milliseconds, after it has restored SIGINT's default action, are killed by it.
        assert proc.returncode in (0, 130, -signal.SIGINT), f"delay {delay}: exit {proc.returncode}\n{stderr[-1500:]}"
        assert "Traceback" not in stderr, f"delay {delay}:\n{stderr[-1500:]}"
        ix = PageIndex(index)
        assert ix.check() == [], delay
        hits = sorted(find(ix, "tomeall"))
        assert hits in ([], [(str(book), n) for n in range(1, 401)]), delay


@pytest.mark.parametrize(("to", "shards"), [("process", 1), ("group", 2)])
def test_sigterm_stops_like_ctrl_c(tmp_path: Path, to: str, shards: int) -> None:
    """Issue 20: SIGTERM used to end an ingest without a word or a commit of what was
    in hand. It stops as Ctrl-C does: what arrived is committed, the summary says the
    run was stopped, exit 130, no process left; the re-run does the rest. Sent to the
    process alone (``kill PID``) or to its whole group (a service manager), where the
    writer processes of a sharded index must leave the stop to the ingest."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    quick = [write(folder / f"a{i:02d}.pdf", text_pdf(f"termed{i}", 1)) for i in range(6)]
    slow = [write(folder / f"z{i}.pdf", slow_pdf(f"termlate{i}", 3, 8_000)) for i in range(2)]
    env = cli_env(PDFINDEX_BATCH_PAGES="1", PDFINDEX_SHARDS=str(shards))
    proc = _start_ingest(folder, index, tmp_path / "stderr", env)
    try:
        wait_for(lambda: _documents(index) >= len(quick), 60, "the quick files to be committed")
        time.sleep(0.2)
        (os.kill if to == "process" else os.killpg)(proc.pid, signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        reap(proc)
    stderr = (tmp_path / "stderr").read_text()
    assert proc.returncode == 130, stdout + stderr
    assert re.search(r"^pdfindex: stopping\.\.\. committing the 6 files done; 2 not done are left for the next run$",
                     stderr, re.M), stderr
    assert "Traceback" not in stderr, stderr
    assert stdout.startswith("interrupted (SIGTERM): the index holds everything committed so far"), stdout
    wait_for(lambda: not group_alive(proc.pid), 10, "the pool processes to end", interval=0.1)
    assert _documents(index) == parse_summary(stdout).indexed == len(quick)
    assert PageIndex(index).check() == [] and PageIndex(index).shards == shards
    rerun = parse_summary(ingest(index, folder, "--workers", "2").stdout)
    assert (rerun.unchanged, rerun.indexed) == (len(quick), len(slow))
