"""Celery tasks: thin wrappers with JSON arguments over plain functions.

``pdfindex.extract`` (queue "extract", any number of workers): extract one file and
hand the outcome to the writer. ``pdfindex.write`` (queue "index", ONE worker with
one process): commit handed-off outcomes to the index in batches.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import redis
from celery import Task

from indexer import IndexBusy, PageIndex, Status

from . import queue
from .app import app, settings
from .files import read_passwords
from .outcome import Outcome, extract_outcome, failed
from .progress import brief


class ExtractTask(Task):
    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                   einfo: Any) -> None:
        """Runs after the hard time limit killed the extraction (and on any other
        unexpected failure): the file is recorded as failed, not lost."""
        if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
            return  # the broker's trouble, not the file's: a restarted ingest re-enqueues it
        path, doc_hash, run_id, index_dir = args[0], args[1], args[2], args[3]
        reason = (f"time limit of {settings.file_hard_timeout:g} s exceeded; extraction killed"
                  if type(exc).__name__ == "TimeLimitExceeded" else f"extraction failed: {type(exc).__name__}: {exc}")
        r = queue.client(settings)
        outcome = failed(Path(path), doc_hash, Status.FAILED, reason)
        queue.push_result(r, run_id, index_dir, outcome.to_json(), 0)
        write.delay()


@app.task(name="pdfindex.extract", base=ExtractTask)
def extract(path: str, doc_hash: str, run_id: str, index_dir: str, password_file: str | None = None) -> None:
    r = queue.client(settings)
    attempts = queue.retrying(lambda: queue.count_attempt(r, run_id, doc_hash))
    if attempts > settings.max_attempts:
        outcome = failed(Path(path), doc_hash, Status.FAILED,
                         f"gave up after {attempts - 1} attempts: the file stopped its worker each time", attempts)
    else:
        passwords = read_passwords(Path(password_file)) if password_file else []
        outcome = extract_outcome(Path(path), doc_hash, passwords, attempts)
    queue.retrying(lambda: queue.push_result(r, run_id, index_dir, outcome.to_json(), len(outcome.pages)))
    write.delay()


def write_batch(index_dir: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Commit one batch of outcomes to one index (one commit)."""
    index = PageIndex(Path(index_dir), settings.language)
    briefs = []
    with index.writer(batch_pages=10**9) as writer:
        for item in items:
            outcome = Outcome.from_json(item["outcome"])
            writer.add(outcome.doc, outcome.pages)
            briefs.append({**brief(outcome), "doc_hash": outcome.doc.doc_hash})
    return briefs


@app.task(name="pdfindex.write", bind=True, max_retries=None)
def write(self: Task) -> None:
    try:
        queue.drain(queue.client(settings), settings.batch_pages, write_batch)
    except (IndexBusy, queue.WriterBusy) as exc:
        # Try again soon: a dead writer's lock expires, a busy index frees up.
        raise self.retry(exc=exc, countdown=2) from None
