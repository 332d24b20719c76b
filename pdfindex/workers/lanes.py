"""The broker's names: the hand-off lists, keys and Celery queues between extraction
and the index writers, one set per lane.

An extraction task pushes its outcome onto ``pdfindex:results`` and sends a "write"
kick unless one is already pending (``pdfindex:write-kick``, set with NX; the writer
clears it when it starts draining), so a burst of files sends one kick, not one each.
The writer moves items to ``pdfindex:writing`` (atomically, LMOVE), commits them to
ITS OWN index (``PDFINDEX_INDEX_DIR`` of the writer; an item never names a directory)
once it holds ``batch_pages`` pages or no new item came for about a second, records
each file as done for its ingest run, and only then clears ``pdfindex:writing``
(``drain.py``). A sharded index may have a writer per shard, each with a lane of its
own: the same names with ``:K`` appended, and Celery queue ``index.K``.

Only names live here (no Redis client), so that every module of the hand-off, and
``docs/security.md``, read them from one place.
"""
from __future__ import annotations

from dataclasses import dataclass

RESULTS = "pdfindex:results"
WRITING = "pdfindex:writing"
WRITER_LOCK = "pdfindex:writer-lock"
#: Set (NX) while a write kick is pending; cleared by the writer when it starts draining.
KICK = "pdfindex:write-kick"
#: When the batch waiting in pdfindex:writing began to wait (the writer's clock).
WAITING_SINCE = "pdfindex:writing-since"
#: When a drain last took a new item from pdfindex:results (the writer's clock).
LAST_NEW = "pdfindex:writing-last-new"
#: Set by an ingest client once every file it waits for is handed off: the next drain
#: commits what it holds at once instead of waiting for the quiet second. (Set by
#: anyone else, it only makes a commit come earlier.)
WRITE_NOW = "pdfindex:write-now"
#: The writer's last storage error (one line), for waiting ingest clients to show.
WRITER_ERROR = "pdfindex:writer-error"

#: Celery's queues: extraction, the index writer, and OCR (issue 22: seconds a page,
#: so its own workers, concurrency and limits, on other machines if need be).
QUEUES = ("extract", "index", "ocr")
#: The prefix of a shard writer's queue and hand-off lists: queue ``index.K``, lists
#: ``pdfindex:results:K`` and ``pdfindex:writing:K``.
SHARD_QUEUE = "index."


def is_writer_queue(name: str) -> bool:
    """Whether a Celery queue is a writer's (``index``, or a shard writer's ``index.K``)."""
    return name == "index" or name.startswith(SHARD_QUEUE)


@dataclass(frozen=True, slots=True)
class Lane:
    """One hand-off from extraction to a writer: the list items arrive in, the list
    its writer works from, the writer's lock, its pending kick, and its Celery queue.

    The common lane (``shard`` None) is where extraction hands off: one writer that
    writes every shard drains it (the default), or, when each shard has a writer of
    its own (possibly on other hosts), a router moves its items to their shard's
    lane (``drain.route``). A shard lane's writer writes that shard only."""

    shard: int | None = None

    def _key(self, name: str) -> str:
        return name if self.shard is None else f"{name}:{self.shard}"

    @property
    def results(self) -> str:
        return self._key(RESULTS)

    @property
    def writing(self) -> str:
        return self._key(WRITING)

    @property
    def lock(self) -> str:
        return self._key(WRITER_LOCK)

    @property
    def kick(self) -> str:
        return self._key(KICK)

    @property
    def waiting_since(self) -> str:
        return self._key(WAITING_SINCE)

    @property
    def last_new(self) -> str:
        return self._key(LAST_NEW)

    @property
    def write_now(self) -> str:
        return self._key(WRITE_NOW)

    @property
    def queue(self) -> str:
        return "index" if self.shard is None else f"{SHARD_QUEUE}{self.shard}"

    def __str__(self) -> str:
        return "the index writer" if self.shard is None else f"the writer of shard {self.shard}"


COMMON = Lane()


def lanes(shards: int) -> list[Lane]:
    """The common lane and every shard's (shard lanes exist for a sharded index only)."""
    return [COMMON] + ([Lane(k) for k in range(shards)] if shards > 1 else [])
