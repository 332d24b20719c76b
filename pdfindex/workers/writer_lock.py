"""The writer role of a lane: one writer at a time drains it, and a writer killed
mid-batch frees the role within seconds.

The role is a short Redis lock kept fresh by a heartbeat thread. A writer checks
that it still holds it right before every commit (``ensure``), so two writers never
commit the same batch at once: one whose lock expired or was taken over stops, and
leaves the batch in the lane's writing list for the next.
"""
from __future__ import annotations

import logging
import threading
from contextlib import suppress

import redis
from redis.exceptions import LockError

from .errors import IngestError
from .lanes import COMMON, Lane
from .transport import describe

log = logging.getLogger(__name__)

LOCK_SECONDS = 6


class WriterBusy(Exception):
    """Another writer holds the lock (or a dead one's lock has not expired yet)."""


class LockLost(IngestError):
    """The writer lock expired or was taken over while we held it: stop before
    committing, so two writers never commit the same batch at once."""


class WriterLock:
    """The writer role, held while alive: a short Redis lock kept fresh by a heartbeat
    thread, so a writer killed mid-batch frees it within ``seconds`` for the next one.

    The lock is not thread-local (redis-py's default keeps the token in a
    threading.local, which the heartbeat thread cannot see). A renewal that finds the
    token gone or replaced marks the lock lost; ``ensure()`` raises LockLost then, and
    the writer calls it before every commit."""

    def __init__(self, r: redis.Redis, seconds: float = LOCK_SECONDS, lane: Lane = COMMON) -> None:
        self.seconds = seconds
        self.lane = lane
        self._lock = r.lock(lane.lock, timeout=seconds, blocking=False, thread_local=False)
        self._stop = threading.Event()
        self._lost: str | None = None
        self._beat = threading.Thread(target=self._heartbeat, name="pdfindex-writer-lock", daemon=True)

    def __enter__(self) -> WriterLock:
        if not self._lock.acquire():
            raise WriterBusy(f"another writer holds the lock of {self.lane}")
        self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._beat.join()
        if self._lost is None:
            with suppress(redis.RedisError, LockError):
                self._lock.release()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                self._lock.reacquire()
            except LockError as exc:  # LockNotOwnedError: expired, or another writer has it
                self._lost = f"the writer lock {self.lane.lock} was lost ({exc})"
                log.error("pdfindex writer: %s; stopping before the next commit", self._lost)
                return
            except redis.RedisError as exc:  # Redis away: try again; ensure() tells if it lapsed
                log.warning("pdfindex writer: could not renew the writer lock: %s", describe(exc))

    def ensure(self) -> None:
        """Raise LockLost unless the lock is still ours (checked in Redis, not only
        by the heartbeat's last word)."""
        if self._lost is None:
            try:
                owned = self._lock.owned()
            except redis.RedisError as exc:
                self._lost = f"cannot check the writer lock: {describe(exc)}"
            else:
                if not owned:
                    self._lost = f"the writer lock {self.lane.lock} expired or was taken by another writer"
        if self._lost is not None:
            raise LockLost(f"{self._lost}; the batch stays in {self.lane.writing} for the next writer")
