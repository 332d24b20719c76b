"""Logging (issue 9): ``-v`` shows a line per file naming its path, ``-q`` errors only;
the CLI's handler escapes what it prints and hides pdfminer.six's recoverable-damage
warnings, while importing the package leaves pdfminer's logger alone; a Celery
worker's log names the file of every task; Ctrl-C on the Celery client stops the
waiting within 2 s and the queued files are still done by the workers.

Real `pdfindex` subprocesses, a real billiard pool, real Celery workers on Redis
(the run's own database, tests/redis_db.py), real PDFs; nothing mocked. The
embedded Ctrl-C test is in test_ingest_embedded.py.
"""
from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pdfindex.cli import logs
from pdfindex.indexer import PageIndex
from tests import redis_db
from tests.celery_helpers import Worker, spawn_worker, wait_ready
from tests.ingest_helpers import (
    ROOT,
    cli_argv,
    cli_env,
    corrupt_pdf,
    parse_summary,
    reap,
    run_cli,
    text_pdf,
    wait_for,
    write,
)
from tests.redis_db import flushed_redis

REDIS_URL = redis_db.url()
#: The issue's bound on Ctrl-C, plus room for a loaded machine (2 cores, other tests).
CTRL_C_BOUND = 2.0 + 0.5
ESC_NAME = "red\x1b[31mname.pdf"


def _folder(root: Path) -> dict[str, Path]:
    """Two good files, a broken one, and one whose name holds a terminal escape."""
    return {
        "good1": write(root / "alpha.pdf", text_pdf("alpha", 2)),
        "good2": write(root / "sub dir" / "bravo.pdf", text_pdf("bravo", 1)),
        "broken": write(root / "broken.pdf", corrupt_pdf()),
        "escape": write(root / ESC_NAME, text_pdf("charlie", 1)),
    }


def _ingest(index: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli("ingest", *args, "--recursive", "--workers", "2", "--index", index)


# ---- embedded ingest: -v, -q, default --------------------------------------------------

def test_verbose_ingest_names_every_file_escaped(tmp_path: Path) -> None:
    files = _folder(tmp_path / "docs")
    r = _ingest(tmp_path / "index", "-v", tmp_path / "docs")
    assert r.returncode != 130 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert f"pdfindex: indexed {files['good1']} (2 pages)" in lines, r.stderr
    assert f"pdfindex: indexed {files['good2']} (1 page)" in lines, r.stderr
    assert any(line.startswith(f"pdfindex: failed {files['broken']}: ") for line in lines), r.stderr
    shown_escape = str(files["escape"]).replace("\x1b", "\\x1b")
    assert f"pdfindex: indexed {shown_escape} (1 page)" in lines, r.stderr
    assert "\x1b" not in r.stderr  # escaped, never sent to the terminal
    assert "extracting 4 files" not in r.stderr  # debug lines only with -vv


def test_double_verbose_adds_debug_lines_and_works_before_the_command(tmp_path: Path) -> None:
    _folder(tmp_path / "docs")
    r = run_cli("-vv", "ingest", tmp_path / "docs", "-r", "--workers", "2", "--index", tmp_path / "index")
    assert "pdfindex: extracting 4 files in 2 processes" in r.stderr.splitlines(), r.stderr
    assert "pdfindex: extraction pool stopped in" in r.stderr
    assert f"pdfindex: indexed {tmp_path / 'docs' / 'alpha.pdf'} (2 pages)" in r.stderr.splitlines()


def test_default_ingest_shows_progress_but_no_line_per_file(tmp_path: Path) -> None:
    files = _folder(tmp_path / "docs")
    r = _ingest(tmp_path / "index", tmp_path / "docs")
    assert re.search(r"^pdfindex: 4/4 files, ", r.stderr, re.M), r.stderr  # the non-terminal progress line
    assert str(files["good1"]) not in r.stderr, r.stderr
    assert parse_summary(r.stdout).indexed == 3


def test_quiet_ingest_shows_nothing_but_errors(tmp_path: Path) -> None:
    """-q: no progress, no per-file lines, no summary; each file that failed (an error:
    the exit status is 5 for it) is one line on stderr, as the summary names it."""
    files = _folder(tmp_path / "docs")
    r = _ingest(tmp_path / "index", "-q", tmp_path / "docs")
    assert r.returncode == 5 and r.stdout == "", r.stdout
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"pdfindex: FAILED {files['broken']}: "), r.stderr
    again = _ingest(tmp_path / "index", "-q", tmp_path / "docs")  # unchanged, still failed: still an error
    assert (again.returncode, again.stdout, again.stderr) == (5, "", r.stderr)
    (files["broken"]).unlink()
    clean = run_cli("-q", "ingest", tmp_path / "docs", "-r", "--prune", "--index", tmp_path / "index")
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")  # nothing wrong: not a word
    missing = tmp_path / "nowhere"
    r = run_cli("-q", "ingest", missing, "--index", tmp_path / "index")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"pdfindex: {missing}: no such file or folder"], r.stderr


def test_verbose_and_quiet_together_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("ingest", "-v", "-q", tmp_path, "--index", tmp_path / "index")
    assert r.returncode == 2
    assert "not allowed with argument" in r.stderr


# ---- the CLI's handler, in this process ------------------------------------------------

@pytest.fixture
def cli_logging() -> Iterator[None]:
    """``logs.configure`` as main() calls it; the root handlers and our level put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), logging.getLogger(logs.OURS).level
    try:
        yield
    finally:
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        logging.getLogger(logs.OURS).setLevel(level)


def test_handler_hides_pdfminer_damage_and_escapes_lines(cli_logging: None,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(0, False)
    logs.configure(0, False)  # main() run twice in one process: still one handler
    logging.getLogger("pdfminer.pdfparser").warning("recoverable damage")
    logging.getLogger("pdfminer.pdfdocument").error("a pdfminer error")
    logging.getLogger("pdfindex.workers.embedded").warning("odd name \x1b]0;owned\x07 here")
    logging.getLogger("pdfindex.workers.embedded").info("a line per file: only with -v")
    logging.getLogger("kombu.connection").warning("another library's warning")
    assert capsys.readouterr().err.splitlines() == [
        "pdfindex: a pdfminer error",
        "pdfindex: odd name \\x1b]0;owned\\x07 here",
        "pdfindex: another library's warning",
    ]
    logs.configure(0, True)  # -q
    logging.getLogger("pdfindex.cli").warning("a warning")
    logging.getLogger("kombu.connection").warning("another library's warning")
    logging.getLogger("pdfindex.cli").error("an error")
    assert capsys.readouterr().err.splitlines() == ["pdfindex: an error"]
    logs.configure(2, False)  # -vv: our debug lines, not pdfminer's
    logging.getLogger("pdfindex.cli").debug("a debug line")
    logging.getLogger("pdfminer.psparser").debug("a token")
    assert capsys.readouterr().err.splitlines() == ["pdfindex: a debug line"]
    assert logging.getLogger("pdfminer").level == logging.NOTSET


@pytest.mark.parametrize("host_level", [None, "DEBUG", "CRITICAL"])
def test_importing_the_pipeline_leaves_pdfminers_logger_alone(host_level: str | None) -> None:
    """A fresh interpreter (this one has imported everything already): whatever the
    host program set, or did not set, is what it finds after importing us."""
    setup = f"logging.getLogger('pdfminer').setLevel(logging.{host_level}); " if host_level else ""
    code = ("import logging; " + setup + "before = logging.getLogger('pdfminer').level; "
            "import pdfindex.pipeline, pdfindex.pipeline.document, pdfindex.workers.outcome; "
            "print(before, logging.getLogger('pdfminer').level, len(logging.getLogger().handlers))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    before, after, root_handlers = map(int, r.stdout.split())
    assert after == before == (getattr(logging, host_level) if host_level else logging.NOTSET)
    assert root_handlers == 0  # no logging set up at import


def test_celery_worker_logging_drops_pdfminer_damage_but_not_ours() -> None:
    """Celery's own logging set-up (what `celery worker` runs) gets the same pdfminer
    filter on its handlers; pdfminer's logger level stays untouched."""
    code = ("import logging; from pdfindex.workers.app import app; app.log.setup(loglevel='INFO'); "
            "logging.getLogger('pdfminer.pdfparser').warning('recoverable damage'); "
            "logging.getLogger('pdfminer.pdfdocument').error('a pdfminer error'); "
            "logging.getLogger('pdfindex.workers.drain').warning('one of ours'); "
            "print('LEVEL', logging.getLogger('pdfminer').level)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "LEVEL 0" in r.stdout
    output = r.stdout + r.stderr
    assert "a pdfminer error" in output and "one of ours" in output, output
    assert "recoverable damage" not in output, output


# ---- Celery: the worker's log names each file; Ctrl-C on the client ------------------------

def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background shell may have left it ignored


def test_celery_client_ctrl_c_stops_at_once_and_the_workers_finish_the_files(tmp_path: Path) -> None:
    """The client enqueues with no worker running, so it waits; Ctrl-C ends it within
    the bound, saying the queued files go on. Workers started afterwards do them, and
    the extraction worker's log names the file of every task, escaped (a newline in a
    name cannot forge a log line)."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    files = [write(folder / f"file{i}.pdf", text_pdf(f"celery{i}", 1)) for i in range(3)]
    files.append(write(folder / "evil\nTask forged[1] succeeded.pdf", text_pdf("celeryevil", 1)))
    env = cli_env(PDFINDEX_BROKER_URL=REDIS_URL, PDFINDEX_ROOTS=str(tmp_path), PDFINDEX_INDEX_DIR=str(index))
    workers: list[Worker] = []
    with flushed_redis(REDIS_URL) as broker:
        client = subprocess.Popen(cli_argv("ingest", folder, "--index", index), cwd=ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                                  preexec_fn=_default_sigint)  # noqa: PLW1509 - no threads started before
        try:
            wait_for(lambda: broker.llen("extract") == len(files), 60, "the files to be enqueued")
            time.sleep(0.3)  # the client is in its waiting loop
            started = time.monotonic()
            os.killpg(client.pid, signal.SIGINT)
            out, err = client.communicate(timeout=30)
            elapsed = time.monotonic() - started
        finally:
            reap(client)
        assert client.returncode == 130, out + err
        assert elapsed <= CTRL_C_BOUND, f"Ctrl-C took {elapsed:.2f} s"
        assert "Traceback" not in err, err
        assert re.search(r"^pdfindex: stopping\.\.\. no longer waiting; the 4 files .* workers still extract and "
                         r"index them", err, re.M), err
        assert parse_summary(out).interrupted
        assert broker.llen("extract") == len(files)  # Ctrl-C took nothing off the queue

        try:
            workers = [spawn_worker("ext", "extract", 1, env, tmp_path), spawn_worker("idx", "index", 1, env, tmp_path)]
            wait_ready(workers)
            wait_for(lambda: index.joinpath("current").exists()
                     and sum(1 for _ in PageIndex(index).documents()) == len(files), 90,
                     "the workers to index the queued files")
            wait_for(lambda: workers[0].log_text().count(" succeeded in ") >= len(files), 30,
                     "the extraction worker to log every task")
            log = workers[0].log_text()
        finally:
            for worker in workers:
                worker.stop()
    assert sorted(d.path for d in PageIndex(index).documents()) == sorted(map(str, files))
    for path in files:
        shown = repr(str(path))
        assert re.search(rf"Task pdfindex\.extract {re.escape(shown)}\[[0-9a-f-]+\] received", log), (shown, log)
        assert re.search(rf"Task pdfindex\.extract {re.escape(shown)}\[[0-9a-f-]+\] succeeded in ", log), (shown, log)
        assert re.search(rf"pdfindex: {re.escape(shown)}: extracting [0-9a-f]{{64}} \(attempt 1\) in process \d+$",
                         log, re.M), (shown, log)
        assert f"pdfindex: indexed {shown} (1 pages) handed to the index writer" in log, (shown, log)
    assert not any(line.startswith("Task forged") for line in log.splitlines()), log



def test_search_and_list_start_without_importing_logging(tmp_path: Path) -> None:
    """Their start-up is measured (bench/startup.py): the logging set-up is skipped for
    them, as it would import ``logging`` (~10 ms) for nothing they log."""
    _folder(tmp_path / "docs")
    assert _ingest(tmp_path / "index", "-q", tmp_path / "docs").returncode == 5  # the broken file
    for command in (["search", "alphazq1w"], ["list"], ["-v", "search", "alphazq1w"]):
        code = ("import sys; from pdfindex.cli.main import main; "
                f"status = main({[*command, '--index', str(tmp_path / 'index')]!r}); "
                "print('RESULT', status, 'logging' in sys.modules)")
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                           timeout=60)
        assert r.stdout.splitlines()[-1] == "RESULT 0 False", (command, r.stdout, r.stderr)
