"""An ingest run's progress in Redis: which of its files are finished (written by
the index writer, or refused), how often each was attempted, and the wake-up its
waiting client blocks on.

Every key carries the run's id and expires (after a week; the wake-up after an
hour), so a client that died leaves nothing behind for good; the client deletes
them when it ends.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import redis

#: How long a run's keys outlive their last write (seconds).
RUN_SECONDS = 7 * 24 * 3600


def run_key(run_id: str) -> str:
    return f"pdfindex:run:{run_id}"


def alive_key(run_id: str) -> str:
    """Set by the run's client while it waits: gone, it tells the client that Redis
    lost its data (a restart) and the run's files must be enqueued again."""
    return f"{run_key(run_id)}:alive"


def wake_key(run_id: str) -> str:
    """A list of at most one element that the run's client waits on (BLPOP): pushed
    when a file of the run is handed off or finished, so the client reacts at once
    instead of at its next poll."""
    return f"pdfindex:run:{run_id}:wake"


def wake(pipe: Any, run_id: str) -> None:
    """Queue a wake-up of the run's client on the pipeline ``pipe``."""
    key = wake_key(run_id)
    pipe.lpush(key, b"1")
    pipe.ltrim(key, 0, 0)
    pipe.expire(key, 3600)


def attempts_key(run_id: str) -> str:
    return f"pdfindex:attempts:{run_id}"


def count_attempt(r: redis.Redis, run_id: str, doc_hash: str) -> int:
    key = attempts_key(run_id)
    attempts = int(r.hincrby(key, doc_hash, 1))
    r.expire(key, RUN_SECONDS)
    return attempts


def record_done(r: redis.Redis, done: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
    """Tell the runs' clients that files are finished: (run id, job hash, info as
    progress.brief) each, in one round trip, and each run's client woken once."""
    pipe = r.pipeline()
    runs: set[str] = set()
    for run_id, job_hash, info in done:
        pipe.hset(run_key(run_id), job_hash, json.dumps(info))
        pipe.expire(run_key(run_id), RUN_SECONDS)
        runs.add(run_id)
    for run_id in runs:
        wake(pipe, run_id)
    pipe.execute()
