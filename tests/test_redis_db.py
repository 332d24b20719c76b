"""Two test runs on one machine each get a Redis database of their own (issue 20,
item 14): with fixed database numbers, one run's flushes emptied the other's queues."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import redis

from tests import redis_db
from tests.redis_db import redis_or_skip

ROOT = Path(__file__).resolve().parents[1]
_HOLD = ("import sys; from tests import redis_db; print(redis_db.url(), flush=True); sys.stdin.read()")


def _run_holding() -> subprocess.Popen[str]:
    """A process that claims a database as a test run does and holds it until its input closes."""
    env = {k: v for k, v in os.environ.items() if k != "PDFINDEX_TEST_REDIS_URL"}
    return subprocess.Popen([sys.executable, "-c", _HOLD], cwd=ROOT, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def test_concurrent_runs_get_different_databases_and_free_them() -> None:
    redis_or_skip(f"{redis_db.SERVER}/0").close()
    first, second = _run_holding(), _run_holding()
    try:
        assert first.stdout is not None and second.stdout is not None
        urls = [first.stdout.readline().strip(), second.stdout.readline().strip()]
        assert len(set(urls)) == 2 and all(u.startswith(f"{redis_db.SERVER}/") for u in urls), urls
        mine = os.environ.get("PDFINDEX_TEST_REDIS_URL") or redis_db.url()
        assert mine not in urls, (mine, urls)
    finally:
        for proc in (first, second):
            proc.communicate("", timeout=30)
    claims = redis.Redis.from_url(f"{redis_db.SERVER}/0", socket_timeout=10)
    try:
        for url in urls:  # each run let go of its database when it ended
            assert claims.get(f"pdfindex-tests:claim:{url.rsplit('/', 1)[1]}") is None, url
    finally:
        claims.close()
