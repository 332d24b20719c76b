"""The Redis databases a test process uses, claimed on the shared server for it.

Every test that talks to Redis (Celery clusters, the hand-off lanes, the CLI in
distributed mode) uses ``url()``. Two test runs on one machine (two clones' CI, or a
developer's run beside CI), and the two processes of one run (``pytest -n 2``), share
the server on 127.0.0.1:6379 and flush their database between tests: with fixed
database numbers they flushed each other's queues, and Celery tests of one run timed
out waiting for work the other run had thrown away. The bench tests use ``bench_url()``,
a second database of their process that no other test touches.

A process claims a free database from 1 to 15 with ``SET NX`` on a key of database 0,
expiring after ``CLAIM_SECONDS`` (a killed run frees its database by itself) and
deleted when the process ends: a run of two processes holds up to four, so three runs
fit beside each other. ``$PDFINDEX_TEST_REDIS_URL`` (a URL with its database)
overrides ``url()``'s claim; the Celery workers a test starts inherit the URL.

``redis_or_skip`` and ``flushed_redis`` give a test its client, or skip it (fail it
under CI) when no Redis answers; tests/conftest.py's ``broker`` fixture is the run's
database, flushed around the test.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import os
import uuid
from collections.abc import Iterator

import redis

SERVER = os.environ.get("PDFINDEX_TEST_REDIS_SERVER", "redis://127.0.0.1:6379")
#: longer than CI's hard limit of 90 minutes for a whole run
CLAIM_SECONDS = 2 * 3600
_CLAIM = "pdfindex-tests:claim:{}"
#: database 0 holds the claims; the others are the runs' own
DATABASES = range(1, 16)


@functools.cache
def url() -> str:
    """This run's Redis URL, with a database no other running test run uses. When no
    Redis answers, the unclaimed URL of database 1: the test that asks for it then
    skips (or fails under CI) in ``redis_or_skip`` with the reason."""
    return os.environ.get("PDFINDEX_TEST_REDIS_URL") or _claim()


@functools.cache
def bench_url() -> str:
    """A second database of this test process, for the bench tests alone: a bench
    refuses to measure while other clients are connected to its database, and the
    test files this process ran before may have left connections to ``url()``'s
    (the test processes take files in no fixed order)."""
    return _claim()


def _claim() -> str:
    """A free database's URL, claimed until this process ends."""
    client = redis.Redis.from_url(f"{SERVER}/0", socket_connect_timeout=2, socket_timeout=10)
    token = f"{os.getpid()}-{uuid.uuid4().hex}"
    try:
        for db in DATABASES:
            if client.set(_CLAIM.format(db), token, nx=True, ex=CLAIM_SECONDS):
                atexit.register(_release, db, token)
                return f"{SERVER}/{db}"
    except redis.RedisError:
        return f"{SERVER}/{DATABASES[0]}"
    finally:
        client.close()
    raise RuntimeError(f"every Redis database 1-15 of {SERVER} is claimed by a running test run "
                       f"(keys {_CLAIM.format('*')} in database 0; they expire after {CLAIM_SECONDS} s)")


def _release(db: int, token: str) -> None:
    """Free the claim, if it is still ours (it may have expired and been taken)."""
    client = redis.Redis.from_url(f"{SERVER}/0", socket_connect_timeout=2, socket_timeout=10)
    try:
        key = _CLAIM.format(db)
        if client.get(key) == token.encode():
            client.delete(key)
    except redis.RedisError:
        pass  # it expires by itself
    finally:
        client.close()


def redis_or_skip(url: str) -> redis.Redis:
    """A client of the Redis at ``url``, or a skip saying how to start one (a failure
    under CI, whose .ci/run starts one: a green run must not hide skipped tests)."""
    import pytest  # here: a process that only claims a database (test_redis_db.py) needs none

    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=10)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        message = f"no Redis answers at {url} ({exc}); start one with `redis-server` (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return client


@contextlib.contextmanager
def flushed_redis(url: str) -> Iterator[redis.Redis]:
    """``redis_or_skip(url)``, its database emptied before and after the block."""
    client = redis_or_skip(url)
    client.flushdb()
    try:
        yield client
    finally:
        client.flushdb()
        client.close()
