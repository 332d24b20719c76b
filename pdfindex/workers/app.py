"""The Celery application: `celery -A pdfindex.workers.app worker` (or `pdfindex worker`).

Configured from ``config`` (PDFINDEX_* of the worker's own environment: broker, index
directory, roots, password file, limits, signing); a message never changes any of
them. Settings, each for a reason:
- ``task_acks_late`` + ``task_reject_on_worker_lost``: a task whose worker process
  dies mid-file is redelivered, not lost (and counted toward PDFINDEX_MAX_ATTEMPTS);
  index writes are idempotent by document hash and page, so a redelivered file is
  still indexed exactly once. ``task_acks_on_failure_or_timeout``: a file killed by
  its hard time limit is recorded as failed by the task's ``on_failure`` (Celery
  >= 5.7 calls it on a hard timeout) and its message acknowledged.
- ``worker_prefetch_multiplier=1``: a worker holds one file at a time, so a slow
  file does not hold back others queued behind it.
- soft and hard time limits and an address-space cap on ``pdfindex.extract`` only
  (tasks.py), never on the index writer; ``worker_max_memory_per_child`` only in
  workers that do not write the index.
- the Redis visibility timeout outlasts the hard time limit, so a long file is not
  redelivered while it is still being worked on.
- JSON only (or Celery's signed "auth" serializer over JSON): tasks carry a path, a
  hash and a run id, never pickled objects, directories or PDF bytes.
- ``worker_enable_remote_control=False``: no `celery control shutdown` (or any other
  broadcast command) from whoever can reach Redis.

A worker refuses to start (one line on stderr, exit status 2) without PDFINDEX_ROOTS,
with an unreadable password file or signing key, on Celery < 5.7, or when the broker
refuses it; see docs/security.md.
"""
from __future__ import annotations

import logging
import os
import ssl
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import celery
import redis
from celery import Celery, bootsteps
from celery.signals import after_setup_logger, after_setup_task_logger, celeryd_init, worker_process_init
from kombu.serialization import dumps, loads

from pdfindex import config
from pdfindex.indexer import PageIndex, StorageError

from . import identity
from .errors import BrokerError
from .lanes import QUEUES, SHARD_QUEUE, is_writer_queue
from .limits import settle_process
from .messages import BadMessage
from .transport import broker_error, client, ping, tls_options

_CERT_REQS = {"required": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def _fail(problem: str) -> None:
    """One line, no traceback: the worker (or the command importing this) stops."""
    print(f"pdfindex: {problem}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def _load_settings() -> config.Settings:
    try:
        return config.load()
    except config.SettingsError as exc:
        _fail(str(exc))
        raise  # unreachable


settings = _load_settings()


def kombu_url(url: str) -> str:
    """The broker URL as kombu wants it: unix:///path becomes redis+socket:///path,
    and TLS options leave the query (they go to ``broker_use_ssl``, verified)."""
    if not url:
        return "memory://"
    parts = urlsplit(url)
    if parts.scheme == "unix":
        query = [("virtual_host", v) if k == "db" else (k, v) for k, v in parse_qsl(parts.query)]
        return f"redis+socket://{parts.path}" + (f"?{urlencode(query)}" if query else "")
    if parts.scheme == "rediss":
        query = [(k, v) for k, v in parse_qsl(parts.query) if not k.startswith("ssl_")]
        return urlunsplit(parts._replace(query=urlencode(query)))
    return url


def kombu_ssl(url: str) -> dict[str, Any] | None:
    try:
        options: dict[str, Any] | None = tls_options(url) if url else None
    except BrokerError as exc:
        _fail(str(exc))
    if options is not None:
        options["ssl_cert_reqs"] = _CERT_REQS[options["ssl_cert_reqs"]]
    return options


app = Celery("pdfindex", include=["pdfindex.workers.tasks"])
app.conf.update(
    broker_url=kombu_url(settings.broker_url),
    broker_use_ssl=kombu_ssl(settings.broker_url),
    # Results are ignored (progress goes through the hand-off); Celery's backends know no
    # unix:// URL, so a unix-socket broker runs without one.
    result_backend=None if settings.result_backend.startswith("unix://") else settings.result_backend or None,
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    result_accept_content=["json"],
    event_serializer="json",
    task_ignore_result=True,
    task_acks_late=True,
    task_acks_on_failure_or_timeout=True,
    # Publishing (the writer kick) waits out a broker restart instead of failing.
    task_publish_retry_policy={"max_retries": 60, "interval_start": 0.5, "interval_step": 0.5, "interval_max": 3},
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    worker_enable_remote_control=False,
    worker_max_memory_per_child=None,  # set in _check_worker for workers that only extract
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,
    broker_transport_options={"visibility_timeout": int(max(settings.file_hard_timeout,
                                                            settings.ocr_file_timeout)) + 60},
    task_routes={"pdfindex.extract": {"queue": "extract"}, "pdfindex.write": {"queue": "index"},
                 "pdfindex.ocr": {"queue": "ocr"}},
    task_default_queue="extract",
    worker_hijack_root_logger=False,
)
if settings.result_backend.startswith("rediss://"):
    app.conf.redis_backend_use_ssl = kombu_ssl(settings.result_backend)
    app.conf.result_backend = kombu_url(settings.result_backend)

if settings.signing:
    app.conf.update(
        security_key=str(settings.signing_key), security_certificate=str(settings.signing_cert),
        security_cert_store=settings.signing_cert_store, security_digest="sha256",
        task_serializer="auth", accept_content=["auth"],
    )
    try:
        app.setup_security(allowed_serializers=["json"], serializer="json")
    except Exception as exc:  # noqa: BLE001 - key/certificate problems of every kind: one line
        _fail(f"message signing (PDFINDEX_SIGNING_*) cannot be set up: {type(exc).__name__}: {exc}")


def signer() -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]] | None:
    """(sign, verify) for hand-off items when message signing is configured: the same
    key, certificate and store as the Celery messages, so a forged item pushed
    straight into Redis is refused too. None without signing."""
    if not settings.signing:
        return None
    def sign(data: bytes) -> bytes:
        _, _, body = dumps(data.decode("ascii"), serializer="auth")
        return body if isinstance(body, bytes) else body.encode()

    def verify(raw: bytes) -> bytes:
        try:
            text = loads(raw, "application/data", "utf-8", accept=["application/data"])
        except Exception as exc:  # noqa: BLE001 - SecurityError and decoding errors alike
            raise BadMessage(f"bad or missing signature: {str(exc)[:120]}") from None
        if not isinstance(text, str):
            raise BadMessage("a signed item that is not a string")
        return text.encode("ascii", "surrogateescape")

    return sign, verify


def _queues(options: dict[str, Any]) -> set[str]:
    raw = options.get("queues") or []
    names = raw.split(",") if isinstance(raw, str) else [q for part in raw for q in str(part).split(",")]
    return {q.strip() for q in names if q.strip()} or {app.conf.task_default_queue}


def startup_problem(s: config.Settings) -> str | None:
    """Why a worker with these settings must not start, or None."""
    if celery.VERSION < (5, 7):
        return (f"Celery {celery.__version__} is too old: 5.7 or later is needed (older versions acknowledge "
                "a file killed by its hard time limit and lose it)")
    if not s.broker_url:
        return "PDFINDEX_BROKER_URL is not set; the embedded mode needs no worker"
    if not s.roots:
        return ("PDFINDEX_ROOTS is not set: a worker reads only files under these folders (absolute paths "
                f"separated by {os.pathsep!r}); set it to the folders you ingest")
    for root in s.roots:
        if not root.is_dir():
            return f"PDFINDEX_ROOTS: {root} is not a folder"
    if s.password_file is not None:
        try:
            with open(s.password_file, "rb"):
                pass
        except OSError as exc:
            return f"PDFINDEX_PASSWORD_FILE={s.password_file}: cannot read it ({exc.strerror})"
    try:
        ping(s)
    except BrokerError as exc:
        return str(exc)
    return None


def _not_pdfminer_damage(record: logging.LogRecord) -> bool:
    """pdfminer.six logs the damage it recovers from at WARNING, naming no file; the
    extractor records it as the page's problems instead. Dropped from the worker's
    log handlers; pdfminer's own logger is left as it is (never set at import)."""
    return not (record.levelno < logging.ERROR and (record.name == "pdfminer" or record.name.startswith("pdfminer.")))


@after_setup_logger.connect
@after_setup_task_logger.connect
def _filter_pdfminer(logger: logging.Logger | None = None, **_: Any) -> None:
    for handler in logger.handlers if logger is not None else ():
        if _not_pdfminer_damage not in handler.filters:
            handler.addFilter(_not_pdfminer_damage)


_dedicated_writer = False
_writer_shards: frozenset[int] | None = None
_announcement: identity.Announcement | None = None


def is_dedicated_writer() -> bool:
    """Whether this worker consumes writer queues only, with one process (the
    README's writer): only then may a process keep a batch's index writer open
    between write tasks, no other process of the worker needing the index's lock."""
    return _dedicated_writer


def writer_shards() -> frozenset[int] | None:
    """The shards this worker writes alone (its ``index.K`` queues), or None: it
    writes every shard, from the common lane."""
    return _writer_shards


def announcement() -> identity.Announcement | None:
    """The index this writer announced on the broker (None in a worker that only
    extracts, or when the index could not be read at start: a write kick finds out)."""
    return _announcement


def _claim_index() -> identity.Announcement | None:
    """A writer's start: its index's id, announced on the broker, unless a running
    writer of another index holds it (the worker refuses to start, naming both)."""
    try:
        index = PageIndex(settings.index_dir, new_language=settings.language, new_shards=settings.shards)
        mine = identity.this(str(index.identity(create=True)), settings.index_dir)
        index.close()
    except StorageError as exc:  # a full or read-only disk: each write kick says so, and retries
        logging.getLogger("pdfindex").error("pdfindex: the index writer cannot open its index: %s", exc)
        return None
    r = client(settings)
    try:
        previous = identity.claim(r, mine)
    except identity.NotTheWritersIndex as exc:
        _fail(str(exc))
    except redis.RedisError as exc:
        _fail(broker_error(settings, exc).args[0])
    finally:
        r.close()
    if previous is not None:
        logging.getLogger("pdfindex").warning(
            "pdfindex: this writer's index %s takes over the broker from %s, whose writer is no longer running; "
            "clients that still use that index are refused", mine.describe(), previous.describe())
    return mine


class _KeepAnnouncing(bootsteps.StartStopStep):
    """In a writer worker's main process: the announcement's heartbeat (identity.ALIVE),
    on the worker's own timer (its event loop: no thread beside the forking pool)."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None

    def start(self, parent: Any) -> None:
        if _announcement is not None:
            self.tref = parent.timer.call_repeatedly(identity.REFRESH_SECONDS, _refresh, (_announcement,))

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()


def _refresh(mine: identity.Announcement) -> None:
    try:
        r = client(settings, timeout=2)
        identity.refresh(r, mine)
        r.close()
    except (redis.RedisError, BrokerError):
        pass  # Redis away: the next beat tries again, and a write kick checks too


app.steps["worker"].add(_KeepAnnouncing)


def shard_queues(queues: set[str]) -> frozenset[int] | None:
    """The shard numbers of a worker's ``index.K`` queues (None without any);
    raises ValueError for a malformed one, or a queue pdfindex does not have (a
    worker on a misspelt queue would wait for ever, ready, on a queue nobody sends to)."""
    shards = set()
    for name in sorted(queues):
        if name not in QUEUES and not name.startswith(SHARD_QUEUE):
            raise ValueError(f"unknown queue {name!r}: pdfindex's queues are extract, index, ocr and index.K "
                             "(the writer of shard K)")
        if name.startswith(SHARD_QUEUE):
            number = name[len(SHARD_QUEUE):]
            if not number.isascii() or not number.isdigit() or not 0 <= int(number) < config.MAX_SHARDS:
                raise ValueError(f"queue {name!r}: a shard writer's queue is index.K, K from 0 to "
                                 f"{config.MAX_SHARDS - 1}")
            shards.add(int(number))
    return frozenset(shards) if shards else None


@celeryd_init.connect
def _check_worker(sender: Any = None, conf: Any = None, options: dict[str, Any] | None = None, **_: Any) -> None:
    global _dedicated_writer, _writer_shards, _announcement  # noqa: PLW0603 - set once in the main process, before its pool forks
    problem = startup_problem(settings)
    if problem is not None:
        _fail(problem)
    queues = _queues(options or {})
    try:
        _writer_shards = shard_queues(queues)
    except ValueError as exc:
        _fail(str(exc))
    writes = set(filter(is_writer_queue, queues))
    if writes:
        _announcement = _claim_index()
    _dedicated_writer = bool(writes) and writes == queues and str((options or {}).get("concurrency")) == "1"
    if conf is not None and not writes and settings.max_memory_mb:
        # Only extraction lives here: replace a pool process whose memory grew large.
        conf.worker_max_memory_per_child = settings.max_memory_mb * 1024


@worker_process_init.connect
def _settle(**_: Any) -> None:
    settle_process()
