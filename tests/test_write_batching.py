"""The Celery writer commits in batches, with one pending write kick (issue 9, item 6).

Before, every finished file sent its own `pdfindex.write` kick and the writer committed
once per file. Now a hand-off sends a kick only when none is pending
(``pdfindex:write-kick``), and the writer commits ``batch_pages`` pages at a time, or
what it holds once a drain finds no new item (about a second after the previous one),
leaving a waiting batch in ``pdfindex:writing`` meanwhile.

Real Redis (the run's own database, tests/redis_db.py,
flushed before and after each test), a real index on disk, and, end to end, real
`celery worker` processes and the real `pdfindex ingest` client. Commits are counted
by Whoosh's table-of-contents generation (``_MAIN_<n>.toc``), one per commit.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import redis

from pdfindex.indexer import IndexBusy, PageIndex, PageRecord, Status
from pdfindex.workers import handoff, lanes, messages, run_progress, writer_lock
from pdfindex.workers.drain import IDLE_SECONDS, MAX_WAIT_SECONDS, Drain, Sink, WriteBatch
from pdfindex.workers.staging import Staging
from pdfindex.workers.outcome import Outcome, failed
if TYPE_CHECKING:
    from pdfindex.indexer import IndexWriter
from tests import redis_db
from tests.celery_helpers import Cluster, finish, ingesting
from tests.ingest_helpers import (
    find,
    page_word,
    parse_summary,
    records,
    slow_pdf,
    text_pdf,
    wait_for,
    write,
)

REDIS_URL = redis_db.url()
RUN = "cd" * 16


def commits(index_root: Path) -> int:
    """The index's commit generation: Whoosh's newest _MAIN_<n>.toc (0: never committed)."""
    if not (index_root / "current").exists():
        return 0
    path = PageIndex(index_root).path
    return max((int(m.group(1)) for f in path.iterdir() if (m := re.fullmatch(r"_MAIN_(\d+)\.toc", f.name))),
               default=0)


def _item(path: Path, n: int, pages: int = 1) -> bytes:
    """A hand-off item as an extraction task pushes it: ``pages`` pages, each with
    ``page_word(f"item{n}", page)``."""
    job = f"{n:064x}"
    doc = dataclasses.replace(failed(path, job, Status.FAILED, "x").doc, status=Status.INDEXED, page_count=pages,
                              error="")
    texts = [PageRecord(number=p, text=f"{page_word(f'item{n}', p)} batched words", coverage=1.0, glyphs=20,
                        unresolved=0, needs_ocr=False) for p in range(1, pages + 1)]
    item = messages.handoff_item(RUN, job, Outcome(doc, texts, job).to_json(), pages)
    return json.dumps(item).encode()


def _opener(index: PageIndex) -> Callable[[], IndexWriter]:
    """What the dedicated writer stages a batch with: the index's writer."""
    return lambda: index.writer(batch_pages=10**9, processes=True)


def _real_write(index: PageIndex, staging: Staging | None = None) -> WriteBatch:
    """The writer's commit (tasks.write_batch), continuing what ``staging`` indexed ahead."""
    from pdfindex.workers.tasks import write_batch

    return partial(write_batch, index, staging or Staging())


class Deferrals:
    """A drain's ``defer``: records each request (what the write task turns into one
    delayed kick)."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


# ---- Drain.run and handoff.kick on a real Redis and a real index --------------------------

IDLE = 0.4  # the writer's quiet time in these tests (IDLE_SECONDS in a worker)


def test_files_arriving_between_drains_wait_and_are_committed_together(broker: redis.Redis, tmp_path: Path) -> None:
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root)
    start = commits(root)
    defer = Deferrals()

    def drain() -> int:
        return Drain(broker, (docs,), 2000, idle=IDLE).run(Sink(_real_write(index), defer=defer))

    broker.rpush(lanes.RESULTS, *(_item(docs / f"f{n}.pdf", n) for n in range(3)))
    # New items: the batch waits in pdfindex:writing instead of being committed.
    assert drain() == 0
    assert len(defer.calls) == 1 and IDLE / 2 < defer.calls[0] <= IDLE
    assert broker.llen(lanes.WRITING) == 3 and broker.llen(lanes.RESULTS) == 0
    assert commits(root) == start and broker.hlen(run_progress.run_key(RUN)) == 0
    broker.rpush(lanes.RESULTS, *(_item(docs / f"f{n}.pdf", n) for n in range(3, 5)))
    assert drain() == 0  # still coming
    assert broker.llen(lanes.WRITING) == 5 and commits(root) == start
    # A drain at once after (a kick sent while the last one drained): nothing new, but
    # the last new item is not IDLE seconds old yet, so the batch waits for the rest.
    assert drain() == 0 and len(defer.calls) == 3 and defer.calls[-1] <= IDLE
    time.sleep(IDLE + 0.05)
    # Quiet for IDLE seconds: the whole batch in one commit.
    assert drain() == 5
    assert len(defer.calls) == 3
    assert commits(root) == start + 1
    assert broker.llen(lanes.WRITING) == 0 and not broker.exists(lanes.WAITING_SINCE, lanes.LAST_NEW)
    assert sorted(broker.hkeys(run_progress.run_key(RUN))) == sorted(f"{n:064x}".encode() for n in range(5))
    ix = PageIndex(root)
    for n in range(5):
        assert find(ix, page_word(f"item{n}", 1)) == [(str(docs / f"f{n}.pdf"), 1)]
    assert ix.check() == []


def test_full_batches_are_committed_at_once_and_the_rest_waits(broker: redis.Redis, tmp_path: Path) -> None:
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root)
    start = commits(root)
    defer = Deferrals()
    broker.rpush(lanes.RESULTS, *(_item(docs / f"f{n}.pdf", n, pages=2) for n in range(5)))
    assert Drain(broker, (docs,), 4, idle=IDLE).run(Sink(_real_write(index), defer=defer)) == 4  # 2 batches of 4 pages
    assert commits(root) == start + 2
    assert len(defer.calls) == 1 and broker.llen(lanes.WRITING) == 1
    time.sleep(IDLE + 0.05)
    assert Drain(broker, (docs,), 4, idle=IDLE).run(Sink(_real_write(index), defer=defer)) == 1
    assert commits(root) == start + 3 and broker.llen(lanes.WRITING) == 0


def test_a_batch_that_keeps_growing_is_committed_after_the_longest_wait(broker: redis.Redis, tmp_path: Path) -> None:
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root)
    defer = Deferrals()
    broker.rpush(lanes.RESULTS, _item(docs / "f0.pdf", 0))
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(index), defer=defer)) == 0
    since = float(broker.get(lanes.WAITING_SINCE) or 0)
    assert abs(since - time.time()) < 5
    broker.set(lanes.WAITING_SINCE, repr(time.time() - MAX_WAIT_SECONDS - 1))  # it began long ago
    broker.rpush(lanes.RESULTS, _item(docs / "f1.pdf", 1))
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(index), defer=defer)) == 2  # still coming: committed anyway
    assert len(defer.calls) == 1


def test_forged_stamps_do_not_hold_a_batch_back_for_good(broker: redis.Redis, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    broker.set(lanes.WAITING_SINCE, repr(time.time() + 10**6))
    broker.set(lanes.LAST_NEW, repr(time.time() + 10**6))
    broker.rpush(lanes.WRITING, _item(docs / "f0.pdf", 0))
    defer = Deferrals()
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(PageIndex(tmp_path / "index")), defer=defer)) == 0
    assert defer.calls and defer.calls[0] <= IDLE_SECONDS  # waits as if the stamps were now
    for key in (lanes.WAITING_SINCE, lanes.LAST_NEW):
        assert abs(float(broker.get(key) or 0) - time.time()) < 5  # restarted from now
    broker.set(lanes.LAST_NEW, b"garbage")
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(PageIndex(tmp_path / "index")), defer=defer)) == 1


def test_dropped_items_do_not_hold_a_batch_back(broker: redis.Redis, tmp_path: Path) -> None:
    """Only valid new items make a batch wait: forged ones pushed all the time cannot."""
    docs, root = tmp_path / "docs", tmp_path / "index"
    defer = Deferrals()
    broker.rpush(lanes.WRITING, _item(docs / "f0.pdf", 0))  # waiting from an earlier drain
    broker.rpush(lanes.RESULTS, b"{forged", _item(Path("/etc/passwd"), 1))
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(PageIndex(root)), defer=defer)) == 1
    assert defer.calls == [] and broker.llen(lanes.WRITING) == 0


def test_one_kick_is_sent_until_the_writer_starts_draining(broker: redis.Redis, tmp_path: Path) -> None:
    sent: list[int] = []
    assert [handoff.kick(broker, lambda: sent.append(1)) for _ in range(50)] == [True] + [False] * 49
    assert sent == [1] and 0 < broker.ttl(lanes.KICK) <= handoff.KICK_SECONDS
    assert Drain(broker, (tmp_path,), 2000).run(Sink(_real_write(PageIndex(tmp_path / "index")))) == 0
    assert not broker.exists(lanes.KICK)  # cleared when draining started
    assert handoff.kick(broker, lambda: sent.append(2)) and sent == [1, 2]
    assert handoff.kick(broker, lambda: sent.append(3), force=True) and sent == [1, 2, 3]


def test_a_client_whose_files_are_all_handed_off_has_the_batch_committed_at_once(
        broker: redis.Redis, tmp_path: Path) -> None:
    docs, root = tmp_path / "docs", tmp_path / "index"
    defer = Deferrals()
    broker.rpush(lanes.RESULTS, *(_item(docs / f"f{n}.pdf", n) for n in range(2)))
    broker.set(lanes.WRITE_NOW, b"1")  # what the waiting client sets (distributed._write_now)
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(PageIndex(root)), defer=defer)) == 2
    assert defer.calls == [] and not broker.exists(lanes.WRITE_NOW)


def test_a_kick_that_could_not_be_sent_leaves_no_pending_key(broker: redis.Redis) -> None:
    """A publish that fails (the broker restarting) must not leave the key set: the
    retried kick would find it and send nothing, and no hand-off would kick again."""
    def unreachable() -> None:
        raise redis.ConnectionError("the broker went away")

    with pytest.raises(redis.ConnectionError):
        handoff.kick(broker, unreachable)
    assert not broker.exists(lanes.KICK)
    sent: list[int] = []
    assert handoff.kick(broker, lambda: sent.append(1)) and sent == [1]


def test_a_deferred_batch_whose_lock_is_stolen_stays_in_writing(broker: redis.Redis, tmp_path: Path) -> None:
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root)
    real = _real_write(index)
    broker.rpush(lanes.RESULTS, _item(docs / "f0.pdf", 0))
    assert Drain(broker, (docs,), 2000, idle=IDLE).run(Sink(real, defer=Deferrals())) == 0
    waiting = broker.lrange(lanes.WRITING, 0, -1)
    time.sleep(IDLE + 0.05)

    def stolen(batch: list[messages.HandOff], ensure: Any) -> list[dict[str, Any]]:
        broker.set(lanes.WRITER_LOCK, "another-writer", px=60_000)
        time.sleep(1.0)  # the heartbeat notices
        return real(batch, ensure)

    with pytest.raises(writer_lock.LockLost):
        Drain(broker, (docs,), 2000, idle=IDLE, lock_seconds=1.5).run(Sink(stolen, defer=Deferrals()))
    assert broker.lrange(lanes.WRITING, 0, -1) == waiting
    assert find(PageIndex(root), page_word("item0", 1)) == []


# ---- end to end: real workers and the real client -------------------------------------------

def _cluster(tmp_path: Path, **settings: str) -> Cluster:
    settings = {"roots": str(tmp_path), "index_dir": str(tmp_path / "index"), **settings}
    return Cluster(REDIS_URL, tmp_path, **settings)


def _celery_queue(r: redis.Redis, name: str) -> int:
    """Messages waiting in a Celery queue (kombu's Redis list of that name)."""
    return int(r.llen(name))


@pytest.mark.slow
def test_many_small_files_send_one_kick_and_take_few_commits(broker: redis.Redis, tmp_path: Path) -> None:
    """30 one-page files extracted while no writer runs: one kick waits in queue
    `index`; then one writer commits them in one or two commits (it was 30)."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    files = [write(folder / f"small{i:02d}.pdf", text_pdf(f"small{i}", 1)) for i in range(30)]
    cluster = _cluster(tmp_path)
    with ingesting(cluster, folder, index, ("ex1", "extract", 1)) as client:
        wait_for(lambda: broker.llen(lanes.RESULTS) == len(files), 60, "every file handed off", interval=0.1)
        assert _celery_queue(broker, "index") == 1
        assert broker.exists(lanes.KICK)
        start = commits(index)
        cluster.start(("writer", "index", 1))
        stdout, stderr = finish(client, 60)
    assert client.returncode == 0, stderr
    assert parse_summary(stdout).indexed == len(files)
    assert commits(index) - start <= 2, commits(index) - start
    ix = PageIndex(index)
    for i, path in enumerate(files):
        assert find(ix, page_word(f"small{i}", 1)) == [(str(path), 1)]
    assert ix.check() == []
    assert broker.llen(lanes.WRITING) == 0 and broker.llen(lanes.RESULTS) == 0


@pytest.mark.slow
def test_files_trickling_in_are_committed_a_second_after_each(broker: redis.Redis, tmp_path: Path) -> None:
    """Files seconds apart (slow to extract): each is committed about a second after
    its hand-off, long before a batch of pages fills up, so the client sees progress."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    paths = [write(folder / f"slow{i}.pdf", slow_pdf(f"trickle{i}", 1, 25_000)) for i in range(3)]
    cluster = _cluster(tmp_path, file_timeout="60", file_hard_timeout="90")
    with ingesting(cluster, folder, index, ("ex1", "extract", 1), ("writer", "index", 1)) as client:
        first = wait_for(lambda: (index / "current").exists() and records(index), 60, "the first file committed",
                         interval=0.05)
        committed_at = time.time()
        assert len(first) == 1  # the others are still being extracted
        handed_off = first[0][3]  # its record's ingested time: when its extraction ended
        # Not before the quiet second; the upper bound only has to tell "a second later" from "when the
        # batch is full" (the other files are still being extracted, checked above): generous, since a
        # loaded machine (two CI runs at once) took 10 s.
        assert 0.9 <= committed_at - handed_off <= 40, committed_at - handed_off
        stdout, stderr = finish(client, 90)
    assert client.returncode == 0, stderr
    assert parse_summary(stdout).indexed == 3
    assert commits(index) >= 3  # one per file: each came after the writer's idle second
    ix = PageIndex(index)
    for i, path in enumerate(paths):
        assert find(ix, f"trickle{i}all") == [(str(path), 1)]


@pytest.mark.slow
def test_writer_killed_while_its_batch_waits_loses_nothing(broker: redis.Redis, tmp_path: Path) -> None:
    """SIGKILL to the writer's pool process while a batch waits in pdfindex:writing
    (no commit running): the delayed kick, held by the worker's main process, runs
    in the new pool process and commits the batch, once."""
    folder, index = tmp_path / "docs", tmp_path / "index"
    paths = [write(folder / f"w{i}.pdf", text_pdf(f"waiting{i}", 2)) for i in range(6)]
    cluster = _cluster(tmp_path)
    with ingesting(cluster, folder, index, ("ex1", "extract", 1), ("writer", "index", 1)) as client:
        wait_for(lambda: broker.llen(lanes.WRITING) >= 1 and not broker.exists(lanes.WRITER_LOCK), 60,
                 "a batch waiting in pdfindex:writing", interval=0.005)
        (child,) = cluster.workers["writer"].pool_children()
        os.kill(child, signal.SIGKILL)
        stdout, stderr = finish(client, 60)
    assert client.returncode == 0, stderr
    assert parse_summary(stdout).indexed == len(paths)
    ix = PageIndex(index)
    for i, path in enumerate(paths):
        assert sorted(find(ix, f"waiting{i}zq2w")) == [(str(path), 2)]
        assert len([d for d in ix.documents() if d.path == str(path)]) == 1
    assert broker.llen(lanes.WRITING) == 0
    assert ix.check() == []


# ---- the dedicated writer indexes a waiting batch ahead of its commit ------------------------

def _index_is_locked(index: PageIndex) -> bool:
    writer = index.writer(lock_timeout=0.2)
    try:
        writer.delete("0" * 64)  # takes the index's lock, changes nothing
    except IndexBusy:
        return True
    writer.cancel()
    return False


def test_a_staged_batch_is_finished_and_committed_once(broker: redis.Redis, tmp_path: Path) -> None:
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root)
    start = commits(root)
    staging = Staging()

    def drain() -> int:
        stage = partial(staging.stage, _opener(index))
        return Drain(broker, (docs,), 2000, idle=IDLE).run(Sink(_real_write(index, staging), defer=Deferrals(),
                                                                stage=stage))

    broker.rpush(lanes.RESULTS, *(_item(docs / f"s{n}.pdf", n, pages=2) for n in range(3)))
    assert drain() == 0
    assert _index_is_locked(index) and commits(root) == start  # indexed ahead, held open, not committed
    broker.rpush(lanes.RESULTS, *(_item(docs / f"s{n}.pdf", n, pages=2) for n in range(3, 5)))
    assert drain() == 0 and commits(root) == start
    time.sleep(IDLE + 0.05)
    assert drain() == 5
    assert commits(root) == start + 1 and not _index_is_locked(index)
    ix = PageIndex(root)
    for n in range(5):
        assert find(ix, page_word(f"item{n}", 2)) == [(str(docs / f"s{n}.pdf"), 2)]
    assert ix.stats().documents == 5 and ix.stats().pages == 10


def test_a_staged_writer_nobody_finishes_frees_the_index(broker: redis.Redis, tmp_path: Path) -> None:
    """A kick lost, or another writer process taking them: the open writer is given
    up after its idle time, the lock freed, and the batch, still in pdfindex:writing,
    is committed by whichever drain comes next."""
    docs, root = tmp_path / "docs", tmp_path / "index"
    index = PageIndex(root)
    staging = Staging(idle_drop=0.3)
    broker.rpush(lanes.RESULTS, *(_item(docs / f"d{n}.pdf", n) for n in range(2)))
    Drain(broker, (docs,), 2000, idle=IDLE).run(Sink(_real_write(index), defer=Deferrals(),
                                                     stage=partial(staging.stage, _opener(index))))
    assert _index_is_locked(index)
    wait_for(lambda: not _index_is_locked(index), 30, "the idle open writer dropped")
    assert commits(root) == 0 and broker.llen(lanes.WRITING) == 2
    assert Drain(broker, (docs,), 2000).run(Sink(_real_write(index))) == 2
    assert PageIndex(root).stats().documents == 2
