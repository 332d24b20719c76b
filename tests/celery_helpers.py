"""Celery workers for the distributed tests: real `celery -A pdfindex.workers.app
worker` processes (each leading a process group of its own, so it is stopped with its
pool and nothing else), a ``Cluster`` of them configured by one environment, the real
`pdfindex ingest` client run against them, and a redis-server of a test's own for the
tests that restart or reconfigure it (the run's shared database is
tests/redis_db.py's, and tests/conftest.py's ``broker`` fixture).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from tests.ingest_helpers import ROOT, children_of, cli_argv, cli_env, group_alive, kill_group, reap, wait_for
from tests.serve_helpers import free_port


@dataclass
class Worker:
    """A `celery -A pdfindex.workers.app worker` process (its own process group) and its log."""

    name: str
    proc: subprocess.Popen[Any]
    log: Path
    nodename: str = ""  # "name@host", as the worker announced itself

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def pool_children(self) -> list[int]:
        """Pids of the prefork pool processes (children of the worker's main process)."""
        return children_of(self.proc.pid)

    def stop(self) -> None:
        kill_group(self.proc, grace=10.0)


def spawn_worker(name: str, queues: str, concurrency: int, env: dict[str, str], log_dir: Path) -> Worker:
    """Start `celery -A pdfindex.workers.app worker` consuming ``queues`` (not waiting for it)."""
    log = log_dir / f"worker-{name}.log"
    argv = [sys.executable, "-m", "celery", "-A", "pdfindex.workers.app", "worker", "-Q", queues,
            "--concurrency", str(concurrency), "-n", f"{name}@%h", "--loglevel", "INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat"]
    with log.open("wb") as fh:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return Worker(name, proc, log)


def wait_ready(workers: Iterable[Worker], timeout: float = 60.0) -> None:
    """Wait until every worker logged "<name>@host ready."; fail with the log of one
    that exited instead."""
    for worker in workers:
        ready = re.compile(rf"({re.escape(worker.name)}@\S+) ready\.")
        wait_for(lambda w=worker, ready=ready: ready.search(w.log_text()) or w.proc.poll() is not None, timeout,
                 f"worker {worker.name} to be ready", interval=0.1)
        if worker.proc.poll() is not None:
            raise AssertionError(f"worker {worker.name} exited with {worker.proc.returncode}:\n{worker.log_text()}")
        found = ready.search(worker.log_text())
        assert found is not None
        worker.nodename = found.group(1)


class Cluster:
    """Workers of one test, all configured by the same environment."""

    def __init__(self, url: str, log_dir: Path, **settings: str) -> None:
        self.env = cli_env(PDFINDEX_BROKER_URL=url, **{f"PDFINDEX_{k.upper()}": v for k, v in settings.items()})
        self.log_dir = log_dir
        self.workers: dict[str, Worker] = {}

    def start(self, *specs: tuple[str, str, int]) -> None:
        """(name, queues, concurrency) each; returns when all are ready."""
        new = [spawn_worker(name, queues, concurrency, self.env, self.log_dir) for name, queues, concurrency in specs]
        self.workers.update((w.name, w) for w in new)
        wait_ready(new)

    def stop(self) -> None:
        for worker in self.workers.values():
            worker.stop()
        for worker in self.workers.values():
            assert group_alive(worker.proc.pid) == [], f"processes of worker {worker.name} left running"

    def task_lines(self, name: str, task: str, event: str) -> list[str]:
        """Log lines of ``name`` about ``task`` (e.g. "pdfindex.extract") with ``event``
        ("received", "succeeded"); an extract task's shown name carries its path (``Task
        pdfindex.extract '/docs/a.pdf'[<id>]``)."""
        return [line for line in self.workers[name].log_text().splitlines()
                if (f"Task {task}[" in line or f"Task {task} '" in line) and event in line]

    def logs(self) -> str:
        return "\n".join(f"==== {name}\n{w.log_text()[-4000:]}" for name, w in self.workers.items())


def start_client(folder: Path, index: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    """A real `pdfindex ingest` of ``folder`` in a process group of its own, not waited for."""
    return subprocess.Popen(cli_argv("ingest", folder, "--index", index, *extra), cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@contextmanager
def ingesting(cluster: Cluster, folder: Path, index: Path, *roles: tuple[str, str, int]) -> Iterator[Any]:
    """``roles`` started, then a real `pdfindex ingest` client; both stopped after."""
    client = None
    try:
        cluster.start(*roles)
        client = start_client(folder, index, cluster.env)
        yield client
    finally:
        if client is not None:
            reap(client)
        cluster.stop()


def finish(client: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """The client's stdout and stderr once it exits; after ``timeout`` it is killed and
    the test fails with what it printed."""
    try:
        return client.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(client, grace=2)
        out, err = client.communicate()
        raise AssertionError(f"ingest did not finish within {timeout:g} s:\n{out}\n{err[-3000:]}") from None


class PrivateRedis:
    """A redis-server of this test alone, keeping nothing on disk (as the README's)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with (self.directory / "redis.log").open("ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(self.directory)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(self._answers, 10, f"redis-server on port {self.port}")

    def _answers(self) -> bool:
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def crash(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None:
            kill_group(self.proc, grace=5)
