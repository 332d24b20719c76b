"""The dedicated writer's open batch: items indexed while the batch waits for more.

The Celery writer commits a batch once it is full or files stop coming (drain.py),
and between drains it holds no process. Without this, every document of the batch
was analysed at its commit, after the last file arrived: on a small ingest the whole
indexing ran after extraction had ended. Here the writer process keeps the batch's
index writer open between drains and adds each item as it arrives; the commit then
only writes the segment.

Only a worker that consumes the index queue alone with one process does this
(``app.is_dedicated_writer``): the open writer holds the index's lock, which another
process of a shared worker would wait for. If no drain comes for ``IDLE_DROP``
seconds (a kick lost, another writer process taking the kicks), the open writer is
cancelled and the lock freed; the items are still in ``pdfindex:writing``, so the
next commit indexes them anew. Nothing is committed from here.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .messages import HandOff, Item

if TYPE_CHECKING:
    from pdfindex.indexer import IndexWriter

log = logging.getLogger(__name__)

#: Seconds without a drain after which the open writer is given up (the writer's
#: own delayed kick comes within about a second while a batch waits).
IDLE_DROP = 5.0


class Staging:
    """An open PageWriter and the hand-off items already added to it, in order."""

    def __init__(self, idle_drop: float = IDLE_DROP) -> None:
        self._idle_drop = idle_drop
        self._lock = threading.Lock()
        self._writer: IndexWriter | None = None
        self._added: list[Item] = []
        self._timer: threading.Timer | None = None

    def stage(self, open_writer: Callable[[], IndexWriter], batch: list[Item]) -> None:
        """Add the hand-offs of the waiting ``batch`` not added yet, up to its first
        release (the commit acts on those), to the writer ``open_writer()`` opens.
        A failure only costs the head start: the writer is dropped and the commit
        redoes it all."""
        with self._lock:
            self._stop_timer()
            if not self._holds_prefix_of(batch):
                self._drop()
            try:
                if self._writer is None:
                    self._writer = open_writer()
                for handoff in batch[len(self._added):]:
                    if not isinstance(handoff, HandOff):
                        break
                    self._writer.add(handoff.outcome.doc, handoff.outcome.pages)
                    self._added.append(handoff)
            except Exception as exc:  # noqa: BLE001 - the commit will meet it again and handle it
                log.debug("pdfindex writer: indexing ahead of the commit stopped: %s", exc)
                self._drop()
                return
            self._timer = threading.Timer(self._idle_drop, self.drop)
            self._timer.daemon = True
            self._timer.start()

    def take(self, batch: list[Item]) -> tuple[IndexWriter | None, int]:
        """The open writer, if it holds the first items of ``batch`` (and how many),
        for the caller to finish and commit; (None, 0) otherwise. Either way this
        holds no writer afterwards."""
        with self._lock:
            self._stop_timer()
            if self._writer is not None and self._holds_prefix_of(batch):
                writer, count = self._writer, len(self._added)
                self._writer, self._added = None, []
                return writer, count
            self._drop()
            return None, 0

    def drop(self) -> None:
        with self._lock:
            self._drop()

    def _holds_prefix_of(self, batch: list[Item]) -> bool:
        return len(self._added) <= len(batch) and all(a is b for a, b in zip(self._added, batch, strict=False))

    def _drop(self) -> None:
        self._stop_timer()
        if self._writer is not None:
            try:
                self._writer.cancel()
            except Exception as exc:  # noqa: BLE001 - a shard writer that died: the commit meets it again
                log.debug("pdfindex writer: cancelling the open batch: %s", exc)
            finally:
                self._writer.close()
        self._writer, self._added = None, []

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
