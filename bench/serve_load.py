"""``pdfindex serve`` under load: requests/second and latency with 1, 4 and 16
concurrent clients over the 50,000-page index of bench/search_speed.py, beside a
minimal server over raw Tantivy answering the same requests, and the time to
render a marked page image.

What is measured, and why
-------------------------
Issue 10 puts the search behind HTTP so that a browser, or another program, pays no
process start-up per query. The question is whether one server on this 2-core
machine stays quick and correct when several people (or a script) search at once.
Targets: 16 concurrent clients with zero failed requests, a rare term's p95 <= 50 ms
(at 16 clients), a marked page image's p95 <= 500 ms.

* **Index.**  The corpus of bench/search_speed.py (generated from its fixed seed,
  never downloaded): ``--index DIR`` takes an index kept by ``search_speed.py --keep
  DIR`` (``DIR/pdfindex``, or the index folder itself); its page count is read from
  it, the corpus regenerated from the seed with that count, and the index checked
  to hold that corpus's documents (so the queries below are about what it holds).
  Without ``--index``, ``--pages`` pages (default 50,000) are indexed into a temp
  folder with search_speed's own ``build_pdfindex``, and the time is printed.
* **Server.**  The real command, ``python -m pdfindex serve --index ... --port P``
  on a free loopback port, as a subprocess leading its own process group (no
  ``PDFINDEX_*`` settings, so defaults apply: no token, the default search time
  limit). The clock starts once ``/healthz`` answers; the group is stopped at the
  end, on errors, on Ctrl-C and on SIGTERM (SIGTERM, then SIGKILL after a grace).
* **The peer: raw Tantivy** (issue 24: "a 60-line FastAPI server over Tantivy").
  The same corpus indexed by search_speed's ``TantivyIndex`` into a temp folder
  (its own analysis: en_stem, CJK bigrams made in Python; see search_speed's
  docstring) and served by ``tantivy_app`` below: FastAPI on uvicorn, one process,
  as ``pdfindex serve`` runs (log level warning, no access log), ``GET /healthz``
  and ``GET /api/search?q=...&limit=10`` answering ``TantivyIndex.answer``: a
  searcher, Tantivy's query parser (words ANDed), every match counted, the top 10's
  stored fields and an HTML snippet each, as JSON of the same shape (``total``,
  ``took``, ``partial``, ``hits``).  Its endpoint is a plain ``def``, so FastAPI runs
  it on its thread pool, and tantivy-py lets go of the GIL while it searches, loads
  a document or makes a snippet: the two cores serve it at once.  Nothing else:
  no limits, no lanes, no trust checks; a baseline, not a product.  Both servers
  run at once; each level is measured on pdfindex, then on Tantivy with the same
  clients and the same seeded mix (paired, so that the machine's other load falls
  on both alike), and the same checks apply (a rare term must report exactly its
  planted pages).  ``--no-tantivy`` leaves it out.
* **Queries.**  search_speed's query classes (``choose_queries``): rare term (a
  planted term on 1-5 pages), common term (a word on at least half the English
  pages), phrase of two adjacent common words taken from a page; 100 different
  queries of each (fewer rare terms where fewer are planted: they repeat).  Each
  request is ``GET /api/search?q=...&limit=10``: the top 10 with snippets and
  highlights, as the search page asks for them.  The mix (``--mix``, default 70 %
  rare, 20 % common, 10 % phrase) is drawn per request from a seeded generator.
* **Load.**  For each N in ``--clients`` (default 1,4,16; at most 64), N threads of
  this process, one ``httpx.Client`` (keep-alive, loopback, no proxies) each, run a
  closed loop for ``--seconds`` (default 10): a client sends its next query as soon
  as the previous one has answered.  Latency is the client's wall clock around the
  request and the whole response body; it includes queueing in the server (two
  index searchers are shared by its request threads), HTTP and JSON, and the
  server's own search time, whose median (the answer's ``took``) is shown beside.
  requests/s = answered requests / the level's measured time.  An untimed warm-up (2
  clients, 1 s) precedes the first level, and each level runs ``RAMP_SECONDS`` (1 s)
  before it is measured: all its clients start at once, so their first requests
  arrive together, which no steady load does (a phrase and fifteen rare terms
  at the same instant); that first second's rare-term p95 is printed apart.  In a
  closed loop latency and throughput are tied (Little's law: mean latency = clients
  / requests per second): most clients wait for costly searches, which the server
  runs in a search process of their own (server/lanes.py), so a rare term's latency
  is that of the cheap lane, not the mean.
* **Failures.**  A request fails when it raises (connection, timeout after 30 s),
  answers anything but 200, or answers wrongly: a rare term must report exactly
  the number of pages it was planted on, the others at least one.  Partial answers
  (the server's search time limit) are counted separately.
* **Machine load.**  Per level: the CPU the server's process group used, this
  process (the clients) used, and what the rest of the machine used meanwhile
  (``ingest_throughput.machine_busy`` minus both), in cores.  The clients share the
  2 cores with the server: their CPU is part of what a level costs here, and other
  processes' load only ever adds time.
* **Marked page image.**  bench/corpus.py's ``build_corpus`` writes a few real PDFs
  (at least ``--images`` + 1 pages), the real ``pdfindex ingest`` indexes them into
  a temp index, and a second server serves it.  Every page gets a word found on it
  by the API's own search (a vocabulary word below the 40 most frequent, the least
  used so far), which makes one different (doc, page, query) triple each, so the
  server's image cache cannot answer.  One untimed warm-up image, then ``--images``
  images ``GET /api/documents/{hash}/pages/{n}.png?q=WORD&width=1000`` one after
  the other (the time to render one), each checked to be a 1000-pixel-wide PNG;
  then the same requests again, which the cache answers.
  When the server does not describe that endpoint in its OpenAPI, the part reports
  "endpoint missing".

Latencies are p50 and p95 (nearest rank) in milliseconds.  ``--json FILE`` writes a
machine-readable copy of the report.  Exit status 0 when every request succeeded
(targets missed or not), 1 when a request failed or the run could not be made,
2 for bad arguments, 130 when interrupted.

Usage, from the project root (``-m``: the bench imports the other benches and the test
helpers beside the installed package)::

    .venv/bin/python -m bench.serve_load [--index DIR | --pages 50000] [--clients 1,4,16] [--seconds 10]
        [--mix rare=70,common=20,phrase=10] [--images 40] [--no-tantivy] [--json FILE]
    .venv/bin/python -m bench.serve_load --pages 2000 --seconds 2  # quick
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
from fastapi import FastAPI, HTTPException
from fastapi import Query as Param

from bench import ingest_throughput  # machine_busy, group_cpu, child_env, ingest_command
from bench import search_speed  # generate_corpus, choose_queries, build_pdfindex, Latency
from bench.corpus import FOLDER_SEED, FOLDER_VOCABULARY, build_corpus
from pdfindex import config
from pdfindex.indexer import PageIndex, SearchIndexError

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_CLIENTS = (1, 4, 16)
MAX_CLIENTS = 64
MAX_LEVELS = 8
DEFAULT_SECONDS = 10.0
#: Seconds each level runs before it is measured: all its clients start at once, and
#: their first requests arrive together (in a closed loop the mix then spreads them).
RAMP_SECONDS = 1.0
MIN_SECONDS, MAX_SECONDS = 0.5, 300.0
DEFAULT_MIX = "rare=70,common=20,phrase=10"
QUERIES_PER_CLASS = 100
LIMIT = search_speed.LIMIT
DEFAULT_IMAGES = 40
MAX_IMAGES = 400
IMAGE_WIDTH = 1000
IMAGE_PAGES_PER_FILE = (4, 6)
#: Candidate words per page, found by searching at most this many vocabulary words.
IMAGE_WORDS_PER_PAGE, IMAGE_WORDS_SEARCHED = 8, 200

TARGET_CLIENTS = 16
TARGET_RARE_P95_MS = 50.0
TARGET_IMAGE_P95_MS = 500.0

REQUEST_TIMEOUT = 30.0
SERVER_START_TIMEOUT = 120.0
SERVER_STOP_GRACE = 10.0
PORT_TRIES = 3
INGEST_TIMEOUT = 600.0
WARMUP_CLIENTS, WARMUP_SECONDS = 2, 1.0
ERRORS_SHOWN = 5

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The page-image route as the server's OpenAPI names it: /api/documents/{x}/pages/{y}.png
_IMAGE_ROUTE = re.compile(r"^/api/documents/\{(\w+)\}/pages/\{(\w+)\}\.png$")


class BenchError(Exception):
    """The run cannot be made: one line naming the file or the problem."""


# ------------------------------------------------------------------ arguments

def _clients(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(dict.fromkeys(int(part) for part in text.split(",") if part.strip()))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected client counts such as 1,4,16") from None
    if not levels or any(not 1 <= n <= MAX_CLIENTS for n in levels):
        raise argparse.ArgumentTypeError(f"{text!r}: each client count must be 1-{MAX_CLIENTS}")
    if len(levels) > MAX_LEVELS:
        raise argparse.ArgumentTypeError(f"{text!r}: at most {MAX_LEVELS} levels")
    return levels


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not MIN_SECONDS <= value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds per level must be {MIN_SECONDS:g}-{MAX_SECONDS:g}")
    return value


def _mix(text: str) -> dict[str, float]:
    """``rare=70,common=20,phrase=10`` → shares summing to 1 (classes of
    search_speed.choose_queries: rare, common, and, phrase, cjk)."""
    known = ("rare", "common", "and", "phrase", "cjk")
    weights: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        try:
            weight = float(value) if sep else math.nan
        except ValueError:
            weight = math.nan
        if key not in known or key in weights or not math.isfinite(weight) or weight < 0:
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected CLASS=WEIGHT,... with each class once ({', '.join(known)}) and weights >= 0")
        weights[key] = weight
    total = sum(weights.values())
    if total <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the weights add up to nothing")
    return {k: w / total for k, w in weights.items() if w > 0}


def _images(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_IMAGES:
        raise argparse.ArgumentTypeError(f"{text!r}: images must be 0-{MAX_IMAGES} (0 skips the image part)")
    return value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="pdfindex serve under load: requests/s and p50/p95 latency with "
                                            "concurrent clients, and the marked page image's render time.")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--index", type=Path, metavar="DIR",
                        help="an index kept by bench/search_speed.py --keep DIR (DIR/pdfindex, or that folder)")
    source.add_argument("--pages", type=int,
                        help=f"without --index: build an index of this many pages (default "
                             f"{search_speed.DEFAULT_PAGES})")
    p.add_argument("--seed", type=int, default=search_speed.SEED,
                   help=f"search_speed's corpus seed, as the index was built with (default {search_speed.SEED})")
    p.add_argument("--clients", type=_clients, default=DEFAULT_CLIENTS,
                   help=f"comma-separated client counts, each 1-{MAX_CLIENTS} "
                        f"(default {','.join(map(str, DEFAULT_CLIENTS))})")
    p.add_argument("--seconds", type=_seconds, default=DEFAULT_SECONDS,
                   help=f"seconds per level, {MIN_SECONDS:g}-{MAX_SECONDS:g} (default {DEFAULT_SECONDS:g})")
    p.add_argument("--mix", type=_mix, default=_mix(DEFAULT_MIX),
                   help=f"query mix, CLASS=WEIGHT,... (default {DEFAULT_MIX})")
    p.add_argument("--images", type=_images, default=DEFAULT_IMAGES,
                   help=f"different marked page images to time, 0-{MAX_IMAGES} (default {DEFAULT_IMAGES})")
    p.add_argument("--no-tantivy", action="store_true", help="leave the raw Tantivy server out")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON to FILE")
    args = p.parse_args(argv)
    if args.pages is not None and args.pages < 1:
        p.error("--pages must be at least 1")
    if args.json is not None and not args.json.resolve().parent.is_dir():
        p.error(f"--json {args.json}: no folder {args.json.resolve().parent}")
    return args


# ------------------------------------------------------------------ the search index

@dataclass(frozen=True, slots=True)
class IndexInfo:
    path: str
    pages: int
    documents: int
    seed: int
    built_seconds: float | None  # None: kept by search_speed.py --keep, not built here
    generated_seconds: float


@dataclass(frozen=True, slots=True)
class Plan:
    """What the clients ask: the queries of each class and their shares."""

    shares: dict[str, float]
    labels: dict[str, str]
    queries: dict[str, tuple[str, ...]]  # class -> timed queries
    warmup: dict[str, str]  # class -> its warm-up query
    rare_pages: dict[str, int]  # rare term -> pages it was planted on

    def pick(self, rng: random.Random) -> tuple[str, str]:
        keys = list(self.shares)
        key = rng.choices(keys, weights=[self.shares[k] for k in keys])[0]
        return key, rng.choice(self.queries[key])

    def describe(self) -> str:
        return ", ".join(f"{self.shares[k]:.0%} {self.labels[k]}" for k in self.shares)


def _index_folder(given: Path) -> Path:
    kept = given / "pdfindex"
    return kept if kept.is_dir() else given


def open_kept_index(given: Path, seed: int) -> tuple[Path, search_speed.Corpus, IndexInfo]:
    """The index kept by search_speed.py, and the corpus regenerated to match it
    (BenchError when the index is missing or holds another corpus)."""
    root = _index_folder(given)
    try:
        index = PageIndex(root, None, create=False)
        stats = index.stats()
    except FileNotFoundError:
        raise BenchError(f"--index {given}: no index there (make one with bench/search_speed.py --keep DIR)") from None
    except SearchIndexError as exc:
        raise BenchError(f"--index {given}: {exc}") from None
    if stats.pages < 1:
        raise BenchError(f"--index {given}: the index at {root} holds no pages")
    started = time.perf_counter()
    corpus = search_speed.generate_corpus(stats.pages, seed)
    generated = time.perf_counter() - started
    docs = corpus.documents
    for doc in (docs[0], docs[len(docs) // 2], docs[-1]):
        found = index.document(doc.record.doc_hash)
        if found is None or found.page_count != doc.record.page_count:
            raise BenchError(f"--index {given}: the index at {root} is not search_speed's corpus of {stats.pages} "
                             f"pages with seed {seed} (document {doc.record.path} is missing or differs; built "
                             "with another --seed?)")
    if stats.documents != len(docs):
        raise BenchError(f"--index {given}: {stats.documents} documents in {root}, the corpus of {stats.pages} pages "
                         f"with seed {seed} has {len(docs)}")
    return root, corpus, IndexInfo(str(root), corpus.pages, len(docs), seed, None, generated)


def build_index(workdir: Path, pages: int, seed: int) -> tuple[Path, search_speed.Corpus, IndexInfo]:
    """search_speed's corpus indexed into ``workdir`` by its own build function."""
    settings = config.load()
    started = time.perf_counter()
    corpus = search_speed.generate_corpus(pages, seed)
    generated = time.perf_counter() - started
    root = workdir / "pdfindex"
    print(f"building a {pages}-page index in {root} (seed {seed}) ...", file=sys.stderr, flush=True)
    _, report = search_speed.build_pdfindex(corpus, root, settings.language, settings.batch_pages)
    return root, corpus, IndexInfo(str(root), corpus.pages, len(corpus.documents), seed, report.seconds, generated)


def make_plan(corpus: search_speed.Corpus, shares: dict[str, float]) -> Plan:
    try:
        classes = {qc.key: qc for qc in search_speed.choose_queries(corpus, QUERIES_PER_CLASS)}
    except ValueError as exc:
        raise BenchError(f"a corpus of {corpus.pages} pages is too small for the query classes: {exc}") from None
    return Plan(
        shares=dict(shares), labels={k: classes[k].label for k in shares},
        queries={k: tuple(dict.fromkeys(q.whoosh for q in classes[k].queries[1:])) for k in shares},
        warmup={k: classes[k].queries[0].whoosh for k in shares},
        rare_pages={term: len(pages) for term, pages in corpus.rare.items()},
    )


# ------------------------------------------------------------------ the server

def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Server:
    pid: int  # also its process group: the server and its render processes
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu(self) -> float:
        return ingest_throughput.group_cpu(self.pid)


def _tail(path: Path, lines: int = 4) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return " | ".join(text.strip().splitlines()[-lines:])[:600]



def stop_server(proc: subprocess.Popen[bytes], grace: float = SERVER_STOP_GRACE) -> None:
    """SIGTERM to the server's process group (uvicorn shuts down gracefully), then
    SIGKILL to whatever of the group is left after ``grace`` seconds."""
    if ingest_throughput.group_alive(proc):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    ingest_throughput.end_group(proc, grace, f"serve_load: the server (process group {proc.pid})")


def _healthy(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float, name: str = "pdfindex serve") -> bool:
    """Wait for /healthz; False when the server exited because the port was taken
    meanwhile (try another), BenchError for any other end."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0, trust_env=False) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = _tail(log)
                if "address already in use" in tail.lower():
                    return False
                raise BenchError(f"{name} exited with status {proc.returncode} before answering: {tail}")
            try:
                if client.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise BenchError(f"{name} did not answer /healthz within {timeout:g} s: {_tail(log)}")


@contextlib.contextmanager
def serve(index_dir: Path, log: Path, timeout: float = SERVER_START_TIMEOUT,
          engine: str = "pdfindex") -> Iterator[Server]:
    """The real ``pdfindex serve`` (or, with ``engine="tantivy"``, the raw Tantivy
    server over a TantivyIndex folder) on a free loopback port until the block
    ends, whatever ends it."""
    proc: subprocess.Popen[bytes] | None = None
    name = "pdfindex serve" if engine == "pdfindex" else "the raw Tantivy server"
    env = ingest_throughput.child_env(None)
    if engine == "tantivy":
        env[TANTIVY_INDEX_ENV] = str(index_dir)
    try:
        for _ in range(PORT_TRIES):
            port = free_port()
            if engine == "pdfindex":
                cmd = [sys.executable, "-m", "pdfindex", "serve", "--index", str(index_dir), "--port", str(port)]
            else:
                cmd = [sys.executable, "-m", "uvicorn", "bench.serve_load:tantivy_app", "--factory", "--host",
                       "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log",
                       "--no-server-header"]
            with log.open("wb") as out:
                proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            print(f"server pid {proc.pid} on port {port} ({index_dir})", file=sys.stderr, flush=True)
            if _healthy(proc, port, log, timeout, name):
                break
            stop_server(proc)
            proc = None
        else:
            raise BenchError(f"{name} found no free port in {PORT_TRIES} tries: {_tail(log)}")
        yield Server(proc.pid, port, log)
    finally:
        if proc is not None:
            stop_server(proc)


# ------------------------------------------------------------------ the raw Tantivy server

#: The environment variable naming the TantivyIndex folder the peer server answers from.
TANTIVY_INDEX_ENV = "SERVE_LOAD_TANTIVY_INDEX"


def tantivy_app() -> Any:
    """The peer server (``uvicorn bench.serve_load:tantivy_app --factory``): what a
    small application over tantivy-py would put behind HTTP, so that pdfindex's
    requests/s have the fastest peer's beside them on the same machine."""
    index = search_speed.TantivyIndex.open(Path(os.environ[TANTIVY_INDEX_ENV]))
    app = FastAPI(title="raw Tantivy (serve_load's peer)")

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/search")
    def search(q: str = Param(min_length=1, max_length=1000),
               limit: int = Param(LIMIT, ge=1, le=100)) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            total, hits = index.answer(q, limit, highlight=True)
        except ValueError as exc:  # Tantivy's query parser refuses the query
            raise HTTPException(400, f"bad query: {exc}") from None
        return {"query": q, "total": total, "took": time.perf_counter() - started, "partial": False, "hits": hits}

    return app


def build_tantivy(workdir: Path, corpus: search_speed.Corpus, batch_pages: int) -> tuple[Path, float]:
    """The corpus in a TantivyIndex folder of ``workdir`` and the seconds it took."""
    root = workdir / "tantivy"
    print(f"building a {corpus.pages}-page Tantivy index in {root} ...", file=sys.stderr, flush=True)
    report = search_speed.TantivyIndex(root).build(corpus, batch_pages)
    return root, report.seconds


# ------------------------------------------------------------------ the search load

@dataclass(frozen=True, slots=True)
class Sample:
    key: str  # query class
    ms: float
    took_ms: float | None  # the server's own search time (the answer's "took")
    error: str | None = None
    partial: bool = False
    at: float = 0.0  # when it was sent (time.perf_counter())


def search_once(client: httpx.Client, plan: Plan, key: str, query: str) -> Sample:
    """One timed search, checked: 200, and the number of pages the query must find."""
    started = time.perf_counter()
    try:
        resp = client.get("/api/search", params={"q": query, "limit": LIMIT})
    except httpx.HTTPError as exc:
        return Sample(key, (time.perf_counter() - started) * 1000, None, f"{type(exc).__name__}: {exc}"[:300])
    ms = (time.perf_counter() - started) * 1000
    if resp.status_code != 200:
        return Sample(key, ms, None, f"HTTP {resp.status_code} for {query!r}: {resp.text[:200]}")
    try:
        body = resp.json()
        total, took, partial = int(body["total"]), float(body["took"]) * 1000, bool(body["partial"])
        hits = len(body["hits"])
    except (ValueError, KeyError, TypeError) as exc:
        return Sample(key, ms, None, f"unreadable answer for {query!r}: {exc}"[:300])
    expected = plan.rare_pages.get(query) if key == "rare" else None
    if expected is not None and (total != expected or hits != min(expected, LIMIT)):
        return Sample(key, ms, took, f"wrong answer for rare term {query!r}: {total} pages, planted on {expected}",
                      partial)
    if total < 1 or hits < 1:
        return Sample(key, ms, took, f"wrong answer for {query!r}: no page found", partial)
    return Sample(key, ms, took, None, partial)


def _client(url: str, plan: Plan, seed: str, ready: threading.Barrier, clock: list[float], stop: threading.Event,
            out: list[Sample]) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT, trust_env=False) as client:
        try:
            ready.wait()
        except threading.BrokenBarrierError:
            return
        deadline = clock[0]
        while not stop.is_set() and (sent := time.perf_counter()) < deadline:
            key, query = plan.pick(rng)
            out.append(replace(search_once(client, plan, key, query), at=sent))


@dataclass(frozen=True, slots=True)
class ClassStats:
    key: str
    label: str
    requests: int
    failed: int
    partial: int
    p50_ms: float | None
    p95_ms: float | None
    took_p50_ms: float | None  # the server's search time, median


@dataclass(frozen=True, slots=True)
class Level:
    clients: int
    seconds: float
    requests: int
    failed: int
    requests_per_second: float
    overall: ClassStats
    classes: list[ClassStats]
    server_cores: float
    client_cores: float
    other_cores: float
    errors: list[str] = field(default_factory=list)
    #: The first RAMP_SECONDS, not in the figures above: rare terms' p95 and requests.
    ramp_rare_p95_ms: float | None = None
    ramp_requests: int = 0


def _percentiles(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    lat = search_speed.Latency(samples_ms=values)
    return lat.p50, lat.p95


def class_stats(key: str, label: str, samples: Sequence[Sample]) -> ClassStats:
    ok = [s for s in samples if s.error is None]
    p50, p95 = _percentiles([s.ms for s in ok])
    took, _ = _percentiles([s.took_ms for s in ok if s.took_ms is not None])
    return ClassStats(key, label, len(samples), len(samples) - len(ok), sum(s.partial for s in samples), p50, p95,
                      took)


def warm_up(server: Server, plan: Plan, name: str) -> Level:
    """Each class's warm-up query, checked, then WARMUP_CLIENTS clients for
    WARMUP_SECONDS, untimed."""
    with httpx.Client(base_url=server.url, timeout=REQUEST_TIMEOUT, trust_env=False) as client:
        for key, query in plan.warmup.items():
            sample = search_once(client, plan, key, query)
            if sample.error:
                raise BenchError(f"the {name}warm-up query failed: {sample.error}")
    warm = run_level(server, plan, WARMUP_CLIENTS, WARMUP_SECONDS, "warm-up:")
    print(f"{name}warm-up: {warm.requests} requests, {warm.failed} failed", file=sys.stderr, flush=True)
    return warm


def run_level(server: Server, plan: Plan, clients: int, seconds: float, tag: str = "") -> Level:
    """``clients`` closed-loop clients for ``seconds``; their samples and what the
    machine spent meanwhile."""
    outs: list[list[Sample]] = [[] for _ in range(clients)]
    ready = threading.Barrier(clients + 1)
    stop = threading.Event()
    clock = [0.0]
    threads = [threading.Thread(target=_client, name=f"client-{i}", daemon=True,
                                args=(server.url, plan, f"{tag}{clients}:{i}", ready, clock, stop, outs[i]))
               for i in range(clients)]
    for t in threads:
        t.start()
    try:
        busy0, own0, server0 = ingest_throughput.machine_busy(), time.process_time(), server.cpu()
        started = time.perf_counter()
        clock[0] = started + RAMP_SECONDS + seconds
        ready.wait()
        for t in threads:
            while t.is_alive():  # in steps, so that Ctrl-C is seen
                t.join(0.2)
        elapsed = time.perf_counter() - started - RAMP_SECONDS
        busy = ingest_throughput.machine_busy() - busy0
        own, served = time.process_time() - own0, server.cpu() - server0
    finally:
        stop.set()
        ready.abort()
    sent = [s for out in outs for s in out]
    samples = [s for s in sent if s.at >= started + RAMP_SECONDS]
    ramp = [s for s in sent if s.at < started + RAMP_SECONDS]
    errors = list(dict.fromkeys(s.error for s in sent if s.error))[:ERRORS_SHOWN]
    overall = class_stats("all", "all queries", samples)
    per_class = [class_stats(k, plan.labels[k], [s for s in samples if s.key == k]) for k in plan.shares]
    ramp_rare = _percentiles([s.ms for s in ramp if s.key == "rare" and s.error is None])[1]
    failed = overall.failed + sum(s.error is not None for s in ramp)
    whole = elapsed + RAMP_SECONDS  # CPU was measured over the ramp too
    return Level(clients, elapsed, len(samples), failed, len(samples) / elapsed if elapsed > 0 else 0.0,
                 overall, per_class, served / whole, own / whole, max(0.0, busy - own - served) / whole, errors,
                 ramp_rare, len(ramp))


# ------------------------------------------------------------------ the marked page image

@dataclass(frozen=True, slots=True)
class ImagePass:
    images: int
    failed: int
    p50_ms: float | None
    p95_ms: float | None
    max_ms: float | None
    server_cores: float
    other_cores: float
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ImageReport:
    status: str  # "measured", "endpoint missing", "skipped"
    files: int = 0
    pages: int = 0
    ingest_seconds: float | None = None
    route: str | None = None
    warmup_ms: float | None = None
    rendered: ImagePass | None = None
    cached: ImagePass | None = None
    distinct_queries: int = 0


def _get_json(client: httpx.Client, path: str, params: dict[str, Any] | None = None) -> Any:
    """An untimed request whose answer the bench needs (BenchError if it fails)."""
    resp = client.get(path, params=params)
    if resp.status_code != 200:
        raise BenchError(f"GET {path} {params or ''} answered {resp.status_code}: {resp.text[:200]}")
    try:
        return resp.json()
    except ValueError as exc:
        raise BenchError(f"GET {path}: not JSON ({exc})") from None


def image_route(client: httpx.Client) -> str | None:
    """The page-image path template ("/api/documents/{}/pages/{}.png") if the
    server's OpenAPI describes it, else None."""
    for path in _get_json(client, "/openapi.json").get("paths", {}):
        if _IMAGE_ROUTE.match(path):
            return _IMAGE_ROUTE.sub("/api/documents/{}/pages/{}.png", path)
    return None


def image_targets(client: httpx.Client, count: int, seed: int) -> list[tuple[str, int, str]]:
    """``count`` different (doc_hash, page, word) triples, every page first once,
    each word one the API's search finds on that page (the least used so far, so
    that the queries vary)."""
    listing = _get_json(client, "/api/documents", {"limit": 1000})
    pages = sorted((d["doc_hash"], n) for d in listing["documents"] if d["status"] == "indexed"
                   for n in range(1, int(d["page_count"]) + 1))
    words_of: dict[tuple[str, int], list[str]] = {p: [] for p in pages}
    for word in FOLDER_VOCABULARY[40:40 + IMAGE_WORDS_SEARCHED]:
        if all(len(ws) >= IMAGE_WORDS_PER_PAGE for ws in words_of.values()):
            break
        for hit in _get_json(client, "/api/search", {"q": word, "limit": 1000})["hits"]:
            key = (hit["doc_hash"], int(hit["page"]))
            if key in words_of and word not in words_of[key]:
                words_of[key].append(word)
    used: dict[str, int] = {}
    triples: list[tuple[str, int, str]] = []
    chosen: set[tuple[str, int, str]] = set()
    order = pages[:]
    random.Random(seed).shuffle(order)
    for _ in range(count):
        fresh = [(p, w) for p in order for w in words_of[p] if (*p, w) not in chosen]
        if not fresh:
            raise BenchError(f"only {len(triples)} different (page, word) images in the image corpus, {count} needed")
        seen_pages = {(h, n) for h, n, _ in triples}
        unseen = [(p, w) for p, w in fresh if p not in seen_pages]
        page, word = min(unseen or fresh, key=lambda pw: (used.get(pw[1], 0), order.index(pw[0])))
        used[word] = used.get(word, 0) + 1
        chosen.add((*page, word))
        triples.append((*page, word))
    return triples


def fetch_image(client: httpx.Client, route: str, target: tuple[str, int, str]) -> tuple[float, str | None]:
    """Milliseconds for one page image, and what was wrong with it (None: a PNG of
    IMAGE_WIDTH pixels)."""
    doc_hash, page, word = target
    started = time.perf_counter()
    try:
        resp = client.get(route.format(doc_hash, page), params={"q": word, "width": IMAGE_WIDTH})
    except httpx.HTTPError as exc:
        return (time.perf_counter() - started) * 1000, f"{type(exc).__name__}: {exc}"[:300]
    ms = (time.perf_counter() - started) * 1000
    what = f"page {page} of {doc_hash[:12]} q={word!r}"
    if resp.status_code != 200:
        return ms, f"HTTP {resp.status_code} for {what}: {resp.text[:200]}"
    data = resp.content
    if not resp.headers.get("content-type", "").startswith("image/png") or not data.startswith(PNG_SIGNATURE):
        return ms, f"not a PNG for {what} ({resp.headers.get('content-type')})"
    width = int.from_bytes(data[16:20], "big") if len(data) >= 24 else 0
    if width != IMAGE_WIDTH:
        return ms, f"{width} pixels wide for {what}, asked for {IMAGE_WIDTH}"
    return ms, None


def image_pass(client: httpx.Client, server: Server, route: str, targets: Sequence[tuple[str, int, str]]) -> ImagePass:
    busy0, own0, server0 = ingest_throughput.machine_busy(), time.process_time(), server.cpu()
    started = time.perf_counter()
    results = [fetch_image(client, route, t) for t in targets]
    elapsed = max(time.perf_counter() - started, 1e-9)
    busy = ingest_throughput.machine_busy() - busy0
    own, served = time.process_time() - own0, server.cpu() - server0
    ok = [ms for ms, error in results if error is None]
    p50, p95 = _percentiles(ok)
    errors = list(dict.fromkeys(e for _, e in results if e))[:ERRORS_SHOWN]
    return ImagePass(len(results), len(results) - len(ok), p50, p95, max(ok, default=None), served / elapsed,
                     max(0.0, busy - own - served) / elapsed, errors)


def measure_images(workdir: Path, count: int, seed: int) -> ImageReport:
    """Real PDFs, the real ingest, a server over them, and ``count`` different
    marked page images timed, then the same again from the cache."""
    low, high = IMAGE_PAGES_PER_FILE
    files = max(1, math.ceil((count + 1) / low))  # at least count + 1 pages: one for the warm-up
    folder = workdir / "image-pdfs"
    corpus = build_corpus(folder, files, (low, high), FOLDER_SEED)
    index_dir = workdir / "image-index"
    print(f"ingesting {len(corpus.files)} PDFs ({corpus.pages} pages) for the page images ...", file=sys.stderr,
          flush=True)
    started = time.perf_counter()
    try:
        done = subprocess.run(ingest_throughput.ingest_command(folder, index_dir, None), cwd=ROOT,
                              env=ingest_throughput.child_env(None), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=INGEST_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"pdfindex ingest {folder} took more than {INGEST_TIMEOUT:g} s") from None
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-4:])[:600]
        raise BenchError(f"pdfindex ingest {folder} exited with status {done.returncode}: {tail}")
    report = ImageReport("measured", len(corpus.files), corpus.pages, time.perf_counter() - started)
    with serve(index_dir, workdir / "image-server.log") as server, \
            httpx.Client(base_url=server.url, timeout=REQUEST_TIMEOUT, trust_env=False) as client:
        route = image_route(client)
        if route is None:
            report.status = "endpoint missing"
            return report
        report.route = route.format("{hash}", "{n}")
        targets = image_targets(client, count + 1, seed)
        report.distinct_queries = len({w for _, _, w in targets[1:]})
        warm_ms, warm_error = fetch_image(client, route, targets[0])
        if warm_error:
            raise BenchError(f"the warm-up page image failed: {warm_error}")
        report.warmup_ms = warm_ms
        report.rendered = image_pass(client, server, route, targets[1:])
        report.cached = image_pass(client, server, route, targets[1:])
    return report


# ------------------------------------------------------------------ report

@dataclass(frozen=True, slots=True)
class Target:
    name: str
    value: str
    verdict: str  # "met", "MISSED", "not measured"


def targets(levels: Sequence[Level], images: ImageReport) -> list[Target]:
    out: list[Target] = []
    at = next((lv for lv in levels if lv.clients == TARGET_CLIENTS), None)
    name = f"{TARGET_CLIENTS} clients, zero failed requests"
    if at is None:
        out.append(Target(name, f"{TARGET_CLIENTS} not among --clients", "not measured"))
        out.append(Target(f"rare-term p95 <= {TARGET_RARE_P95_MS:g} ms at {TARGET_CLIENTS} clients",
                          f"{TARGET_CLIENTS} not among --clients", "not measured"))
    else:
        out.append(Target(name, f"{at.failed} of {at.requests} failed", "met" if at.failed == 0 else "MISSED"))
        rare = next((c for c in at.classes if c.key == "rare"), None)
        rname = f"rare-term p95 <= {TARGET_RARE_P95_MS:g} ms at {TARGET_CLIENTS} clients"
        if rare is None or rare.p95_ms is None:
            out.append(Target(rname, "no rare-term query answered (see --mix)", "not measured"))
        else:
            out.append(Target(rname, f"{rare.p95_ms:.1f} ms",
                              "met" if rare.p95_ms <= TARGET_RARE_P95_MS and rare.failed == 0 else "MISSED"))
    iname = f"marked page image p95 <= {TARGET_IMAGE_P95_MS:g} ms"
    if images.rendered is None or images.rendered.p95_ms is None:
        out.append(Target(iname, images.status if images.rendered is None else "no image answered",
                          "not measured" if images.rendered is None else "MISSED"))
    else:
        ok = images.rendered.p95_ms <= TARGET_IMAGE_P95_MS and images.rendered.failed == 0
        out.append(Target(iname, f"{images.rendered.p95_ms:.0f} ms", "met" if ok else "MISSED"))
    return out


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def cpu_line(levels: Sequence[Level], where: str) -> str:
    """Where the cores went during each level: the server, the clients, the rest."""
    return f"CPU during each level{where}, in cores: " + "; ".join(
        f"{lv.clients} client(s): server {lv.server_cores:.2f}, clients (this process) {lv.client_cores:.2f}, "
        f"other processes {lv.other_cores:.2f}" for lv in levels)


def format_levels(levels: Sequence[Level]) -> str:
    header = ("clients", "queries", "requests", "req/s", "p50 ms", "p95 ms", "server search p50 ms", "failed")
    lines = [f"| {' | '.join(header)} |", f"|{'|'.join('---' for _ in header)}|"]
    for lv in levels:
        for c in (lv.overall, *lv.classes):
            rps = lv.requests_per_second * (c.requests / lv.requests if lv.requests else 0.0)
            lines.append(f"| {lv.clients} | {c.label} | {c.requests} | {rps:.1f} | {_ms(c.p50_ms)} | "
                         f"{_ms(c.p95_ms)} | {_ms(c.took_p50_ms)} | {c.failed} |")
    return "\n".join(lines)


def format_compare(ours: Sequence[Level], peer: Sequence[Level]) -> str:
    """pdfindex's and raw Tantivy's levels side by side, class by class."""
    header = ("clients", "queries", "pdfindex req/s", "Tantivy req/s", "×", "pdfindex p50 / p95 ms",
              "Tantivy p50 / p95 ms", "× p95")
    lines = [f"| {' | '.join(header)} |", f"|{'|'.join('---' for _ in header)}|"]

    def rps(lv: Level, c: ClassStats) -> float:
        return lv.requests_per_second * (c.requests / lv.requests if lv.requests else 0.0)

    def times(a: float | None, b: float | None) -> str:
        return "-" if a is None or b is None or a <= 0 or b <= 0 else f"{a / b:.1f}"

    for a, b in zip(ours, peer, strict=True):
        for ca, cb in zip((a.overall, *a.classes), (b.overall, *b.classes), strict=True):
            ra, rb = rps(a, ca), rps(b, cb)
            lines.append(f"| {a.clients} | {ca.label} | {ra:.1f} | {rb:.1f} | {times(rb, ra)} | "
                         f"{_ms(ca.p50_ms)} / {_ms(ca.p95_ms)} | {_ms(cb.p50_ms)} / {_ms(cb.p95_ms)} | "
                         f"{times(ca.p95_ms, cb.p95_ms)} |")
    return "\n".join(lines)


def format_images(images: ImageReport) -> list[str]:
    if images.status != "measured":
        return [f"marked page image: {images.status}"]
    lines = [f"marked page image: {images.files} PDFs, {images.pages} pages, ingested by pdfindex ingest in "
             f"{images.ingest_seconds:.1f} s; GET {images.route}?q=WORD&width={IMAGE_WIDTH}, one at a time; "
             f"{images.distinct_queries} different words; warm-up image (untimed) {_ms(images.warmup_ms)} ms",
             "", "| images | count | p50 ms | p95 ms | max ms | failed | server cores | other cores |",
             "|---|---|---|---|---|---|---|---|"]
    for name, ip in (("different (rendered)", images.rendered), ("the same again (cached)", images.cached)):
        if ip is not None:
            lines.append(f"| {name} | {ip.images} | {_ms(ip.p50_ms)} | {_ms(ip.p95_ms)} | {_ms(ip.max_ms)} | "
                         f"{ip.failed} | {ip.server_cores:.2f} | {ip.other_cores:.2f} |")
    for ip in (images.rendered, images.cached):
        lines += [f"  failed: {e}" for e in (ip.errors if ip else [])]
    return lines


# ------------------------------------------------------------------ main

def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through serve()'s finally: no server left behind


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    say = print
    say(f"pdfindex {ingest_throughput.revision()}; python {platform.python_version()} ({sys.executable}), "
        f"{platform.machine()}, {os.cpu_count()} CPUs; load average {search_speed.load_average()}", flush=True)
    if args.index is not None:
        root, corpus, info = open_kept_index(args.index, args.seed)
        say(f"search index: {root}, kept by search_speed.py: {info.pages} pages in {info.documents} documents, "
            f"seed {info.seed} (corpus regenerated in {info.generated_seconds:.1f} s and checked against it)")
    else:
        root, corpus, info = build_index(workdir, args.pages or search_speed.DEFAULT_PAGES, args.seed)
        built = info.built_seconds or 0.0
        say(f"search index: built here, {info.pages} pages in {info.documents} documents, seed {info.seed}: "
            f"corpus generated in {info.generated_seconds:.1f} s, indexed in {built:.1f} s "
            f"({info.pages / max(built, 1e-9):.0f} pages/s)")
    plan = make_plan(corpus, args.mix)
    tv_note = "raw Tantivy left out (--no-tantivy)" if args.no_tantivy else search_speed.tantivy_support()
    tv_root: Path | None = None
    tv_built: float | None = None
    if tv_note is None:
        tv_root, tv_built = build_tantivy(workdir, corpus, config.load().batch_pages)
        say(f"raw Tantivy server's index: tantivy-py ({search_speed.tantivy_version()}), the same corpus indexed "
            f"in {tv_built:.1f} s ({corpus.pages / max(tv_built, 1e-9):.0f} pages/s)")
    else:
        say(tv_note)
    del corpus
    say(f"query mix: {plan.describe()}; "
        + "; ".join(f"{plan.labels[k]}: {len(plan.queries[k])} different, e.g. {', '.join(plan.queries[k][:3])}"
                    for k in plan.shares))
    say(f"each request GET /api/search?q=...&limit={LIMIT} (top {LIMIT} with snippets); closed loop, one httpx.Client "
        f"per client thread in this process, {args.seconds:g} s per level, loopback only", flush=True)

    levels: list[Level] = []
    tv_levels: list[Level] = []
    tv_warm: Level | None = None
    with contextlib.ExitStack() as servers:
        server = servers.enter_context(serve(root, workdir / "search-server.log"))
        tv_server = None if tv_root is None else servers.enter_context(
            serve(tv_root, workdir / "tantivy-server.log", engine="tantivy"))
        warm = warm_up(server, plan, "")
        if tv_server is not None:
            tv_warm = warm_up(tv_server, plan, "raw Tantivy ")
        for n in args.clients:  # paired: each level on pdfindex, then on Tantivy, with the same seeded clients
            print(f"measuring {n} client(s) for {args.seconds:g} s ...", file=sys.stderr, flush=True)
            levels.append(run_level(server, plan, n, args.seconds))
            if tv_server is not None:
                print(f"measuring {n} client(s) for {args.seconds:g} s on raw Tantivy ...", file=sys.stderr,
                      flush=True)
                tv_levels.append(run_level(tv_server, plan, n, args.seconds))

    images = ImageReport("skipped (--images 0)")
    if args.images:
        images = measure_images(workdir, args.images, args.seed)

    say("")
    say(format_levels(levels))
    say("")
    say(cpu_line(levels, ""))
    for lv in levels:
        partial = lv.overall.partial
        if partial:
            say(f"note: at {lv.clients} client(s), {partial} answers were partial (the server's search time limit)")
        for error in lv.errors:
            say(f"  failed at {lv.clients} client(s): {error}")
    say("rare-term p95 by level: " + ", ".join(
        f"{lv.clients}: {_ms(next((c.p95_ms for c in lv.classes if c.key == 'rare'), None))} ms" for lv in levels))
    say(f"each level ran {RAMP_SECONDS:g} s before it was measured (all its clients start at once); in that first "
        "second, rare-term p95: " + ", ".join(f"{lv.clients}: {_ms(lv.ramp_rare_p95_ms)} ms ({lv.ramp_requests} "
                                              "requests)" for lv in levels))
    if tv_levels:
        say("")
        say("raw Tantivy server (a minimal FastAPI app over tantivy-py), the same clients, mix and checks:")
        say("")
        say(format_levels(tv_levels))
        say("")
        say(cpu_line(tv_levels, " on raw Tantivy"))
        for lv in tv_levels:
            for error in lv.errors:
                say(f"  failed at {lv.clients} client(s) on raw Tantivy: {error}")
        say("")
        say("pdfindex beside raw Tantivy (× = pdfindex's p95 over Tantivy's; Tantivy's requests/s over pdfindex's):")
        say("")
        say(format_compare(levels, tv_levels))
    elif tv_note is not None:
        say(f"{tv_note}: no peer figures.")
    say("")
    for line in format_images(images):
        say(line)
    say("")
    checks = targets(levels, images)
    for t in checks:
        say(f"target {t.name}: {t.value}: {t.verdict}")
    missed = [t.name for t in checks if t.verdict == "MISSED"]
    unmeasured = [t.name for t in checks if t.verdict == "not measured"]
    say(f"TARGETS: {'missed: ' + '; '.join(missed) if missed else 'all measured ones met'}"
        + (f" (not measured: {'; '.join(unmeasured)})" if unmeasured else ""))
    say(f"load average at the end: {search_speed.load_average()}")
    return {
        "version": 1, "revision": ingest_throughput.revision(), "python": platform.python_version(),
        "cpus": os.cpu_count(), "index": asdict(info), "mix": plan.shares, "seconds_per_level": args.seconds,
        "queries_per_class": {k: len(v) for k, v in plan.queries.items()},
        "levels": [asdict(lv) for lv in levels], "warmup": {"requests": warm.requests, "failed": warm.failed},
        "images": asdict(images), "targets": [asdict(t) for t in checks],
        "tantivy": None if tv_warm is None else {
            "version": search_speed.tantivy_version(), "built_seconds": tv_built,
            "warmup": {"requests": tv_warm.requests, "failed": tv_warm.failed},
            "levels": [asdict(lv) for lv in tv_levels]},
        "failed": sum(lv.failed for lv in (*levels, *tv_levels)) + warm.failed
        + (tv_warm.failed if tv_warm else 0) + sum(
            ip.failed for ip in (images.rendered, images.cached) if ip is not None),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        with tempfile.TemporaryDirectory(prefix="pdfindex-serve-bench-") as tmp:
            report = run(args, Path(tmp))
    except BenchError as exc:
        print(f"serve_load: error: {exc}", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:  # an untimed request of the set-up (the timed ones are counted as failures)
        print(f"serve_load: error: the server did not answer: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("serve_load: interrupted; the server was stopped", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"serve_load: error: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
