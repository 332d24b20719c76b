"""Ingest without a server: extraction in a local process pool, each outcome handed
to the run's writer session in this process (the single writer; for a sharded
index, ``ParallelShardedWriter`` routes it to a process per shard).

The pool is billiard's, the one Celery's prefork workers use, for its per-task
soft and hard time limits: a file that runs too long gets SoftTimeLimitExceeded
(recorded as failed), one that ignores it is killed and its process replaced.

Ctrl-C stops at once: the pool processes ignore SIGINT (billiard's do; a terminal
sends it to the whole process group), this process logs "stopping...", commits what
arrived and ends the pool within about a second (``_stop_pool``); the next run skips
what was committed.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from billiard import Pool
from billiard.exceptions import TimeLimitExceeded, WorkerLostError

from pdfindex.config import Settings
from pdfindex.indexer import Status
from pdfindex.pipeline.ocr.options import OcrSettings

from .errors import OutsideRoots
from .limits import limit_memory, settle_process
from .ocr_phase import OcrPhase
from .outcome import Outcome, extract_outcome, failed, without_ocr
from .plan import Job
from .progress import Summary
from .session import Session

log = logging.getLogger(__name__)


def _extract_job(path: str, doc_hash: str, passwords: list[str], roots: list[str] | None,
                 ocr: OcrSettings, abandoned: str = "") -> str:
    """Runs in a pool process; returns JSON, like the Celery task does. ``abandoned``:
    the reason OCR of this file was given up, recorded on its pages instead."""
    allowed = None if roots is None else [Path(r) for r in roots]
    outcome = extract_outcome(Path(path), doc_hash, passwords, roots=allowed, ocr=ocr)
    return (without_ocr(outcome, abandoned) if abandoned else outcome).to_json()


def _start_process(max_memory_mb: int) -> None:
    """The pool's initializer."""
    settle_process()
    limit_memory(max_memory_mb)


def _failure_reason(error: Any, hard: float) -> str:
    # billiard hands over ExceptionInfo(exception=ExceptionWithTraceback(exc=...)).
    exc = getattr(error, "exception", error)
    exc = getattr(exc, "exc", exc)
    if isinstance(exc, TimeLimitExceeded):
        return f"time limit of {hard:g} s exceeded; extraction killed"
    if isinstance(exc, WorkerLostError):
        return "the extraction process died (crash or memory exhaustion)"
    if isinstance(exc, OutsideRoots):
        return str(exc)
    return f"extraction failed: {type(exc).__name__}: {str(exc)[:160]}"


def _outcome(job: Job, ok: bool, result: Any, hard: float) -> Outcome:
    if not ok:
        return failed(job.path, job.doc_hash, Status.FAILED, _failure_reason(result, hard))
    try:
        return Outcome.from_json(result)
    except ValueError as exc:
        return failed(job.path, job.doc_hash, Status.FAILED, f"the extraction process sent a bad result: {exc}")


def run_embedded(jobs: list[Job], passwords: list[str], settings: Settings, summary: Summary, workers: int,
                 session: Session, ocr_jobs: list[Job] | None = None) -> None:
    """Extract ``jobs`` with ``workers`` processes and write each outcome to the
    run's writer ``session`` as it arrives (committed every ``settings.batch_pages``
    pages, and what arrived before the pool is stopped). On Ctrl-C what arrived is
    committed, the pool stopped, and ``summary.interrupted`` set.

    OCR comes after (issue 22): a file is first extracted with its OCR deferred, so
    its text pages are written at once; its pages waiting for OCR go to the pool as
    an OCR job of their own (``ocr_phase.py``), behind the text jobs, with a time limit
    by their number; ``ocr_jobs`` are files an earlier run left waiting.

    The pool's callbacks only queue what they are given (a callback that raised
    would kill billiard's result thread and leave this loop waiting for ever), and
    the wait is bounded: when no file finishes for longer than one file may take,
    the files still out are recorded as failed instead of hanging the ingest."""
    ocr_jobs = ocr_jobs or []
    if not jobs and not ocr_jobs:
        return
    results: queue.Queue[tuple[int, bool, Any]] = queue.Queue()
    roots = [str(r) for r in settings.roots] if settings.roots else None
    processes = max(1, min(workers, len(jobs) + len(ocr_jobs)))
    log.debug("extracting %d files in %d processes", len(jobs), processes)
    pool = Pool(
        processes=processes, initializer=_start_process, initargs=(settings.max_memory_mb,),
        soft_timeout=settings.file_timeout, timeout=settings.file_hard_timeout, maxtasksperchild=100,
        lost_worker_timeout=2.0,  # how soon a dead process's file is reported (and Ctrl-C returns)
    )
    phase = OcrPhase(settings, summary)
    pending: dict[int, _Pending] = {}
    numbers = itertools.count()

    def submit(job: Job, ocr: OcrSettings, limit: float = 0.0, abandoned: str = "") -> None:
        number = next(numbers)
        hard = settings.file_hard_timeout + limit
        pending[number] = _Pending(job, ocr, hard)
        pool.apply_async(_extract_job, (str(job.path), job.doc_hash, passwords, roots, ocr, abandoned),
                         callback=partial(_put, results, number, True),
                         error_callback=partial(_put, results, number, False),
                         soft_timeout=settings.file_timeout + limit, timeout=hard)

    try:
        for job in jobs:
            submit(job, phase.deferred)
        for job in ocr_jobs:
            submit(job, phase.reading, phase.limit(job.pages))
            phase.queued(job.pages)
        session.open()  # while the pool's processes start
        try:
            while pending:
                for done, outcome in _arrived(results, pending):
                    _take(done, outcome, phase, session, submit)
                if pending and not any(p.ocr.defer or p.ocr.mode == "off" for p in pending.values()):
                    session.commit()  # only OCR passes left: the text is searchable, and each OCR'd file kept
        except KeyboardInterrupt:
            summary.interrupted = True
            log.warning("stopping... committing the %d files done; %d not done are left for the next run",
                        summary.files_done, len(pending))
        session.commit()
    finally:
        _stop_pool(pool)


@dataclass(frozen=True, slots=True)
class _Pending:
    job: Job
    ocr: OcrSettings
    #: Its hard time limit, seconds.
    hard: float


def _take(done: _Pending, outcome: Outcome, phase: OcrPhase, session: Session,
          submit: Callable[..., None]) -> None:
    """One outcome: a text pass is written and counted, and its pages waiting for OCR
    sent on; an OCR pass replaces the file's record, or, failed, gives way to the
    text again with the reason on its pages (``ocr_phase.py``)."""
    if not done.ocr.defer and done.ocr.mode != "off":  # an OCR pass
        retry = phase.read(outcome)
        if retry is None:
            session.write_again(outcome)
        else:
            submit(done.job, phase.off, 0.0, retry)
        return
    if done.ocr.mode == "off" and phase.is_abandoned(done.job):
        session.write_again(outcome)
        phase.summary.ocr_done(outcome)  # its waiting pages now carry why OCR failed
        return
    session.write(outcome)
    if outcome.doc.ocr_pending:
        submit(done.job, phase.reading, phase.limit(outcome.doc.ocr_pending), "")


def _arrived(results: queue.Queue[tuple[int, bool, Any]],
             pending: dict[int, _Pending]) -> list[tuple[_Pending, Outcome]]:
    """The next file's outcome, taken off ``pending``; or, when none came for longer
    than the longest job out may take, every pending file's, as failed."""
    patience = max(p.hard for p in pending.values()) + _SLACK
    try:
        number, ok, result = results.get(timeout=patience)
    except queue.Empty:
        outcomes = [(p, failed(p.job.path, p.job.doc_hash, Status.FAILED,
                               f"no result from the extraction pool within {patience:g} s"))
                    for p in pending.values()]
        pending.clear()
        return outcomes
    done = pending.pop(number)
    return [(done, _outcome(done.job, ok, result, done.hard))]


def _stop_pool(pool: Any) -> None:
    """End the pool within about a second, silently. billiard's ``terminate()``
    alone waits for the jobs still in its cache and then 5 s more (its result
    handler's ``finish_at_shutdown``); its supervisor logs each process it SIGTERMs
    as "exited with signal 15"; and a SIGTERMed process, having released its locks
    and said goodbye, sleeps a second before it exits.

    So its processes are first marked as terminated on purpose (not logged) and its
    result handler and supervisor told to stop; ``terminate()`` then SIGTERMs the
    processes in its own order, and whatever still lives ``_KILL_AFTER`` seconds
    later is SIGKILLed: by then it holds no lock this process waits for (SIGKILL
    first could kill one holding the task queue's lock, and ``terminate()`` would
    wait for it for ever). What bounds the stop is billiard's time-limit thread,
    which sleeps up to a second between checks. billiard internals, hence the
    getattr fallbacks: without them this is the slow stop, never a wrong one."""
    started = time.monotonic()
    processes = list(getattr(pool, "_pool", []))
    for proc in processes:
        proc._controlled_termination = True
    for thread in (getattr(pool, "_result_handler", None), getattr(pool, "_worker_handler", None)):
        if thread is not None:
            thread.terminate()
    killer = threading.Timer(_KILL_AFTER, _kill_living, (processes,))
    killer.daemon = True
    killer.start()
    try:
        pool.terminate()
        pool.join()
    finally:
        killer.cancel()
    log.debug("extraction pool stopped in %.2f s", time.monotonic() - started)


#: Seconds between the pool's SIGTERM and our SIGKILL of a process still alive.
_KILL_AFTER = 0.3


def _kill_living(processes: list[Any]) -> None:
    for proc in processes:
        if proc.exitcode is None and proc.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGKILL)


#: Seconds past the hard time limit before a silent pool counts as stuck: billiard
#: reports a killed or lost process within its lost_worker_timeout.
_SLACK = 30.0


def _put(results: queue.Queue[tuple[int, bool, Any]], number: int, ok: bool, result: Any) -> None:
    """A pool callback (``ok``) or error callback: only queues, so it cannot fail.
    billiard gives error callbacks an ExceptionInfo, not the exception."""
    results.put((number, ok, result))
