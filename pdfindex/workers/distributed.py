"""``pdfindex ingest`` with a broker: enqueue one task per file, follow the writer's
progress in Redis, and survive a Redis restart.

If Redis comes back empty (it keeps nothing on disk here), the queued tasks and the
progress records are gone; the client notices its run marker is missing and
enqueues again every file the index does not hold yet. Writes are idempotent, so a
file done twice is still indexed once.

Ctrl-C stops the waiting at once (the poll sleeps half a second), not the work: the
queued files are still extracted and indexed by the workers, and a run of the same
command later skips them.
"""
from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from pathlib import Path
from typing import Any

import redis

from pdfindex.config import Settings
from pdfindex.indexer import PageIndex, Status

from .handoff import DELAYED, waiting
from .lanes import WRITER_ERROR, lanes
from .run_progress import RUN_SECONDS, alive_key, attempts_key, run_key, wake_key
from .tasks import extract, kick, send_ocr
from .transport import broker_errors, client
from .files import check_roots
from .plan import Job
from .progress import Progress, Summary, brief_of_record

log = logging.getLogger(__name__)

#: The client looks at the run's progress when woken (run_progress.wake_key), and at least this often.
_POLL = 0.5
#: ... but not more often than this, however many wake-ups come.
_MIN_POLL = 0.05
_QUIET_WARNING = 60.0
#: Without progress for this long while hand-off items wait, the client kicks the
#: writer itself: the one pending kick may have been lost with a writer that died
#: holding it (its message comes back only after the broker's visibility timeout).
_REKICK = 30.0


PASSWORD_FILE_NOTE = ("note: in distributed mode the extraction workers try the passwords of their own "
                      "PDFINDEX_PASSWORD_FILE; --password-file only makes this run retry encrypted files "
                      "(passwords are never sent through the broker)")


def run_distributed(index: PageIndex, jobs: list[Job], password_file: Path | None, settings: Settings,
                    summary: Summary, progress: Progress, ocr_jobs: list[Job] | None = None) -> None:
    """Enqueue ``jobs`` and follow them to the end. Raises BrokerError (one line, the
    broker URL without its password) when the broker cannot be reached or refuses us,
    IngestError/OutsideRoots when a file lies outside PDFINDEX_ROOTS. OCR is not
    waited for: its workers (queue "ocr") read the pages waiting for it, ``ocr_jobs``'
    among them, after the run, and each file's pages become searchable as they do."""
    ocr_jobs = ocr_jobs or []
    check_roots((job.path for job in [*jobs, *ocr_jobs]), settings.roots)
    if password_file is not None:
        log.warning(PASSWORD_FILE_NOTE)
    summary.ocr_in_background = True
    with broker_errors(settings):
        follow = _Follow(index, jobs, settings, summary, progress)
        for job in ocr_jobs:
            send_ocr(str(job.path), job.doc_hash, follow.run_id)
            summary.ocr_queued += job.pages
        follow.follow()


def _warn_quiet(r: redis.Redis) -> None:
    """After a minute without progress: the writer's own complaint when it has one
    (a full disk, say), with a kick for it to try again; else the likely cause."""
    with contextlib.suppress(redis.RedisError):
        trouble = r.get(WRITER_ERROR)
        if trouble:
            text = trouble.decode("utf-8", "replace") if isinstance(trouble, bytes) else str(trouble)
            log.warning("no progress for a minute; the index writer reports: %a; "
                        "the files wait in the queue and the writer is asked to try again", text)
            _rekick(r)
            return
    log.warning("no progress for a minute; is a worker running for the extract and index queues "
                "(`pdfindex worker`)?")


def _rekick(r: redis.Redis) -> None:
    """Kick the writer of every lane where hand-off items wait (see _REKICK)."""
    with contextlib.suppress(redis.RedisError):
        for lane in waiting(r):
            kick(r, lane, force=True)


def _write_now(r: redis.Redis, remaining: int, shards: int) -> bool:
    """When every file this run still waits for is in the hand-off lists (they may
    hold other runs' items too: then this only comes early), ask the writers to
    commit without their quiet second (lanes.WRITE_NOW, in every lane: items routed
    to a shard's lane find it there). Returns whether it asked."""
    try:
        waiting_now = waiting(r)
        if sum(waiting_now.values()) < remaining:
            return False
        for lane in lanes(shards):
            r.set(lane.write_now, b"1", ex=60)
        # A kick sent by a hand-off runs soon and sees the flag; the writer's own
        # delayed kick would come a second later: kick now then.
        for lane in waiting_now:
            kick(r, lane, force=r.get(lane.kick) == DELAYED)
    except redis.RedisError:
        return False
    return True


class _Follow:
    """One distributed run as its client follows it: the files enqueued, the ones
    reported finished (each counted once), and when it last saw progress or kicked
    the writers."""

    def __init__(self, index: PageIndex, jobs: list[Job], settings: Settings, summary: Summary,
                 progress: Progress) -> None:
        self.index, self.jobs, self.summary, self.progress = index, jobs, summary, progress
        self.run_id = uuid.uuid4().hex
        self.r = client(settings)
        self.r.ping()
        self.by_hash = {job.doc_hash: job for job in jobs}
        self.done: set[str] = set()
        self.last_progress = self.last_kick = time.monotonic()
        self.asked_at = -1  # files done when the writer was last asked to commit at once

    def follow(self) -> None:
        """Enqueue every file, then count them as the writer reports them, until all
        are in or Ctrl-C."""
        self._enqueue(self.jobs)
        try:
            while len(self.done) < len(self.by_hash):
                try:
                    finished = self._finished()
                except redis.AuthenticationError:
                    raise
                except redis.ConnectionError:
                    time.sleep(2)  # wait for Redis to come back; workers reconnect by themselves
                    continue
                self._count(finished)
                self._nudge()
                _wait(self.r, wake_key(self.run_id))
        except KeyboardInterrupt:
            self.summary.interrupted = True  # queued tasks stay queued; workers finish them
            log.warning("stopping... no longer waiting; the %d files not reported yet stay queued and the workers "
                        "still extract and index them (`pdfindex status` shows the queues)",
                        len(self.by_hash) - len(self.done))
        finally:
            with contextlib.suppress(redis.RedisError):
                self.r.delete(run_key(self.run_id), alive_key(self.run_id), attempts_key(self.run_id),
                              wake_key(self.run_id))

    def _enqueue(self, selected: list[Job]) -> None:
        self.r.set(alive_key(self.run_id), "1", ex=RUN_SECONDS)
        for job in selected:
            extract.apply_async(args=[str(job.path), job.doc_hash, self.run_id])
        log.debug("enqueued %d files for run %s", len(selected), self.run_id)

    def _finished(self) -> dict[Any, Any]:
        """The files reported finished since the last look (taken off the run's
        record: a poll costs what arrived), after starting over if Redis lost its data."""
        if not self.r.exists(alive_key(self.run_id)):
            self._start_over()
        finished = self.r.hgetall(run_key(self.run_id))
        if finished:
            self.r.hdel(run_key(self.run_id), *finished)
        return finished

    def _start_over(self) -> None:
        """Redis lost its data (a restart): the files committed before it are
        counted from the index, the others enqueued again."""
        log.warning("the broker lost its queue (restart?); re-enqueueing unfinished files")
        missing = []
        for doc_hash, job in self.by_hash.items():
            if doc_hash in self.done:
                continue
            record = self.index.document(doc_hash)
            if record is None:
                missing.append(job)
            else:  # committed before the restart; its progress entry was lost
                self._done(doc_hash, brief_of_record(record))
        self._enqueue(missing)

    def _count(self, finished: dict[Any, Any]) -> None:
        for raw_hash, raw_info in finished.items():
            doc_hash = raw_hash.decode() if isinstance(raw_hash, bytes) else raw_hash
            info = _brief(raw_info) if doc_hash in self.by_hash and doc_hash not in self.done else None
            if info is not None:
                self._done(doc_hash, info)
                self.last_progress = time.monotonic()

    def _done(self, doc_hash: str, info: dict[str, Any]) -> None:
        self.done.add(doc_hash)
        self.summary.add(info)
        self.progress.advance()

    def _nudge(self) -> None:
        """Ask the writers to commit at once when all the run waits for is handed
        off; after a quiet spell, warn or kick them again."""
        remaining = len(self.by_hash) - len(self.done)
        if remaining and self.asked_at != len(self.done) and _write_now(self.r, remaining, self.index.shards):
            self.asked_at = len(self.done)
        now = time.monotonic()
        if now - self.last_progress > _QUIET_WARNING:
            _warn_quiet(self.r)
            self.last_progress = self.last_kick = now
        elif now - max(self.last_progress, self.last_kick) > _REKICK:
            _rekick(self.r)
            self.last_kick = now


def _wait(r: redis.Redis, wake: str) -> None:
    """Until a file of the run is handed off or finished, or _POLL seconds."""
    started = time.monotonic()
    try:
        r.blpop([wake], timeout=_POLL)
    except redis.RedisError:
        time.sleep(_POLL)  # the next look at the broker tells what is wrong
    time.sleep(max(0.0, _MIN_POLL - (time.monotonic() - started)))


_BRIEF_TYPES: dict[str, tuple[type, ...]] = {"status": (str,), "path": (str,), "error": (str,), "pages": (int,),
                                             "needs_ocr": (int,), "coverages": (list,), "ocr_pending": (int,)}


def _brief(raw: bytes | str) -> dict[str, Any] | None:
    """A progress entry from Redis, checked (anyone who can reach Redis can write
    one): a malformed entry is ignored, it must not crash the client."""
    try:
        info = json.loads(raw)
        ok = (isinstance(info, dict) and set(info) == set(_BRIEF_TYPES)
              and all(isinstance(info[k], t) for k, t in _BRIEF_TYPES.items())
              and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in info["coverages"]))
        if ok:
            Status(info["status"])
    except (ValueError, RecursionError):
        ok = False
    if not ok:
        log.warning("ignored a malformed progress entry in the broker: %a", str(raw)[:100])
        return None
    return dict(info)
