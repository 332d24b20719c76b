"""Ingest without a server: extraction in a local process pool, index writes in
this process (the single writer).

The pool is billiard's, the one Celery's prefork workers use, for its per-task
soft and hard time limits: a file that runs too long gets SoftTimeLimitExceeded
(recorded as failed), one that ignores it is killed and its process replaced.
"""
from __future__ import annotations

import queue
from pathlib import Path

from billiard import Pool
from billiard.exceptions import TimeLimitExceeded, WorkerLostError

from config import Settings
from indexer import PageIndex, Status

from .limits import limit_memory
from .outcome import Outcome, extract_outcome, failed
from .plan import Job
from .progress import Progress, Summary


def _extract_job(path: str, doc_hash: str, passwords: list[str]) -> str:
    """Runs in a pool process; returns JSON, like the Celery task does."""
    return extract_outcome(Path(path), doc_hash, passwords).to_json()


def run_embedded(index: PageIndex, jobs: list[Job], passwords: list[str], settings: Settings,
                 summary: Summary, progress: Progress, workers: int) -> None:
    """Extract ``jobs`` with ``workers`` processes and write each outcome to the
    index, committing every ``settings.batch_pages`` pages. On Ctrl-C the pool is
    stopped, what arrived is committed, and ``summary.interrupted`` is set."""
    if not jobs:
        return
    results: queue.Queue[Outcome] = queue.Queue()

    def on_error(job: Job):  # type: ignore[no-untyped-def]
        def handle(error: BaseException) -> None:
            # billiard hands over ExceptionInfo(exception=ExceptionWithTraceback(exc=...)).
            exc = getattr(error, "exception", error)
            exc = getattr(exc, "exc", exc)
            if isinstance(exc, TimeLimitExceeded):
                reason = f"time limit of {settings.file_hard_timeout:g} s exceeded; extraction killed"
            elif isinstance(exc, WorkerLostError):
                reason = "the extraction process died (crash or memory exhaustion)"
            else:
                reason = f"extraction failed: {type(exc).__name__}: {exc}"
            results.put(failed(job.path, job.doc_hash, Status.FAILED, reason))
        return handle

    pool = Pool(
        processes=max(1, min(workers, len(jobs))), initializer=limit_memory, initargs=(settings.max_memory_mb,),
        soft_timeout=settings.file_timeout, timeout=settings.file_hard_timeout, maxtasksperchild=100,
        lost_worker_timeout=2.0,  # how soon a dead process's file is reported (and Ctrl-C returns)
    )
    try:
        for job in jobs:
            pool.apply_async(
                _extract_job, (str(job.path), job.doc_hash, passwords),
                callback=lambda data: results.put(Outcome.from_json(data)), error_callback=on_error(job),
            )
        with index.writer(batch_pages=settings.batch_pages) as writer:
            try:
                for _ in jobs:
                    outcome = results.get()
                    writer.add(outcome.doc, outcome.pages)
                    summary.record(outcome)
                    progress.advance()
            except KeyboardInterrupt:
                summary.interrupted = True  # leaving the block commits what arrived
    finally:
        pool.terminate()
        pool.join()
