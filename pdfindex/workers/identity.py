"""One index per broker: the writer announces its index's id, clients check theirs.

In distributed mode every node has its own ``PDFINDEX_INDEX_DIR``. A client that
kept the default (or a writer started with another folder) used to plan, write and
search against an index the writer never touched: files were reported "unchanged"
there and never reached the writer's index, and nothing warned. So:

- the writer announces its index in Redis (``ANNOUNCED``: the index's id, its path
  on the writer and the writer's host) when it starts, and keeps ``ALIVE`` set
  while it runs;
- a writer whose index is not the announced one refuses to start while the
  announced writer is alive, and takes over (with a warning) once it is not; each
  write kick checks again, so a writer overtaken meanwhile refuses to write;
- a client (``ingest``, ``remove``, ``search``, ``list``, ``status``) compares its
  own index's id with the announced one before it reads or writes anything.

Ids, not paths, are compared: the shared folder may be mounted at another path on
each machine. The announced path is only ever shown in messages, never opened: a
directory never comes from the broker (docs/security.md).
"""
from __future__ import annotations

import json
import logging
import socket
from dataclasses import dataclass
from pathlib import Path

import redis

from pdfindex.config import Settings
from pdfindex.indexer import index_id

from .errors import IngestError
from .transport import broker_errors, client

log = logging.getLogger("pdfindex.identity")

ANNOUNCED = "pdfindex:index"
ALIVE = "pdfindex:index:alive"
#: A writer refreshes ALIVE this often, and ALIVE outlives a few missed refreshes.
REFRESH_SECONDS = 20.0
ALIVE_SECONDS = 75
_FIELDS = ("id", "path", "host")


@dataclass(frozen=True, slots=True)
class Announcement:
    """The index a writer announced: its id, its path on the writer's host, the host."""

    id: str
    path: str
    host: str

    def describe(self) -> str:
        return f"{self.path} on {self.host} (id {self.id[:12]})"


class NotTheWritersIndex(IngestError):
    """A writer or client whose index is not the one the broker's writer writes; the
    message names both."""


def this(index_id: str, root: Path) -> Announcement:
    return Announcement(index_id, str(root), socket.gethostname())


def announced(r: redis.Redis) -> Announcement | None:
    """The announced index, or None (no writer has started on this broker, or Redis
    lost its data)."""
    return _parse(r.get(ANNOUNCED))


def _parse(raw: bytes | str | None) -> Announcement | None:
    """An announcement as stored. A malformed one, which anyone who can reach Redis
    could write, counts as none and is logged."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        if isinstance(data, dict) and set(data) == set(_FIELDS) and all(isinstance(data[k], str) for k in _FIELDS):
            return Announcement(data["id"][:64], data["path"][:4096], data["host"][:255])
    except (ValueError, RecursionError):
        pass
    log.warning("pdfindex: ignored a malformed index announcement in the broker: %a", str(raw)[:100])
    return None


def _announce(r: redis.Redis, mine: Announcement) -> None:
    with r.pipeline() as pipe:
        pipe.set(ANNOUNCED, json.dumps({"id": mine.id, "path": mine.path, "host": mine.host}))
        pipe.set(ALIVE, mine.id, ex=ALIVE_SECONDS)
        pipe.execute()


def claim(r: redis.Redis, mine: Announcement) -> Announcement | None:
    """A writer's start: announce ``mine``, unless a live writer of another index
    holds the broker (NotTheWritersIndex). Returns the index taken over from a writer
    no longer alive, if any (the caller warns)."""
    current = announced(r)
    if current is not None and current.id != mine.id:
        if r.exists(ALIVE):
            raise NotTheWritersIndex(
                f"this writer's index {mine.describe()} is not the index the broker's running writer writes, "
                f"{current.describe()}: two writers would split the index; give this worker that index "
                "(PDFINDEX_INDEX_DIR, the shared folder) or another broker database")
        _announce(r, mine)
        return current
    _announce(r, mine)
    return None


def refresh(r: redis.Redis, mine: Announcement) -> None:
    """A running writer's heartbeat: ALIVE again, and the announcement back if Redis
    lost it (a restart). Another index announced meanwhile is left alone: the next
    write kick refuses to write (``check_writer``)."""
    current = announced(r)
    if current is None or current.id == mine.id:
        _announce(r, mine)


def check_writer(r: redis.Redis, mine: Announcement) -> None:
    """Before a writer writes a batch: its index must still be the announced one
    (NotTheWritersIndex otherwise; the items stay queued for the right writer)."""
    current = announced(r)
    if current is None:
        _announce(r, mine)  # Redis came back empty: this writer's index is the one
    elif current.id != mine.id:
        raise NotTheWritersIndex(f"refusing to write: this writer's index {mine.describe()} is not the index "
                                 f"announced on the broker, {current.describe()}; the items stay queued for its "
                                 "writer")


def client_problem(root: Path, root_id: str | None, current: Announcement | None) -> str | None:
    """Why a client with the index at ``root`` (id ``root_id``; None: no index
    there) does not use the writer's index, or None (also when nothing is
    announced: there is nothing to compare with)."""
    if current is None or root_id == current.id:
        return None
    mine = f"this machine's index {root}" + (f" (id {root_id[:12]})" if root_id else " (none there)")
    return (f"{mine} is not the writer's index {current.describe()}: set PDFINDEX_INDEX_DIR (or --index) "
            "to the writer's index folder as this machine mounts it")


def look(settings: Settings) -> tuple[Announcement | None, bool]:
    """The announced index and whether a writer of it is running (ALIVE), asked
    of the broker; BrokerError when it cannot be asked."""
    with broker_errors(settings):
        r = client(settings)
        try:
            with r.pipeline() as pipe:
                pipe.get(ANNOUNCED)
                pipe.get(ALIVE)
                raw, alive = pipe.execute()
        finally:
            r.close()
    current = _parse(raw)
    return current, current is not None and alive == current.id.encode()


def check_client(settings: Settings, root: Path) -> None:
    """A client's check before it plans or writes against the index at ``root``:
    NotTheWritersIndex unless it is the announced one; BrokerError when the broker
    cannot be asked. With nothing announced yet (files enqueued before any writer
    started, or Redis lost its data) there is nothing to compare: a warning, and
    the writer checks its own index when it starts."""
    current = look(settings)[0]
    if current is None:
        log.warning("pdfindex: no index writer has announced its index on the broker yet, so this run cannot "
                    "check that %s is the writer's: start the writer with PDFINDEX_INDEX_DIR set to the same "
                    "index folder", root)
        return
    problem = client_problem(root, index_id(root), current)
    if problem is not None:
        raise NotTheWritersIndex(problem)
