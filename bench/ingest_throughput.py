"""Bulk-ingest throughput of ``pdfindex ingest``: pages/second with one and two
extraction processes, embedded and through Celery, and where the time goes.

The question: does a second process (nearly) double throughput on this 2-core
machine?  Target: 2 processes >= 1.7x the pages/s of 1 process.  Everything is
measured in one run on one generated folder of PDFs:

* **embedded**: the whole command ``python -m pdfindex.cli.main ingest FOLDER --index DIR
  --workers N`` for N = 1 and 2, wall clock from spawn to exit, into a fresh index
  directory each time.  This is what a user pays: start-up, imports, planning
  (hashing every file), the billiard pool's start and stop, extraction in the
  pool, and the index writes, done by the command's own process (the single
  writer) while the pool extracts.  One extra run confines ``--workers 1`` to one
  CPU: with two CPUs, "1 process" still has the writer beside it on the other core.
* **celery**: the same command with ``PDFINDEX_BROKER_URL`` set, while the README's
  distributed set-up runs on this machine: one index writer ``celery -A
  pdfindex.workers.app worker -Q index --concurrency 1`` and one extraction worker
  ``-Q extract --concurrency N``, N = 1 and 2.  So "N processes" means N extraction
  processes plus the writer, as in embedded mode (where the ingest process writes).
  **celery-shared**: one worker ``-Q extract,index --concurrency N``, whose N
  processes share extraction and the ``pdfindex.write`` tasks (a one-worker set-up;
  with N = 1 extraction and writing cannot overlap).  The workers and the command
  get ``PDFINDEX_ROOTS`` (the generated folder)
  and ``PDFINDEX_INDEX_DIR`` (the run's fresh index, which the writer writes).  The
  workers are started and their logs watched for the "ready." line *before* the clock
  starts (their start-up is not timed; they answer no ping, remote control being off)
  and stopped after (warm shutdown, then the process group is killed if anything
  is left, also on errors and SIGTERM).  Only
  Redis database 14 is used, flushed before each worker starts; the Celery runs are
  refused if any other client is connected to that database (Redis CLIENT LIST).
  The client polls Redis every 0.5 s, so a Celery time can be up to 0.5 s late.
* **scaling**: pages/s with 2 processes over 1, per mode, against the target.
* **phase split**: the single-process CPU time of (a) ``pipeline.extract`` over
  every file and (b) writing the resulting page records with ``PageIndex.writer``
  at the ingest's batch size (``PDFINDEX_BATCH_PAGES``, commits included), both in
  this process; a/(a+b) and b/(a+b).  With one writer, b is a floor under the wall
  time whatever the number of extractors, and on 2 cores the writer competes with
  them for CPU.  (c), the JSON hand-off of results between processes, is timed
  too.  From a, b, c and the fixed cost of a command (an ingest of an empty
  folder, plus stopping the pool as the diagnosis timeline measures it) the
  report derives the best 2/1 ratio this design could reach, and how small b (or
  the fixed cost) would have to be for the target.
* **diagnosis** (embedded; extra untimed runs): a timeline of the command (plan
  done, first and last extraction result back, final commit done, pool stopped,
  exit), the writer thread's time in add and commit, and the CPU time of the
  ingest process and of its pool, taken by wrapping those functions in the child
  process only (no file changes).

Also per timed run: CPU seconds of everything the run started (cores = CPU s /
wall s), when the first and last file's extraction ended (from the ``ingested``
times in the index), the number of index commits (Whoosh's TOC generation), and
the load other processes put on the machine meanwhile (from /proc/stat).  Before
each timed run the benchmark waits (``--quiet-wait``) until other processes use
less than ``--quiet-threshold`` cores, and a run during which they used more is
tried again (twice at most): a shared machine slows 2-process runs most and would
fake a scaling problem.  Runs go round-robin and the best of
``--runs`` is kept, because noise only ever adds time.

The PDFs come from bench/corpus.py's ``build_corpus`` (``tests/pdfwriter.py``, fixed
seed): ``--files`` documents of ``--pages-per-file`` pages (N or MIN-MAX), about
300-400 words a page of English-like text (Zipf-weighted vocabulary, sentences,
numbers) set the ways real producers set it: TeX style (Times, TJ arrays with word
gaps as numbers and kerning), office style (a subset TrueType font with ToUnicode and
hex strings, TJ with space glyphs) and browser style (Helvetica, one ``Tm`` + ``Tj`` a
line).

Usage, from the project root (``-m``: the bench imports bench/corpus.py and the test
helpers beside the installed package; Linux: /proc and sched_setaffinity; Celery mode:
a Redis server)::

    .venv/bin/python -m bench.ingest_throughput [--files 60] [--pages-per-file 5-30]
        [--modes embedded,celery,celery-shared] [--runs 3] [--keep DIR] [--redis redis://127.0.0.1:6379/14]
    .venv/bin/python -m bench.ingest_throughput --files 6 --pages-per-file 3 --runs 1 --quiet-wait 0  # quick
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from bench.corpus import FOLDER_SEED, TOKEN, Corpus, build_corpus
from pdfindex import config, pipeline
from pdfindex.config import MAX_SHARDS
from pdfindex.indexer import DocumentRecord, PageIndex, PageRecord, Status
from pdfindex.workers.outcome import Outcome

ROOT = Path(__file__).resolve().parents[1]
TARGET_SCALING = 1.7
#: Celery with one extraction process within 15 % of embedded with one (issue 9, item 6).
CELERY_SHARE = 0.85
CORES_OF_TARGET = 2  # the target is set for a 2-core machine
DEFAULT_FILES = 60
DEFAULT_PAGES_PER_FILE = "5-30"
DEFAULT_RUNS = 3
DEFAULT_TIMEOUT = 1800.0
#: the Redis database of the celery modes, the only one this benchmark touches (flushed)
DEFAULT_REDIS = "redis://127.0.0.1:6379/14"
WORKER_READY_TIMEOUT = 90.0
WORKER_STOP_TIMEOUT = 30.0
DEFAULT_QUIET_WAIT = 300.0
DEFAULT_QUIET_THRESHOLD = 0.3  # cores
NOISY_RETRIES = 2  # extra tries of a run during which other processes were busy
PROCESS_COUNTS = (1, 2)
MODES = ("embedded", "celery", "celery-shared")

# ------------------------------------------------------------------ machine load

def machine_busy() -> float:
    """CPU seconds the machine's CPUs have been busy since boot, all processes
    (/proc/stat: everything but idle and iowait; steal counts as busy, since the
    CPU was not ours then)."""
    with open("/proc/stat", encoding="ascii") as fh:
        values = [int(v) for v in fh.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def group_cpu(pgid: int) -> float:
    """CPU seconds of the live processes of one process group (/proc)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[2]) == pgid:  # after "pid (comm)": state ppid pgrp ... utime(11) stime(12)
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def other_load(seconds: float = 2.0) -> float:
    """Cores busy over ``seconds`` while this process sleeps: the other processes' load."""
    busy = machine_busy()
    time.sleep(seconds)
    return (machine_busy() - busy) / seconds


def wait_until_quiet(max_wait: float, threshold: float) -> float:
    """Wait (at most ``max_wait`` s) until the rest of the machine uses less than
    ``threshold`` cores; returns the last load measured. Another job sharing the
    2 cores would slow the 2-process runs most and fake a scaling problem."""
    deadline = time.monotonic() + max_wait
    load = other_load()
    while load >= threshold and time.monotonic() < deadline:
        print(f"  waiting for a quiet machine: other processes use {load:.2f} cores", file=sys.stderr)
        time.sleep(3.0)
        load = other_load()
    return load


# ------------------------------------------------------------------ timed commands

@dataclass(frozen=True, slots=True)
class Run:
    """One configuration's best (fastest) run."""

    mode: str
    processes: int
    seconds: float | None  # None: failed
    pages: int = 0
    one_cpu: bool = False  # the command was confined to one CPU (sched_setaffinity)
    cpu: float | None = None  # CPU seconds of the command, its pool, and (celery) the worker
    other: float | None = None  # cores other processes of the machine used meanwhile, on average
    first_extracted: float | None = None  # seconds from spawn until the first file's extraction ended
    last_extracted: float | None = None  # ... until the last file's extraction ended
    commits: int | None = None  # index commits the run made
    error: str | None = None

    def pages_per_second(self) -> float | None:
        return None if self.seconds is None or self.seconds <= 0 else self.pages / self.seconds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_env(broker_url: str | None) -> dict[str, str]:
    """The environment of every command: ours without PDFINDEX_* settings (defaults
    apply, so runs are comparable) but the shard count ``--shards`` set, plus the
    broker when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDFINDEX_") or k == "PDFINDEX_SHARDS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if broker_url:
        env["PDFINDEX_BROKER_URL"] = broker_url
    return env


def celery_env(broker_url: str, folder: Path, index_dir: Path) -> dict[str, str]:
    """The environment of the worker and of the ingest client of a Celery run. Both
    need PDFINDEX_ROOTS (a worker refuses to start without it, the client refuses
    files outside it), and the worker writes the index of its own
    PDFINDEX_INDEX_DIR (messages carry no directory), so that must be the index
    the client is given with --index. Absolute paths: relative roots are refused."""
    env = child_env(broker_url)
    env["PDFINDEX_ROOTS"] = str(folder.resolve())
    env["PDFINDEX_INDEX_DIR"] = str(index_dir.resolve())
    return env


def ingest_command(folder: Path, index_dir: Path, workers: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "pdfindex.cli.main", "ingest", str(folder), "--index", str(index_dir)]
    return cmd + (["--workers", str(workers)] if workers is not None else [])


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])[:400]


@dataclass(frozen=True, slots=True)
class IndexFacts:
    problem: str | None  # None: every page and file record is there
    first_extracted: float = 0.0  # epoch seconds: the file records' ``ingested``, set when extraction ends
    last_extracted: float = 0.0
    commits: int = 0


#: Reads an index in a fresh interpreter, so the project code that reads it is the
#: code that wrote it, even when the project changes while the benchmark runs.
_INSPECT = r"""
import json, re, sys
from pathlib import Path
from pdfindex.indexer import PageIndex
index = PageIndex(Path(sys.argv[1]))
stats = index.stats()
times = [doc.ingested for doc in index.documents()]
tocs = [int(m.group(1)) for d in [index.path, *index.path.glob("shard-*")] for f in d.iterdir()
        if (m := re.fullmatch(r"_MAIN_(\d+)\.toc", f.name))]  # with shards: the most any shard made
print(json.dumps({"pages": stats.pages, "documents": stats.documents, "by_status": stats.by_status,
                  "first": min(times, default=0.0), "last": max(times, default=0.0), "commits": max(tocs, default=0)}))
"""


def inspect_index(index_dir: Path, expected_pages: int, expected_files: int) -> IndexFacts:
    """Check what a run left: all pages and file records, when extractions ended
    (each file record's ``ingested`` time is taken as its extraction finishes), and
    how many commits were made (Whoosh's table-of-contents generation, _MAIN_N.toc;
    with shards, the most any shard made)."""
    done = subprocess.run([sys.executable, "-c", _INSPECT, str(index_dir)], cwd=ROOT, env=child_env(None),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        return IndexFacts(f"cannot read the index: {_tail(done.stderr)}")
    facts = json.loads(done.stdout)
    if facts["pages"] != expected_pages or facts["documents"] != expected_files:
        return IndexFacts(f"index holds {facts['pages']} pages of {facts['documents']} files; expected "
                          f"{expected_pages} pages of {expected_files} files ({facts['by_status']})")
    return IndexFacts(None, facts["first"], facts["last"], facts["commits"])


def _confine_to_one_cpu() -> None:
    """preexec_fn: this process and everything it starts run on one CPU only."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def timed_ingest(mode: str, processes: int, corpus: Corpus, index_dir: Path, workers: int | None,
                 env: Mapping[str, str], timeout: float, worker_cpu: Callable[[], float] | None = None,
                 one_cpu: bool = False) -> Run:
    """Run and time one ingest command; check the index it made."""
    cmd = ingest_command(corpus.folder, index_dir, workers)
    failed = functools.partial(Run, mode, processes, None, corpus.pages, one_cpu)
    cpu0, busy0, extra0 = _children_cpu(), machine_busy(), worker_cpu() if worker_cpu else 0.0
    epoch = time.time()
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=dict(env), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False,
                              preexec_fn=_confine_to_one_cpu if one_cpu else None)  # no threads in this process: safe
    except subprocess.TimeoutExpired:
        return failed(error=f"timed out after {timeout:g} s")
    seconds = time.perf_counter() - start
    busy, extra = machine_busy() - busy0, (worker_cpu() if worker_cpu else 0.0) - extra0
    cpu = _children_cpu() - cpu0 + extra
    other = max(0.0, busy - cpu) / seconds
    if done.returncode != 0:
        return failed(error=f"exit {done.returncode}: {_tail(done.stderr)}")
    facts = inspect_index(index_dir, corpus.pages, len(corpus.files))
    if facts.problem:
        return failed(error=f"{facts.problem}; output: {_tail(done.stdout, 6)}")
    return Run(mode, processes, seconds, corpus.pages, one_cpu, cpu, other, facts.first_extracted - epoch,
               facts.last_extracted - epoch, facts.commits)


@dataclass(frozen=True, slots=True)
class Quiet:
    """How long to wait for the rest of the machine to calm down before a timed run."""

    max_wait: float
    threshold: float  # cores

    def wait(self) -> None:
        if self.max_wait > 0:
            wait_until_quiet(self.max_wait, self.threshold)


def _best(runs: Sequence[Run]) -> Run:
    failed = [r for r in runs if r.seconds is None]
    if failed:
        return failed[0]
    return min(runs, key=lambda r: r.seconds or 0.0)


def embedded_once(corpus: Corpus, workers: int, workdir: Path, timeout: float, quiet: Quiet,
                  one_cpu: bool = False) -> Run:
    """One timed embedded ingest into a fresh index."""
    index_dir = workdir / f"index-embedded-{workers}"
    quiet.wait()
    try:
        return timed_ingest("embedded", workers, corpus, index_dir, workers, child_env(None), timeout,
                            one_cpu=one_cpu)
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)


# ------------------------------------------------------------------ Celery worker

def _flush(redis_url: str) -> None:
    """Empty the database of ``redis_url`` (and only it)."""
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(redis_url, socket_timeout=10)
    try:
        client.flushdb()
    finally:
        client.close()


def other_clients(redis_url: str) -> list[str]:
    """The other connections to the database of ``redis_url`` ("addr name=..."), from CLIENT
    LIST. Workers no longer answer Celery's ping (remote control is off), but a
    worker, or a client, of someone else on that database still holds a connection
    to it. Raises RuntimeError when the server cannot be asked."""
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(redis_url, socket_timeout=10)
    db = client.connection_pool.connection_kwargs.get("db", 0)
    try:
        own = client.client_id()
        clients = client.client_list()
    except redis.RedisError as exc:
        raise RuntimeError(f"cannot list the clients of Redis database {db}: {exc}") from None
    finally:
        client.close()
    return [f"{c.get('addr')} name={c.get('name') or '-'}" for c in clients
            if str(c.get("db")) == str(db) and str(c.get("id")) != str(own)]


def group_alive(proc: subprocess.Popen[bytes]) -> bool:
    """Whether anything of ``proc``'s process group (a worker and its pool, a
    server) remains; the leader is reaped on the way, or it stays "alive" as a zombie."""
    if proc.poll() is None:
        return True
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_group(proc: subprocess.Popen[bytes], grace: float, what: str) -> None:
    """After a stop signal: wait up to ``grace`` seconds for ``proc``'s process
    group to end, then SIGKILL whatever of it is left."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and group_alive(proc):
        time.sleep(0.05)
    if group_alive(proc):
        print(f"  {what} did not stop in {grace:g} s; killing its process group", file=sys.stderr)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _stop(proc: subprocess.Popen[bytes], grace: float) -> None:
    """Warm shutdown (SIGTERM: finish the current task, then exit), then SIGKILL
    for the worker's own process group (its pool) if anything is left."""
    with contextlib.suppress(ProcessLookupError):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    end_group(proc, grace, f"celery worker {proc.pid}")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and group_alive(proc):  # orphaned pool processes being reaped
        time.sleep(0.1)


@dataclass(frozen=True, slots=True)
class Worker:
    name: str
    pid: int  # also its process group: the worker and its pool processes

    def cpu(self) -> float:
        return group_cpu(self.pid)


def ready_line(name: str) -> re.Pattern[str]:
    """The line a worker called ``name`` ("x@host") logs, at INFO, once it consumes."""
    return re.compile(rf"^.*\b{re.escape(name)} ready\.\s*$", re.M)


@contextlib.contextmanager
def celery_worker(concurrency: int, env: Mapping[str, str], log: Path,
                  ready_timeout: float = WORKER_READY_TIMEOUT, queues: str = "extract,index") -> Iterator[Worker]:
    """Run one worker on ``queues`` until the block ends, even on
    errors or Ctrl-C; yields once its log says "<name> ready." (remote control is
    off, so it answers no ping; INFO logging for that line adds a few lines a file).
    The worker leads a process group of its own, so its pool can be stopped with it
    and nothing else is."""
    name = f"pdfindex-bench-{os.getpid()}-{queues.replace(',', '-')}-{concurrency}@{socket.gethostname()}"
    cmd = [sys.executable, "-m", "celery", "-A", "pdfindex.workers.app", "worker", "-Q", queues,
           "--concurrency", str(concurrency), "-n", name, "--loglevel", "INFO",
           "--without-gossip", "--without-mingle", "--without-heartbeat"]
    ready = ready_line(name)
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=dict(env), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            if ready.search(text):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"celery worker exited with {proc.returncode}: {_tail(text)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"celery worker not ready after {ready_timeout:g} s: {_tail(text)}")
            time.sleep(0.1)
        yield Worker(name, proc.pid)
    finally:
        _stop(proc, WORKER_STOP_TIMEOUT)


def celery_once(corpus: Corpus, concurrency: int, workdir: Path, timeout: float, redis_url: str,
                quiet: Quiet, mode: str = "celery") -> Run:
    """The database of ``redis_url`` flushed, fresh workers started and ready (``celery``: a
    writer on queue index and an extraction worker of ``concurrency`` processes;
    ``celery-shared``: one worker of ``concurrency`` processes on both queues), then
    one timed ingest through them into a fresh index; the workers are stopped
    whatever happens."""
    index_dir = workdir / f"index-{mode}-{concurrency}"
    env = celery_env(redis_url, corpus.folder, index_dir)
    _flush(redis_url)
    try:
        with contextlib.ExitStack() as stack:
            if mode == "celery-shared":
                workers = [stack.enter_context(celery_worker(concurrency, env, workdir / f"worker-{concurrency}.log"))]
            else:
                workers = [stack.enter_context(celery_worker(1, env, workdir / "writer.log", queues="index")),
                           stack.enter_context(celery_worker(concurrency, env, workdir / f"extract-{concurrency}.log",
                                                             queues="extract"))]
            quiet.wait()
            return timed_ingest(mode, concurrency, corpus, index_dir, None, env, timeout,
                                lambda: sum(w.cpu() for w in workers))
    except RuntimeError as exc:
        return Run(mode, concurrency, None, corpus.pages, error=str(exc))
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
        _flush(redis_url)


# ------------------------------------------------------------------ phase split

@dataclass(frozen=True, slots=True)
class Phase:
    cpu: float  # CPU seconds of this process
    wall: float


@dataclass(frozen=True, slots=True)
class Split:
    extract: Phase  # (a) pipeline.extract over every file, one process
    index: Phase  # (b) PageIndex writer over the extracted pages, same batch size, commits included
    handoff: Phase  # Outcome.to_json + from_json of every file (what the pool modes add)
    batch_pages: int
    tokens_found: float  # alphabetic tokens extracted / drawn (1.0: no merged or split words)


@contextlib.contextmanager
def _clock(into: list[Phase]) -> Iterator[None]:
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        yield
    finally:
        into.append(Phase(time.process_time() - cpu, time.perf_counter() - wall))


def _sum(phases: Sequence[Phase]) -> Phase:
    return Phase(sum(p.cpu for p in phases), sum(p.wall for p in phases))


def phase_split(corpus: Corpus, workdir: Path) -> Split:
    """(a), (b), (c) in this process, one after the other; each file's document is
    dropped after extraction, as a pool process does."""
    settings = config.load(child_env(None))
    extracting: list[Phase] = []
    outcomes: list[Outcome] = []
    tokens = 0
    for path in corpus.files:
        with _clock(extracting):
            doc = pipeline.extract(path)
        pages = [PageRecord(number=p.number, text=p.text, coverage=p.quality.coverage, glyphs=p.quality.glyphs,
                            unresolved=p.quality.unresolved, needs_ocr=p.quality.needs_ocr) for p in doc.pages]
        tokens += sum(len(TOKEN.findall(p.text)) for p in pages)
        st = path.stat()
        outcomes.append(Outcome(DocumentRecord(
            doc_hash=f"{path.name}-{st.st_size}", path=str(path), status=Status.INDEXED, page_count=len(pages),
            title=doc.info.get("Title", ""), producer=doc.info.get("Producer", ""), size=st.st_size,
            mtime=st.st_mtime, ingested=time.time()), pages))
        del doc

    handing: list[Phase] = []
    with _clock(handing):
        handed = [Outcome.from_json(o.to_json()) for o in outcomes]

    index_dir = workdir / "index-split"
    index = PageIndex(index_dir, settings.language)
    indexing: list[Phase] = []
    try:
        with _clock(indexing), index.writer(batch_pages=settings.batch_pages) as writer:
            for outcome in handed:
                writer.add(outcome.doc, outcome.pages)
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
    return Split(_sum(extracting), _sum(indexing), _sum(handing), settings.batch_pages,
                 tokens / corpus.tokens if corpus.tokens else 1.0)


# ------------------------------------------------------------------ diagnosis

#: Runs ``python -m pdfindex.cli.main ARGS`` unchanged, with timers wrapped around the
#: embedded ingest's steps (in this child process only; nothing on disk changes):
#: when each extraction result arrives (the pool's result thread decodes it with
#: Outcome.from_json), how long the main thread spends in PageWriter.add and
#: commit, when run_embedded starts and returns, and the CPU time of this process
#: (the single writer) and of its pool processes.
_WRAPPER = r"""
import atexit, json, resource, runpy, sys, time
T0 = time.perf_counter()
ev = {"arrivals": [], "add": 0.0, "commit": 0.0, "commits": 0, "run": [0.0, 0.0], "loop_end": 0.0}
import pdfindex.indexer.writer as iw, pdfindex.workers.embedded as we, pdfindex.workers.outcome as wo
add, commit, from_json, run_embedded = iw.PageWriter.add, iw.PageWriter.commit, wo.Outcome.from_json, we.run_embedded
nested = []
def t_add(self, doc, pages):
    s = time.perf_counter(); nested.append(0.0)
    try:
        return add(self, doc, pages)
    finally:
        ev["add"] += time.perf_counter() - s - nested.pop()
def t_commit(self):
    s, real = time.perf_counter(), self._writer is not None
    try:
        return commit(self)
    finally:
        d = time.perf_counter() - s; ev["commit"] += d; ev["commits"] += real
        if real:  # a writer's end commits nothing when its session committed already
            ev["loop_end"] = time.perf_counter() - T0
        if nested: nested[-1] += d
def t_from_json(data):
    ev["arrivals"].append(time.perf_counter() - T0)
    return from_json(data)
def t_run(*args, **kwargs):
    ev["run"][0] = time.perf_counter() - T0
    try:
        return run_embedded(*args, **kwargs)
    finally:
        ev["run"][1] = time.perf_counter() - T0
iw.PageWriter.add, iw.PageWriter.commit, we.run_embedded = t_add, t_commit, t_run
wo.Outcome.from_json = staticmethod(t_from_json)
def report():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    ev.update(wall=time.perf_counter() - T0, self_cpu=me.ru_utime + me.ru_stime, pool_cpu=kids.ru_utime + kids.ru_stime)
    sys.stderr.write("BENCH-DIAG " + json.dumps(ev) + "\n")
atexit.register(report)
sys.argv = ["pdfindex.cli.main", *sys.argv[1:]]
runpy.run_module("pdfindex.cli.main", run_name="__main__", alter_sys=True)
"""


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Timeline of one embedded ingest, seconds from the interpreter's start
    (after ~0.05 s of bare start-up the wrapper cannot see)."""

    workers: int
    wall: float
    run_start: float  # imports, settings, planning (hashing) done; the pool is created
    first_result: float  # first extraction result back in the writer process
    last_result: float  # last one back: extraction is over
    loop_end: float  # the writer's final commit done
    run_end: float  # run_embedded returned: pool terminated and joined
    add: float  # main thread inside PageWriter.add (commits excluded)
    commit: float  # main thread inside commits
    commits: int
    writer_cpu: float  # CPU of the ingest process: imports, planning, result decoding, index writes
    pool_cpu: float  # CPU of its extraction processes


def diagnose_embedded(corpus: Corpus, workers: int, workdir: Path, timeout: float, quiet: Quiet) -> Diagnosis | str:
    """The embedded ingest once more (untimed), under ``_WRAPPER``."""
    index_dir = workdir / f"index-diagnose-{workers}"
    cmd = [sys.executable, "-c", _WRAPPER, "ingest", str(corpus.folder), "--index", str(index_dir),
           "--workers", str(workers)]
    quiet.wait()
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=child_env(None), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:g} s"
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
    found = re.search(r"^BENCH-DIAG (.*)$", done.stderr, re.MULTILINE)
    if done.returncode != 0 or not found:
        return f"exit {done.returncode}: {_tail(done.stderr)}"
    ev = json.loads(found.group(1))
    arrivals = ev["arrivals"] or [0.0]
    return Diagnosis(workers, ev["wall"], ev["run"][0], min(arrivals), max(arrivals), ev["loop_end"], ev["run"][1],
                     ev["add"], ev["commit"], ev["commits"], ev["self_cpu"], ev["pool_cpu"])


def startup_floor(workdir: Path, timeout: float, quiet: Quiet) -> float:
    """Wall time of an ingest of an empty folder (best of 3): start-up, imports,
    creating the index, creating and stopping the pool; paid once per command
    whatever the number of workers."""
    empty = workdir / "empty"
    empty.mkdir(exist_ok=True)
    best = float("inf")
    quiet.wait()
    for attempt in range(3):
        index_dir = workdir / f"index-empty-{attempt}"
        start = time.perf_counter()
        subprocess.run(ingest_command(empty, index_dir, 1), cwd=ROOT, env=child_env(None),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False)
        best = min(best, time.perf_counter() - start)
        shutil.rmtree(index_dir, ignore_errors=True)
    return best


# ------------------------------------------------------------------ report

@dataclass(slots=True)
class Report:
    corpus: Corpus
    runs: list[Run] = field(default_factory=list)
    split: Split | None = None
    floor: float | None = None  # an ingest of an empty folder
    diagnoses: list[Diagnosis | str] = field(default_factory=list)

    def pool_stop(self) -> float | None:
        """Seconds from the final commit to run_embedded's return (the pool's
        terminate and join), the least over the diagnosis runs."""
        stops = [d.run_end - d.loop_end for d in self.diagnoses if isinstance(d, Diagnosis)]
        return min(stops) if stops else None

    def fixed_cost(self) -> float | None:
        """The serial cost of a command whatever its work: start-up, imports,
        planning, a new index (the empty-folder ingest), plus stopping the pool."""
        if self.floor is None:
            return None
        return self.floor + (self.pool_stop() or 0.0)


def _opt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _label(run: Run) -> str:
    return f"{run.mode}, 1 CPU" if run.one_cpu else run.mode


def format_runs(runs: Sequence[Run], attempts: int) -> str:
    rows = [f"  {'mode':<16}{'procs':>6}{'wall s':>9}{'pages/s':>9}{'CPU s':>8}{'cores':>7}"
            f"{'extracted at s':>16}{'commits':>9}{'other':>7}"]
    for run in runs:
        pps = run.pages_per_second()
        if run.seconds is None or pps is None:
            rows.append(f"  {_label(run):<16}{run.processes:>6}{'FAILED':>9}  {run.error}")
            continue
        cores = None if run.cpu is None else run.cpu / run.seconds
        extracted = ("-" if run.first_extracted is None or run.last_extracted is None
                     else f"{run.first_extracted:.1f}-{run.last_extracted:.1f}")
        rows.append(f"  {_label(run):<16}{run.processes:>6}{run.seconds:>9.2f}{pps:>9.1f}{_opt(run.cpu, '.1f'):>8}"
                    f"{_opt(cores, '.2f'):>7}{extracted:>16}{_opt(run.commits, 'd'):>9}{_opt(run.other, '.2f'):>7}")
    rows += [
        f"  best of {attempts} runs each. procs: extraction processes (--workers; celery: the extraction worker's",
        "  --concurrency, beside one writer process; celery-shared: one worker's --concurrency, whose processes also",
        "  run the index writes). CPU s: the command, its pool and (celery) the workers; cores: CPU s /",
        "  wall s. extracted at: seconds after spawn when the first and the last file's extraction ended. other:",
        "  cores used meanwhile by other processes of the machine (celery: Redis included). \"1 CPU\": the command",
        "  confined to one CPU, for scaling per core.",
    ]
    return "\n".join(rows)


def scaling_lines(runs: Sequence[Run]) -> list[str]:
    def pps(mode: str, processes: int, one_cpu: bool = False) -> float | None:
        found = [r for r in runs if (r.mode, r.processes, r.one_cpu) == (mode, processes, one_cpu)]
        return found[0].pages_per_second() if found else None

    lines: list[str] = []
    for mode in MODES:
        if not any(r.mode == mode for r in runs):
            continue
        one, two = pps(mode, 1), pps(mode, 2)
        if one is None or two is None:
            lines.append(f"  {mode:<10} 2 / 1 processes: not measured (a run failed)")
            continue
        ratio = two / one
        state = "met" if ratio >= TARGET_SCALING else "MISSED"
        lines.append(f"  {mode:<10} 2 / 1 processes: {two:6.1f} / {one:6.1f} pages/s = {ratio:.2f}x  "
                     f"(target >= {TARGET_SCALING:g}x: {state})")
    embedded = pps("embedded", 1)
    for mode in ("celery", "celery-shared"):
        one = pps(mode, 1)
        if embedded is not None and one is not None:
            ratio = one / embedded
            state = "met" if ratio >= CELERY_SHARE else "MISSED"
            lines.append(f"  {mode:<10} 1 process / embedded 1 process: {one:6.1f} / {embedded:6.1f} pages/s = "
                         f"{ratio:.2f}  (target >= {CELERY_SHARE:g}: {state})")
    pinned, two = pps("embedded", 1, one_cpu=True), pps("embedded", 2)
    if pinned is not None and two is not None:
        lines.append(f"  {'':<10} per core: 2 processes on 2 CPUs / 1 process on 1 CPU: {two:6.1f} / {pinned:6.1f} "
                     f"pages/s = {two / pinned:.2f}x (not the target's measure; shows what 2 cores buy)")
    return lines


def split_lines(split: Split, pages: int, files: int, fixed: float | None, floor: float | None = None) -> list[str]:
    a, b, c = split.extract, split.index, split.handoff
    total = a.cpu + b.cpu
    lines = [
        f"  {'':<52}{'CPU s':>8}{'wall s':>8}{'pages/s':>9}{'share':>8}",
        f"  {'(a) extraction: pipeline.extract, every file':<52}{a.cpu:>8.2f}{a.wall:>8.2f}"
        f"{pages / a.cpu:>9.1f}{a.cpu / total:>8.1%}",
        f"  {f'(b) indexing: PageIndex writer, batch {split.batch_pages} pages':<52}{b.cpu:>8.2f}{b.wall:>8.2f}"
        f"{pages / b.cpu:>9.1f}{b.cpu / total:>8.1%}",
        f"  {'(c) JSON hand-off: to_json + from_json (pool only)':<52}{c.cpu:>8.2f}{c.wall:>8.2f}",
        f"  a/(a+b) = {a.cpu / total:.1%}, b/(a+b) = {b.cpu / total:.1%} (CPU time; "
        f"sanity: alphabetic tokens extracted / drawn = {split.tokens_found:.2%})",
    ]
    if fixed is not None:
        one, two = ideal_wall(fixed, a.cpu, b.cpu, c.cpu, 1), ideal_wall(fixed, a.cpu, b.cpu, c.cpu, 2)
        lines += [
            f"  ideal embedded wall on {CORES_OF_TARGET} cores = fixed cost {fixed:.2f} s + max(all CPU / busy cores, "
            f"a / N, writer b + c/2):",
            f"    1 process {one:.2f} s, 2 processes {two:.2f} s: best possible 2/1 = {one / two:.2f}x with this "
            f"fixed cost and this a : b",
            "    (with --workers 1 the writer already runs beside the one extractor, on the second core: the "
            f"baseline is not one core's worth; one core would need >= {fixed + a.cpu + b.cpu:.2f} s)",
        ]
        if pages + files < split.batch_pages:  # the writer counts a file's record and its pages
            late = [fixed + a.cpu / n + b.cpu + c.cpu for n in (1, 2)]
            lines.append(f"    but this run's {pages} pages fit one batch of {split.batch_pages}: all index work "
                         f"happens in the final commit, after extraction, so expect 1 process {late[0]:.2f} s, "
                         f"2 processes {late[1]:.2f} s, 2/1 = {late[0] / late[1]:.2f}x")
        need_b = _largest(lambda x: ideal_wall(fixed, a.cpu, x, c.cpu, 1) / ideal_wall(fixed, a.cpu, x, c.cpu, 2),
                          b.cpu)
        need_f = _largest(lambda x: ideal_wall(x, a.cpu, 0.0, 0.0, 1) / ideal_wall(x, a.cpu, 0.0, 0.0, 2), fixed)
        if need_b is not None and need_b >= b.cpu:
            lines.append(f"    {TARGET_SCALING:g}x is within reach of this design with today's indexing cost")
        elif need_b is not None:
            lines.append(f"    {TARGET_SCALING:g}x needs indexing CPU b <= {need_b:.2f} s (now {b.cpu:.2f} s, "
                         f"{b.cpu / max(need_b, 1e-9):.1f}x too much) at this fixed cost")
        elif need_f is not None:
            lines.append(f"    {TARGET_SCALING:g}x is out of reach even with free indexing (b = c = 0) unless the "
                         f"fixed cost drops from {fixed:.2f} s to <= {need_f:.2f} s; then b must shrink too")
        if floor is not None and floor < fixed:
            base = floor
            need = _largest(lambda x: ideal_wall(base, a.cpu, x, c.cpu, 1) / ideal_wall(base, a.cpu, x, c.cpu, 2),
                            b.cpu)
            best = ideal_wall(base, a.cpu, b.cpu, c.cpu, 1) / ideal_wall(base, a.cpu, b.cpu, c.cpu, 2)
            lines.append(f"    without the pool stop (fixed cost {base:.2f} s): best possible 2/1 = {best:.2f}x; "
                         + ("out of reach even with free indexing" if need is None else
                            f"{TARGET_SCALING:g}x needs b <= {need:.2f} s ({b.cpu / max(need, 1e-9):.1f}x cheaper "
                            "indexing than now)"))
    return lines


def ideal_wall(fixed: float, a: float, b: float, c: float, n: int, cores: int = CORES_OF_TARGET) -> float:
    """Best wall time of an embedded ingest with ``n`` extraction processes and one
    writer process on ``cores`` CPUs: the fixed cost, then the larger of all CPU
    work spread over the busy cores, one extractor's share, and the writer's."""
    return fixed + max((a + b + c) / min(cores, n + 1), a / n, b + c / 2)


def _largest(ratio: Callable[[float], float], high: float) -> float | None:
    """Largest x in [0, high] with ratio(x) >= TARGET_SCALING (ratio falls as x
    grows); None when not even x = 0 reaches it."""
    if ratio(0.0) < TARGET_SCALING:
        return None
    if ratio(high) >= TARGET_SCALING:
        return high
    low = 0.0
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if ratio(mid) >= TARGET_SCALING else (low, mid)
    return low


def diagnosis_lines(diagnoses: Sequence[Diagnosis | str]) -> list[str]:
    lines = ["  seconds from start: plan done -> first file back -> last file back -> final commit done -> "
             "pool stopped -> exit"]
    for d in diagnoses:
        if isinstance(d, str):
            lines.append(f"  FAILED: {d}")
            continue
        window = max(d.last_result - d.first_result, 1e-9)
        lines += [
            f"  --workers {d.workers}: {d.run_start:.2f} -> {d.first_result:.2f} -> {d.last_result:.2f} -> "
            f"{d.loop_end:.2f} -> {d.run_end:.2f} -> {d.wall:.2f}",
            f"     writer thread busy {d.add + d.commit:.2f} s (add {d.add:.2f}, {d.commits} commits {d.commit:.2f})"
            f" = {(d.add + d.commit) / window:.0%} of the {window:.2f} s extraction window; "
            f"CPU: ingest process {d.writer_cpu:.2f} s, pool {d.pool_cpu:.2f} s "
            f"= {(d.writer_cpu + d.pool_cpu) / d.wall:.2f} cores on average",
        ]
    return lines


def format_report(report: Report, attempts: int) -> str:
    c = report.corpus
    lines = [
        f"corpus: {len(c.files)} files, {c.pages} pages, {c.words / c.pages:.0f} body words a page, "
        f"{c.bytes / 1e6:.1f} MB ({', '.join(f'{k} {v}' for k, v in c.styles.items())})",
    ]
    if report.runs:
        lines += ["", "ingest throughput (whole command, wall clock from spawn to exit):",
                  format_runs(report.runs, attempts)]
    scaling = scaling_lines(report.runs)
    if scaling:
        lines += ["", f"scaling, pages/s with 2 processes over 1 (target >= {TARGET_SCALING:g}x on this "
                      f"{os.cpu_count()}-CPU machine):", *scaling]
    if report.floor is not None:
        stop = report.pool_stop()
        lines += ["", f"fixed cost of one ingest command: {report.floor:.2f} s for an empty folder (start-up, "
                      "imports, planning, new index)" + (
                          f" + {stop:.2f} s to stop the pool (diagnosis timeline) = {report.floor + stop:.2f} s"
                          if stop is not None else "")]
    if report.split is not None:
        lines += ["", "where single-process work goes (in this process: no pool, no broker):",
                  *split_lines(report.split, c.pages, len(c.files), report.fixed_cost(), report.floor)]
    if report.diagnoses:
        lines += ["", "diagnosis: embedded ingest timeline (untimed extra run per worker count; the ingest "
                      "process is the single writer):", *diagnosis_lines(report.diagnoses)]
    return "\n".join(lines)


# ------------------------------------------------------------------ main

def _page_range(text: str) -> tuple[int, int]:
    found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if not found:
        raise argparse.ArgumentTypeError(f"{text!r}: expected N or MIN-MAX")
    low = int(found.group(1))
    high = int(found.group(2) or low)
    if low < 1 or high < low:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 <= MIN <= MAX")
    return low, high


def _modes(text: str) -> tuple[str, ...]:
    modes = tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise argparse.ArgumentTypeError(f"{text!r}: modes are {', '.join(MODES)}")
    return modes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Ingest throughput and scaling with 1 and 2 processes, "
                                            "embedded and via Celery, and the extraction/indexing split.")
    p.add_argument("--files", type=int, default=DEFAULT_FILES, help=f"PDFs to generate (default {DEFAULT_FILES})")
    p.add_argument("--pages-per-file", type=_page_range, default=_page_range(DEFAULT_PAGES_PER_FILE),
                   metavar="N|MIN-MAX", help=f"pages of each PDF (default {DEFAULT_PAGES_PER_FILE})")
    p.add_argument("--seed", type=int, default=FOLDER_SEED, help="generator seed (default: fixed)")
    p.add_argument("--modes", type=_modes, default=MODES,
                   help="comma-separated: embedded,celery,celery-shared (default all)")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                   help=f"timed runs per configuration, round-robin, best kept (default {DEFAULT_RUNS})")
    p.add_argument("--no-one-cpu", action="store_true",
                   help="skip the extra embedded run with 1 process confined to 1 CPU")
    p.add_argument("--no-split", action="store_true", help="skip the in-process extraction/indexing split")
    p.add_argument("--no-diagnose", action="store_true", help="skip the untimed embedded timeline runs")
    p.add_argument("--quiet-wait", type=float, default=DEFAULT_QUIET_WAIT,
                   help="seconds to wait at most, before each timed run, for other processes to leave the "
                        f"CPUs alone (0: do not wait; default {DEFAULT_QUIET_WAIT:g})")
    p.add_argument("--quiet-threshold", type=float, default=DEFAULT_QUIET_THRESHOLD,
                   help=f"cores other processes may use for the machine to count as quiet "
                        f"(default {DEFAULT_QUIET_THRESHOLD:g})")
    p.add_argument("--redis", default=DEFAULT_REDIS,
                   help=f"Redis database of the celery modes, flushed before and after each run; the "
                        f"benchmark refuses one that other clients use (default {DEFAULT_REDIS})")
    p.add_argument("--keep", type=Path, help="generate the PDFs into this folder and keep them")
    p.add_argument("--shards", type=int, default=1,
                   help="shards of each run's new index (default 1; embedded mode then writes a process per shard)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds allowed per ingest command (default {DEFAULT_TIMEOUT:g})")
    args = p.parse_args(argv)
    if args.files < 1 or args.runs < 1 or not 1 <= args.shards <= MAX_SHARDS:
        p.error(f"--files and --runs must be at least 1, --shards from 1 to {MAX_SHARDS}")
    if not re.fullmatch(r"redis://[^/]+/\d+", args.redis):
        p.error("--redis: a redis:// URL with a database number (redis://HOST:PORT/DB)")
    return args


def revision() -> str:
    """The project's git commit, "+changes" when the work tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "(git revision unknown)"
    return f"{head}{' +changes' if dirty else ''}"


def _raise_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through celery_worker's finally: no worker left behind


def run(args: argparse.Namespace, workdir: Path) -> Report:
    start = time.perf_counter()
    # absolute: the commands run in ROOT, and PDFINDEX_ROOTS must name the same folder
    folder = args.keep.resolve() if args.keep else workdir / "pdfs"
    corpus = build_corpus(folder, args.files, args.pages_per_file, args.seed)
    print(f"generated {len(corpus.files)} PDFs, {corpus.pages} pages in {time.perf_counter() - start:.1f} s: "
          f"{corpus.folder}", file=sys.stderr)
    report = Report(corpus)
    quiet = Quiet(args.quiet_wait, args.quiet_threshold)
    configs = [(mode, n, False) for mode in args.modes for n in PROCESS_COUNTS]
    if "embedded" in args.modes and not args.no_one_cpu:
        configs.insert(0, ("embedded", 1, True))
    results: dict[tuple[str, int, bool], list[Run]] = {config: [] for config in configs}
    if any(mode.startswith("celery") for mode in args.modes):
        try:
            others = other_clients(args.redis)
            problem = f"other clients are connected to Redis {args.redis}: {', '.join(others[:5])}"
        except RuntimeError as exc:
            others, problem = ["?"], str(exc)
        if others:  # their tasks and ours would mix; never flush under someone else's worker
            for mode in (m for m in args.modes if m.startswith("celery")):
                for n in PROCESS_COUNTS:
                    results[(mode, n, False)].append(Run(mode, n, None, corpus.pages, error=problem))
    for attempt in range(args.runs):  # round-robin: a drift in machine load touches every configuration
        for mode, n, one_cpu in configs:
            done = results[(mode, n, one_cpu)]
            if done and done[-1].seconds is None:
                continue  # failed once: not run again
            print(f"run {attempt + 1}/{args.runs}: {mode}, {n} process(es){' on 1 CPU' if one_cpu else ''} ...",
                  file=sys.stderr)
            for retry in range(NOISY_RETRIES + 1):
                if mode == "embedded":
                    done.append(embedded_once(corpus, n, workdir, args.timeout, quiet, one_cpu))
                else:
                    done.append(celery_once(corpus, n, workdir, args.timeout, args.redis, quiet, mode))
                other = done[-1].other
                if other is None or other < args.quiet_threshold or args.quiet_wait <= 0:
                    break
                print(f"  other processes used {other:.2f} cores during that run"
                      f"{'; once more' if retry < NOISY_RETRIES else ''}", file=sys.stderr)
    report.runs = [_best(results[config]) for config in configs]
    print("timing the fixed cost of a command ...", file=sys.stderr)
    report.floor = startup_floor(workdir, args.timeout, quiet)
    if not args.no_split:
        print("timing extraction and indexing in-process ...", file=sys.stderr)
        quiet.wait()
        report.split = phase_split(corpus, workdir)
    if "embedded" in args.modes and not args.no_diagnose:
        for n in PROCESS_COUNTS:
            print(f"diagnosis run: embedded, {n} process(es) ...", file=sys.stderr)
            report.diagnoses.append(diagnose_embedded(corpus, n, workdir, args.timeout, quiet))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ["PDFINDEX_SHARDS"] = str(args.shards)  # child_env passes it on
    previous = signal.signal(signal.SIGTERM, _raise_on_sigterm)
    try:
        with tempfile.TemporaryDirectory(prefix="pdfindex-ingest-bench-") as tmp:
            print(f"pdfindex {revision()}; python {platform.python_version()} ({sys.executable}), "
                  f"{platform.machine()}, {os.cpu_count()} CPUs; runs={args.runs}, modes={','.join(args.modes)}, "
                  f"shards={args.shards}, seed={args.seed}")
            start_revision = revision()
            report = run(args, Path(tmp))
            print(format_report(report, args.runs))
            if revision() != start_revision:
                print(f"\nWARNING: the project changed during the run ({start_revision} -> {revision()}); "
                      "runs may have measured different code")
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 1 if any(r.seconds is None for r in report.runs) else 0


if __name__ == "__main__":
    sys.exit(main())
