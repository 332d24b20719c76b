"""Celery tasks: thin wrappers with JSON arguments over plain functions.

``pdfindex.extract(path, doc_hash, run_id)`` (queue "extract", any number of
workers): extract one file under the worker's PDFINDEX_ROOTS and hand the outcome to
the writer; pages chosen for OCR wait, and ``pdfindex.ocr`` (same arguments, queue
"ocr") reads them and hands the file's outcome over again. ``pdfindex.write()``
(queue "index"): commit handed-off outcomes to the writer's own PDFINDEX_INDEX_DIR
in batches, every shard from one worker of one process; or, where each shard has a
writer of its own (``pdfindex worker --queues index.K``, on any hosts sharing the
index's filesystem), route them to their shard's lane, whose writer
``pdfindex.write(K)`` (queue "index.K") commits them.

A message is input from whoever can reach the broker: it is parsed and checked
(``messages.parse_extract``) and refused with a log line when malformed or outside the
roots, before anything is read. The index directory, password file and limits come
from this worker's settings only.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from pathlib import Path
from typing import Any

import redis
from celery import Task
from celery.utils.log import get_task_logger

from pdfindex import config
from pdfindex.indexer import IndexBusy, PageIndex, Status, StorageError, shard_of
from pdfindex.pipeline.ocr.options import OcrSettings

from . import identity
from .app import app, is_dedicated_writer, settings, signer, writer_shards
from .drain import Brief, Defer, Drain, Home, SendKick, Sink, Validated, route
from .errors import OutsideRoots
from .files import check_under_roots, read_passwords
from .handoff import DELAYED, push_result
from .handoff import kick as kick_lane
from .lanes import COMMON, WRITER_ERROR, Lane
from .limits import memory_cap
from .messages import (
    MAX_ITEM_BYTES,
    BadMessage,
    ExtractJob,
    HandOff,
    Item,
    Release,
    encode,
    handoff_item,
    parse_extract,
    release_item,
)
from .outcome import Outcome, extract_outcome, failed, without_ocr
from .progress import brief
from .run_progress import attempts_key, count_attempt, record_done
from .staging import Staging
from .transport import client, describe, retrying
from .writer_lock import LockLost, WriterBusy

log = get_task_logger(__name__)

_SIGNER = signer()
_SIGN = _SIGNER[0] if _SIGNER else None
_VERIFY = _SIGNER[1] if _SIGNER else None
#: Retries of the pending write kick while another writer holds the lock or the index
#: is busy (2 s apart). There is one pending kick at a time, not one per file; one that
#: gives up clears the pending-kick key, so the next hand-off (or a waiting client) kicks anew.
WRITE_RETRIES = 30
#: The longest part of a path (in characters) a worker's log line shows.
SHOWN_PATH = 300


def _parse(task_id: str | None, args: Any, kwargs: Any, task: str = "pdfindex.extract") -> ExtractJob | None:
    try:
        return parse_extract(args, kwargs)
    except BadMessage as exc:
        log.error("pdfindex: refused %s[%s]: malformed message: %s", task, task_id, exc)
        return None


def _inside_roots(task_id: str | None, job: ExtractJob, task: str = "pdfindex.extract") -> bool:
    try:
        check_under_roots(Path(job.path), settings.roots)
    except OutsideRoots:
        log.error("pdfindex: refused %s[%s] for %r: outside PDFINDEX_ROOTS (%s); not read",
                  task, task_id, job.path[:300], os.pathsep.join(map(str, settings.roots)))
        return False
    return True


def _report_refused(job: ExtractJob) -> None:
    """A refused file is not recorded in the index, but a real ingest run waiting for
    it is told (else it would wait for good)."""
    info = {"status": "failed", "path": job.path, "error": "outside the workers' PDFINDEX_ROOTS; not read",
            "pages": 0, "needs_ocr": 0, "coverages": [],
            "ocr_pending": 0}
    try:
        record_done(client(settings), [(job.run_id, job.doc_hash, info)])
    except redis.RedisError as exc:
        log.warning("pdfindex: could not report the refused file to its run: %s", describe(exc))


def _hand_off(r: redis.Redis, job: ExtractJob, outcome: Outcome) -> None:
    data = outcome.to_json()
    if len(data) > MAX_ITEM_BYTES - 4096:
        outcome = failed(Path(job.path), outcome.doc.doc_hash, Status.FAILED,
                         f"extracted text of {len(data)} bytes is too large to hand to the index writer",
                         outcome.doc.attempts)
        data = outcome.to_json()
    item = handoff_item(job.run_id, job.doc_hash, data, len(outcome.pages))
    retrying(lambda: push_result(r, job.run_id, encode(item, _SIGN)))
    log.info("pdfindex: %s %r (%d pages) handed to the index writer", outcome.doc.status, job.path[:SHOWN_PATH],
             len(outcome.pages))
    retrying(lambda: kick(r, COMMON))  # after the push: see handoff.kick


def send_write(lane: Lane, countdown: float | None = None) -> None:
    """Send the write task of ``lane``'s writer to its queue."""
    write.apply_async(args=[] if lane.shard is None else [lane.shard], queue=lane.queue, countdown=countdown)


def kick(r: redis.Redis, lane: Lane, *, force: bool = False) -> bool:
    """Kick ``lane``'s writer unless a kick is pending (handoff.kick)."""
    return kick_lane(r, lambda: send_write(lane), force=force, lane=lane)


class ExtractTask(Task):
    def shadow_name(self, args: Any, kwargs: Any, options: Any) -> str | None:
        """The name Celery's worker logs show for the task (``Task pdfindex.extract
        '/docs/a.pdf'[<id>] succeeded in 0.06s``), set by the client when it sends
        the message: the file's path, repr-escaped so that a newline or a terminal
        escape in a name cannot forge or hide lines of the worker's log."""
        path = args[0] if isinstance(args, (list, tuple)) and args and isinstance(args[0], str) else None
        return None if path is None else f"{self.name} {path[:SHOWN_PATH]!r}"

    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                   einfo: Any) -> None:
        """Runs after the hard time limit killed the extraction (Celery >= 5.7) and on
        any other unexpected failure: the file is recorded as failed, not lost, with
        the deliveries counted so far."""
        if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
            return  # the broker's trouble, not the file's: a restarted ingest re-enqueues it
        job = _parse(task_id, args, kwargs)
        if job is None or not _inside_roots(task_id, job):
            return
        reason = (f"time limit of {settings.file_hard_timeout:g} s exceeded; extraction killed"
                  if type(exc).__name__ == "TimeLimitExceeded" else f"extraction failed: {type(exc).__name__}: {exc}")
        r = client(settings)
        try:
            attempts = int(r.hget(attempts_key(job.run_id), job.doc_hash) or 1)
        except redis.RedisError:
            attempts = 1
        _hand_off(r, job, failed(Path(job.path), job.doc_hash, Status.FAILED, reason[:300], attempts))


def _passwords() -> list[str]:
    """The worker's own password file, read for each file (so it can be updated
    without a restart); unreadable: no passwords, and a warning."""
    try:
        return read_passwords(settings.password_file)
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("pdfindex: cannot read PDFINDEX_PASSWORD_FILE=%s: %s", settings.password_file, exc)
        return []


#: Soft and hard limits on extraction only (the writer has none). Equal limits mean a
#: hard kill only: a soft limit at the same instant would race it.
_SOFT_LIMIT = settings.file_timeout if settings.file_hard_timeout > settings.file_timeout else None


@app.task(name="pdfindex.extract", base=ExtractTask, bind=True, typing=False,
          soft_time_limit=_SOFT_LIMIT, time_limit=settings.file_hard_timeout)
def extract(self: Task, *args: Any, **kwargs: Any) -> None:
    job = _parse(self.request.id, args, kwargs)
    if job is None:
        return
    if not _inside_roots(self.request.id, job):
        _report_refused(job)
        return
    r = client(settings)
    attempts = retrying(lambda: count_attempt(r, job.run_id, job.doc_hash))
    # The path first: tests and operators find "extracting <hash> (attempt N) in process <pid>".
    log.info("pdfindex: %r: extracting %s (attempt %d) in process %d", job.path[:SHOWN_PATH], job.doc_hash,
             attempts, os.getpid())
    if attempts > settings.max_attempts:
        outcome = failed(Path(job.path), job.doc_hash, Status.FAILED,
                         f"gave up after {attempts - 1} attempts: the file stopped its worker each time", attempts)
    else:
        passwords = _passwords()
        try:
            with memory_cap(settings.max_memory_mb):
                outcome = extract_outcome(Path(job.path), job.doc_hash, passwords, attempts, roots=settings.roots,
                                          ocr=_DEFERRED)
        except OutsideRoots:  # its real path changed between the check and the read
            log.error("pdfindex: refused %r: it left PDFINDEX_ROOTS while being opened; not read", job.path[:300])
            _report_refused(job)
            return
    _hand_off(r, job, outcome)
    if outcome.doc.ocr_pending:
        send_ocr(job.path, job.doc_hash, job.run_id)


#: Extraction decides which pages OCR reads and leaves them to the ocr queue.
_DEFERRED = OcrSettings.text_pass(settings)


_OCR = "pdfindex.ocr"
#: The "run" OCR attempts are counted under (run_progress.attempts_key).
OCR_ATTEMPTS = "ocr"


def send_ocr(path: str, doc_hash: str, run_id: str) -> None:
    """Queue the OCR pass of a file whose pages wait for it (queue "ocr")."""
    ocr.apply_async(args=[path, doc_hash, run_id])


class OcrTask(ExtractTask):
    def on_failure(self, exc: BaseException, task_id: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                   einfo: Any) -> None:
        """OCR killed by its time limit, or failed otherwise: the file's text is handed
        off again without OCR, the reason on its waiting pages (never a failure record:
        the text pages must not be lost to a scan OCR could not read)."""
        if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
            return
        job = _parse(task_id, args, kwargs, _OCR)
        if job is None or not _inside_roots(task_id, job, _OCR):
            return
        reason = (f"OCR time limit of {settings.ocr_file_timeout:g} s exceeded"
                  if type(exc).__name__ == "TimeLimitExceeded" else f"OCR failed: {type(exc).__name__}: {exc}")
        _hand_off(client(settings), job, _text_alone(job, reason))


def _text_alone(job: ExtractJob, reason: str) -> Outcome:
    with memory_cap(settings.max_memory_mb):
        outcome = extract_outcome(Path(job.path), job.doc_hash, _passwords(), roots=settings.roots,
                                  ocr=OcrSettings("off"))
    return without_ocr(outcome, reason[:300])


@app.task(name="pdfindex.ocr", base=OcrTask, bind=True, typing=False,
          soft_time_limit=settings.ocr_file_timeout, time_limit=settings.ocr_file_timeout + 30)
def ocr(self: Task, *args: Any, **kwargs: Any) -> None:
    """The OCR pass of one file (ocr queue): the same message and trust rules as
    ``extract``; its outcome replaces the file's record through the same hand-off."""
    job = _parse(self.request.id, args, kwargs, _OCR)
    if job is None:
        return
    if not _inside_roots(self.request.id, job, _OCR):
        _report_refused(job)
        return
    r = client(settings)
    # counted apart from any run: the client that queued it may be gone (and its
    # run's record with it) while the OCR is redelivered
    attempts = retrying(lambda: count_attempt(r, OCR_ATTEMPTS, job.doc_hash))
    log.info("pdfindex: %r: OCR of %s (attempt %d) in process %d", job.path[:SHOWN_PATH], job.doc_hash,
             attempts, os.getpid())
    try:
        if attempts > settings.max_attempts:
            outcome = _text_alone(job, f"OCR given up after {attempts - 1} attempts: it stopped its worker each time")
        else:
            with memory_cap(settings.max_memory_mb):
                outcome = extract_outcome(Path(job.path), job.doc_hash, _passwords(), attempts, roots=settings.roots,
                                          ocr=_READING)
            if outcome.doc.status in (Status.FAILED, Status.ENCRYPTED):
                outcome = _text_alone(job, f"OCR of the file failed: {outcome.doc.error}")
    except OutsideRoots:
        log.error("pdfindex: refused %r: it left PDFINDEX_ROOTS while being opened; not read", job.path[:300])
        _report_refused(job)
        return
    _hand_off(r, job, outcome)


_READING = OcrSettings.from_settings(settings)


def write_batch(index: PageIndex, staging: Staging, batch: list[Item], ensure: Callable[[], None]) -> list[Brief]:
    """Commit one batch of validated outcomes (one commit) to every shard, continuing
    the writer that indexed its first items while it waited (``staging``), if any;
    ``ensure()`` right before the commit stops a writer that lost its lock."""
    staged, done = staging.take(batch)
    with staged or index.writer(batch_pages=10**9, processes=True) as writer:
        for item in batch[done:]:
            if isinstance(item, HandOff):
                writer.add(item.outcome.doc, item.outcome.pages)
            else:  # only a shard writer sends these, to shard lanes; this writer releases paths itself
                log.warning("pdfindex writer: ignored a release of %r in the common lane", item.path[:SHOWN_PATH])
        ensure()
    return _briefs(batch, writer.rejected)


def write_shard_batch(index: PageIndex, shard: int, r: redis.Redis, send_kick: SendKick, staging: Staging,
                      batch: list[Item], ensure: Callable[[], None]) -> list[Brief]:
    """Commit one batch of shard ``shard``'s lane to that shard alone, then tell the
    writers of other shards which paths its documents took from theirs (a changed
    file's new version can live in another shard than the old one): a release item
    each, pushed before the batch leaves the lane, so a writer killed in between
    commits and tells again. A release received is acted on only if the index shows
    its owner holding the path."""
    shards = index.shards
    staged, done = staging.take(batch)
    with staged or index.shard_writer(shard, batch_pages=10**9) as writer:
        for item in batch[done:]:
            if isinstance(item, HandOff):
                writer.add(item.outcome.doc, item.outcome.pages)
            elif shard_of(item.owner, shards) != shard and item.owner in index.holders([item.path])[item.path]:
                writer.release(item.path)
        ensure()
    docs = [item.outcome.doc for item in batch if isinstance(item, HandOff)]
    held = index.holders(doc.path for doc in docs)
    releases: dict[int, list[bytes]] = {}
    for doc in docs:
        for holder in held[doc.path] - {doc.doc_hash}:
            other = shard_of(holder, shards)
            if other != shard:
                releases.setdefault(other, []).append(encode(release_item(doc.path, doc.doc_hash), _SIGN))
    for other, items in releases.items():
        r.rpush(Lane(other).results, *items)
        send_kick(Lane(other))
    return _briefs(batch, writer.rejected)


def _briefs(batch: list[Item], rejected_records: list[Any]) -> list[Brief]:
    """What each hand-off's run is told: its outcome, or the failure record the
    writer wrote in its place."""
    handoffs = [item for item in batch if isinstance(item, HandOff)]
    briefs = [brief(handoff.outcome) for handoff in handoffs]
    rejected = {record.doc_hash: record for record in rejected_records}
    for info, handoff in zip(briefs, handoffs, strict=True):
        record = rejected.get(handoff.outcome.doc.doc_hash)
        if record is not None:  # written as a failure record in its place
            info.update(status=str(Status.FAILED), error=record.error, pages=0, needs_ocr=0, coverages=[],
                        ocr_pending=0)
    return briefs


def _defer(r: redis.Redis, lane: Lane) -> Defer:
    """The writer's batch waits for more files: one kick, ``seconds`` from now (none
    if a hand-off has sent one meanwhile)."""
    def defer(seconds: float) -> None:
        kick_lane(r, lambda: send_write(lane, countdown=seconds), value=DELAYED, lane=lane)

    return defer


def _lane_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Lane | None:
    """The lane a write message names: nothing (the common lane) or a shard number.
    Anything else is refused with a log line."""
    if not args and not kwargs:
        return COMMON
    shard = args[0] if len(args) == 1 and not kwargs else None
    if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < config.MAX_SHARDS:
        log.error("pdfindex: refused pdfindex.write%a: malformed message (a shard number, 0-%d, or nothing)",
                  tuple(str(a)[:40] for a in args[:3]) + tuple(str(k)[:40] for k in list(kwargs)[:3]),
                  config.MAX_SHARDS - 1)
        return None
    return Lane(shard)


def _home(shards: int, shard: int) -> Home:
    """Where an item of shard ``shard``'s lane belongs, in an index of ``shards``
    shards: a hand-off, in the lane of its document's shard; a release, here (in the
    common lane, which ignores it, if the index no longer has this shard). The
    common lane once the index has one shard."""
    def home(item: Item) -> Lane:
        if isinstance(item, Release):
            return Lane(shard) if shard < shards else COMMON
        return Lane(shard_of(item.outcome.doc.doc_hash, shards)) if shards > 1 else COMMON

    return home


class WriteTask(Task):
    """``pdfindex.write``'s class. Celery makes one instance of a task per process,
    so this is where a writer process keeps what it carries from one kick to the
    next: the waiting batch's items validated already (``drain.Validated``) and, in
    a dedicated writer, the batch indexed ahead of its commit (``staging.Staging``)."""

    def __init__(self) -> None:
        super().__init__()
        self.validated = Validated()
        self.staging = Staging()

    def sink(self, index: PageIndex, r: redis.Redis, lane: Lane, send_kick: SendKick) -> Sink | None:
        """How this worker writes what ``lane`` holds: the common lane into every
        shard, a shard's lane into that shard alone (its writer only: None, and a log
        line, in another worker). Only a dedicated writer indexes a batch while it
        waits (``staging``)."""
        staging, owned, shards = self.staging, writer_shards(), index.shards
        if lane.shard is None:
            stage = partial(staging.stage, lambda: index.writer(batch_pages=10**9, processes=True))
            return Sink(partial(write_batch, index, staging), defer=_defer(r, lane),
                        stage=stage if is_dedicated_writer() else None)
        if owned is None or lane.shard not in owned:
            log.error("pdfindex: refused pdfindex.write(%d): this worker writes %s", lane.shard,
                      "every shard from the common lane" if owned is None else f"shards {sorted(owned)}")
            return None
        shard = lane.shard
        stage = partial(staging.stage, lambda: index.shard_writer(shard, batch_pages=10**9))
        return Sink(partial(write_shard_batch, index, shard, r, send_kick, staging), defer=_defer(r, lane),
                    stage=stage if is_dedicated_writer() and shard < shards else None,
                    home=_home(shards, shard), send_kick=send_kick)

    def write_lane(self, r: redis.Redis, lane: Lane) -> None:
        """What a kick of ``lane`` does in this worker. The common lane: a writer of
        every shard drains it; a shard writer routes it to the shards' lanes (or, the
        index having one shard, drains it too). A shard's lane: its writer drains it
        into that shard alone; another worker refuses the kick."""
        index = PageIndex(settings.index_dir, new_language=settings.language, new_shards=settings.shards)
        identity.check_writer(r, identity.this(str(index.identity(create=True)), settings.index_dir))
        shards = index.shards  # for this kick: a reindex to another count is seen by the next
        send_kick = partial(kick, r)
        if lane.shard is None and writer_shards() is not None and shards > 1:
            route(r, shards, send_kick, _VERIFY)
            return
        sink = self.sink(index, r, lane, send_kick)
        if sink is not None:
            Drain(r, settings.roots, settings.batch_pages, verify=_VERIFY, validated=self.validated).run(sink, lane)


@app.task(name="pdfindex.write", base=WriteTask, bind=True, max_retries=WRITE_RETRIES, typing=False)
def write(self: WriteTask, *args: Any, **kwargs: Any) -> None:
    """Drain a lane's hand-off list into the index (drain.Drain): a batch of
    ``PDFINDEX_BATCH_PAGES`` pages per commit, or what came once files stop coming
    for a second; never a commit per file. A shard writer's kick of the common lane
    routes it instead (drain.route)."""
    lane = _lane_of(args, kwargs)
    if lane is None:
        return
    r = client(settings)
    try:
        self.write_lane(r, lane)
        with suppress(redis.RedisError):
            r.delete(WRITER_ERROR)
    except (IndexBusy, WriterBusy) as exc:
        # Try again soon: a dead writer's lock expires, a busy index frees up. The
        # pending-kick key stays set meanwhile, so hand-offs send no kicks of their own.
        if self.request.retries >= WRITE_RETRIES:
            log.warning("pdfindex: write kick given up after %d retries (%s); the next hand-off or a "
                        "waiting client kicks the writer again", self.request.retries, exc)
            with suppress(redis.RedisError):
                r.delete(lane.kick)
            return
        raise self.retry(exc=exc, countdown=2, queue=lane.queue) from None
    except StorageError as exc:
        # Disk full, read-only, damaged or untrusted index: the batch stays in
        # pdfindex:writing for the next kick (a waiting ingest client sends one each
        # minute and shows this error).
        log.error("pdfindex: the index writer cannot write: %s", exc)
        with suppress(redis.RedisError):
            r.set(WRITER_ERROR, str(exc)[:300], ex=3600)
    except identity.NotTheWritersIndex as exc:
        # Another index took the broker over (identity.py): writing here would split
        # the index. The items stay for its writer, and later hand-offs kick again.
        log.error("pdfindex: %s", exc)
        with suppress(redis.RedisError):
            r.set(WRITER_ERROR, str(exc)[:300], ex=3600)
            r.delete(lane.kick)
    except LockLost as exc:
        log.error("pdfindex: the index writer stopped: %s", exc)
