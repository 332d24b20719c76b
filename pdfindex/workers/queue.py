"""The hand-off between extraction tasks and the single index writer, in Redis.

An extraction task pushes its outcome onto ``pdfindex:results`` and sends a "write"
kick unless one is already pending (``pdfindex:write-kick``, set with NX; the writer
clears it when it starts draining), so a burst of files sends one kick, not one each.
The writer moves items to ``pdfindex:writing`` (atomically, LMOVE), commits them to
ITS OWN index (``PDFINDEX_INDEX_DIR`` of the writer; an item never names a directory)
once it holds ``batch_pages`` pages or no new item came for about a second (it does
not wait holding its process: it leaves the batch in ``pdfindex:writing`` and kicks
itself again a second later), records each file as done for its ingest run, and only
then clears ``pdfindex:writing``. A writer killed mid-batch, or one waiting for more,
leaves its items there; the next writer takes them first. Writes are idempotent, so
an item committed twice is still indexed once.

Nothing read from Redis is trusted: anyone who can reach the broker can push to
these lists. Every item is validated (shape, types, sizes, hashes, run id, the
outcome's path under the writer's ``PDFINDEX_ROOTS``; its signature when signing is
configured); an invalid one is logged with what was wrong and dropped, so it can
neither run code, nor write outside the roots, nor block the items behind it.
"""
from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.exceptions import LockError

from pdfindex.config import MAX_SHARDS, Settings, redact_url
from pdfindex.indexer import DocumentRecord, IndexBusy, Status, StorageError, shard_of

from .errors import BrokerError, IngestError

if TYPE_CHECKING:
    from .outcome import Outcome

log = logging.getLogger("pdfindex.queue")

RESULTS = "pdfindex:results"
WRITING = "pdfindex:writing"
WRITER_LOCK = "pdfindex:writer-lock"
LOCK_SECONDS = 6
#: Set (NX) while a write kick is pending; cleared by the writer when it starts draining.
KICK = "pdfindex:write-kick"
#: The pending-kick key expires after this, so a kick lost with its worker (SIGKILLed
#: with the message still reserved) blocks new kicks for a minute at most.
KICK_SECONDS = 60
#: The writer commits a batch short of ``batch_pages`` once no new item came for this long.
IDLE_SECONDS = 1.0
MIN_DEFER_SECONDS = 0.1
QUEUES = ("extract", "index")
#: The prefix of a shard writer's queue and hand-off lists: queue ``index.K``, lists
#: ``pdfindex:results:K`` and ``pdfindex:writing:K``.
SHARD_QUEUE = "index."


def is_writer_queue(name: str) -> bool:
    """Whether a Celery queue is a writer's (``index``, or a shard writer's ``index.K``)."""
    return name == "index" or name.startswith(SHARD_QUEUE)

#: A hand-off item larger than this is dropped (a 10,000-page book of dense text is
#: about 60 MB); it bounds what one forged item can make the writer hold in memory.
MAX_ITEM_BYTES = 256 * 1024 * 1024
MAX_PATH_CHARS = 4096
MAX_PAGES = 1_000_000
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX32 = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class Lane:
    """One hand-off from extraction to a writer: the list items arrive in, the list
    its writer works from, the writer's lock, its pending kick, and its Celery queue.

    The common lane (``shard`` None) is where extraction hands off: one writer that
    writes every shard drains it (the default), or, when each shard has a writer of
    its own (possibly on other hosts), a router moves its items to their shard's
    lane (``route``). A shard lane's writer writes that shard only."""

    shard: int | None = None

    def _key(self, name: str) -> str:
        return name if self.shard is None else f"{name}:{self.shard}"

    @property
    def results(self) -> str:
        return self._key(RESULTS)

    @property
    def writing(self) -> str:
        return self._key(WRITING)

    @property
    def lock(self) -> str:
        return self._key(WRITER_LOCK)

    @property
    def kick(self) -> str:
        return self._key(KICK)

    @property
    def waiting_since(self) -> str:
        return self._key(WAITING_SINCE)

    @property
    def last_new(self) -> str:
        return self._key(LAST_NEW)

    @property
    def write_now(self) -> str:
        return self._key(WRITE_NOW)

    @property
    def queue(self) -> str:
        return "index" if self.shard is None else f"{SHARD_QUEUE}{self.shard}"

    def __str__(self) -> str:
        return "the index writer" if self.shard is None else f"the writer of shard {self.shard}"


COMMON = Lane()


def lanes(shards: int) -> list[Lane]:
    """The common lane and every shard's (shard lanes exist for a sharded index only)."""
    return [COMMON] + ([Lane(k) for k in range(shards)] if shards > 1 else [])


class BadMessage(ValueError):
    """A task message or hand-off item we refuse; the text says what was wrong."""


class WriterBusy(Exception):
    """Another writer holds the lock (or a dead one's lock has not expired yet)."""


class LockLost(IngestError):
    """The writer lock expired or was taken over while we held it: stop before
    committing, so two writers never commit the same batch at once."""


# ---- the Redis connection -------------------------------------------------------------

#: ``ssl_cert_reqs`` spellings of Celery/kombu (CERT_REQUIRED) and redis-py (required).
_CERT_REQS = {"cert_required": "required", "required": "required", "cert_optional": "optional",
              "optional": "optional", "cert_none": "none", "none": "none"}


def tls_options(url: str) -> dict[str, str] | None:
    """For a rediss:// URL, its TLS options from the query (``ssl_cert_reqs``,
    ``ssl_ca_certs``, ``ssl_certfile``, ``ssl_keyfile``), with certificate
    verification REQUIRED unless the URL turns it down explicitly (kombu alone would
    silently not verify). None for plain redis:// and unix://."""
    parts = urlsplit(url)
    if parts.scheme != "rediss":
        return None
    query = dict(parse_qsl(parts.query))
    reqs = query.get("ssl_cert_reqs", "required")
    if reqs.lower() not in _CERT_REQS:
        raise BrokerError(f"{redact_url(url)}: ssl_cert_reqs={reqs!r} is not one of required, optional, none")
    options = {"ssl_cert_reqs": _CERT_REQS[reqs.lower()]}
    for key in ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile"):
        if query.get(key):
            options[key] = query[key]
    return options


def _redis_url(url: str) -> str:
    """The URL as redis-py wants it: ``ssl_cert_reqs`` in its own spelling."""
    options = tls_options(url)
    if options is None:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "ssl_cert_reqs"]
    query.append(("ssl_cert_reqs", options["ssl_cert_reqs"]))
    return urlunsplit(parts._replace(query=urlencode(query)))


def client(settings: Settings, timeout: float = 30) -> redis.Redis:
    """A Redis client for the hand-off lists, from the same URL as the broker
    (passwords, ACL users, rediss:// with its TLS options, unix://); ``timeout``
    per command (short where a caller must not stall, as a worker's event loop)."""
    url = settings.broker_url
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise BrokerError(f"PDFINDEX_BROKER_URL={redact_url(url)!r}: the ingest hand-off needs a Redis broker")
    try:
        return redis.Redis.from_url(_redis_url(url), socket_timeout=timeout, socket_connect_timeout=min(timeout, 10),
                                    health_check_interval=30)
    except (ValueError, redis.RedisError) as exc:
        raise BrokerError(f"PDFINDEX_BROKER_URL={redact_url(url)!r}: {exc}") from None


def describe(exc: BaseException) -> str:
    """What went wrong with the broker, in a few words (never the password)."""
    text = str(exc)
    low = text.lower()
    if "noauth" in low or "authentication required" in low:
        return "the broker requires a password (none given in the URL)"
    if isinstance(exc, redis.AuthenticationError) or "wrongpass" in low or "invalid password" in low \
            or "invalid username-password" in low:
        return "authentication failed (wrong password or user name)"
    if "noperm" in low or "no permissions" in low:
        return f"the broker's ACL refuses a command: {text}"
    if "ssl" in low or "certificate" in low or "tls" in low:
        return f"TLS failed: {text}"
    if "connection refused" in low or "errno 111" in low:
        return "connection refused"
    if "name or service not known" in low or "nodename nor servname" in low or "errno -2" in low:
        return f"unknown host: {text}"
    if isinstance(exc, redis.TimeoutError) or "timed out" in low:
        return "timed out"
    return text or type(exc).__name__


def broker_error(settings: Settings, exc: BaseException) -> BrokerError:
    return BrokerError(f"cannot reach the broker at {redact_url(settings.broker_url)}: {describe(exc)}")


def _broker_exceptions() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [redis.RedisError, ConnectionError, OSError]
    with suppress(ImportError):
        from kombu.exceptions import OperationalError  # noqa: PLC0415

        errors.append(OperationalError)
    return tuple(errors)


@contextmanager
def broker_errors(settings: Settings) -> Iterator[None]:
    """Turn every Redis/kombu connection, auth or TLS error into one BrokerError
    line naming the broker (without its password) and the problem."""
    try:
        yield
    except BrokerError:
        raise
    except _broker_exceptions() as exc:
        raise broker_error(settings, exc) from None


def ping(settings: Settings) -> None:
    """Connect, authenticate and check that our commands are allowed (ACL), or
    raise BrokerError."""
    with broker_errors(settings):
        r = client(settings)
        try:
            r.ping()
            r.llen(RESULTS)
        finally:
            r.close()


_REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError)


def retrying(call: Callable[[], Any], patience: float = 120.0) -> Any:
    """Run a Redis call, waiting out a Redis restart (up to ``patience`` seconds)
    instead of failing the file being worked on."""
    deadline = time.monotonic() + patience
    delay = 0.2
    while True:
        try:
            return call()
        except redis.AuthenticationError:
            raise  # a subclass of ConnectionError, but waiting does not fix a wrong password
        except _REDIS_DOWN:
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 3.0)


def run_key(run_id: str) -> str:
    return f"pdfindex:run:{run_id}"


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


# ---- messages and items: what a client may choose, validated ----------------------------

@dataclass(frozen=True, slots=True)
class ExtractJob:
    """The arguments of one ``pdfindex.extract`` message, validated."""

    path: str
    doc_hash: str
    run_id: str


def _check_path(path: Any, what: str) -> str:
    if not isinstance(path, str):
        raise BadMessage(f"{what} is a {type(path).__name__}, not a string")
    if not path or len(path) > MAX_PATH_CHARS:
        raise BadMessage(f"{what} is {len(path)} characters long")
    if "\0" in path:
        raise BadMessage(f"{what} contains a NUL character")
    if not os.path.isabs(path):
        raise BadMessage(f"{what} {path[:200]!r} is not absolute")
    return path


def _check_hex(value: Any, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise BadMessage(f"{what} {str(value)[:80]!r} is not {pattern.pattern}")
    return value


def check_hash(value: Any, what: str = "the document hash") -> str:
    return _check_hex(value, _HEX64, what)


def check_run_id(value: Any) -> str:
    return _check_hex(value, _HEX32, "the run id")


def parse_extract(args: Sequence[Any], kwargs: dict[str, Any]) -> ExtractJob:
    """``pdfindex.extract(path, doc_hash, run_id)``: exactly these three, nothing else
    (an older client's index directory or password file is refused, not ignored)."""
    names = ("path", "doc_hash", "run_id")
    if not isinstance(args, (list, tuple)) or not isinstance(kwargs, dict):
        raise BadMessage("arguments are not a list and a mapping")
    if len(args) > len(names) or set(kwargs) - set(names[len(args):]):
        extra = len(args) - len(names) if len(args) > len(names) else sorted(set(kwargs) - set(names[len(args):]))
        raise BadMessage(f"unexpected arguments ({extra!r}); the message carries only path, doc_hash, run_id")
    values = dict(zip(names, args, strict=False)) | kwargs
    missing = [n for n in names if n not in values]
    if missing:
        raise BadMessage(f"missing {', '.join(missing)}")
    return ExtractJob(_check_path(values["path"], "the path"), check_hash(values["doc_hash"]),
                      check_run_id(values["run_id"]))


def under_roots(path: str, roots: Sequence[Path]) -> bool:
    """Lexically (the writer may not see the files): ``path`` normalized lies in one
    of the roots. The extraction worker has already checked the real path."""
    norm = os.path.normpath(path)
    for root in roots:
        base = os.path.normpath(str(root))
        if norm == base or norm.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def handoff_item(run_id: str, job_hash: str, outcome_json: str, pages: int) -> dict[str, Any]:
    """What an extraction task hands to the writer: no index directory, no path of
    its own (the path is the outcome's, checked against the writer's roots)."""
    return {"run": run_id, "job": job_hash, "pages": pages, "outcome": outcome_json}


@dataclass(frozen=True, slots=True)
class HandOff:
    """A validated hand-off item."""

    run_id: str
    job_hash: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Release:
    """A shard writer's word to another shard's writer: document ``owner`` (in the
    sender's shard) now holds ``path``, so documents of this shard must let it go.
    It is acted on only if the index shows ``owner`` holding ``path``: a forged or
    stale one changes nothing."""

    path: str
    owner: str


def release_item(path: str, owner: str) -> dict[str, str]:
    return {"release": path, "owner": owner}


#: What a hand-off list holds, validated.
Item = HandOff | Release


def _check_number(value: object, what: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise BadMessage(f"{what} is not finite")
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value < 2**63:
        raise BadMessage(f"{what}={value} is out of range")


def _load(raw: bytes | str, verify: Callable[[bytes], bytes] | None) -> Any:
    """An item's JSON, within the size limit and with its signature checked."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > MAX_ITEM_BYTES:
        raise BadMessage(f"item of {len(data)} bytes is over the limit of {MAX_ITEM_BYTES}")
    if verify is not None:
        data = verify(data)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise BadMessage(f"not JSON: {str(exc)[:100]}") from None


def parse_item(raw: bytes | str, roots: Sequence[Path], verify: Callable[[bytes], bytes] | None = None) -> Item:
    """Validate one item from a hand-off list: its size, its signature (``verify``,
    when signing is configured), its JSON shape and every field's type
    (``Outcome.from_json``); hashes and run id in their shapes, the record's path
    absolute and under ``roots``, numbers finite and in range, pages numbered 1..n.
    A release (``release_item``) has a path under ``roots`` and an owner's hash.
    Raises BadMessage naming the first problem."""
    from .outcome import Outcome  # noqa: PLC0415 - `pdfindex status` needs no extractor

    item = _load(raw, verify)
    if isinstance(item, dict) and set(item) == {"release", "owner"}:
        path = _check_path(item["release"], "the released path")
        if not under_roots(path, roots):
            raise BadMessage(f"the released path {path[:200]!r} is outside the writer's PDFINDEX_ROOTS")
        return Release(path, check_hash(item["owner"], "the owner's hash"))
    if not isinstance(item, dict) or set(item) != {"run", "job", "pages", "outcome"}:
        keys = sorted(item)[:8] if isinstance(item, dict) else type(item).__name__
        raise BadMessage(f"not a hand-off item (run, job, pages, outcome): {keys}")
    run_id, job_hash = check_run_id(item["run"]), check_hash(item["job"], "the job hash")
    if not isinstance(item["outcome"], str):
        raise BadMessage("the outcome is not a JSON string")
    try:
        outcome = Outcome.from_json(item["outcome"])
    except (ValueError, TypeError, RecursionError) as exc:
        raise BadMessage(str(exc)[:200]) from None
    doc = outcome.doc
    check_hash(doc.doc_hash, "the record's hash")
    if outcome.job_hash != job_hash:
        raise BadMessage(f"the outcome's job hash {outcome.job_hash[:70]!r} is not the item's")
    path = _check_path(doc.path, "the record's path")
    if not under_roots(path, roots):
        raise BadMessage(f"the record's path {path[:200]!r} is outside the writer's PDFINDEX_ROOTS")
    for name in ("page_count", "size", "mtime", "ingested", "attempts", "mean_coverage", "created", "modified"):
        _check_number(getattr(doc, name), f"record.{name}")
    if doc.paths not in ([], [doc.path]):  # other copies are the writer's own knowledge, never a message's
        raise BadMessage("the record's paths are not just its path")
    if len(outcome.pages) > MAX_PAGES:
        raise BadMessage(f"{len(outcome.pages)} pages")
    for n, page in enumerate(outcome.pages, 1):
        if page.number != n:
            raise BadMessage(f"page {n} is numbered {page.number}")
        for name in ("coverage", "glyphs", "unresolved"):
            _check_number(getattr(page, name), f"page {n} {name}")
    count = item["pages"]
    if isinstance(count, bool) or not isinstance(count, int) or count != len(outcome.pages):
        raise BadMessage(f"pages={str(count)[:20]} but the outcome has {len(outcome.pages)} pages")
    if doc.status in (Status.FAILED, Status.ENCRYPTED) and outcome.pages:
        raise BadMessage(f"a {doc.status} record with pages")
    return HandOff(run_id, job_hash, outcome)


def route_hash(raw: bytes | str, verify: Callable[[bytes], bytes] | None = None) -> str:
    """The hash a hand-off item is routed by (its job's), read without validating
    the outcome: the shard writer validates it all, and forwards an item whose
    document's own hash lives in another shard (a file rewritten after planning)."""
    item = _load(raw, verify)
    if not isinstance(item, dict) or "job" not in item:
        raise BadMessage("not a hand-off item (run, job, pages, outcome)")
    return check_hash(item["job"], "the job hash")


def encode(item: dict[str, Any], sign: Callable[[bytes], bytes] | None = None) -> bytes:
    data = json.dumps(item, ensure_ascii=True).encode()
    return sign(data) if sign is not None else data


def push_result(r: redis.Redis, item: dict[str, Any], sign: Callable[[bytes], bytes] | None = None) -> None:
    pipe = r.pipeline()
    pipe.rpush(RESULTS, encode(item, sign))
    wake(pipe, item["run"])
    pipe.execute()


def count_attempt(r: redis.Redis, run_id: str, doc_hash: str) -> int:
    key = attempts_key(run_id)
    attempts = int(r.hincrby(key, doc_hash, 1))
    r.expire(key, 7 * 24 * 3600)
    return attempts


def record_done(r: redis.Redis, done: Iterable[tuple[str, str, dict[str, Any]]]) -> None:
    """Tell the runs' clients that files are finished: (run id, job hash, info as
    progress.brief) each, in one round trip, and each run's client woken once."""
    pipe = r.pipeline()
    runs: set[str] = set()
    for run_id, job_hash, info in done:
        pipe.hset(run_key(run_id), job_hash, json.dumps(info))
        pipe.expire(run_key(run_id), 7 * 24 * 3600)
        runs.add(run_id)
    for run_id in runs:
        wake(pipe, run_id)
    pipe.execute()


# ---- the writer ---------------------------------------------------------------------------

class WriterLock:
    """The writer role, held while alive: a short Redis lock kept fresh by a heartbeat
    thread, so a writer killed mid-batch frees it within ``seconds`` for the next one.

    The lock is not thread-local (redis-py's default keeps the token in a
    threading.local, which the heartbeat thread cannot see). A renewal that finds the
    token gone or replaced marks the lock lost; ``ensure()`` raises LockLost then, and
    the writer calls it before every commit."""

    def __init__(self, r: redis.Redis, seconds: float = LOCK_SECONDS, lane: Lane = COMMON) -> None:
        self.seconds = seconds
        self.lane = lane
        self._lock = r.lock(lane.lock, timeout=seconds, blocking=False, thread_local=False)
        self._stop = threading.Event()
        self._lost: str | None = None
        self._beat = threading.Thread(target=self._heartbeat, name="pdfindex-writer-lock", daemon=True)

    def __enter__(self) -> WriterLock:
        if not self._lock.acquire():
            raise WriterBusy(f"another writer holds the lock of {self.lane}")
        self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._beat.join()
        if self._lost is None:
            with suppress(redis.RedisError, LockError):
                self._lock.release()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                self._lock.reacquire()
            except LockError as exc:  # LockNotOwnedError: expired, or another writer has it
                self._lost = f"the writer lock {self.lane.lock} was lost ({exc})"
                log.error("pdfindex writer: %s; stopping before the next commit", self._lost)
                return
            except redis.RedisError as exc:  # Redis away: try again; ensure() tells if it lapsed
                log.warning("pdfindex writer: could not renew the writer lock: %s", describe(exc))

    def ensure(self) -> None:
        """Raise LockLost unless the lock is still ours (checked in Redis, not only
        by the heartbeat's last word)."""
        if self._lost is None:
            try:
                owned = self._lock.owned()
            except redis.RedisError as exc:
                self._lost = f"cannot check the writer lock: {describe(exc)}"
            else:
                if not owned:
                    self._lost = f"the writer lock {self.lane.lock} expired or was taken by another writer"
        if self._lost is not None:
            raise LockLost(f"{self._lost}; the batch stays in {self.lane.writing} for the next writer")


#: write(items, ensure) commits one batch of validated items to the writer's index and
#: returns a brief (progress.brief) per hand-off of the batch, in order (releases have
#: none); it calls ensure() just before committing.
WriteBatch = Callable[[list[Item], Callable[[], None]], list[dict[str, Any]]]


class _Parsed:
    """Items of the waiting batch this process has validated already, by their exact
    bytes: a batch waiting for more files is read again from pdfindex:writing by every
    drain (about once a second), and parsing it each time cost the writer more CPU
    than it saved. The same bytes under the same roots and verifier parse the same,
    so a hit is as safe as a parse; only the current batch is kept."""

    def __init__(self) -> None:
        self.owner: tuple[Lane, tuple[Path, ...], object] | None = None
        self.items: dict[Any, Item] = {}

    def get(self, lane: Lane, raw: Any, roots: Sequence[Path], verify: object) -> Item | None:
        owner = (lane, tuple(roots), verify)
        if owner != self.owner:
            self.owner, self.items = owner, {}
        return self.items.get(raw)

    def keep(self, kept: dict[Any, Item]) -> None:
        self.items = kept


_PARSED = _Parsed()


def _take(r: redis.Redis, raw: Any, roots: Sequence[Path], verify: Callable[[bytes], bytes] | None,
          source: str, lane: Lane = COMMON) -> Item | None:
    try:
        return parse_item(raw, roots, verify)
    except BadMessage as exc:
        _drop(r, raw, source, exc, lane)
        return None


def _drop(r: redis.Redis, raw: Any, source: str, exc: BadMessage, lane: Lane) -> None:
    log.error("pdfindex writer: dropped a hand-off item from %s: %s (%d bytes, starts %r)",
              source, exc, len(raw), raw[:60])
    r.lrem(lane.writing, 1, raw)


#: The writer's last storage error (one line), for waiting ingest clients to show.
WRITER_ERROR = "pdfindex:writer-error"

#: Errors of the index, its storage or the broker, not of an item: the batch stays in
#: pdfindex:writing for the next writer instead of being recorded as failed.
_KEEP_BATCH = (LockLost, IndexBusy, StorageError, OSError, redis.RedisError, MemoryError)


def _write_isolating(batch: list[Item], write: WriteBatch, ensure: Callable[[], None]) -> list[dict[str, Any]]:
    """``write(batch)``; if the index refuses the batch for a reason that is not the
    storage's or the lock's, each item alone, so one document the index cannot take
    becomes a failure (recorded if possible) instead of stalling the queue."""
    try:
        return write(batch, ensure)
    except _KEEP_BATCH:
        raise  # the index or the broker is in trouble, not the item: keep the batch
    except Exception as exc:  # noqa: BLE001 - whatever one bad document makes the index raise
        if len(batch) > 1:
            log.warning("pdfindex writer: a batch of %d files failed (%s: %s); writing them one by one",
                        len(batch), type(exc).__name__, str(exc)[:200])
            return [info for handoff in batch for info in _write_isolating([handoff], write, ensure)]
        if isinstance(batch[0], Release):
            log.error("pdfindex writer: could not release %r for %s: %s: %s", batch[0].path[:200], batch[0].owner,
                      type(exc).__name__, str(exc)[:200])
            return []
        return [_unwritable(batch[0], exc, write, ensure)]


def _unwritable(handoff: HandOff, exc: BaseException, write: WriteBatch,
                ensure: Callable[[], None]) -> dict[str, Any]:
    from .outcome import Outcome  # noqa: PLC0415

    doc = handoff.outcome.doc
    error = f"could not be written to the index: {type(exc).__name__}: {str(exc)[:160]}"
    log.error("pdfindex writer: %s: %s", doc.path, error)
    record = DocumentRecord(doc_hash=doc.doc_hash, path=doc.path, status=Status.FAILED, size=doc.size,
                            mtime=doc.mtime, ingested=doc.ingested, error=error, attempts=doc.attempts)
    failed = HandOff(handoff.run_id, handoff.job_hash, Outcome(record, [], handoff.job_hash))
    try:
        (info,) = write([failed], ensure)
    except _KEEP_BATCH:
        raise
    except Exception as again:  # noqa: BLE001 - not even the failure record: report it to the run only
        log.error("pdfindex writer: %s: its failure record could not be written either: %s", doc.path, again)
        info = {"status": "failed", "path": doc.path, "error": error, "pages": 0, "needs_ocr": 0, "coverages": []}
    return info


#: The pending-kick key's value when the pending kick is the writer's own delayed one.
DELAYED = b"delayed"


def kick(r: redis.Redis, send: Callable[[], object], *, force: bool = False, value: bytes = b"1",
         lane: Lane = COMMON) -> bool:
    """Send a write kick (``send()``) unless one is pending already; ``force`` sends
    one anyway (a waiting client's remedy for a kick lost with its worker). Returns
    whether one was sent; if ``send()`` fails, the key is cleared again (else a
    retried kick would find it set and send nothing). The hand-off item must be
    pushed BEFORE this is called:
    the writer clears the key before it reads the lists, so every item is either seen
    by a drain that had already cleared the key, or sets the key and kicks anew."""
    if not r.set(lane.kick, value, nx=not force, ex=KICK_SECONDS):
        return False
    try:
        send()
    except BaseException:
        with suppress(redis.RedisError):  # no kick went out: let the next try (or hand-off) send one
            r.delete(lane.kick)
        raise
    return True


#: When the batch waiting in pdfindex:writing began to wait (the writer's clock).
WAITING_SINCE = "pdfindex:writing-since"
#: When a drain last took a new item from pdfindex:results (the writer's clock).
LAST_NEW = "pdfindex:writing-last-new"
#: Set by an ingest client once every file it waits for is handed off: the next drain
#: commits what it holds at once instead of waiting for the quiet second. (Set by
#: anyone else, it only makes a commit come earlier.)
WRITE_NOW = "pdfindex:write-now"
#: A batch that keeps growing without reaching ``batch_pages`` is committed after this
#: long all the same, so waiting clients see progress while files trickle in.
MAX_WAIT_SECONDS = 10.0


def _stamp(r: redis.Redis, key: str, now: float, default: float) -> float:
    """A time the writer stored in Redis; ``default`` when absent or garbled, and
    ``now`` (stored again) when it lies in the future: whoever can write to Redis
    can only move the writer's commits, never stop them."""
    try:
        value = float(r.get(key) or default)
    except ValueError:
        value = default
    if not math.isfinite(value) or value > now:
        r.set(key, repr(now), ex=int(MAX_WAIT_SECONDS * 10))
        value = now
    return value


def _wait_for_more(r: redis.Redis, fresh: int, idle: float, lane: Lane = COMMON) -> float:
    """How much longer the batch in hand should wait for more items: 0 once no new
    item came for ``idle`` seconds, or the batch has waited MAX_WAIT_SECONDS."""
    now = time.time()
    ttl = int(MAX_WAIT_SECONDS * 10)
    if fresh:
        r.set(lane.last_new, repr(now), ex=ttl)
    r.set(lane.waiting_since, repr(now), nx=True, ex=ttl)
    if now - _stamp(r, lane.waiting_since, now, now) >= max(MAX_WAIT_SECONDS, idle):
        return 0.0
    return max(0.0, idle - (now - _stamp(r, lane.last_new, now, 0.0)))


#: defer(seconds): the writer's batch waits for more items; kick the writer again in
#: ``seconds`` (queue.kick with a delayed send).
Defer = Callable[[float], None]


#: home(item): the lane an item belongs in, for a shard writer (whose lane holds only
#: its shard's items: others are forwarded there).
Home = Callable[[Item], Lane]
#: send_kick(lane): kick that lane's writer (queue.kick with its Celery task).
SendKick = Callable[[Lane], object]


def drain(r: redis.Redis, batch_pages: int, write: WriteBatch, roots: Sequence[Path],
          verify: Callable[[bytes], bytes] | None = None, lock_seconds: float = LOCK_SECONDS,
          defer: Defer | None = None, idle: float = IDLE_SECONDS,
          stage: Callable[[list[Item]], None] | None = None, lane: Lane = COMMON,
          home: Home | None = None, send_kick: SendKick | None = None) -> int:
    """Commit what is queued in ``lane``, ``batch_pages`` pages at a time, with
    ``write``. Returns the number of files written. Only one drain of a lane runs at
    a time: WriterBusy is raised while another writer holds its lock (the caller
    retries later), and LockLost if the lock is lost on the way (the batch is left
    for the next writer). Invalid items are logged and dropped, never retried.

    With ``defer``, a batch short of ``batch_pages`` is committed only once no new
    item came into the lane for ``idle`` seconds (or it has waited MAX_WAIT_SECONDS):
    until then the batch stays in the lane's writing list and ``defer(seconds)``
    kicks the writer again when the quiet time would be up. So files arriving one at
    a time are committed together instead of one commit each, and the writer holds
    no process (often the one extraction would use) while it waits. Without
    ``defer``, everything queued is committed now. ``stage(batch)``, when given, is
    told the waiting batch each time, so that it can index the new items while the
    batch waits (the commit still goes through ``write``).

    With ``home``, an item whose home is another lane is moved there (and that
    lane's writer kicked with ``send_kick``) instead of being written."""
    written = 0
    with WriterLock(r, lock_seconds, lane) as lock:
        r.delete(lane.kick)  # draining starts: an item pushed from now on sends a new kick
        while True:
            seen: dict[Any, Item] = {}  # the batch, by the bytes it came as
            moved: set[Lane] = set()
            for stored in r.lrange(lane.writing, 0, -1):  # left by a killed or waiting writer
                item = _PARSED.get(lane, stored, roots, verify) or _take(r, stored, roots, verify, lane.writing, lane)
                if item is not None:
                    _keep(r, lane, home, stored, item, seen, moved)
            pages = sum(map(_pages, seen.values()))
            fresh = 0
            while pages < batch_pages:
                raw = r.lmove(lane.results, lane.writing, "LEFT", "RIGHT")
                if raw is None:
                    break
                item = _take(r, raw, roots, verify, lane.results, lane)
                # a dropped item does not count: forged ones cannot hold a batch back
                if item is not None and _keep(r, lane, home, raw, item, seen, moved):
                    pages += _pages(item)
                    fresh += 1
            for other in moved:
                if send_kick is not None:
                    send_kick(other)
            batch = list(seen.values())
            if not batch:
                return written
            if defer is not None and pages < batch_pages and not r.delete(lane.write_now):
                wait = _wait_for_more(r, fresh, idle, lane)
                if wait > 0:
                    _PARSED.keep(seen)
                    if stage is not None:
                        stage(batch)
                    log.debug("pdfindex writer: %d items (%d pages) wait %.2f s for more", len(batch), pages, wait)
                    defer(max(wait, MIN_DEFER_SECONDS))
                    return written
            lock.ensure()
            briefs = _write_isolating(batch, write, lock.ensure)
            handoffs = [item for item in batch if isinstance(item, HandOff)]
            record_done(r, ((h.run_id, h.job_hash, info) for h, info in zip(handoffs, briefs, strict=True)))
            lock.ensure()
            _PARSED.keep({})
            r.delete(lane.writing, lane.waiting_since, lane.last_new)
            written += len(handoffs)


def _keep(r: redis.Redis, lane: Lane, home: Home | None, raw: Any, item: Item, seen: dict[Any, Item],
          moved: set[Lane]) -> bool:
    """Whether ``item`` joins the batch (``seen``); one whose home is another lane
    is moved there instead (and that lane noted in ``moved``)."""
    other = home(item) if home is not None else lane
    if other != lane:
        _move(r, raw, lane, other)
        moved.add(other)
        return False
    seen[raw] = item
    return True


def _pages(item: Item) -> int:
    return len(item.outcome.pages) if isinstance(item, HandOff) else 0


def _move(r: redis.Redis, raw: Any, source: Lane, target: Lane) -> None:
    """Move one item from ``source``'s writing list to ``target``'s results, at once
    (MULTI): never lost, never in both."""
    pipe = r.pipeline(transaction=True)
    pipe.rpush(target.results, raw)
    pipe.lrem(source.writing, 1, raw)
    pipe.execute()


#: The most items one routing step moves in one transaction.
ROUTE_ITEMS = 200


def route(r: redis.Redis, shards: int, send_kick: SendKick, verify: Callable[[bytes], bytes] | None = None,
          lock_seconds: float = LOCK_SECONDS) -> int:
    """Move the common lane's items to their shard's lane (by the job's hash, see
    ``route_hash``) and kick the writers of the lanes that got some: done by a shard
    writer, when no writer of every shard drains the common lane. A step of up to
    ROUTE_ITEMS items goes in one transaction (they are pushed to their lanes and
    gone from the common one together), so a router killed mid-way leaves them in
    pdfindex:writing for the next router, neither lost nor doubled. Returns the
    number of items moved; malformed ones are logged and dropped."""
    moved = 0
    with WriterLock(r, lock_seconds, COMMON) as lock:
        r.delete(COMMON.kick)
        while True:
            raws = r.lrange(COMMON.writing, 0, -1)
            while len(raws) < ROUTE_ITEMS and (raw := r.lmove(COMMON.results, COMMON.writing, "LEFT", "RIGHT")):
                raws.append(raw)
            if not raws:
                return moved
            targets: dict[Lane, list[Any]] = {}
            for raw in raws:
                try:
                    target = Lane(shard_of(route_hash(raw, verify), shards))
                except BadMessage as exc:
                    _drop(r, raw, COMMON.results, exc, COMMON)
                    continue
                targets.setdefault(target, []).append(raw)
            lock.ensure()
            pipe = r.pipeline(transaction=True)
            for target, items in targets.items():
                pipe.rpush(target.results, *items)
            for items in targets.values():
                for raw in items:
                    pipe.lrem(COMMON.writing, 1, raw)
            pipe.execute()
            moved += sum(map(len, targets.values()))
            for target in targets:
                send_kick(target)


def waiting(r: redis.Redis) -> dict[Lane, int]:
    """Items waiting to be written, per lane that has any (every possible shard's
    lane is looked at: one round trip)."""
    every = lanes(MAX_SHARDS)
    pipe = r.pipeline(transaction=False)
    for lane in every:
        pipe.llen(lane.results)
        pipe.llen(lane.writing)
    counts = pipe.execute()
    found = {lane: int(counts[2 * i]) + int(counts[2 * i + 1]) for i, lane in enumerate(every)}
    return {lane: n for lane, n in found.items() if n}


def queue_depths(settings: Settings) -> dict[str, int]:
    with broker_errors(settings):
        r = client(settings)
        try:
            depths = {name: int(r.llen(name)) for name in QUEUES}
            pipe = r.pipeline(transaction=False)
            for shard in range(MAX_SHARDS):
                pipe.llen(Lane(shard).queue)
            depths.update((Lane(shard).queue, int(n)) for shard, n in enumerate(pipe.execute()) if n)
            depths["waiting to be written"] = sum(waiting(r).values())
        finally:
            r.close()
    return depths
