"""Issue 9 item 2: ``workers.watch`` keeps an index current as files are added,
changed, moved, deleted and written slowly, after catching up with what changed
while no watch ran. Real files, real inotify events (watchfiles), the real embedded
ingest and a real index on disk; the watch runs in the main thread (the embedded
pool wants it) and a second thread acts on the folder."""
from __future__ import annotations

import queue
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pdfindex import config
from pdfindex.indexer import PageIndex
from pdfindex.workers.api import IngestOptions, ingest
from pdfindex.workers.watch import Round, watch
from tests.ingest_helpers import docs_by_path, find, page_word, text_pdf, write

pytestmark = pytest.mark.slow


def _options(index: Path) -> IngestOptions:
    settings = config.load({"PDFINDEX_INDEX_DIR": str(index), "PDFINDEX_WORKERS": "1", "PDFINDEX_STRICT": "1"})
    return IngestOptions(index_dir=index, recursive=True, workers=1, settings=settings)


def _run(folder: Path, index: Path, actions: Callable[[queue.Queue[Round]], None], timeout: float = 90) -> list[Round]:
    """Watch ``folder`` while ``actions`` (given the queue of rounds) runs in a thread;
    returns every round reported."""
    rounds: queue.Queue[Round] = queue.Queue()
    seen: list[Round] = []
    stop = threading.Event()
    failure: list[BaseException] = []

    def act() -> None:
        try:
            actions(rounds)
        except BaseException as exc:  # reported by the test thread
            failure.append(exc)
        finally:
            stop.set()

    def report(r: Round) -> None:
        seen.append(r)
        rounds.put(r)

    actor = threading.Thread(target=act, daemon=True)
    timer = threading.Timer(timeout, stop.set)
    timer.start()
    actor.start()
    try:
        watch([folder], _options(index), report=report, stop=stop, settle=0.5, debounce_ms=200)
    finally:
        timer.cancel()
        stop.set()
        actor.join(10)
    if failure:
        raise failure[0]
    return seen


def _next(rounds: queue.Queue[Round], what: str, timeout: float = 30) -> Round:
    try:
        r = rounds.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no round of the watch after {timeout} s: {what}") from None
    assert not r.error, r.error
    return r


def test_add_change_move_delete_and_partial_write(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    folder.mkdir()

    def actions(rounds: queue.Queue[Round]) -> None:
        _next(rounds, "catching up")
        write(folder / "a.pdf", text_pdf("alpha", 2))
        r = _next(rounds, "a.pdf added")
        assert r.summary is not None and r.summary.indexed == 1
        write(folder / "a.pdf", text_pdf("alphanew", 1))
        r = _next(rounds, "a.pdf changed")
        assert r.summary is not None and r.summary.indexed == 1
        # a move: no extraction, the path changes
        (folder / "sub").mkdir()
        (folder / "a.pdf").rename(folder / "sub" / "moved.pdf")
        r = _next(rounds, "a.pdf moved")
        assert r.summary is not None and r.summary.indexed == 0, r.summary
        while r.removed is None:
            r = _next(rounds, "the old path removed")
        assert r.removed.paths == [str(folder / "a.pdf")] and r.removed.documents == 0
        # a slow write: taken once, when complete
        data = text_pdf("slowly", 3)
        with (folder / "slow.pdf").open("wb") as f:
            for i in range(0, len(data), max(1, len(data) // 6)):
                f.write(data[i:i + max(1, len(data) // 6)])
                f.flush()
                time.sleep(0.3)
        r = _next(rounds, "slow.pdf written")
        assert r.summary is not None and r.summary.indexed == 1 and not r.summary.failed, r.summary
        (folder / "slow.pdf").unlink()
        r = _next(rounds, "slow.pdf deleted")
        assert r.removed is not None and r.removed.documents == 1

    _run(folder, index, actions)
    ix = PageIndex(index, create=False)
    paths = docs_by_path(ix)
    assert sorted(paths) == [str(folder / "sub" / "moved.pdf")]
    assert find(ix, page_word("alphanew", 1)) and not find(ix, page_word("alpha", 1))
    assert not find(ix, page_word("slowly", 1))


def test_catches_up_with_changes_made_while_not_watching(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    write(folder / "kept.pdf", text_pdf("kept", 1))
    write(folder / "gone.pdf", text_pdf("gone", 1))
    ingest([folder], _options(index))
    (folder / "gone.pdf").unlink()
    write(folder / "new.pdf", text_pdf("newer", 1))

    def actions(rounds: queue.Queue[Round]) -> None:
        r = _next(rounds, "catching up")
        assert r.summary is not None and r.summary.indexed == 1 and r.summary.pruned == 1, r.summary

    _run(folder, index, actions)
    assert sorted(docs_by_path(PageIndex(index, create=False))) == [str(folder / "kept.pdf"), str(folder / "new.pdf")]


def test_a_copy_deleted_keeps_the_document(tmp_path: Path) -> None:
    folder, index = tmp_path / "docs", tmp_path / "index"
    write(folder / "one.pdf", text_pdf("twin", 1))
    shutil.copy(folder / "one.pdf", folder / "two.pdf")

    def actions(rounds: queue.Queue[Round]) -> None:
        _next(rounds, "catching up")
        (folder / "one.pdf").unlink()
        r = _next(rounds, "one copy deleted")
        assert r.removed is not None and r.removed.documents == 0 and r.removed.copies_kept == 1, r.removed

    _run(folder, index, actions)
    ix = PageIndex(index, create=False)
    assert find(ix, page_word("twin", 1)) and sorted(docs_by_path(ix)) == [str(folder / "two.pdf")]


def test_the_cli_watches_until_ctrl_c(tmp_path: Path) -> None:
    """``pdfindex ingest --watch``: a file dropped in is found by search, a file
    deleted is gone, Ctrl-C ends it with exit 0 and no traceback."""
    import os
    import signal
    import subprocess

    from tests.ingest_helpers import cli_argv, cli_env, run_cli, wait_for

    folder, index = tmp_path / "docs", tmp_path / "index"
    write(folder / "first.pdf", text_pdf("first", 1))
    env = cli_env(PDFINDEX_WORKERS="1")
    proc = subprocess.Popen(cli_argv("ingest", folder, "--watch", "--index", index), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        def hits(word: str) -> bool:
            if not (index / "current").exists():
                return False
            r = run_cli("search", word, "--index", index, env=env)
            return r.returncode == 0 and ("first.pdf" in r.stdout or "second.pdf" in r.stdout)

        wait_for(lambda: hits(page_word("first", 1)), 60, "the catch-up to index first.pdf")
        write(folder / "second.pdf", text_pdf("second", 1))
        wait_for(lambda: hits(page_word("second", 1)), 60, "second.pdf to be indexed")
        (folder / "first.pdf").unlink()
        wait_for(lambda: not hits(page_word("first", 1)), 60, "first.pdf to be removed")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    assert "stopped watching" in out and f"removed {folder / 'first.pdf'}" in out
    assert "Traceback" not in err, err



def test_the_cli_watch_names_old_failures_at_catch_up_and_stops_on_sigterm(tmp_path: Path) -> None:
    """Issue 20: the catch-up names the files that failed before and are unchanged (as
    a re-run of ingest does); SIGTERM, as a service manager sends it, stops the watch
    as Ctrl-C does: a line saying so, exit 0 (nothing of the index is lost)."""
    import os
    import signal
    import subprocess

    from tests.ingest_helpers import cli_argv, cli_env, corrupt_pdf, ingest, parse_summary, wait_for

    folder, index = tmp_path / "docs", tmp_path / "index"
    write(folder / "good.pdf", text_pdf("watchgood", 1))
    broken = write(folder / "broken.pdf", corrupt_pdf())
    env = cli_env(PDFINDEX_WORKERS="1")
    reason = parse_summary(ingest(index, folder, env=env).stdout).failures[str(broken)]
    out_path = tmp_path / "stdout"
    with out_path.open("w") as out:
        proc = subprocess.Popen(cli_argv("ingest", folder, "--watch", "--index", index), env=env, stdout=out,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(lambda: f"  FAILED {broken}: {reason}" in out_path.read_text(), 60, "the catch-up's report")
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    lines = out_path.read_text().splitlines()
    assert proc.returncode == 0, "\n".join(lines) + err
    assert any(line.endswith("indexed 0, unchanged 1, failed 1 (unchanged since they failed; --retry-failed to "
                              "try again)") for line in lines), lines
    assert lines[-1] == "stopped watching (SIGTERM); the index holds every change seen", lines
    assert "Traceback" not in err, err



def test_watch_on_celery_workers(tmp_path: Path) -> None:
    """The same watch with PDFINDEX_BROKER_URL: rounds go to real Celery workers
    (the run's Redis database, tests/redis_db.py); an added file is indexed, a moved one keeps its pages."""
    import os
    import signal
    import subprocess

    from tests import redis_db
    from tests.celery_helpers import spawn_worker, wait_ready
    from tests.ingest_helpers import cli_argv, cli_env, run_cli, wait_for
    from tests.redis_db import flushed_redis

    CELERY_REDIS_URL = redis_db.url()

    folder, index = tmp_path / "docs", tmp_path / "index"
    write(folder / "first.pdf", text_pdf("cfirst", 1))
    env = cli_env(PDFINDEX_BROKER_URL=CELERY_REDIS_URL, PDFINDEX_ROOTS=str(tmp_path), PDFINDEX_INDEX_DIR=str(index))
    with flushed_redis(CELERY_REDIS_URL):
        workers = [spawn_worker("wex", "extract", 1, env, tmp_path), spawn_worker("wwr", "index", 1, env, tmp_path)]
        proc = None
        try:
            wait_ready(workers)
            proc = subprocess.Popen(cli_argv("ingest", folder, "--watch", "--recursive"), env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

            def where(word: str) -> str:
                if not (index / "current").exists():
                    return ""
                r = run_cli("search", word, "--index", index, env=env)
                return r.stdout if r.returncode == 0 else ""

            wait_for(lambda: "first.pdf" in where(page_word("cfirst", 1)), 90, "the catch-up on Celery")
            write(folder / "second.pdf", text_pdf("csecond", 1))
            wait_for(lambda: "second.pdf" in where(page_word("csecond", 1)), 90, "second.pdf through Celery")
            (folder / "sub").mkdir()
            (folder / "first.pdf").rename(folder / "sub" / "first.pdf")
            wait_for(lambda: str(folder / "sub" / "first.pdf") in where(page_word("cfirst", 1))
                     and str(folder / "first.pdf") + " " not in where(page_word("cfirst", 1)), 90, "the move")
        finally:
            if proc is not None:
                os.killpg(proc.pid, signal.SIGINT)
                out, err = proc.communicate(timeout=30)
            for worker in workers:
                worker.stop()
    assert proc.returncode == 0, out + err
    assert "Traceback" not in err, err
    # the move was a path change: the second round extracted nothing
    rounds = [line for line in out.splitlines() if " indexed " in line]
    assert rounds[0].split(" indexed ")[1].startswith("1,") and any(" indexed 0," in line for line in rounds), out
