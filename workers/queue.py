"""The hand-off between extraction tasks and the single index writer, in Redis.

An extraction task pushes its outcome (JSON) onto ``pdfindex:results`` and sends a
"write" kick. The writer moves items to ``pdfindex:writing`` (atomically, LMOVE),
commits them to the index in one batch, records each file as done for its ingest
run, and only then clears ``pdfindex:writing``. A writer killed mid-batch leaves
its items there; the next writer commits them first. Writes are idempotent, so an
item committed twice is still indexed once.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import redis

from config import Settings

RESULTS = "pdfindex:results"
WRITING = "pdfindex:writing"
WRITER_LOCK = "pdfindex:writer-lock"
LOCK_SECONDS = 6
QUEUES = ("extract", "index")


def client(settings: Settings) -> redis.Redis:
    if not settings.broker_url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"PDFINDEX_BROKER_URL={settings.broker_url!r}: the ingest hand-off needs a Redis broker")
    return redis.Redis.from_url(settings.broker_url, socket_timeout=30, socket_connect_timeout=10,
                                health_check_interval=30)


_REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)


def retrying(call: Callable[[], Any], patience: float = 120.0) -> Any:
    """Run a Redis call, waiting out a Redis restart (up to ``patience`` seconds)
    instead of failing the file being worked on."""
    deadline = time.monotonic() + patience
    delay = 0.2
    while True:
        try:
            return call()
        except _REDIS_DOWN:
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 3.0)


def run_key(run_id: str) -> str:
    return f"pdfindex:run:{run_id}"


def attempts_key(run_id: str) -> str:
    return f"pdfindex:attempts:{run_id}"


def push_result(r: redis.Redis, run_id: str, index_dir: str, outcome_json: str, pages: int) -> None:
    r.rpush(RESULTS, json.dumps({"run": run_id, "index": index_dir, "pages": pages, "outcome": outcome_json}))


def count_attempt(r: redis.Redis, run_id: str, doc_hash: str) -> int:
    key = attempts_key(run_id)
    attempts = int(r.hincrby(key, doc_hash, 1))
    r.expire(key, 7 * 24 * 3600)
    return attempts


class WriterBusy(Exception):
    """Another writer holds the lock (or a dead one's lock has not expired yet)."""


@contextmanager
def _writer_lock(r: redis.Redis) -> Iterator[None]:
    """The writer role, held while alive: a short lock kept fresh by a heartbeat, so
    a writer killed mid-batch frees it within LOCK_SECONDS for the next one."""
    lock = r.lock(WRITER_LOCK, timeout=LOCK_SECONDS, blocking=False)
    if not lock.acquire():
        raise WriterBusy("another index writer holds the writer lock")
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(LOCK_SECONDS / 3):
            with suppress(redis.RedisError):
                lock.reacquire()

    beat = threading.Thread(target=heartbeat, name="pdfindex-writer-lock", daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join()
        with suppress(redis.RedisError):
            lock.release()


def drain(r: redis.Redis, batch_pages: int, write: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]) -> int:
    """Commit everything queued, ``batch_pages`` pages at a time. ``write(index_dir,
    items)`` commits one batch to one index and returns a brief per item. Returns
    the number of files written. Only one drain runs at a time: ``WriterBusy`` is
    raised while another writer holds the lock (the caller retries later)."""
    written = 0
    with _writer_lock(r):
        while True:
            batch = [json.loads(raw) for raw in r.lrange(WRITING, 0, -1)]  # left by a killed writer
            pages = sum(item["pages"] for item in batch)
            while pages < batch_pages:
                raw = r.lmove(RESULTS, WRITING, "LEFT", "RIGHT")
                if raw is None:
                    break
                item = json.loads(raw)
                batch.append(item)
                pages += item["pages"]
            if not batch:
                return written
            by_index: dict[str, list[dict[str, Any]]] = {}
            for item in batch:
                by_index.setdefault(item["index"], []).append(item)
            for index_dir, items in by_index.items():
                briefs = write(index_dir, items)
                pipe = r.pipeline()
                for item, info in zip(items, briefs, strict=True):
                    pipe.hset(run_key(item["run"]), info["doc_hash"], json.dumps(info))
                    pipe.expire(run_key(item["run"]), 7 * 24 * 3600)
                pipe.execute()
            r.delete(WRITING)
            written += len(batch)


def queue_depths(settings: Settings) -> dict[str, int]:
    r = client(settings)
    depths = {name: int(r.llen(name)) for name in QUEUES}
    depths["waiting to be written"] = int(r.llen(RESULTS)) + int(r.llen(WRITING))
    return depths
