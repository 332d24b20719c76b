"""OCR in ingestion, both modes (issue 22, "Its own place in the pipeline"): the real
`pdfindex ingest` in a subprocess over folders that mix born-digital PDFs with scans
of our own (tests/scans.py via tests/ocr_ingest_helpers.py), a real Whoosh index on
disk read back through the CLI and ``PageIndex``, real Tesseract; in Celery mode real
worker processes on the run's own Redis database (tests/redis_db.py). Nothing mocked.

Embedded mode: the text pass writes every file with its OCR deferred, then each file
with pages waiting goes back to the pool for OCR (workers/ocr_phase.py). Its tests:
the scan's words are found with the page's source and confidence; the text files are
searchable while OCR runs; a kill or Ctrl-C between the passes loses nothing and OCRs
nothing twice; an index made with OCR off gets its scans OCR'd without re-extracting
the rest; a missing engine and OCR's time limits leave the pages needing OCR with an
``ocr_failed`` problem, never a crash and never an endless retry.

Celery mode: ``pdfindex.extract`` queues ``pdfindex.ocr`` on the queue "ocr"; the
client does not wait for it; a worker of that queue alone reads the pages, refuses
forged messages, and a killed OCR worker's file is OCR'd once it is back.

OCR costs a second or two a page here: each test keeps to a few pages.
"""
from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from pdfindex.indexer import PageIndex
from tests import redis_db
from tests.celery_helpers import Cluster, wait_ready
from tests.ingest_helpers import (
    ROOT,
    cli_argv,
    cli_env,
    find,
    group_alive,
    ingest,
    page_word,
    parse_summary,
    reap,
    records,
    run_cli,
    snapshot,
    status_json,
    text_pdf,
    wait_for,
    write,
)
from tests.ocr_ingest_helpers import (
    build,
    by_page,
    dense_pdf,
    found,
    ingested,
    mixed_pdf,
    ocr_counts,
    pages,
    queued_for_ocr,
    scan_pdf,
    scan_word,
    search,
    spawn_pdfindex_worker,
    waiting,
    waiting_now,
)

REDIS_URL = redis_db.url()
#: A whole ingest of a few scanned pages takes seconds; the margin is for a loaded CI machine.
INGEST_SECONDS = 300.0
#: Until a scan's OCR'd words are searchable in Celery mode (OCR runs after the client returns).
OCR_SECONDS = 180.0


def _finds(index: Path, word: str) -> list[tuple[str, int]]:
    """(file name, page) of the pages ``word`` finds, read in this process (cheap enough
    to poll); nothing while the index does not exist."""
    if not (index / "current").exists():
        return []
    return sorted((Path(path).name, page) for path, page in find(PageIndex(index), word))


def _finds_now(index: Path, word: str) -> list[tuple[str, int]]:
    """``_finds``, polled while a run may be creating the index: nothing until it opens."""
    try:
        return _finds(index, word)
    except Exception:  # the index half made: not there yet
        return []


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _default_sigint() -> None:
    """A shell starting pytest in the background may leave SIGINT ignored, which the
    child would inherit (tests/test_ingest_embedded.py)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_ingest(folder: Path, index: Path, log: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    """`pdfindex ingest` in a process group of its own, its stderr to ``log``, not waited for."""
    with log.open("w") as err:
        return subprocess.Popen(cli_argv("ingest", folder, *extra, "--index", index), cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True,
                                preexec_fn=_default_sigint)  # noqa: PLW1509 - no threads started before


def _no_traceback(*outputs: str) -> None:
    for text in outputs:
        assert "Traceback" not in text, text[-3000:]


# ---- embedded: one folder, ingested twice ---------------------------------------------

@dataclass
class EmbeddedRun:
    folder: Path
    index: Path
    first: subprocess.CompletedProcess[str]
    records_first: list[Any]
    snapshot_first: dict[str, tuple[int, int]]
    second: subprocess.CompletedProcess[str]
    records_second: list[Any]
    snapshot_second: dict[str, tuple[int, int]]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedRun:
    """A born-digital report (2 pages) and a two-page scan whose words are in no
    text layer; ingested, then ingested again unchanged."""
    base = tmp_path_factory.mktemp("ocr-embedded")
    folder, index = base / "docs", base / "index"
    build(folder, {"report.pdf": text_pdf("born", 2), "scan.pdf": scan_pdf(0, 2)})
    first = ingest(index, folder, timeout=INGEST_SECONDS)
    records_first, snapshot_first = records(index), snapshot(index)
    second = ingest(index, folder, timeout=INGEST_SECONDS)
    return EmbeddedRun(folder, index, first, records_first, snapshot_first, second, records(index), snapshot(index))


@pytest.mark.slow
def test_embedded_scan_words_are_found_with_source_and_confidence(embedded: EmbeddedRun) -> None:
    for n in (0, 1):
        result = search(embedded.index, scan_word(n))
        assert [(Path(h["path"]).name, h["page"]) for h in result["hits"]] == [("scan.pdf", n + 1)], result
        (hit,) = result["hits"]
        assert hit["source"] == "ocr" and hit["needs_ocr"] is False, hit
        assert isinstance(hit["ocr_confidence"], float) and 80 <= hit["ocr_confidence"] <= 100, hit
        assert scan_word(n) in hit["snippet"].lower(), hit
    (text_hit,) = search(embedded.index, page_word("born", 2))["hits"]
    assert (Path(text_hit["path"]).name, text_hit["page"], text_hit["source"]) == ("report.pdf", 2, "text")
    assert text_hit["ocr_confidence"] is None


@pytest.mark.slow
def test_embedded_source_ocr_lists_only_the_ocr_pages(embedded: EmbeddedRun) -> None:
    result = search(embedded.index, "source:ocr")
    assert sorted((Path(h["path"]).name, h["page"]) for h in result["hits"]) == [("scan.pdf", 1), ("scan.pdf", 2)]
    assert all(h["source"] == "ocr" for h in result["hits"])
    # as a filter beside words: a word of every scanned page and of no text layer
    assert found(embedded.index, f"source:ocr {scan_word(1)}") == [("scan.pdf", 2)]
    assert found(embedded.index, f"source:ocr {page_word('born', 1)}") == []


@pytest.mark.slow
def test_embedded_list_shows_the_ocr_confidence(embedded: EmbeddedRun) -> None:
    r = run_cli("list", "--pages", "--index", embedded.index)
    assert r.returncode == 0, r.stderr
    lines = {(m.group(1), int(m.group(2))): line for line in r.stdout.splitlines()
             if (m := re.match(r"^\S*/(\S+)\s+p\.(\d+)\s", line))}
    assert set(lines) == {("report.pdf", 1), ("report.pdf", 2), ("scan.pdf", 1), ("scan.pdf", 2)}, r.stdout
    for page in (1, 2):
        assert re.search(r"\bOCR \d{1,3} %", lines["scan.pdf", page]), r.stdout
        assert "OCR " not in lines["report.pdf", page], r.stdout
    rows = by_page(pages(embedded.index))
    assert all(rows["scan.pdf", p]["source"] == "ocr" and not rows["scan.pdf", p]["needs_ocr"] for p in (1, 2))


@pytest.mark.slow
def test_embedded_summary_counts_the_pages_ocrd(embedded: EmbeddedRun) -> None:
    stdout = embedded.first.stdout
    _no_traceback(embedded.first.stderr)
    summary = parse_summary(stdout)
    assert summary.done and embedded.first.returncode == 0, stdout
    assert (summary.indexed, summary.empty, summary.failed, summary.pages) == (2, 0, 0, 4), stdout
    assert ocr_counts(stdout) == (2, 2), stdout
    assert re.search(r"^  pages needing OCR:\s+0$", stdout, re.M), stdout
    assert {name: pending for name, pending in waiting(embedded.index).items()} == {"report.pdf": 0, "scan.pdf": 0}


@pytest.mark.slow
def test_embedded_second_ingest_extracts_and_ocrs_nothing(embedded: EmbeddedRun) -> None:
    stdout = embedded.second.stdout
    summary = parse_summary(stdout)
    assert summary.done and embedded.second.returncode == 0, stdout
    assert (summary.unchanged, summary.indexed, summary.failed, summary.pages) == (2, 0, 0, 0), stdout
    assert ocr_counts(stdout) is None, stdout  # no page sent to OCR
    assert embedded.records_second == embedded.records_first
    assert embedded.snapshot_second == embedded.snapshot_first  # not a byte of the index rewritten


# ---- embedded: the text first ---------------------------------------------------------

@pytest.mark.slow
def test_embedded_text_files_are_searchable_while_ocr_runs(tmp_path: Path) -> None:
    """The report's page is committed by the text pass, before the OCR pass of the
    four-page scan ends: found while the run still OCRs, with the scan's record in the
    index waiting for its pages; the scan's words come after."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    build(folder, {"report.pdf": text_pdf("early", 1), "scan.pdf": scan_pdf(0, 4)})
    proc = _start_ingest(folder, index, tmp_path / "stderr", cli_env())
    try:
        wait_for(lambda: _finds_now(index, page_word("early", 1)) or proc.poll() is not None, INGEST_SECONDS,
                 "the report's page to be searchable", interval=0.05)
        running = proc.poll() is None
        scan_found = [_finds(index, scan_word(n)) for n in range(4)]
        pending = waiting(index)
        stdout, _ = proc.communicate(timeout=INGEST_SECONDS)
    finally:
        reap(proc)
    stderr = (tmp_path / "stderr").read_text()
    assert proc.returncode == 0, stdout + stderr
    assert running, f"the report became searchable only when the run ended\n{stdout}\n{stderr}"
    assert scan_found == [[], [], [], []], "the scan was OCR'd before the report was searchable"
    assert pending.get("scan.pdf") == 4, pending  # committed by the text pass, its pages waiting
    assert ocr_counts(stdout) == (4, 4), stdout
    for n in range(4):
        assert _finds(index, scan_word(n)) == [("scan.pdf", n + 1)]
    assert _finds(index, page_word("early", 1)) == [("report.pdf", 1)]


# ---- embedded: a kill or Ctrl-C between the passes ----------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_embedded_stop_between_the_passes_loses_nothing_and_ocrs_nothing_twice(
        tmp_path: Path, signum: signal.Signals) -> None:
    """One extraction process: the text pass writes the report and two scans (their
    pages waiting), then OCR reads one scan after the other. Once the index shows one
    scan OCR'd and the other still waiting, the run's process group gets SIGKILL (or
    SIGINT, as a terminal's Ctrl-C). The re-run extracts nothing again and OCRs exactly
    the pages still waiting: the scan already OCR'd keeps its record untouched."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    build(folder, {"a-scan.pdf": scan_pdf(0, 2), "b-scan.pdf": scan_pdf(2, 3), "report.pdf": text_pdf("kept", 1)})
    scans = ("a-scan.pdf", "b-scan.pdf")

    def one_done_one_waiting() -> bool:
        state = waiting_now(index)
        return (len(state) == 3 and state["report.pdf"] == 0
                and sorted(state[name] or 0 for name in scans)[0] == 0
                and sorted(state[name] or 0 for name in scans)[1] > 0)

    proc = _start_ingest(folder, index, tmp_path / "stderr", cli_env(), "--workers", "1")
    try:
        wait_for(lambda: one_done_one_waiting() or proc.poll() is not None, INGEST_SECONDS,
                 "one scan OCR'd and committed while the other waits", interval=0.05)
        assert proc.poll() is None, "the run ended before it could be stopped between the passes"
        os.killpg(proc.pid, signum)
        stdout, _ = proc.communicate(timeout=60)
        wait_for(lambda: not group_alive(proc.pid), 30, "the run's processes to end", interval=0.1)
    finally:
        reap(proc)
    stderr = (tmp_path / "stderr").read_text()
    if signum == signal.SIGINT:
        assert proc.returncode == 130, stdout + stderr
        assert parse_summary(stdout).interrupted, stdout
        _no_traceback(stderr)
    else:
        assert proc.returncode == -signal.SIGKILL
    state = waiting(index)
    done = next(name for name in scans if state[name] == 0)
    left = next(name for name in scans if name != done)
    assert state[left], f"the stop came too late: nothing was left waiting {state}"
    before = ingested(index)
    assert PageIndex(index).check() == []

    rerun = ingest(index, folder, timeout=INGEST_SECONDS)
    summary = parse_summary(rerun.stdout)
    assert (summary.unchanged, summary.indexed, summary.failed) == (3, 0, 0), rerun.stdout
    assert ocr_counts(rerun.stdout) == (state[left], state[left]), rerun.stdout  # only the pages waiting
    after = ingested(index)
    assert after["report.pdf"] == before["report.pdf"]  # not extracted again
    assert after[done] == before[done]  # not OCR'd again
    assert after[left] > before[left]
    assert waiting(index) == {"a-scan.pdf": 0, "b-scan.pdf": 0, "report.pdf": 0}
    assert _finds(index, scan_word(0)) == [("a-scan.pdf", 1)] and _finds(index, scan_word(1)) == [("a-scan.pdf", 2)]
    for n in (2, 3, 4):
        assert _finds(index, scan_word(n)) == [("b-scan.pdf", n - 1)]
    assert _finds(index, page_word("kept", 1)) == [("report.pdf", 1)]
    rows = pages(index)
    assert len(rows) == 6 and sum(row["source"] == "ocr" for row in rows) == 5
    assert PageIndex(index).check() == []
    third = ingest(index, folder, timeout=INGEST_SECONDS)
    assert ocr_counts(third.stdout) is None and parse_summary(third.stdout).unchanged == 3, third.stdout


# ---- embedded: an index made with OCR off --------------------------------------------------

@pytest.mark.slow
def test_embedded_index_made_with_ocr_off_gets_its_scans_ocrd_alone(tmp_path: Path) -> None:
    """`ingest --ocr off` leaves the scanned pages needing OCR and records no OCR
    decision; `ingest --ocr auto` of the same folder OCRs those pages (a scan, and the
    scanned page of a mixed file) without extracting the born-digital file again."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    build(folder, {"report.pdf": text_pdf("plain", 2), "scan.pdf": scan_pdf(0, 2),
                   "mixed.pdf": mixed_pdf("cover letter zebracover", 2, 1)})
    off = ingest(index, folder, "--ocr", "off", timeout=INGEST_SECONDS)
    assert ocr_counts(off.stdout) is None, off.stdout
    assert re.search(r"^  pages needing OCR:\s+3$", off.stdout, re.M), off.stdout
    rows = by_page(pages(index))
    for key in (("scan.pdf", 1), ("scan.pdf", 2), ("mixed.pdf", 2)):
        assert rows[key]["needs_ocr"] and rows[key]["source"] == "text" and rows[key]["ocr_confidence"] is None
    assert waiting(index) == {"report.pdf": None, "scan.pdf": None, "mixed.pdf": None}
    assert _finds(index, scan_word(0)) == []
    before = ingested(index)

    auto = ingest(index, folder, "--ocr", "auto", timeout=INGEST_SECONDS)
    summary = parse_summary(auto.stdout)
    assert (summary.unchanged, summary.indexed, summary.failed, summary.pages) == (3, 0, 0, 0), auto.stdout
    counts = ocr_counts(auto.stdout)
    assert counts is not None and counts[0] == 3, auto.stdout
    after = ingested(index)
    assert after["report.pdf"] == before["report.pdf"]  # not extracted again
    assert after["scan.pdf"] > before["scan.pdf"] and after["mixed.pdf"] > before["mixed.pdf"]
    assert _finds(index, scan_word(0)) == [("scan.pdf", 1)] and _finds(index, scan_word(1)) == [("scan.pdf", 2)]
    assert _finds(index, scan_word(2)) == [("mixed.pdf", 2)]
    assert _finds(index, "zebracover") == [("mixed.pdf", 1)]
    rows = by_page(pages(index))
    assert rows["mixed.pdf", 1]["source"] == "text"
    assert all(rows[key]["source"] == "ocr" for key in (("scan.pdf", 1), ("scan.pdf", 2), ("mixed.pdf", 2)))
    assert not any(row["needs_ocr"] for row in rows.values())

    again = ingest(index, folder, timeout=INGEST_SECONDS)
    assert ocr_counts(again.stdout) is None and parse_summary(again.stdout).unchanged == 3, again.stdout
    assert ingested(index) == after
    # "of M": the pages sent to OCR, which were three (not the mixed file's text page too)
    assert counts == (3, 3), auto.stdout


# ---- embedded: no engine, and OCR's time limits ---------------------------------------------

@pytest.mark.slow
def test_embedded_missing_engine_leaves_pages_needing_ocr_and_says_so_once(tmp_path: Path) -> None:
    """PDFINDEX_TESSDATA names an empty folder: the ingest succeeds (exit 0), the text
    is indexed, the scanned pages stay needs_ocr with an ocr_failed problem, one line
    says what to install; a second run does not try them again."""
    folder, index, empty = tmp_path / "docs", tmp_path / "index", tmp_path / "no-tessdata"
    empty.mkdir()
    build(folder, {"report.pdf": text_pdf("bare", 1), "scan.pdf": scan_pdf(0, 1),
                   "mixed.pdf": mixed_pdf("cover letter zebracover", 1, 1)})
    env = cli_env(PDFINDEX_TESSDATA=str(empty))
    first = ingest(index, folder, env=env, timeout=INGEST_SECONDS)
    _no_traceback(first.stderr)
    assert first.returncode == 0, first.stdout + first.stderr
    summary = parse_summary(first.stdout)
    assert (summary.indexed + summary.empty, summary.failed) == (3, 0), first.stdout
    assert ocr_counts(first.stdout) == (0, 2), first.stdout
    failed = by_page(pages(index, "--problems", "ocr_failed", env=env))
    assert set(failed) == {("scan.pdf", 1), ("mixed.pdf", 2)}, failed
    for row in failed.values():
        assert row["needs_ocr"] and row["source"] == "text", row
        assert [p["code"] for p in row["problems"]] == ["ocr_failed"], row
    r = run_cli("list", "--problems", "ocr_failed", "--index", index, env=env)
    assert r.returncode == 0 and "scan.pdf" in r.stdout and "mixed.pdf" in r.stdout and "report.pdf" not in r.stdout
    assert _finds(index, "zebracover") == [("mixed.pdf", 1)] and _finds(index, page_word("bare", 1)) == [
        ("report.pdf", 1)]
    for row in failed.values():  # the page says what to install
        assert "install" in row["problems"][0]["message"], row

    second = ingest(index, folder, env=env, timeout=INGEST_SECONDS)
    assert second.returncode == 0 and parse_summary(second.stdout).unchanged == 3, second.stdout
    assert ocr_counts(second.stdout) is None, second.stdout  # not retried for ever
    assert set(by_page(pages(index, "--problems", "ocr_failed", env=env))) == set(failed)

    # Once the language data is there, --retry-failed sends those pages to OCR, and
    # extracts nothing else again.
    before = ingested(index)
    retried = ingest(index, folder, "--retry-failed", timeout=INGEST_SECONDS)
    assert parse_summary(retried.stdout).unchanged == 3, retried.stdout
    counts = ocr_counts(retried.stdout)
    assert counts is not None and counts[0] == 2, retried.stdout
    assert ingested(index)["report.pdf"] == before["report.pdf"]
    assert _finds(index, scan_word(0)) == [("scan.pdf", 1)] and _finds(index, scan_word(1)) == [("mixed.pdf", 2)]
    assert pages(index, "--problems", "ocr_failed") == []

    # One clear line of the first run said what to install (issue 22, "Set-up"), not one per page.
    said = [line for line in (first.stdout + first.stderr).splitlines()
            if re.search(r"tesseract|tessdata", line, re.I) and "install" in line.lower()]
    assert len(said) == 1, f"expected one line saying what to install, got {said}:\n{first.stdout}\n{first.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("limit", ["tesseract", "file"])
def test_embedded_ocr_time_limit_keeps_the_text_and_marks_the_scans(tmp_path: Path, limit: str) -> None:
    """PDFINDEX_OCR_PAGE_TIMEOUT=1 (its minimum), pages of dense text that take
    Tesseract more than that. ``tesseract``: Tesseract's own deadline stops each page.
    ``file``: with PDFINDEX_FILE_TIMEOUT=0.5 the OCR job's time limit (0.5 s + 1 s a
    page) stops the whole job first, and the file's text is written again. Either way:
    the file's text page is indexed, its scanned pages need OCR with ocr_failed, the run
    ends normally (exit 0) and a second run does not try them again."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    scans = 1 if limit == "tesseract" else 4
    build(folder, {"report.pdf": text_pdf("timely", 1), "dense.pdf": dense_pdf("cover note yakcover", scans)})
    settings = {"PDFINDEX_OCR_PAGE_TIMEOUT": "1"}
    if limit == "file":
        settings["PDFINDEX_FILE_TIMEOUT"] = "0.5"
    env = cli_env(**settings)
    started = time.monotonic()
    first = ingest(index, folder, env=env, timeout=INGEST_SECONDS)
    elapsed = time.monotonic() - started
    _no_traceback(first.stderr)
    assert first.returncode == 0, first.stdout + first.stderr
    summary = parse_summary(first.stdout)
    assert (summary.indexed, summary.failed) == (2, 0), first.stdout
    assert ocr_counts(first.stdout) == (0, scans), first.stdout
    rows = by_page(pages(index))
    assert rows["dense.pdf", 1]["source"] == "text" and not rows["dense.pdf", 1]["problems"]
    assert _finds(index, "yakcover") == [("dense.pdf", 1)]
    assert _finds(index, page_word("timely", 1)) == [("report.pdf", 1)]
    for page in range(2, scans + 2):
        row = rows["dense.pdf", page]
        assert row["needs_ocr"] and row["source"] == "text", row
        codes = [p["code"] for p in row["problems"]]
        assert codes == ["ocr_failed"], row
        message = row["problems"][0]["message"]
        if limit == "tesseract":
            assert "within 1 s" in message, message
        else:
            assert "OCR of the file failed" in message and "time limit" in message, message
    if limit == "file":
        assert f"not OCR'd:            {scans} page(s) (first: OCR of the file failed" in first.stdout, first.stdout
        assert elapsed < 120, f"the OCR job was not stopped by its limit ({elapsed:.0f} s)"
    assert waiting(index) == {"report.pdf": 0, "dense.pdf": 0}
    second = ingest(index, folder, env=env, timeout=INGEST_SECONDS)
    assert ocr_counts(second.stdout) is None and parse_summary(second.stdout).unchanged == 2, second.stdout


# ---- Celery: workers of their own for OCR ------------------------------------------------

#: The Celery workers' PDFINDEX_OCR_FILE_TIMEOUT: ample for a few pages, and short, for
#: the broker's visibility timeout follows it (workers/app.py: the longest limit + 60 s).
OCR_FILE_SECONDS = 30
VISIBILITY_SECONDS = OCR_FILE_SECONDS + 60


@pytest.fixture
def celery_cluster(broker: redis.Redis, tmp_path: Path) -> Iterator[Cluster]:
    """Workers reading under ``tmp_path/docs`` and writing ``tmp_path/index``; stopped
    after the test, every process of theirs checked gone."""
    (tmp_path / "docs").mkdir()
    cluster = Cluster(REDIS_URL, tmp_path, roots=str(tmp_path / "docs"), index_dir=str(tmp_path / "index"),
                      file_timeout="20", file_hard_timeout="30", ocr_file_timeout=str(OCR_FILE_SECONDS))
    yield cluster
    cluster.stop()


def _ocr_worker(cluster: Cluster, name: str) -> None:
    """`pdfindex worker --queues ocr`, one process, ready; stopped with the cluster."""
    worker = spawn_pdfindex_worker(name, "ocr", cluster.env, cluster.log_dir)
    cluster.workers[name] = worker
    wait_ready([worker])


def _ocr_lines(cluster: Cluster, name: str, doc_hash: str) -> list[str]:
    """The lines of worker ``name`` saying it OCRs ``doc_hash`` ("OCR of <hash> (attempt N)")."""
    return [line for line in cluster.workers[name].log_text().splitlines() if f"OCR of {doc_hash} (attempt" in line]


def _attacker() -> Celery:
    """A Celery client of the attacker's own: only the broker URL in common with us."""
    app = Celery("attacker", broker=REDIS_URL)
    app.conf.update(task_serializer="json", accept_content=["json"])
    return app


@pytest.mark.slow
def test_celery_ocr_queue_has_workers_of_its_own(celery_cluster: Cluster, broker: redis.Redis,
                                                  tmp_path: Path) -> None:
    """The extraction and writer worker alone: the ingest client returns with the
    scan's text pass written and its OCR queued (no OCR worker is running). Then a
    `pdfindex worker --queues ocr` starts, OCRs the scan, and its words become
    searchable; only that worker ran the OCR task."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    files = build(folder, {"report.pdf": text_pdf("queued", 2), "scan.pdf": scan_pdf(0, 2)})
    scan_hash = _sha(files["scan.pdf"])
    celery_cluster.start(("main", "extract,index", 1))
    run = ingest(index, folder, env=celery_cluster.env, timeout=INGEST_SECONDS)
    summary = parse_summary(run.stdout)
    assert (summary.indexed + summary.empty, summary.failed) == (2, 0), run.stdout
    assert queued_for_ocr(run.stdout) == 2, run.stdout
    assert ocr_counts(run.stdout) is None, run.stdout
    # returned without OCR: the text is in, the scan waits, its task sits in the ocr queue
    assert _finds(index, page_word("queued", 2)) == [("report.pdf", 2)]
    assert waiting(index) == {"report.pdf": 0, "scan.pdf": 2}
    assert _finds(index, scan_word(0)) == []
    status = wait_for(lambda: (s := status_json(index, celery_cluster.env))["queues"].get("ocr") == 1 and s, 60,
                      "the OCR task in the ocr queue", interval=0.2)
    assert status["queues"]["extract"] == 0

    _ocr_worker(celery_cluster, "ocr")
    wait_for(lambda: _finds(index, scan_word(1)) == [("scan.pdf", 2)], OCR_SECONDS, "the scan's words to be searchable",
             interval=0.2)
    assert _finds(index, scan_word(0)) == [("scan.pdf", 1)]
    wait_for(lambda: waiting(index) == {"report.pdf": 0, "scan.pdf": 0}, 60, "no page left waiting")
    rows = by_page(pages(index))
    assert rows["scan.pdf", 1]["source"] == "ocr" and rows["scan.pdf", 1]["ocr_confidence"] >= 80
    assert rows["report.pdf", 1]["source"] == "text"
    assert len(_ocr_lines(celery_cluster, "ocr", scan_hash)) == 1, celery_cluster.logs()
    assert len(celery_cluster.task_lines("ocr", "pdfindex.ocr", "succeeded")) == 1, celery_cluster.logs()
    assert celery_cluster.task_lines("main", "pdfindex.ocr", "received") == [], celery_cluster.logs()
    assert celery_cluster.task_lines("ocr", "pdfindex.extract", "received") == []
    assert PageIndex(index).check() == []

    # Unchanged and OCR'd: a second run extracts and queues nothing.
    again = ingest(index, folder, env=celery_cluster.env, timeout=INGEST_SECONDS)
    assert parse_summary(again.stdout).unchanged == 2 and queued_for_ocr(again.stdout) is None, again.stdout


@pytest.mark.slow
def test_celery_forged_ocr_messages_are_refused_and_nothing_is_read(celery_cluster: Cluster, broker: redis.Redis,
                                                                   tmp_path: Path) -> None:
    """Hand-made pdfindex.ocr messages on the ocr queue: one naming a file outside the
    workers' PDFINDEX_ROOTS, one with an argument too many, one without its run id.
    Each is refused with a log line and nothing is read; no record, no hand-off item."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    secret = write(tmp_path / "private" / "secret.pdf", scan_pdf(3, 1))
    inside = write(folder / "scan.pdf", scan_pdf(4, 1))
    _ocr_worker(celery_cluster, "ocr")
    attacker = _attacker()
    run = uuid.uuid4().hex
    attacker.send_task("pdfindex.ocr", args=[str(secret), _sha(secret), run], queue="ocr")
    attacker.send_task("pdfindex.ocr", args=[str(inside), _sha(inside), run, str(tmp_path / "elsewhere")], queue="ocr")
    attacker.send_task("pdfindex.ocr", args=[str(inside), _sha(inside)], queue="ocr")
    log = celery_cluster.workers["ocr"]
    wait_for(lambda: log.log_text().count("refused pdfindex.") >= 3, 90, "three refusals in the OCR worker's log",
             interval=0.2)
    time.sleep(1)  # anything read after the refusals would log by now
    text = log.log_text()
    assert text.count(f"for {str(secret)!r}: outside PDFINDEX_ROOTS") == 1, text[-3000:]
    assert "malformed message: unexpected arguments" in text, text[-3000:]
    assert "malformed message: missing run_id" in text, text[-3000:]
    assert "OCR of " not in text and "extracting" not in text, text[-3000:]  # nothing read
    assert "Traceback" not in text, text[-3000:]
    dump = b"".join(broker.dump(k) or b"" for k in broker.keys("*"))
    for word in (b"pelican", b"Pelican", b"walrus", b"Walrus"):
        assert word not in dump
    assert broker.llen("pdfindex:results") == 0 and broker.llen("pdfindex:writing") == 0
    assert not (index / "current").exists()  # no writer was asked to write anything
    assert log.proc.poll() is None  # still serving


def test_worker_on_an_unknown_ocr_queue_is_refused_in_one_line(broker: redis.Redis, tmp_path: Path) -> None:
    env = cli_env(PDFINDEX_BROKER_URL=REDIS_URL, PDFINDEX_ROOTS=str(tmp_path))
    r = subprocess.run(cli_argv("worker", "--queues", "ocrx"), cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown queue 'ocrx'" in lines[0] and "ocr" in lines[0], r.stderr
    assert r.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("target", ["pool process", "whole worker"])
def test_celery_killed_ocr_worker_the_file_is_ocrd_after_all(celery_cluster: Cluster, broker: redis.Redis,
                                                            tmp_path: Path, target: str) -> None:
    """SIGKILL mid-OCR. ``pool process``: the OCR worker's pool process; the worker
    requeues the task (acks_late, reject_on_worker_lost) and OCRs the file again.
    ``whole worker``: the worker and its pool; another `pdfindex worker --queues ocr`
    started once the broker's visibility timeout has passed gets the unacknowledged
    task (acks_late) and OCRs the file. Either way every page of the scan is OCR'd
    once in the index, the text stays, nothing waits."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    files = build(folder, {"report.pdf": text_pdf("survivor", 1), "scan.pdf": scan_pdf(0, 4)})
    scan_hash = _sha(files["scan.pdf"])
    celery_cluster.start(("main", "extract,index", 1))
    _ocr_worker(celery_cluster, "ocr")
    run = ingest(index, folder, env=celery_cluster.env, timeout=INGEST_SECONDS)
    assert queued_for_ocr(run.stdout) == 4, run.stdout
    wait_for(lambda: _ocr_lines(celery_cluster, "ocr", scan_hash), OCR_SECONDS, "the OCR of the scan to start",
             interval=0.05)
    seen = time.time()
    victim = celery_cluster.workers["ocr"]
    if target == "pool process":
        pid = int(_ocr_lines(celery_cluster, "ocr", scan_hash)[0].rsplit(" ", 1)[1])
        assert pid in victim.pool_children()
        os.kill(pid, signal.SIGKILL)
    else:
        os.killpg(victim.proc.pid, signal.SIGKILL)
        victim.proc.wait(30)
        wait_for(lambda: not group_alive(victim.proc.pid), 30, "the OCR worker's processes to end")
    assert waiting(index).get("scan.pdf") == 4, "the OCR ended before the kill"
    assert _finds(index, page_word("survivor", 1)) == [("report.pdf", 1)]
    redone = "ocr"
    if target == "whole worker":
        # Redis hands an unacknowledged message out again once it is older than the
        # visibility timeout (PDFINDEX_OCR_FILE_TIMEOUT + 60 s here); a worker starting
        # after that restores it at once.
        time.sleep(max(0.0, seen + VISIBILITY_SECONDS + 2 - time.time()))
        redone = "ocr2"
        _ocr_worker(celery_cluster, redone)
    wait_for(lambda: waiting(index).get("scan.pdf") == 0, OCR_SECONDS, "the scan's OCR to complete", interval=0.2)
    assert len(_ocr_lines(celery_cluster, redone, scan_hash)) == (2 if redone == "ocr" else 1), celery_cluster.logs()
    for n in range(4):
        assert _finds(index, scan_word(n)) == [("scan.pdf", n + 1)]
    rows = by_page(pages(index))
    assert [rows["scan.pdf", p]["source"] for p in range(1, 5)] == ["ocr"] * 4
    assert not any(row["needs_ocr"] or row["problems"] for row in rows.values()), rows
    assert _finds(index, page_word("survivor", 1)) == [("report.pdf", 1)]
    assert PageIndex(index).check() == []
    wait_for(lambda: status_json(index, celery_cluster.env)["queues"].get("ocr") == 0, 60, "an empty ocr queue")
    if target == "pool process":
        assert "exited with 'signal 9 (SIGKILL)'" in victim.log_text(), victim.log_text()[-3000:]
