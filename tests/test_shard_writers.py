"""Shard writers of their own (issue 12): each shard of a sharded index written by a
Celery worker of its own (`index.K` queues), as on hosts that share the index's
filesystem; the common lane routed to the shards' lanes, paths released across
shards, and every message and item from the queue still untrusted.

Real Redis (the run's own database, tests/redis_db.py;
skipped when none answers), real indexes on disk, real `celery worker` processes and
the real `pdfindex ingest` client for the end-to-end tests.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis

from pdfindex.indexer import PageIndex, PageRecord, SearchOptions, Status, shard_of
from pdfindex.workers import lanes, messages
from pdfindex.workers.drain import Drain, Sink, route
from pdfindex.workers.outcome import Outcome, failed
from tests import redis_db
from tests.celery_helpers import Cluster, Worker, finish, ingesting, start_client, wait_ready
from tests.ingest_helpers import (
    ROOT,
    book_pdf,
    cli_argv,
    cli_env,
    find,
    ingest,
    page_word,
    parse_summary,
    reap,
    records,
    run_cli,
    status_json,
    text_pdf,
    wait_for,
    write,
)

REDIS_URL = redis_db.url()
RUN = "ef" * 16


def _item(path: Path, job: str, word: str, doc_hash: str | None = None) -> bytes:
    """A one-page hand-off item as an extraction task pushes it (``doc_hash``: the
    record's own hash, when the file changed after it was planned as ``job``)."""
    doc = dataclasses.replace(failed(path, doc_hash or job, Status.FAILED, "x").doc, status=Status.INDEXED,
                              page_count=1, error="")
    page = PageRecord(number=1, text=f"{word} sharded words", coverage=1.0, glyphs=20, unresolved=0, needs_ocr=False)
    return json.dumps(messages.handoff_item(RUN, job, Outcome(doc, [page], job).to_json(), 1)).encode()


def _hash_in(shard: int, shards: int, start: int = 0) -> str:
    """A document hash that lives in ``shard``."""
    n = start
    while shard_of(h := hashlib.sha256(str(n).encode()).hexdigest(), shards) != shard:
        n += 1
    return h


class Kicks(list[lanes.Lane]):
    """A drain's or router's ``send_kick``: records each lane kicked."""

    def __call__(self, lane: lanes.Lane) -> None:
        self.append(lane)


def _drain_shard(r: redis.Redis, index: PageIndex, shard: int, docs: Path, kicks: Kicks) -> int:
    """What shard ``shard``'s writer does when kicked (tasks._write_lane), with the
    kicks it sends recorded instead of sent."""
    from pdfindex.workers.staging import Staging
    from pdfindex.workers.tasks import _home, write_shard_batch

    lane = lanes.Lane(shard)
    write = partial(write_shard_batch, index, shard, r, kicks, Staging())
    return Drain(r, (docs,), 2000).run(Sink(write, home=_home(index.shards, shard), send_kick=kicks), lane)


# ---- routing, forwarding and releases on a real Redis and a real index ----------------------

def test_the_router_moves_each_item_to_its_shard_s_lane_and_kicks_each_lane_once(broker: redis.Redis,
                                                                                 tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    jobs = [_hash_in(k % 3, 3, start=100 * k) for k in range(9)]
    items = [_item(docs / f"f{n}.pdf", job, f"routed{n}") for n, job in enumerate(jobs)]
    broker.rpush(lanes.RESULTS, items[0], b"not json", *items[1:], json.dumps({"job": "x" * 64}).encode())
    kicks = Kicks()
    assert route(broker, 3, kicks) == 9
    for k in range(3):
        assert broker.lrange(lanes.Lane(k).results, 0, -1) == [i for i, j in zip(items, jobs, strict=True) if shard_of(j, 3) == k]
    assert sorted(lane.shard for lane in kicks) == [0, 1, 2]  # once each, however many items
    assert broker.llen(lanes.RESULTS) == 0 and broker.llen(lanes.WRITING) == 0
    assert not broker.exists(lanes.WRITER_LOCK)


def test_a_router_killed_mid_step_leaves_its_items_for_the_next_one(broker: redis.Redis, tmp_path: Path) -> None:
    """Items a router had taken (in pdfindex:writing) and not moved yet are moved by
    the next router, once: none lost, none doubled."""
    job = _hash_in(1, 2)
    taken = _item(tmp_path / "taken.pdf", job, "taken")
    broker.rpush(lanes.WRITING, taken)
    broker.rpush(lanes.RESULTS, _item(tmp_path / "new.pdf", _hash_in(1, 2, start=5000), "new"))
    assert route(broker, 2, Kicks()) == 2
    assert broker.lrange(lanes.Lane(1).results, 0, 0) == [taken] and broker.llen(lanes.Lane(1).results) == 2


def test_a_shard_writer_writes_its_shard_and_forwards_an_item_of_another(broker: redis.Redis, tmp_path: Path) -> None:
    """An item in shard 0's lane whose document lives in shard 1 (pushed there by
    anyone, or a file rewritten after it was planned) is moved to shard 1's lane and
    its writer kicked; shard 0's writer writes only shard 0."""
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root, new_shards=2)
    mine, theirs = _hash_in(0, 2), _hash_in(1, 2)
    stray = _item(docs / "stray.pdf", mine, "stray", doc_hash=theirs)  # planned in shard 0, its content in 1
    broker.rpush(lanes.Lane(0).results, _item(docs / "mine.pdf", mine, "mine"), stray)
    kicks = Kicks()
    assert _drain_shard(broker, index, 0, docs, kicks) == 1
    assert find(index, "mine") == [(str(docs / "mine.pdf"), 1)] and find(index, "stray") == []
    assert broker.lrange(lanes.Lane(1).results, 0, -1) == [stray] and kicks == [lanes.Lane(1)]
    assert broker.llen(lanes.Lane(0).writing) == 0
    assert _drain_shard(broker, index, 1, docs, Kicks()) == 1
    assert find(index, "stray") == [(str(docs / "stray.pdf"), 1)]
    (holder,) = index.holders([str(docs / "stray.pdf")])[str(docs / "stray.pdf")]
    assert shard_of(holder, 2) == 1
    assert index.check() == []


def test_a_path_taken_in_one_shard_is_released_by_the_other_shard_s_writer(broker: redis.Redis,
                                                                          tmp_path: Path) -> None:
    """A file rewritten so that its new content lives in another shard: the new
    version's writer tells the old one's, whose document lets the path go (and goes
    with its last path)."""
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root, new_shards=2)
    path = docs / "report.pdf"
    old, new = _hash_in(0, 2), _hash_in(1, 2)
    broker.rpush(lanes.Lane(0).results, _item(path, old, "oldversion"))
    assert _drain_shard(broker, index, 0, docs, Kicks()) == 1
    broker.rpush(lanes.Lane(1).results, _item(path, new, "newversion"))
    kicks = Kicks()
    assert _drain_shard(broker, index, 1, docs, kicks) == 1
    assert kicks == [lanes.Lane(0)]
    (release,) = broker.lrange(lanes.Lane(0).results, 0, -1)
    assert messages.parse_item(release, (docs,)) == messages.Release(str(path), new)
    assert index.holders([str(path)]) == {str(path): {old, new}}  # until shard 0's writer reads it
    assert _drain_shard(broker, index, 0, docs, Kicks()) == 0  # no file written, a path released
    assert index.holders([str(path)]) == {str(path): {new}}
    assert index.document(old) is None and find(index, "oldversion") == []
    assert find(index, "newversion") == [(str(path), 1)]
    assert index.check() == [] and broker.llen(lanes.Lane(0).writing) == 0


@pytest.mark.parametrize("forged", ["owner holds nothing", "owner in the same shard", "owner holds another path"])
def test_a_forged_release_changes_nothing(broker: redis.Redis, tmp_path: Path, forged: str) -> None:
    """Anyone who can reach Redis can push a release: it is acted on only if the
    index shows its owner, in another shard, holding the path."""
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root, new_shards=2)
    path, elsewhere = docs / "kept.pdf", docs / "other.pdf"
    victim, other = _hash_in(0, 2), _hash_in(1, 2)
    broker.rpush(lanes.Lane(0).results, _item(path, victim, "victim"))
    broker.rpush(lanes.Lane(1).results, _item(elsewhere, other, "other"))
    _drain_shard(broker, index, 0, docs, Kicks())
    _drain_shard(broker, index, 1, docs, Kicks())
    owner = {"owner holds nothing": _hash_in(1, 2, start=9000), "owner in the same shard": victim,
             "owner holds another path": other}[forged]
    broker.rpush(lanes.Lane(0).results, json.dumps(messages.release_item(str(path), owner)).encode())
    assert _drain_shard(broker, index, 0, docs, Kicks()) == 0
    assert index.holders([str(path)]) == {str(path): {victim}} and find(index, "victim") == [(str(path), 1)]
    assert broker.llen(lanes.Lane(0).writing) == 0 and broker.llen(lanes.Lane(0).results) == 0


@pytest.mark.parametrize(("item", "problem"), [
    ({"release": "/elsewhere/x.pdf", "owner": "a" * 64}, "outside the writer's PDFINDEX_ROOTS"),
    ({"release": "relative.pdf", "owner": "a" * 64}, "not absolute"),
    ({"release": "/docs/x.pdf", "owner": "A" * 64}, "the owner's hash"),
    ({"release": ["/docs/x.pdf"], "owner": "a" * 64}, "not a string"),
    ({"release": "/docs/x.pdf", "owner": "a" * 64, "more": 1}, "not a hand-off item"),
])
def test_a_malformed_release_is_refused(item: dict[str, Any], problem: str) -> None:
    with pytest.raises(messages.BadMessage, match=problem):
        messages.parse_item(json.dumps(item).encode(), (Path("/docs"),))


@pytest.mark.parametrize("args", [("1",), (True,), (-1,), (64,), (1.0,), (0, 1), (None,)])
def test_a_malformed_write_message_is_refused(args: tuple[Any, ...], caplog: pytest.LogCaptureFixture) -> None:
    from pdfindex.workers.tasks import _lane_of

    with caplog.at_level(logging.ERROR):
        assert _lane_of(args, {}) is None
    assert "refused pdfindex.write" in caplog.text
    assert _lane_of((), {"shard": 1}) is None
    assert _lane_of((), {}) == lanes.COMMON and _lane_of((3,), {}) == lanes.Lane(3)


@pytest.mark.parametrize("name", ["index.x", "index.64", "index.-1", "index.", "index.\u0663", "index.1.2"])
def test_a_malformed_shard_queue_is_refused(name: str) -> None:
    from pdfindex.workers.app import shard_queues

    with pytest.raises(ValueError, match=r"index\.K"):
        shard_queues({"extract", name})
    assert shard_queues({"index", "index.0", "index.12"}) == {0, 12} and shard_queues({"index"}) is None


@pytest.mark.parametrize("argv", [["pdfindex.cli.main", "worker", "--queues", "extrakt"],
                                  ["celery", "-A", "pdfindex.workers.app", "worker", "-Q", "index,extrakt"]])
def test_a_worker_refuses_an_unknown_queue(tmp_path: Path, argv: list[str]) -> None:
    """A misspelt queue used to start a worker that said "ready" and waited for ever."""
    result = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env=cli_env(PDFINDEX_BROKER_URL=REDIS_URL, PDFINDEX_ROOTS=str(tmp_path)))
    assert result.returncode in (1, 2), result.stdout + result.stderr
    assert "unknown queue 'extrakt': pdfindex's queues are extract, index, ocr and index.K" in result.stderr
    assert "ready" not in result.stdout + result.stderr and "Traceback" not in result.stderr


def test_pdfindex_worker_refuses_a_malformed_shard_queue(tmp_path: Path) -> None:
    result = run_cli("worker", "--queues", "extract,index.99",
                     env=cli_env(PDFINDEX_BROKER_URL=REDIS_URL, PDFINDEX_ROOTS=str(tmp_path)), timeout=60)
    assert result.returncode == 1
    assert "queue 'index.99': a shard writer's queue is index.K, K from 0 to 63" in result.stderr
    assert "Traceback" not in result.stderr


# ---- end to end: a worker per shard, the real client --------------------------------------

def _folder(folder: Path, count: int) -> list[Path]:
    return [write(folder / f"doc{i:02d}.pdf", text_pdf(f"sharded{i}", 1 + i % 3)) for i in range(count)]


def _shards_of(paths: list[Path], shards: int) -> list[int]:
    from pdfindex.workers.files import sha256_of

    return [shard_of(sha256_of(path), shards) for path in paths]


#: A writer worker per shard of a two-shard index, as `pdfindex worker --queues index.K` runs it.
SHARD_WRITERS = (("w0", "index,index.0", 1), ("w1", "index,index.1", 1))


def _cluster(tmp_path: Path, **settings: str) -> Cluster:
    settings = {"roots": str(tmp_path), "index_dir": str(tmp_path / "index"), "shards": "2", **settings}
    return Cluster(REDIS_URL, tmp_path, **settings)


def _hits(index: PageIndex, queries: list[str]) -> list[list[tuple[float, str, int]]]:
    """Each query's hits in rank order (equal scores, which the shards' segments may
    order either way, by path and page)."""
    return [sorted((-round(hit.score, 6), hit.path, hit.page) for hit in index.search(q, SearchOptions(limit=1000)).hits)
            for q in queries]


@pytest.mark.slow
def test_a_writer_per_shard_writes_the_index_one_writer_would(broker: redis.Redis, tmp_path: Path) -> None:
    """Two shard writers (workers of their own, as on two hosts) and an extraction
    worker: every page is indexed in its shard, and the index answers like the one
    an embedded ingest of the same files writes."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    paths = _folder(folder, 10)
    assert set(_shards_of(paths, 2)) == {0, 1}
    cluster = _cluster(tmp_path)
    with ingesting(cluster, folder, index, ("ex", "extract", 2), *SHARD_WRITERS) as client:
        stdout, stderr = finish(client, 120)
    assert client.returncode == 0, stderr
    assert parse_summary(stdout).indexed == len(paths)
    ix = PageIndex(index)
    assert ix.shards == 2 and ix.check() == []
    for i, path in enumerate(paths):
        for page in range(1, 2 + i % 3):
            assert find(ix, page_word(f"sharded{i}", page)) == [(str(path), page)]
    for name in ("w0", "w1"):
        assert "refused" not in cluster.workers[name].log_text()
    pages = [1 + i % 3 for i in range(len(paths))]
    assert status_json(index, cluster.env)["shard_pages"] == [
        sum(n for n, k in zip(pages, _shards_of(paths, 2), strict=True) if k == shard) for shard in range(2)]
    embedded = tmp_path / "embedded"
    ingest(embedded, folder, env=cli_env(PDFINDEX_SHARDS="2"))
    queries = ["sharded", "words", "sharded3all OR sharded7all", '"sharded words"']
    assert _hits(ix, queries) == _hits(PageIndex(embedded), queries)
    assert all(broker.llen(lane.results) == 0 and broker.llen(lane.writing) == 0 for lane in lanes.lanes(2))


def _cli_worker(cluster: Cluster, name: str, queues: str) -> Worker:
    """`pdfindex worker --queues ...` (the command an operator runs), as ``name``."""
    log = cluster.log_dir / f"worker-{name}.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(cli_argv("worker", "--queues", queues, "--", "-n", f"{name}@%h", "--without-gossip",
                                         "--without-mingle", "--without-heartbeat"),
                                cwd=ROOT, env=cluster.env, stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    worker = cluster.workers[name] = Worker(name, proc, log)
    wait_ready([worker])
    return worker


@pytest.mark.slow
def test_a_stopped_shard_writer_holds_back_only_its_own_shard(broker: redis.Redis, tmp_path: Path) -> None:
    """Shard 1's writer is not running: shard 0's files are indexed, shard 1's wait in
    its lane (the client and `status` say so) until its writer, started with
    `pdfindex worker --queues index.1`, comes; then all are done."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    paths = _folder(folder, 8)
    shards = _shards_of(paths, 2)
    assert set(shards) == {0, 1}
    cluster = _cluster(tmp_path)
    with ingesting(cluster, folder, index, ("ex", "extract", 2), SHARD_WRITERS[0]) as client:
        wait_for(lambda: broker.llen(lanes.Lane(1).results) + broker.llen(lanes.Lane(1).writing) == shards.count(1)
                 and (index / "current").exists() and len(list(PageIndex(index).documents())) == shards.count(0),
                 90, "shard 0's files indexed and shard 1's waiting", interval=0.2)
        assert client.poll() is None
        queues = status_json(index, cluster.env)["queues"]
        assert queues["waiting to be written"] == shards.count(1) and queues["index.1"] >= 1  # its kick
        worker = _cli_worker(cluster, "w1", "index.1")
        assert "index.1" in worker.log_text() and "concurrency: 1 " in worker.log_text()
        stdout, stderr = finish(client, 90)
    assert client.returncode == 0, stderr
    assert parse_summary(stdout).indexed == len(paths)
    ix = PageIndex(index)
    assert sorted(doc.path for doc in ix.documents()) == sorted(map(str, paths)) and ix.check() == []


@pytest.mark.slow
def test_a_file_rewritten_into_another_shard_leaves_no_old_version(broker: redis.Redis, tmp_path: Path) -> None:
    """Ingested, then rewritten with content that lives in the other shard, then
    ingested again: only the new version is at its path (the old one's shard writer
    released it), as with one writer of every shard."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    path = write(folder / "report.pdf", text_pdf("firstdraft", 1))
    (first,) = _shards_of([path], 2)
    n = 0
    while True:
        write(path, text_pdf(f"revision{n}", 1))
        if _shards_of([path], 2) != [first]:
            break
        n += 1
    revised = path.read_bytes()
    write(path, text_pdf("firstdraft", 1))
    cluster = _cluster(tmp_path)
    try:
        cluster.start(("ex", "extract", 1), *SHARD_WRITERS)
        for version in (None, revised):
            if version is not None:
                path.write_bytes(version)
            client = start_client(folder, index, cluster.env)
            try:
                stdout, stderr = finish(client, 90)
            finally:
                reap(client)
            assert client.returncode == 0 and parse_summary(stdout).indexed == 1, stderr
        wait_for(lambda: len(PageIndex(index).holders([str(path)])[str(path)]) == 1, 90, "the old version to let go")
    finally:
        cluster.stop()
    ix = PageIndex(index)
    assert find(ix, page_word(f"revision{n}", 1)) == [(str(path), 1)] and find(ix, page_word("firstdraft", 1)) == []
    assert [doc.path for doc in ix.documents()] == [str(path)] and ix.check() == []


@pytest.mark.slow
def test_a_shard_writer_killed_mid_commit_loses_nothing(broker: redis.Redis, tmp_path: Path) -> None:
    """SIGKILL to the pool process of the book's shard writer while it commits: the
    batch left in its lane's writing list is committed by the next process, once;
    the other shard's files are indexed meanwhile."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    book = write(folder / "book.pdf", book_pdf("tome", 400, 30))
    notes = [write(folder / f"note{i}.pdf", text_pdf(f"note{i}", 1)) for i in range(4)]
    (home,) = _shards_of([book], 2)
    lane = lanes.Lane(home)
    cluster = _cluster(tmp_path)
    with ingesting(cluster, folder, index, ("ex", "extract", 2), *SHARD_WRITERS) as client:
        wait_for(lambda: broker.exists(lane.lock) and any(b"tome" in item for item in broker.lrange(lane.writing, 0, -1)),
                 60, "the book's shard writer to commit it", interval=0.005)
        (child,) = cluster.workers[f"w{home}"].pool_children()
        os.kill(child, signal.SIGKILL)
        stdout, stderr = finish(client, 60)
    assert client.returncode == 0, stderr
    assert parse_summary(stdout).indexed == 5
    ix = PageIndex(index)
    assert sorted(find(ix, "tomeall")) == [(str(book), n) for n in range(1, 401)]
    for i, path in enumerate(notes):
        assert find(ix, page_word(f"note{i}", 1)) == [(str(path), 1)]
    assert len(records(index)) == 5 and ix.check() == []
    assert all(broker.llen(lane.writing) == 0 for lane in lanes.lanes(2))
