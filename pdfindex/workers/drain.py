"""A lane's writer at work: drain the lane into the index in batches, or route the
common lane's items to their shards' lanes.

The writer moves items from the lane's results list to its writing list
(atomically, LMOVE), commits them once it holds ``batch_pages`` pages or no new item
came for about a second (it does not wait holding its process: it leaves the batch
in the writing list and has itself kicked again a second later), records each file
as done for its ingest run, and only then clears the writing list. A writer killed
mid-batch, or one waiting for more, leaves its items there; the next writer takes
them first. Writes are idempotent, so an item committed twice is still indexed once.

Every item is validated (``messages.parse_item``); an invalid one is logged with
what was wrong and dropped, never retried. One drain of a lane runs at a time
(``writer_lock``).
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from pdfindex.indexer import DocumentRecord, IndexBusy, Status, StorageError, shard_of

from .lanes import COMMON, Lane
from .messages import BadMessage, HandOff, Item, Release, Verify, parse_item, route_hash
from .outcome import Outcome
from .run_progress import record_done
from .writer_lock import LOCK_SECONDS, LockLost, WriterLock

log = logging.getLogger(__name__)

#: The writer commits a batch short of ``batch_pages`` once no new item came for this long.
IDLE_SECONDS = 1.0
MIN_DEFER_SECONDS = 0.1
#: A batch that keeps growing without reaching ``batch_pages`` is committed after this
#: long all the same, so waiting clients see progress while files trickle in.
MAX_WAIT_SECONDS = 10.0
#: The most items one routing step moves in one transaction.
ROUTE_ITEMS = 200

#: What the writer tells a run of each file it wrote (``progress.brief``).
Brief = dict[str, Any]
#: write(items, ensure) commits one batch of validated items to the writer's index and
#: returns a brief per hand-off of the batch, in order (releases have none); it calls
#: ensure() just before committing.
WriteBatch = Callable[[list[Item], Callable[[], None]], list[Brief]]
#: defer(seconds): the writer's batch waits for more items; kick the writer again in
#: ``seconds`` (handoff.kick with a delayed send).
Defer = Callable[[float], None]
#: stage(batch): index the waiting batch's new items while it waits (staging.Staging).
Stage = Callable[[list[Item]], None]
#: home(item): the lane an item belongs in, for a shard writer (whose lane holds only
#: its shard's items: others are forwarded there).
Home = Callable[[Item], Lane]
#: send_kick(lane): kick that lane's writer (handoff.kick with its Celery task).
SendKick = Callable[[Lane], object]


@dataclass(frozen=True, slots=True)
class Sink:
    """The writer's side of a drain: what commits a batch, and what the drain calls
    back for the rest (each optional).

    With ``defer``, a batch short of the drain's ``batch_pages`` is committed only
    once no new item came into the lane for ``idle`` seconds (or it has waited
    MAX_WAIT_SECONDS): until then the batch stays in the lane's writing list and
    ``defer(seconds)`` kicks the writer again when the quiet time would be up. So
    files arriving one at a time are committed together instead of one commit each,
    and the writer holds no process (often the one extraction would use) while it
    waits. Without ``defer``, everything queued is committed now. ``stage(batch)``
    is told the waiting batch each time, so that it can index the new items while
    the batch waits (the commit still goes through ``write``). With ``home``, an
    item whose home is another lane is moved there (and that lane's writer kicked
    with ``send_kick``) instead of being written."""

    write: WriteBatch
    defer: Defer | None = None
    stage: Stage | None = None
    home: Home | None = None
    send_kick: SendKick | None = None


class Validated:
    """Items of the waiting batch this process has validated already, by their exact
    bytes: a batch waiting for more files is read again from its writing list by every
    drain (about once a second), and parsing it each time cost the writer more CPU
    than it saved. The same bytes under the same roots and verifier parse the same,
    so a hit is as safe as a parse; only the current batch is kept. A writer process
    keeps one from kick to kick."""

    def __init__(self) -> None:
        self.owner: tuple[Lane, tuple[Path, ...], object] | None = None
        self.items: dict[Any, Item] = {}

    def get(self, lane: Lane, raw: Any, roots: Sequence[Path], verify: object) -> Item | None:
        owner = (lane, tuple(roots), verify)
        if owner != self.owner:
            self.owner, self.items = owner, {}
        return self.items.get(raw)

    def keep(self, kept: dict[Any, Item]) -> None:
        self.items = kept


@dataclass(slots=True)
class _Batch:
    """The items a drain holds, by the bytes each came as, with their pages and how
    many are new since the previous drain."""

    seen: dict[Any, Item] = field(default_factory=dict)
    pages: int = 0
    fresh: int = 0

    @property
    def items(self) -> list[Item]:
        return list(self.seen.values())


@dataclass(slots=True)
class Drain:
    """A writer's drains, in one process: the broker, what items are checked
    against (the writer's roots and signature check), how large a batch grows and
    how long it waits, and the waiting batch's items validated already (kept from
    one drain to the next: pass the process's own ``Validated``)."""

    r: redis.Redis
    roots: Sequence[Path]
    batch_pages: int
    verify: Verify | None = None
    idle: float = IDLE_SECONDS
    lock_seconds: float = LOCK_SECONDS
    validated: Validated = field(default_factory=Validated)

    def run(self, sink: Sink, lane: Lane = COMMON) -> int:
        """Commit what is queued in ``lane``, ``batch_pages`` pages at a time, with
        ``sink.write`` (``Sink`` says how a batch waits). Returns the number of files
        written. Only one drain of a lane runs at a time: WriterBusy is raised while
        another writer holds its lock (the caller retries later), and LockLost if the
        lock is lost on the way (the batch is left for the next writer). Invalid
        items are logged and dropped, never retried."""
        written = 0
        with WriterLock(self.r, self.lock_seconds, lane) as lock:
            self.r.delete(lane.kick)  # draining starts: an item pushed from now on sends a new kick
            while True:
                batch = self._gather(sink, lane)
                if not batch.seen or self._waits(sink, lane, batch):
                    return written
                written += self._commit(sink, lane, batch, lock)

    def _gather(self, sink: Sink, lane: Lane) -> _Batch:
        """The batch: what the lane's writing list holds (left by a killed or waiting
        writer), then new items up to ``batch_pages`` pages; items of other lanes
        are moved there and their writers kicked."""
        batch = _Batch()
        moved: set[Lane] = set()
        for stored in self.r.lrange(lane.writing, 0, -1):
            item = self.validated.get(lane, stored, self.roots, self.verify) or \
                _take(self.r, stored, self.roots, self.verify, lane.writing, lane)
            if item is not None:
                _keep(self.r, lane, sink.home, stored, item, batch, moved)
        batch.pages = sum(map(_pages, batch.seen.values()))
        while batch.pages < self.batch_pages:
            raw = self.r.lmove(lane.results, lane.writing, "LEFT", "RIGHT")
            if raw is None:
                break
            item = _take(self.r, raw, self.roots, self.verify, lane.results, lane)
            # a dropped item does not count: forged ones cannot hold a batch back
            if item is not None and _keep(self.r, lane, sink.home, raw, item, batch, moved):
                batch.pages += _pages(item)
                batch.fresh += 1
        for other in moved:
            if sink.send_kick is not None:
                sink.send_kick(other)
        return batch

    def _waits(self, sink: Sink, lane: Lane, batch: _Batch) -> bool:
        """Whether the batch waits for more items (kept, staged, and the writer
        kicked again later) instead of being committed now."""
        if sink.defer is None or batch.pages >= self.batch_pages or self.r.delete(lane.write_now):
            return False
        wait = _wait_for_more(self.r, batch.fresh, self.idle, lane)
        if wait <= 0:
            return False
        self.validated.keep(batch.seen)
        if sink.stage is not None:
            sink.stage(batch.items)
        log.debug("pdfindex writer: %d items (%d pages) wait %.2f s for more", len(batch.seen), batch.pages, wait)
        sink.defer(max(wait, MIN_DEFER_SECONDS))
        return True

    def _commit(self, sink: Sink, lane: Lane, batch: _Batch, lock: WriterLock) -> int:
        """Write the batch, tell each file's run, and clear the lane's writing list."""
        items = batch.items
        lock.ensure()
        briefs = _write_isolating(items, sink.write, lock.ensure)
        handoffs = [item for item in items if isinstance(item, HandOff)]
        record_done(self.r, ((h.run_id, h.job_hash, info) for h, info in zip(handoffs, briefs, strict=True)))
        lock.ensure()
        self.validated.keep({})
        self.r.delete(lane.writing, lane.waiting_since, lane.last_new)
        return len(handoffs)


def _keep(r: redis.Redis, lane: Lane, home: Home | None, raw: Any, item: Item, batch: _Batch,
          moved: set[Lane]) -> bool:
    """Whether ``item`` joins the batch; one whose home is another lane is moved
    there instead (and that lane noted in ``moved``)."""
    other = home(item) if home is not None else lane
    if other != lane:
        _move(r, raw, lane, other)
        moved.add(other)
        return False
    batch.seen[raw] = item
    return True


def _pages(item: Item) -> int:
    return len(item.outcome.pages) if isinstance(item, HandOff) else 0


def _move(r: redis.Redis, raw: Any, source: Lane, target: Lane) -> None:
    """Move one item from ``source``'s writing list to ``target``'s results, at once
    (MULTI): never lost, never in both."""
    pipe = r.pipeline(transaction=True)
    pipe.rpush(target.results, raw)
    pipe.lrem(source.writing, 1, raw)
    pipe.execute()


def _take(r: redis.Redis, raw: Any, roots: Sequence[Path], verify: Verify | None, source: str,
          lane: Lane) -> Item | None:
    try:
        return parse_item(raw, roots, verify)
    except BadMessage as exc:
        _drop(r, raw, source, exc, lane)
        return None


def _drop(r: redis.Redis, raw: Any, source: str, exc: BadMessage, lane: Lane) -> None:
    log.error("pdfindex writer: dropped a hand-off item from %s: %s (%d bytes, starts %r)",
              source, exc, len(raw), raw[:60])
    r.lrem(lane.writing, 1, raw)


#: Errors of the index, its storage or the broker, not of an item: the batch stays in
#: the writing list for the next writer instead of being recorded as failed.
_KEEP_BATCH = (LockLost, IndexBusy, StorageError, OSError, redis.RedisError, MemoryError)


def _write_isolating(batch: list[Item], write: WriteBatch, ensure: Callable[[], None]) -> list[Brief]:
    """``write(batch)``; if the index refuses the batch for a reason that is not the
    storage's or the lock's, each item alone, so one document the index cannot take
    becomes a failure (recorded if possible) instead of stalling the queue."""
    try:
        return write(batch, ensure)
    except _KEEP_BATCH:
        raise  # the index or the broker is in trouble, not the item: keep the batch
    except Exception as exc:  # noqa: BLE001 - whatever one bad document makes the index raise
        if len(batch) > 1:
            log.warning("pdfindex writer: a batch of %d files failed (%s: %s); writing them one by one",
                        len(batch), type(exc).__name__, str(exc)[:200])
            return [info for handoff in batch for info in _write_isolating([handoff], write, ensure)]
        if isinstance(batch[0], Release):
            log.error("pdfindex writer: could not release %r for %s: %s: %s", batch[0].path[:200], batch[0].owner,
                      type(exc).__name__, str(exc)[:200])
            return []
        return [_unwritable(batch[0], exc, write, ensure)]


def _unwritable(handoff: HandOff, exc: BaseException, write: WriteBatch, ensure: Callable[[], None]) -> Brief:
    doc = handoff.outcome.doc
    error = f"could not be written to the index: {type(exc).__name__}: {str(exc)[:160]}"
    log.error("pdfindex writer: %s: %s", doc.path, error)
    record = DocumentRecord(doc_hash=doc.doc_hash, path=doc.path, status=Status.FAILED, size=doc.size,
                            mtime=doc.mtime, ingested=doc.ingested, error=error, attempts=doc.attempts)
    failed = HandOff(handoff.run_id, handoff.job_hash, Outcome(record, [], handoff.job_hash))
    try:
        (info,) = write([failed], ensure)
    except _KEEP_BATCH:
        raise
    except Exception as again:  # noqa: BLE001 - not even the failure record: report it to the run only
        log.error("pdfindex writer: %s: its failure record could not be written either: %s", doc.path, again)
        info = {"status": "failed", "path": doc.path, "error": error, "pages": 0, "needs_ocr": 0, "coverages": [],
            "ocr_pending": 0}
    return info


def _stamp(r: redis.Redis, key: str, now: float, default: float) -> float:
    """A time the writer stored in Redis; ``default`` when absent or garbled, and
    ``now`` (stored again) when it lies in the future: whoever can write to Redis
    can only move the writer's commits, never stop them."""
    try:
        value = float(r.get(key) or default)
    except ValueError:
        value = default
    if not math.isfinite(value) or value > now:
        r.set(key, repr(now), ex=int(MAX_WAIT_SECONDS * 10))
        value = now
    return value


def _wait_for_more(r: redis.Redis, fresh: int, idle: float, lane: Lane = COMMON) -> float:
    """How much longer the batch in hand should wait for more items: 0 once no new
    item came for ``idle`` seconds, or the batch has waited MAX_WAIT_SECONDS."""
    now = time.time()
    ttl = int(MAX_WAIT_SECONDS * 10)
    if fresh:
        r.set(lane.last_new, repr(now), ex=ttl)
    r.set(lane.waiting_since, repr(now), nx=True, ex=ttl)
    if now - _stamp(r, lane.waiting_since, now, now) >= max(MAX_WAIT_SECONDS, idle):
        return 0.0
    return max(0.0, idle - (now - _stamp(r, lane.last_new, now, 0.0)))


def route(r: redis.Redis, shards: int, send_kick: SendKick, verify: Verify | None = None,
          lock_seconds: float = LOCK_SECONDS) -> int:
    """Move the common lane's items to their shard's lane (by the job's hash, see
    ``messages.route_hash``) and kick the writers of the lanes that got some: done by
    a shard writer, when no writer of every shard drains the common lane. A step of
    up to ROUTE_ITEMS items goes in one transaction (they are pushed to their lanes
    and gone from the common one together), so a router killed mid-way leaves them in
    pdfindex:writing for the next router, neither lost nor doubled. Returns the
    number of items moved; malformed ones are logged and dropped."""
    moved = 0
    with WriterLock(r, lock_seconds, COMMON) as lock:
        r.delete(COMMON.kick)
        while True:
            raws = r.lrange(COMMON.writing, 0, -1)
            while len(raws) < ROUTE_ITEMS and (raw := r.lmove(COMMON.results, COMMON.writing, "LEFT", "RIGHT")):
                raws.append(raw)
            if not raws:
                return moved
            targets = _targets(r, raws, shards, verify)
            lock.ensure()
            pipe = r.pipeline(transaction=True)
            for target, items in targets.items():
                pipe.rpush(target.results, *items)
            for items in targets.values():
                for raw in items:
                    pipe.lrem(COMMON.writing, 1, raw)
            pipe.execute()
            moved += sum(map(len, targets.values()))
            for target in targets:
                send_kick(target)


def _targets(r: redis.Redis, raws: list[Any], shards: int, verify: Verify | None) -> dict[Lane, list[Any]]:
    """The common lane's items by the shard lane each goes to; malformed ones dropped."""
    targets: dict[Lane, list[Any]] = {}
    for raw in raws:
        try:
            target = Lane(shard_of(route_hash(raw, verify), shards))
        except BadMessage as exc:
            _drop(r, raw, COMMON.results, exc, COMMON)
            continue
        targets.setdefault(target, []).append(raw)
    return targets
