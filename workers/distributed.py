"""``pdfindex ingest`` with a broker: enqueue one task per file, follow the writer's
progress in Redis, and survive a Redis restart.

If Redis comes back empty (it keeps nothing on disk here), the queued tasks and the
progress records are gone; the client notices its run marker is missing and
enqueues again every file the index does not hold yet. Writes are idempotent, so a
file done twice is still indexed once.
"""
from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

import redis

from config import Settings
from indexer import PageIndex

from . import queue
from .plan import Job
from .progress import Progress, Summary, brief_of_record
import contextlib

_POLL = 0.5
_QUIET_WARNING = 60.0


def run_distributed(index: PageIndex, jobs: list[Job], password_file: Path | None, settings: Settings,
                    summary: Summary, progress: Progress) -> None:
    from .tasks import extract  # noqa: PLC0415 - the Celery app only when a broker is used

    run_id = uuid.uuid4().hex
    marker = f"{queue.run_key(run_id)}:alive"
    r = queue.client(settings)
    by_hash = {job.doc_hash: job for job in jobs}

    def enqueue(selected: list[Job]) -> None:
        r.set(marker, "1", ex=7 * 24 * 3600)
        for job in selected:
            extract.apply_async(args=[str(job.path), job.doc_hash, run_id, str(index.root),
                                      str(password_file.absolute()) if password_file else None])

    enqueue(jobs)
    done: set[str] = set()
    last_progress = time.monotonic()
    try:
        while len(done) < len(by_hash):
            try:
                if not r.exists(marker):  # Redis lost its data: start over for what is missing
                    print("pdfindex: the broker lost its queue (restart?); re-enqueueing unfinished files",
                          file=sys.stderr)
                    missing = []
                    for doc_hash, job in by_hash.items():
                        if doc_hash in done:
                            continue
                        record = index.document(doc_hash)
                        if record is None:
                            missing.append(job)
                        else:  # committed before the restart; its progress entry was lost
                            done.add(doc_hash)
                            summary.add(brief_of_record(record))
                            progress.advance()
                    enqueue(missing)
                finished = r.hgetall(queue.run_key(run_id))
            except redis.ConnectionError:
                time.sleep(2)  # wait for Redis to come back; workers reconnect by themselves
                continue
            for raw_hash, raw_info in finished.items():
                doc_hash = raw_hash.decode() if isinstance(raw_hash, bytes) else raw_hash
                if doc_hash in by_hash and doc_hash not in done:
                    done.add(doc_hash)
                    summary.add(json.loads(raw_info))
                    progress.advance()
                    last_progress = time.monotonic()
            if time.monotonic() - last_progress > _QUIET_WARNING:
                print("pdfindex: no progress for a minute; is a worker running for the extract and index queues "
                      "(`pdfindex worker`)?", file=sys.stderr)
                last_progress = time.monotonic()
            time.sleep(_POLL)
    except KeyboardInterrupt:
        summary.interrupted = True  # queued tasks stay queued; workers finish them
    finally:
        with contextlib.suppress(redis.ConnectionError):
            r.delete(queue.run_key(run_id), marker, queue.attempts_key(run_id))
