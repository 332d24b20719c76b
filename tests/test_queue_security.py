"""The queue is not trusted (issue 7): forged Celery messages and hand-off items,
remote control, the writer lock's heartbeat, broker passwords, ACL users, TLS and
message signing, on real redis-server processes of this module alone (a free port
each, nothing on disk) and real `celery worker` processes.

An attacker here is anyone who can reach Redis: they push what they like onto the
Celery queues and the hand-off lists, so every test builds its attack by hand with
a plain Celery/redis client, as such an attacker would.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from pdfindex import config
from pdfindex.indexer import PageIndex, Status
from tests.celery_helpers import Cluster, PrivateRedis, spawn_worker
from tests.ingest_helpers import (
    ROOT,
    cli_env,
    docs_by_path,
    find,
    ingest,
    page_word,
    parse_summary,
    run_cli,
    slow_pdf,
    snapshot,
    text_pdf,
    wait_for,
    write,
)
from tests.serve_helpers import free_port
from pdfindex.workers import handoff, lanes, messages, run_progress, transport, writer_lock
from pdfindex.workers.drain import Drain, Sink, WriteBatch
from pdfindex.workers.staging import Staging
from pdfindex.workers.errors import BrokerError
from pdfindex.workers.outcome import Outcome, failed

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")


class Server(PrivateRedis):
    """A private redis-server with extra arguments (password, ACL users, TLS)."""

    def __init__(self, directory: Path, *extra: str, tls: Path | None = None) -> None:
        super().__init__(directory)
        self.extra = list(extra)
        self.tls = tls
        self.password: str | None = None
        if tls is not None:
            self.extra = ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", str(tls / "server.pem"),
                          "--tls-key-file", str(tls / "server.key"), "--tls-ca-cert-file", str(tls / "ca.pem"),
                          "--tls-auth-clients", "no", *self.extra]

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(self.directory), *self.extra]
        with (self.directory / "redis.log").open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(self._answers, 10, f"redis-server on port {self.port}")

    def admin(self) -> redis.Redis:
        kwargs: dict[str, Any] = {"host": "127.0.0.1", "port": self.port, "socket_connect_timeout": 1, "password": self.password}
        if self.tls is not None:
            kwargs.update(ssl=True, ssl_ca_certs=str(self.tls / "ca.pem"))
        return redis.Redis(**kwargs)

    def _answers(self) -> bool:
        client = self.admin()
        try:
            return bool(client.ping())
        except redis.AuthenticationError:
            return True  # it answers; it wants a password
        except redis.RedisError:
            return False
        finally:
            client.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    s.start()
    yield s
    s.stop()


def _settings(url: str, roots: tuple[Path, ...] = ()) -> config.Settings:
    env = {"HOME": "/h", "PDFINDEX_BROKER_URL": url}
    if roots:
        env["PDFINDEX_ROOTS"] = os.pathsep.join(map(str, roots))
    return config.load(env)


def _attacker(url: str, **conf: Any) -> Celery:
    """A Celery client of the attacker's own: only the broker URL in common with us."""
    app = Celery("attacker", broker=url)
    app.conf.update(task_serializer="json", accept_content=["json"], **conf)
    return app


# ---- messages and items, parsed (no workers) ---------------------------------------------

HASH = "ab" * 32
RUN = "cd" * 16


@pytest.mark.parametrize(("args", "kwargs", "problem"), [
    (["/docs/a.pdf", HASH, RUN, "/tmp/evil-index"], {}, "unexpected arguments"),  # the old index directory
    (["/docs/a.pdf", HASH, RUN, "/tmp/evil-index", "/etc/passwords"], {}, "unexpected arguments"),
    (["/docs/a.pdf", HASH], {"run_id": RUN, "index_dir": "/tmp/x"}, "unexpected arguments"),
    (["/docs/a.pdf", HASH], {}, "missing run_id"),
    (["docs/a.pdf", HASH, RUN], {}, "not absolute"),
    (["/docs/a\0.pdf", HASH, RUN], {}, "NUL"),
    (["/" + "a" * 5000, HASH, RUN], {}, "characters long"),
    ([["/docs/a.pdf"], HASH, RUN], {}, "not a string"),
    (["/docs/a.pdf", HASH.upper(), RUN], {}, "hash"),
    (["/docs/a.pdf", HASH[:-1], RUN], {}, "hash"),
    (["/docs/a.pdf", HASH, "../../etc"], {}, "run id"),
    (["/docs/a.pdf", HASH, 12345], {}, "run id"),
])
def test_malformed_extract_messages_are_refused(args: list[Any], kwargs: dict[str, Any], problem: str) -> None:
    with pytest.raises(messages.BadMessage, match=problem):
        messages.parse_extract(args, kwargs)


def test_a_well_formed_extract_message_parses() -> None:
    job = messages.parse_extract(["/docs/a.pdf", HASH], {"run_id": RUN})
    assert (job.path, job.doc_hash, job.run_id) == ("/docs/a.pdf", HASH, RUN)


def _item(path: str, *, run: str = RUN, job: str = HASH, text: str = "hello", **doc: Any) -> dict[str, Any]:
    outcome = json.loads(failed(Path(path), job, Status.FAILED, "x").to_json())
    outcome["doc"].update(status="indexed", page_count=1, error="", **doc)
    outcome["pages"] = [{"number": 1, "text": text, "coverage": 1.0, "glyphs": 5, "unresolved": 0,
                         "needs_ocr": False, "problems": []}]
    return {"run": run, "job": job, "pages": 1, "outcome": json.dumps(outcome)}


ROOTS = (Path("/docs"),)


def test_a_well_formed_item_parses() -> None:
    handoff = messages.parse_item(json.dumps(_item("/docs/a.pdf")).encode(), ROOTS)
    assert (handoff.run_id, handoff.job_hash, handoff.outcome.doc.path) == (RUN, HASH, "/docs/a.pdf")
    assert [p.text for p in handoff.outcome.pages] == ["hello"]


@pytest.mark.parametrize(("raw", "problem"), [
    (b"{not json", "not JSON"),
    (b"[1, 2]", "not a hand-off item"),
    (json.dumps({**_item("/docs/a.pdf"), "index": "/tmp/evil"}).encode(), "not a hand-off item"),
    (json.dumps(_item("/etc/shadow")).encode(), "outside the writer's PDFINDEX_ROOTS"),
    (json.dumps(_item("/docs/../etc/shadow")).encode(), "outside the writer's PDFINDEX_ROOTS"),
    (json.dumps(_item("/docsevil/a.pdf")).encode(), "outside the writer's PDFINDEX_ROOTS"),
    (json.dumps(_item("/docs/a.pdf", run="x" * 32)).encode(), "run id"),
    (json.dumps(_item("/docs/a.pdf", size=-1)).encode(), "out of range"),
    (json.dumps({**_item("/docs/a.pdf"), "pages": 7}).encode(), "pages=7"),
    (json.dumps({**_item("/docs/a.pdf"), "job": "ef" * 32}).encode(), "job hash"),
    (json.dumps({**_item("/docs/a.pdf"), "outcome": {"doc": {}}}).encode(), "not a JSON string"),
    (b'{"run": ' * 100_000, "not JSON"),  # deep nesting
    (b" " * (messages.MAX_ITEM_BYTES + 1), "over the limit"),
])
def test_malformed_items_are_refused(raw: bytes, problem: str) -> None:
    with pytest.raises(messages.BadMessage, match=problem):
        messages.parse_item(raw, ROOTS)


# ---- the writer on a real Redis and a real index ---------------------------------------------

def _real_write(index: PageIndex) -> WriteBatch:
    from pdfindex.workers.tasks import write_batch

    return partial(write_batch, index, Staging())


def test_poisoned_items_are_dropped_and_the_queue_behind_them_is_written(
        server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    r = server.admin()
    docs, elsewhere = tmp_path / "docs", tmp_path / "elsewhere"
    docs.mkdir()
    elsewhere.mkdir()
    (elsewhere / "current").write_text("gen-1")
    before = snapshot(elsewhere)
    good = [_item(str(docs / f"f{i}.pdf"), job=f"{i:064x}", text=f"goodword{i}") for i in range(3)]
    for item in good:
        json.loads(item["outcome"])  # well formed
    poison = [
        json.dumps({"run": RUN, "index": str(elsewhere), "pages": 0, "outcome": "{}"}).encode(),  # the old format
        b"\xff\xfe not json at all",
        json.dumps(_item("/etc/shadow", job="9" * 64)).encode(),
    ]
    # A killed writer's batch with poison in front, then the results queue.
    r.rpush(lanes.WRITING, poison[0], json.dumps(good[0]).encode())
    r.rpush(lanes.RESULTS, poison[1], json.dumps(good[1]).encode(), poison[2], json.dumps(good[2]).encode())
    index = PageIndex(tmp_path / "index")
    with caplog.at_level("ERROR", logger="pdfindex.workers.drain"):
        written = Drain(r, (docs,), 2000).run(Sink(_real_write(index)))
    assert written == 3
    for i in range(3):
        assert find(PageIndex(tmp_path / "index"), f"goodword{i}") == [(str(docs / f"f{i}.pdf"), 1)]
    dropped = [rec.getMessage() for rec in caplog.records if "dropped a hand-off item" in rec.getMessage()]
    assert len(dropped) == 3, dropped
    assert "not a hand-off item" in dropped[0] and "not JSON" in dropped[1] and "outside" in dropped[2]
    assert r.llen(lanes.WRITING) == 0 and r.llen(lanes.RESULTS) == 0
    assert snapshot(elsewhere) == before
    assert "/etc/shadow" not in docs_by_path(PageIndex(tmp_path / "index"))
    progress = r.hgetall(run_progress.run_key(RUN))
    assert sorted(progress) == sorted(f"{i:064x}".encode() for i in range(3))
    # a second drain finds nothing left: the poison is not retried
    assert Drain(r, (docs,), 2000).run(Sink(_real_write(index))) == 0


def test_the_lock_outlives_its_ttl_during_a_long_drain(server: Server, tmp_path: Path) -> None:
    """Lock TTL 1 s, a batch that takes 3.5 s: the heartbeat keeps the same token
    (redis-py's thread-local token made every renewal fail before)."""
    r = server.admin()
    r.rpush(lanes.RESULTS, json.dumps(_item(str(tmp_path / "a.pdf"))).encode())
    tokens: list[bytes | None] = []

    def slow_write(batch: list[messages.HandOff], ensure: Any) -> list[dict[str, Any]]:
        for _ in range(7):
            time.sleep(0.5)
            tokens.append(r.get(lanes.WRITER_LOCK))
        ensure()
        return [{"status": "indexed"} for _ in batch]

    assert Drain(r, (tmp_path,), 2000, lock_seconds=1).run(Sink(slow_write)) == 1
    assert len(tokens) == 7 and tokens[0] is not None and set(tokens) == {tokens[0]}
    assert not r.exists(lanes.WRITER_LOCK)  # released at the end


def test_a_stolen_lock_stops_the_writer_before_it_commits(
        server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    r = server.admin()
    docs = tmp_path / "docs"
    item = json.dumps(_item(str(docs / "a.pdf"), text="stolenword")).encode()
    r.rpush(lanes.RESULTS, item)
    index = PageIndex(tmp_path / "index")
    real = _real_write(index)

    def write_while_stolen(batch: list[messages.HandOff], ensure: Any) -> list[dict[str, Any]]:
        r.set(lanes.WRITER_LOCK, "another-writer", px=60_000)  # its lock lapsed; another writer took it
        time.sleep(1.0)  # the heartbeat notices
        return real(batch, ensure)

    with caplog.at_level("ERROR", logger="pdfindex.workers.writer_lock"), pytest.raises(writer_lock.LockLost, match="lock"):
        Drain(r, (docs,), 2000, lock_seconds=1.5).run(Sink(write_while_stolen))
    assert any("writer lock" in rec.getMessage() for rec in caplog.records)
    assert r.lrange(lanes.WRITING, 0, -1) == [item]  # left for the next writer
    assert r.get(lanes.WRITER_LOCK) == b"another-writer"  # not released by us
    assert find(PageIndex(tmp_path / "index"), "stolenword") == []  # nothing committed


def test_queue_depths_broker_errors_are_one_line(tmp_path: Path) -> None:
    port = free_port()
    with pytest.raises(BrokerError) as info:
        handoff.queue_depths(_settings(f"redis://:s3cret@127.0.0.1:{port}/0"))
    assert str(info.value) == f"cannot reach the broker at redis://:***@127.0.0.1:{port}/0: connection refused"


# ---- passwords, ACL users, TLS ------------------------------------------------------------------

def _acl_server(tmp_path: Path) -> Server:
    s = Server(tmp_path, "--requirepass", "adminpw",
               # the ingest user: everything pdfindex and Celery need, nothing else (no FLUSHALL, CONFIG, ...)
               "--user", "ingest", "on", ">ingestpw", "~*", "&*", "+@all", "-@dangerous",
               "--user", "reader", "on", ">readerpw", "~*", "+ping")
    s.password = "adminpw"
    return s


def test_password_and_acl_errors_are_one_line(tmp_path: Path) -> None:
    s = _acl_server(tmp_path)
    try:
        s.start()
        base = f"127.0.0.1:{s.port}/0"
        transport.ping(_settings(f"redis://ingest:ingestpw@{base}"))
        assert handoff.queue_depths(_settings(f"redis://:adminpw@{base}"))["extract"] == 0
        cases = {
            f"redis://ingest:wrong@{base}": "authentication failed (wrong password or user name)",
            f"redis://:wrong@{base}": "authentication failed (wrong password or user name)",
            f"redis://{base}": "the broker requires a password (none given in the URL)",
            f"redis://reader:readerpw@{base}": "the broker's ACL refuses a command",
        }
        for url, problem in cases.items():
            with pytest.raises(BrokerError) as info:
                handoff.queue_depths(_settings(url))
            message = str(info.value)
            assert message.startswith(f"cannot reach the broker at {config.redact_url(url)}: {problem}"), message
            assert "wrong" not in message.split(": ", 1)[0] and "\n" not in message
    finally:
        s.stop()


def _tls_material(directory: Path) -> Path:
    """A CA and a server certificate for 127.0.0.1 (cryptography, valid one day)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def cert(subject: str, key: Any, issuer: str, signer: Any, ca: bool) -> x509.Certificate:
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            import ipaddress

            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    def save(name: str, key: Any, certificate: x509.Certificate) -> None:
        (directory / f"{name}.key").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()))
        (directory / f"{name}.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))

    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    save("ca", ca_key, cert("pdfindex test CA", ca_key, "pdfindex test CA", ca_key, True))
    server_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    save("server", server_key, cert("127.0.0.1", server_key, "pdfindex test CA", ca_key, False))
    return directory


def test_rediss_with_query_options(tmp_path: Path) -> None:
    tls = _tls_material(tmp_path / "tls")
    s = Server(tmp_path, tls=tls)
    try:
        s.start()
        base = f"rediss://127.0.0.1:{s.port}/0"
        for reqs in ("required", "CERT_REQUIRED"):
            assert handoff.queue_depths(_settings(f"{base}?ssl_cert_reqs={reqs}&ssl_ca_certs={tls / 'ca.pem'}")) \
                == {"extract": 0, "index": 0, "ocr": 0, "waiting to be written": 0}
        # Without the CA the server's certificate cannot be verified; verification is on by default.
        with pytest.raises(BrokerError, match="TLS failed"):
            handoff.queue_depths(_settings(base))
        with pytest.raises(BrokerError, match="ssl_cert_reqs='maybe'"):
            transport.client(_settings(f"{base}?ssl_cert_reqs=maybe"))
    finally:
        s.stop()


# ---- real workers ------------------------------------------------------------------------------

def _cluster(url: str, base: Path, **settings: str) -> Cluster:
    return Cluster(url, base, roots=str(base / "docs"), index_dir=str(base / "index"), **settings)


@pytest.fixture
def cluster(server: Server, tmp_path: Path) -> Iterator[Cluster]:
    (tmp_path / "docs").mkdir()
    c = _cluster(server.url, tmp_path)
    yield c
    c.stop()


def _secret_outside(tmp_path: Path) -> Path:
    secret = write(tmp_path / "private" / "secret.pdf", text_pdf("secretive", 1))
    secret.chmod(0o600)
    return secret


@pytest.mark.slow
def test_forged_extract_messages_are_refused_and_nothing_is_read(
        server: Server, cluster: Cluster, tmp_path: Path) -> None:
    """A hand-made pdfindex.extract naming a mode-0600 PDF outside the roots (the new
    message shape, and the old one naming an index elsewhere): refused and logged, no
    hand-off item, no progress entry with its text, the other directory untouched;
    `celery control shutdown` from the same attacker does nothing; a real ingest
    then works."""
    secret = _secret_outside(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "current", b"gen-1")
    before = snapshot(elsewhere)
    cluster.start(("ex1", "extract", 1), ("writer", "index", 1))
    r = server.admin()
    attacker = _attacker(server.url)
    secret_hash = hashlib.sha256(secret.read_bytes()).hexdigest()
    run = uuid.uuid4().hex
    attacker.send_task("pdfindex.extract", args=[str(secret), secret_hash, run], queue="extract")
    attacker.send_task("pdfindex.extract", args=[str(tmp_path / "docs" / ".." / "private" / "secret.pdf"),
                                                 secret_hash, run], queue="extract")
    attacker.send_task("pdfindex.extract", args=[str(secret), secret_hash, run, str(elsewhere), None],
                       queue="extract")
    log = cluster.workers["ex1"]
    wait_for(lambda: log.log_text().count("refused pdfindex.extract") >= 3, 90, "three refusals in the log")
    text = log.log_text()
    assert text.count(f"for {str(secret)!r}: outside PDFINDEX_ROOTS") == 1
    assert "malformed message: unexpected arguments" in text
    assert "extracting" not in text  # nothing was read, not even counted as an attempt
    subprocess.run([sys.executable, "-m", "celery", "-A", "pdfindex.workers.app", "control", "shutdown", "--timeout", "2"],
                   cwd=ROOT, env=cluster.env, capture_output=True, timeout=60)
    time.sleep(3)
    assert all(w.proc.poll() is None for w in cluster.workers.values()), cluster.logs()
    dump = b"".join(r.dump(k) or b"" for k in r.keys("*"))
    assert b"secretive" not in dump
    assert r.llen(lanes.RESULTS) == 0 and r.llen(lanes.WRITING) == 0
    assert snapshot(elsewhere) == before
    assert PageIndex(tmp_path / "index").stats().documents == 0  # no record: the writer was never asked to write
    # the workers still serve real ingests
    good = write(tmp_path / "docs" / "good.pdf", text_pdf("genuine", 2))
    summary = parse_summary(ingest(tmp_path / "index", tmp_path / "docs", env=cluster.env).stdout)
    assert (summary.indexed, summary.failed) == (1, 0)
    ix = PageIndex(tmp_path / "index")
    assert find(ix, page_word("genuine", 2)) == [(str(good), 2)]
    assert str(secret) not in docs_by_path(ix) and find(ix, page_word("secretive", 1)) == []


@pytest.mark.slow
def test_forged_hand_off_items_do_not_stall_the_writer(server: Server, cluster: Cluster, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "current", b"gen-1")
    before = snapshot(elsewhere)
    r = server.admin()
    r.rpush(lanes.WRITING, json.dumps({"run": RUN, "index": str(elsewhere), "pages": 0, "outcome": "{}"}))
    r.rpush(lanes.RESULTS, b"{broken json", json.dumps(_item("/etc/passwd", text="forgedword")))
    files = [write(tmp_path / "docs" / f"d{i}.pdf", text_pdf(f"behind{i}", 1)) for i in range(3)]
    cluster.start(("ex1", "extract", 1), ("writer", "index", 1))
    summary = parse_summary(ingest(tmp_path / "index", tmp_path / "docs", env=cluster.env, timeout=60).stdout)
    assert (summary.indexed, summary.failed) == (3, 0)
    ix = PageIndex(tmp_path / "index")
    for i, path in enumerate(files):
        assert find(ix, page_word(f"behind{i}", 1)) == [(str(path), 1)]
    assert find(ix, "forgedword") == [] and "/etc/passwd" not in docs_by_path(ix)
    writer_log = cluster.workers["writer"].log_text()
    assert writer_log.count("dropped a hand-off item") == 3, writer_log[-3000:]
    assert r.llen(lanes.WRITING) == 0 and r.llen(lanes.RESULTS) == 0
    assert snapshot(elsewhere) == before


def test_a_worker_without_roots_refuses_to_start(server: Server, tmp_path: Path) -> None:
    env = cli_env(PDFINDEX_BROKER_URL=server.url)
    worker = spawn_worker("noroots", "extract", 1, env, tmp_path)
    assert worker.proc.wait(60) == 2
    text = worker.log_text().strip()
    assert text.startswith("pdfindex: PDFINDEX_ROOTS is not set") and "\n" not in text, text


@pytest.mark.parametrize(("variable", "value", "problem"), [
    ("PDFINDEX_BROKER_URL", "amqp://guest:guest@localhost//", "the broker must be Redis"),
    ("PDFINDEX_ROOTS", "relative/docs", "is not an absolute path"),
    ("PDFINDEX_FILE_TIMEOUT", "soon", "PDFINDEX_FILE_TIMEOUT='soon' is not a number"),
    ("PDFINDEX_SIGNING_KEY", "/nonexistent.key", "message signing needs all of"),
])
def test_a_worker_with_bad_settings_says_so_in_one_line(tmp_path: Path, variable: str, value: str,
                                                        problem: str) -> None:
    env = cli_env(**{"PDFINDEX_BROKER_URL": "redis://127.0.0.1:1/0", "PDFINDEX_ROOTS": str(tmp_path), variable: value})
    worker = spawn_worker("bad", "extract", 1, env, tmp_path)
    assert worker.proc.wait(60) == 2
    text = worker.log_text().strip()
    assert problem in text and "\n" not in text and "Traceback" not in text, text
    assert "guest:guest" not in text


def _ingest_one_file(url: str, tmp_path: Path, tag: str) -> dict[str, str]:
    """Ingest one two-page file through a real cluster on ``url``; returns its environment."""
    (tmp_path / "docs").mkdir()
    cluster = _cluster(url, tmp_path)
    try:
        cluster.start(("ex1", "extract", 1), ("writer", "index", 1))
        doc = write(tmp_path / "docs" / f"{tag}.pdf", text_pdf(tag, 2))
        summary = parse_summary(ingest(tmp_path / "index", tmp_path / "docs", env=cluster.env).stdout)
        assert summary.indexed == 1
        assert find(PageIndex(tmp_path / "index"), page_word(tag, 2)) == [(str(doc), 2)]
    finally:
        cluster.stop()
    return cluster.env


@pytest.mark.slow
def test_password_acl_broker_end_to_end_and_a_wrong_password(tmp_path: Path) -> None:
    s = _acl_server(tmp_path)
    try:
        s.start()
        env = _ingest_one_file(f"redis://ingest:ingestpw@127.0.0.1:{s.port}/0", tmp_path, "guarded")
        wrong = f"redis://ingest:nope@127.0.0.1:{s.port}/0"
        shown = f"redis://ingest:***@127.0.0.1:{s.port}/0"
        bad_env = {**env, "PDFINDEX_BROKER_URL": wrong}
        worker = spawn_worker("wrongpw", "extract", 1, bad_env, tmp_path)
        assert worker.proc.wait(60) == 2
        assert worker.log_text().strip() == (f"pdfindex: cannot reach the broker at {shown}: "
                                             "authentication failed (wrong password or user name)")
        status = run_cli("status", "--index", tmp_path / "index", env=bad_env)
        assert status.returncode != 0 and "Traceback" not in status.stderr
        assert f"cannot reach the broker at {shown}: authentication failed" in status.stderr
        write(tmp_path / "docs" / "more.pdf", text_pdf("more", 1))
        result = ingest(tmp_path / "index", tmp_path / "docs", env=bad_env, check=False)
        assert result.returncode != 0 and "Traceback" not in result.stderr
        assert f"cannot reach the broker at {shown}: authentication failed" in result.stderr
        assert "nope" not in result.stderr + status.stderr
    finally:
        s.stop()


def _signing_material(directory: Path, name: str) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    key_path, cert_path = directory / f"{name}.key", directory / f"{name}.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


@pytest.mark.slow
def test_signed_cluster_ingests_and_unsigned_messages_are_rejected(server: Server, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    key, cert = _signing_material(tmp_path / "certs", "pdfindex")
    cluster = _cluster(server.url, tmp_path, signing_key=str(key), signing_cert=str(cert),
                       signing_cert_store=str(tmp_path / "certs" / "*.pem"))
    r = server.admin()
    try:
        cluster.start(("ex1", "extract", 1), ("writer", "index", 1))
        doc = write(tmp_path / "docs" / "signed.pdf", text_pdf("signed", 2))
        summary = parse_summary(ingest(tmp_path / "index", tmp_path / "docs", env=cluster.env).stdout)
        assert summary.indexed == 1
        assert find(PageIndex(tmp_path / "index"), page_word("signed", 1)) == [(str(doc), 1)]
        # An attacker without the key: a JSON message (inside the roots even) and an unsigned hand-off item.
        inside = write(tmp_path / "docs" / "planted.pdf", text_pdf("planted", 1))
        _attacker(server.url).send_task("pdfindex.extract", queue="extract", args=[
            str(inside), hashlib.sha256(inside.read_bytes()).hexdigest(), uuid.uuid4().hex])
        r.rpush(lanes.RESULTS, json.dumps(_item(str(tmp_path / "docs" / "x.pdf"), text="unsignedword")))
        _attacker(server.url).send_task("pdfindex.write", queue="index")
        # The same attacker with a key of its own, not in the workers' certificate store.
        other_key, other_cert = _signing_material(tmp_path / "other", "mallory")
        mallory = _attacker(server.url)
        mallory.conf.update(security_key=str(other_key), security_certificate=str(other_cert),
                            security_cert_store=str(tmp_path / "other" / "*.pem"), task_serializer="auth",
                            accept_content=["auth"])
        mallory.setup_security(allowed_serializers=["json"], serializer="json")
        try:
            mallory.send_task("pdfindex.extract", queue="extract", args=[
                str(inside), hashlib.sha256(inside.read_bytes()).hexdigest(), uuid.uuid4().hex])
        finally:
            from kombu.serialization import registry

            registry.enable("json")  # setup_security disabled the others for this test process
            registry._set_default_serializer("json")
        ex_log, writer_log = cluster.workers["ex1"], cluster.workers["writer"]
        wait_for(lambda: "Refusing to deserialize untrusted content of type json" in ex_log.log_text()
                 and "Unknown certificate" in ex_log.log_text(), 30, "both messages refused", interval=0.2)
        wait_for(lambda: "Refusing to deserialize untrusted content of type json" in writer_log.log_text(), 30,
                 "the unsigned write kick refused", interval=0.2)
        assert ex_log.log_text().count("extracting") == 1  # only the signed ingest's file
        inside.unlink()
        later = write(tmp_path / "docs" / "later.pdf", text_pdf("later", 1))
        assert parse_summary(ingest(tmp_path / "index", tmp_path / "docs", env=cluster.env).stdout).indexed == 1
        wait_for(lambda: "bad or missing signature" in writer_log.log_text(), 90, "the writer to drop the item")
        ix = PageIndex(tmp_path / "index")
        assert find(ix, page_word("later", 1)) == [(str(later), 1)]
        assert find(ix, page_word("planted", 1)) == [] and find(ix, "unsignedword") == []
        assert r.llen(lanes.RESULTS) == 0 and r.llen(lanes.WRITING) == 0
    finally:
        cluster.stop()


@pytest.mark.slow
def test_a_hard_time_limit_kill_counts_as_an_attempt(server: Server, tmp_path: Path) -> None:
    """Attempt 1 is SIGKILLed (redelivered), attempt 2 is killed by the hard time
    limit: the failure record says attempt 2 (it said 1 before, whatever happened)."""
    (tmp_path / "docs").mkdir()
    slow = write(tmp_path / "docs" / "slow.pdf", slow_pdf("sloth", 20, 20_000))
    cluster = _cluster(server.url, tmp_path, file_timeout="6", file_hard_timeout="6")
    try:
        cluster.start(("ex1", "extract", 1), ("writer", "index", 1))
        client = subprocess.Popen([sys.executable, "-m", "pdfindex.cli.main", "ingest", str(tmp_path / "docs"), "--index",
                                   str(tmp_path / "index")], cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = wait_for(lambda: next((ln for ln in cluster.workers["ex1"].log_text().splitlines()
                                      if "(attempt 1) in process" in ln), None), 30, "attempt 1")
        os.kill(int(line.rsplit(" ", 1)[1]), 9)
        out, err = client.communicate(timeout=60)
        assert client.returncode == 5, err  # finished, with a file failed
        assert "(attempt 2) in process" in cluster.workers["ex1"].log_text()
        (record,) = docs_by_path(PageIndex(tmp_path / "index"))[str(slow)]
        assert (record.status, record.attempts) == (Status.FAILED, 2)
        assert record.error == "time limit of 6 s exceeded; extraction killed"
        assert parse_summary(out).failures == {str(slow): record.error}
    finally:
        cluster.stop()


def test_the_memory_cap_is_lifted_after_an_extraction(tmp_path: Path) -> None:
    """The cap lives only for the extraction: the writer in the same process is not capped."""
    import resource

    from pdfindex.workers.limits import memory_cap

    before = resource.getrlimit(resource.RLIMIT_AS)
    with memory_cap(512):
        assert resource.getrlimit(resource.RLIMIT_AS)[0] == 512 * 1024 * 1024
        with pytest.raises(MemoryError):
            bytearray(600 * 1024 * 1024)
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert len(bytearray(600 * 1024 * 1024)) > 0


def test_outcome_round_trip_through_an_item() -> None:
    outcome = failed(Path("/docs/ø\udcff.pdf"), HASH, Status.FAILED, "because")
    item = messages.handoff_item(RUN, HASH, outcome.to_json(), 0)
    handoff = messages.parse_item(json.dumps(item).encode(), ROOTS)
    assert handoff.outcome == Outcome.from_json(outcome.to_json())



def test_limits_and_remote_control_in_the_celery_configuration() -> None:
    """Time limits on pdfindex.extract only (the writer's long commit is never killed),
    no remote control, JSON only (the writer-side checks are in the tests above)."""
    from pdfindex.workers.app import app, settings
    from pdfindex.workers.tasks import extract, write

    assert app.conf.task_time_limit is None and app.conf.task_soft_time_limit is None
    assert extract.time_limit == settings.file_hard_timeout
    assert write.time_limit is None and write.soft_time_limit is None
    assert app.conf.worker_enable_remote_control is False
    assert app.conf.accept_content == ["json"] and app.conf.task_serializer == "json"
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    assert app.conf.task_acks_on_failure_or_timeout


@pytest.mark.slow
def test_tls_broker_end_to_end(tmp_path: Path) -> None:
    """rediss:// with a CA of our own: workers (kombu) and the hand-off (redis-py) both
    verify the server; a worker given no CA refuses to start with one line."""
    tls = _tls_material(tmp_path / "tls")
    s = Server(tmp_path, tls=tls)
    try:
        s.start()
        env = _ingest_one_file(f"rediss://127.0.0.1:{s.port}/0?ssl_cert_reqs=CERT_REQUIRED&ssl_ca_certs={tls / 'ca.pem'}",
                               tmp_path, "encrypted")
        no_ca = {**env, "PDFINDEX_BROKER_URL": f"rediss://127.0.0.1:{s.port}/0"}
        worker = spawn_worker("noca", "extract", 1, no_ca, tmp_path)
        assert worker.proc.wait(60) == 2
        text = worker.log_text().strip()
        assert text.startswith(f"pdfindex: cannot reach the broker at rediss://127.0.0.1:{s.port}/0: TLS failed")
        assert "\n" not in text
    finally:
        s.stop()


def test_the_ingest_client_refuses_files_outside_its_roots(server: Server, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    inside = write(docs / "in.pdf", text_pdf("inside", 1))
    outside = write(tmp_path / "other" / "out.pdf", text_pdf("outside", 1))
    env = cli_env(PDFINDEX_BROKER_URL=server.url, PDFINDEX_ROOTS=str(docs), PDFINDEX_INDEX_DIR=str(tmp_path / "ix"))
    r = run_cli("ingest", inside, outside, "--index", tmp_path / "ix", env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == \
        f"pdfindex: {outside}: outside PDFINDEX_ROOTS ({docs}); the workers would not read it"
    no_roots = {k: v for k, v in env.items() if k != "PDFINDEX_ROOTS"}
    r = run_cli("ingest", inside, "--index", tmp_path / "ix", env=no_roots)
    assert r.returncode == 1 and "PDFINDEX_ROOTS is not set" in r.stderr and "Traceback" not in r.stderr
    assert server.admin().llen("extract") == 0  # nothing was enqueued
