"""Distributed mode cannot split an index (issue 20, item 1).

A client that kept its default index planned against it: new files were recorded
there as "unchanged" and never reached the writer's index, and a second writer with
another index on the same broker took write kicks. Every index now has an id; the
writer announces it on the broker, a second writer of another index refuses to
start, and a client refuses to ingest (and warns when it searches) unless its index
is the writer's. Real indexes on disk, real Redis (the run's own database), real
Celery workers and `pdfindex` processes.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from pdfindex.config import load
from pdfindex.indexer import PageIndex, StorageError
from pdfindex.workers import identity
from tests import redis_db
from tests.celery_helpers import spawn_worker, wait_ready
from tests.ingest_helpers import (
    cli_env,
    find,
    ingest,
    run_cli,
    text_pdf,
    wait_for,
    write,
)

REDIS_URL = redis_db.url()


# ---- the id ----------------------------------------------------------------------------

def test_an_index_has_one_id_kept_across_reindex(tmp_path: Path) -> None:
    first, second = PageIndex(tmp_path / "a"), PageIndex(tmp_path / "b")
    ids = first.identity(), second.identity()
    assert all(i is not None and len(i) == 32 for i in ids) and ids[0] != ids[1]
    assert oct((tmp_path / "a" / "index-id").stat().st_mode & 0o777) == "0o600"
    first.reindex()
    assert PageIndex(tmp_path / "a").identity() == ids[0]


def test_an_index_made_before_ids_gets_one_from_its_writer_only(tmp_path: Path) -> None:
    PageIndex(tmp_path / "old")
    (tmp_path / "old" / "index-id").unlink()
    assert PageIndex(tmp_path / "old").identity() is None  # a reader writes nothing
    made = PageIndex(tmp_path / "old").identity(create=True)
    assert made is not None and PageIndex(tmp_path / "old").identity() == made


@pytest.mark.parametrize("content", [b"", b"not hex\n", b"a" * 31 + b"\n", b"\xff" * 32])
def test_a_damaged_id_is_one_clear_error(tmp_path: Path, content: bytes) -> None:
    PageIndex(tmp_path / "ix")
    (tmp_path / "ix" / "index-id").write_bytes(content)
    with pytest.raises(StorageError, match=r"index-id is damaged"):
        PageIndex(tmp_path / "ix").identity()


def test_an_id_writable_by_others_is_refused(tmp_path: Path) -> None:
    PageIndex(tmp_path / "ix")
    os.chmod(tmp_path / "ix" / "index-id", 0o666)
    with pytest.raises(StorageError, match=r"index-id is writable by its group and others"):
        PageIndex(tmp_path / "ix").identity()


# ---- the announcement ----------------------------------------------------------------

def _announce(index: PageIndex) -> identity.Announcement:
    return identity.this(str(index.identity()), index.root)


def test_a_second_writer_of_another_index_is_refused_while_the_first_runs(tmp_path: Path,
                                                                            broker: redis.Redis) -> None:
    first, second = _announce(PageIndex(tmp_path / "a")), _announce(PageIndex(tmp_path / "b"))
    assert identity.claim(broker, first) is None
    assert identity.claim(broker, first) is None  # the same index again (a restart, a shard writer): fine
    with pytest.raises(identity.NotTheWritersIndex) as refused:
        identity.claim(broker, second)
    assert str(tmp_path / "a") in str(refused.value) and str(tmp_path / "b") in str(refused.value)
    assert identity.announced(broker) == first
    broker.delete(identity.ALIVE)  # the first writer stopped: the second takes over, and says from whom
    assert identity.claim(broker, second) == first
    with pytest.raises(identity.NotTheWritersIndex, match="refusing to write"):
        identity.check_writer(broker, first)  # the first, come back, writes nothing


@pytest.mark.parametrize("raw", [b"{", b"[]", b'{"id": 1, "path": "/x", "host": "h"}', b'{"id": "a"}', b"\xff"])
def test_a_forged_announcement_counts_as_none(broker: redis.Redis, raw: bytes) -> None:
    broker.set(identity.ANNOUNCED, raw)
    assert identity.announced(broker) is None


def test_a_client_check_names_both_indexes(tmp_path: Path) -> None:
    writer = identity.Announcement("f" * 32, "/srv/pdfindex/index", "writer-host")
    assert identity.client_problem(tmp_path, "f" * 32, writer) is None
    problem = identity.client_problem(tmp_path, "0" * 32, writer)
    assert problem is not None and str(tmp_path) in problem and "/srv/pdfindex/index" in problem
    assert "0" * 12 in problem and "f" * 12 in problem and "PDFINDEX_INDEX_DIR" in problem
    assert "none there" in str(identity.client_problem(tmp_path, None, writer))
    assert identity.client_problem(tmp_path, "0" * 32, None) is None  # nothing to compare with: the writer checks


# ---- end to end: following the README's distributed section ---------------------------

def test_a_client_with_another_index_cannot_split_it(tmp_path: Path, broker: redis.Redis) -> None:
    """The issue's session: a writer with PDFINDEX_INDEX_DIR, a client that kept its
    default index (which already holds the files), a second writer with a third."""
    docs, writers_index = tmp_path / "docs", tmp_path / "shared" / "index"
    home = tmp_path / "home"
    home.mkdir()
    files = [write(docs / f"f{i}.pdf", text_pdf(f"split{i}", 1)) for i in range(2)]
    common = {"PDFINDEX_BROKER_URL": REDIS_URL, "PDFINDEX_ROOTS": str(tmp_path), "HOME": str(home)}
    default_index = load({"HOME": str(home)}).index_dir
    # the client's own default index, from an embedded ingest of the same files before
    ingest(default_index, docs, env=cli_env(HOME=str(home)))
    writer_env = cli_env(**common, PDFINDEX_INDEX_DIR=str(writers_index))
    client_env = cli_env(**common)
    workers = [spawn_worker("wr", "index", 1, writer_env, tmp_path),
               spawn_worker("ex", "extract", 1, writer_env, tmp_path)]
    try:
        wait_ready(workers)
        writer_id = PageIndex(writers_index, create=False).identity()
        client_id = PageIndex(default_index, create=False).identity()
        assert writer_id and client_id and writer_id != client_id

        refused = run_cli("ingest", docs, env=client_env)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
        line = refused.stderr.strip()
        assert len(line.splitlines()) == 1, line
        assert str(default_index) in line and str(writers_index) in line, line
        assert client_id[:12] in line and writer_id[:12] in line and "PDFINDEX_INDEX_DIR" in line, line
        assert find(PageIndex(writers_index, create=False), "split0") == []

        # search on that client says it is not the writer's index
        searched = run_cli("search", "split0", env=client_env)
        assert searched.returncode == 0 and "not the writer's index" in searched.stderr, searched.stderr

        # a second writer with another index refuses to start, naming both
        third = tmp_path / "third"
        other = spawn_worker("wr2", "index", 1, cli_env(**common, PDFINDEX_INDEX_DIR=str(third)), tmp_path)
        wait_for(lambda: other.proc.poll() is not None, 60, "the second writer to refuse to start")
        assert other.proc.returncode == 2, other.log_text()
        log = other.log_text()
        assert str(third) in log and str(writers_index) in log and "split the index" in log, log
        assert "Traceback" not in log, log

        # with PDFINDEX_INDEX_DIR set to the writer's index, as the README says, it goes in
        env = cli_env(**common, PDFINDEX_INDEX_DIR=str(writers_index))
        done = run_cli("ingest", docs, env=env, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
        assert sorted(p for p, _ in find(PageIndex(writers_index, create=False), "split1")) == [str(files[1])]
        searched = run_cli("search", "split1", env=env)
        assert "reading the writer's index" in searched.stderr and str(files[1]) in searched.stdout
        status = json.loads(run_cli("status", "--json", env=env).stdout)
        assert status["index_id"] == writer_id
        assert status["writer_index"] == {"id": writer_id, "path": str(writers_index),
                                          "host": os.uname().nodename, "running": True}
        text = run_cli("status", env=client_env).stdout
        assert "NOT this index" in text and str(writers_index) in text, text
    finally:
        for worker in workers:
            worker.stop()


def test_a_writer_announces_at_start_and_refuses_writes_once_overtaken(tmp_path: Path,
                                                                        broker: redis.Redis) -> None:
    """The `--watch` report of the issue: a file "indexed" into another index. A writer
    whose index is no longer the announced one leaves the items queued and says why."""
    docs, index = tmp_path / "docs", tmp_path / "index"
    late = write(docs / "late.pdf", text_pdf("late", 1))
    env = cli_env(PDFINDEX_BROKER_URL=REDIS_URL, PDFINDEX_ROOTS=str(tmp_path), PDFINDEX_INDEX_DIR=str(index))
    workers = [spawn_worker("wr", "index", 1, env, tmp_path), spawn_worker("ex", "extract", 1, env, tmp_path)]
    try:
        wait_ready(workers)
        mine = identity.announced(broker)
        assert mine is not None and mine.path == str(index) and broker.get(identity.ALIVE) == mine.id.encode()
        # another index takes the broker over (its writer ran while this one's heartbeat lapsed)
        broker.set(identity.ANNOUNCED, json.dumps({"id": "e" * 32, "path": "/elsewhere", "host": "other"}))
        client = run_cli("ingest", docs, "--index", index, env=env)
        assert client.returncode == 1 and "not the writer's index /elsewhere" in client.stderr, client.stderr
        # a file enqueued meanwhile (by a client that checked before) is extracted, and not written
        send = ("import sys; from pdfindex.workers.tasks import extract; "
                "extract.apply_async(args=[sys.argv[1], sys.argv[2], 'a' * 32])")
        subprocess.run([sys.executable, "-c", send, str(late), hashlib.sha256(late.read_bytes()).hexdigest()],
                       env=env, check=True, timeout=60)
        wait_for(lambda: "refusing to write" in workers[0].log_text(), 90, "the writer to refuse the write")
        assert b"/elsewhere" in (broker.get("pdfindex:writer-error") or b"")
        assert find(PageIndex(index, create=False), "late") == []
        assert broker.llen("pdfindex:results") + broker.llen("pdfindex:writing") == 1  # kept for the right writer
    finally:
        for worker in workers:
            worker.stop()
