"""Keeping an index current: ``pdfindex ingest --watch PATH...``.

A watch first catches up with what changed while it was not running (an ingest of
the paths with pruning, scoped to them), then follows the file system's events
(watchfiles: inotify on Linux) until it is stopped:

- an added or changed file is ingested once it has *settled*: its size and mtime
  unchanged for ``settle`` seconds, so a file still being copied or written is taken
  when complete, not half-way (and not once per write);
- a deleted file loses its path: the document goes with its last path, and stays
  under the others when copies remain;
- a move is a deletion and an addition in one batch of events. The addition is
  ingested first: the plan finds the content already indexed and records the new
  path without extracting anything, then the old path is taken off. So removals wait
  while additions are settling (at most ``MAX_REMOVAL_DELAY`` seconds).

Every round goes through ``api.ingest`` and ``api.remove``, so the embedded pool and
Celery both work, and a failing round (an unreadable folder, a broker down) is
reported and the watch goes on.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .api import IngestOptions, Removed, RemoveOptions, ingest, remove
from .errors import BrokerError, IngestError
from .progress import Summary

#: Milliseconds watchfiles gathers events for before yielding them as one batch.
DEBOUNCE_MS = 500
#: Seconds a file's size and mtime must stay the same before it is ingested.
SETTLE_SECONDS = 1.0
#: Longest wait of a removal behind additions that are still settling.
MAX_REMOVAL_DELAY = 10.0


@dataclass(slots=True)
class Round:
    """What one round of a watch did, for the caller to report."""

    summary: Summary | None = None
    removed: Removed | None = None
    #: "path: problem" for a round that could not run
    error: str = ""


@dataclass(slots=True)
class _Pending:
    added: dict[str, tuple[int, int, float]] = field(default_factory=dict)  # path -> (size, mtime_ns, since)
    deleted: dict[str, float] = field(default_factory=dict)  # path -> first seen deleted


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _settled(pending: _Pending, now: float, settle: float) -> list[str]:
    """The added paths whose size and mtime held still for ``settle`` seconds; the
    others are (re)stamped. Paths gone meanwhile are dropped."""
    ready = []
    for path, (size, mtime, since) in list(pending.added.items()):
        current = _stat(path)
        if current is None:
            del pending.added[path]
        elif current != (size, mtime):
            pending.added[path] = (*current, now)
        elif now - since >= settle:
            ready.append(path)
            del pending.added[path]
    return sorted(ready)


def _note(pending: _Pending, changes: Iterable[tuple[object, str]], now: float) -> None:
    from watchfiles import Change  # noqa: PLC0415 - only a watch needs it

    for change, path in changes:
        if change == Change.deleted:
            pending.added.pop(path, None)
            pending.deleted.setdefault(path, now)
        else:
            pending.deleted.pop(path, None)
            current = _stat(path)
            if current is not None:
                pending.added[path] = (*current, now)


def _round(paths: list[str], removals: list[str], options: IngestOptions) -> Round:
    done = Round()
    try:
        if paths:
            done.summary = ingest(paths, dataclasses.replace(options, prune=False, dry_run=False))
        if removals:
            done.removed = remove(removals, RemoveOptions(index_dir=options.index_dir, settings=options.settings))
    except (IngestError, BrokerError, OSError) as exc:
        done.error = str(exc)
    return done


def watch(paths: Iterable[Path | str], options: IngestOptions | None = None,
          report: Callable[[Round], None] | None = None, stop: threading.Event | None = None,
          settle: float = SETTLE_SECONDS, debounce_ms: int = DEBOUNCE_MS) -> None:
    """Catch up, then keep the index current with ``paths`` until ``stop`` is set or
    Ctrl-C (KeyboardInterrupt, raised to the caller). ``report`` gets each round."""
    from watchfiles import watch as events  # noqa: PLC0415 - only a watch needs it

    options = options or IngestOptions()
    targets = [str(Path(p).absolute()) for p in paths]
    report = report or (lambda _round: None)
    stop = stop or threading.Event()
    pending = _Pending()
    tick = max(50, int(settle * 500))
    caught_up = False
    for changes in events(*targets, debounce=debounce_ms, step=50, rust_timeout=tick, yield_on_timeout=True,
                          stop_event=stop, recursive=options.recursive, raise_interrupt=True):
        if not caught_up:
            # The watcher runs from the first batch on (it keeps what happens meanwhile),
            # so the catch-up misses nothing: everything changed while no watch ran,
            # and what went missing, pruned among the paths.
            caught_up = True
            report(Round(summary=ingest(targets, dataclasses.replace(options, prune=True, dry_run=False))))
        now = time.monotonic()
        _note(pending, changes, now)
        ready = _settled(pending, now, settle)
        overdue = any(now - since >= MAX_REMOVAL_DELAY for since in pending.deleted.values())
        removals: list[str] = []
        if pending.deleted and (not pending.added or overdue):
            removals = sorted(p for p in pending.deleted if not os.path.lexists(p))
            pending.deleted.clear()
        if ready or removals:
            report(_round(ready, removals, options))
        if stop.is_set():
            break


__all__ = ["Round", "watch"]
