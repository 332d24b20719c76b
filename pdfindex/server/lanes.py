"""Two lanes for searches, so that costly ones cannot hold back cheap ones.

Searches run Python code under one interpreter lock: sixteen requests in flight
share it, and a rare word that takes 5 ms alone waits behind phrases of common
words that take half a second each at 50,000 pages. So each query is first costed
(``PageIndex.estimated_postings``: its terms' document frequencies, a lexicon
lookup) and only a cheap one runs in the server process; a costly one (and a
listing, whose cost is what its filters let through) goes to a pool of search
processes, one per core the server may use, which the operating system runs beside
it: one search process made every costly search wait for the one before it, with a
core idle. The answers are the same either way: both lanes run ``PageIndex.search``
on the same index, each process keeping its searcher open and following the
writer's commits. The search processes run at a lower priority (``NICENESS``): with
one per core they would otherwise take the cores from the server process's cheap
searches (a rare word's p95 at 16 clients went from 31 to 61-85 ms).

A search process that dies (its memory, a crash) breaks the pool: it is replaced,
and the searches it held are answered in the server process meanwhile; one that
does not answer within the search deadline plus ``_GRACE`` seconds is killed with
the pool and replaced (503 to that request). Nothing else is sent to them: a query
and its options in, a result out.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from pdfindex.indexer import PageIndex, SearchOptions, SearchResult

from .indexes import IndexPool

#: Searches walking more postings than this go to the search processes.
HEAVY_POSTINGS = 5_000
#: Seconds past a search's own deadline before its process counts as stuck.
_GRACE = 10.0
#: How much nicer than the server the search processes are: the server's cheap
#: searches take a core first, the costly ones the rest. +5 was enough while costly
#: searches were slow; once folding on Tantivy stopped reading records they came
#: back sooner, their clients asked again sooner, and a rare word's p95 at 16
#: clients rose to 50-63 ms (+10: 28-42 ms, a common word's 180-191 against 155-172;
#: Whoosh alike either way).
NICENESS = 10

_INDEX: PageIndex | None = None  # in the search process


class SearchStuck(Exception):
    """A search process did not answer in time (its pool has been replaced)."""


def _open(root: str) -> None:
    global _INDEX  # noqa: PLW0603 - the search process's one index
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no os.nice (Windows)
        os.nice(NICENESS)
    _INDEX = PageIndex(Path(root), None, create=False)


def _search(query: str, options: SearchOptions) -> SearchResult:
    assert _INDEX is not None
    return _INDEX.search(query, options)


def _ready() -> bool:
    return _INDEX is not None


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


class SearchLanes:
    """``search`` as ``PageIndex.search``, costly queries in a pool of ``processes``
    search processes (default: one per usable core)."""

    def __init__(self, pool: IndexPool, heavy_from: int = HEAVY_POSTINGS, processes: int | None = None) -> None:
        self.pool = pool
        self.heavy_from = heavy_from
        self.processes = processes or usable_cores()
        self._lock = threading.Lock()
        self._executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        executor = ProcessPoolExecutor(max_workers=self.processes, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_open, initargs=(str(self.pool.root),))
        # Start them all now, not on the first costly searches: the pool starts a
        # process per task submitted while none is idle, and none is before it opened
        # its index.
        for _ in range(self.processes):
            executor.submit(_ready)
        return executor

    def search(self, query: str, options: SearchOptions) -> SearchResult:
        with self.pool.index() as ix:
            cost = ix.estimated_postings(query, options)  # a QueryError here is the search's own
            if cost is not None and cost <= self.heavy_from:
                return ix.search(query, options)
        with self._lock:
            executor = self._executor
        try:
            return executor.submit(_search, query, options).result(timeout=options.timeout + _GRACE)
        except BrokenProcessPool:
            self._replace(executor)
        except FutureTimeout:
            self._replace(executor, kill=True)
            raise SearchStuck("the search process did not answer in time; it was restarted") from None
        with self.pool.index() as ix:  # the search process died: answer here this once
            return ix.search(query, options)

    def _replace(self, broken: ProcessPoolExecutor, kill: bool = False) -> None:
        with self._lock:
            if self._executor is not broken:
                return  # another request replaced it already
            self._executor = self._start()
        _stop(broken, kill)

    def close(self) -> None:
        with self._lock:
            _stop(self._executor, kill=True)


def _stop(executor: ProcessPoolExecutor, kill: bool) -> None:
    """Shut the executor down without waiting for a search it runs; ``kill`` ends
    its process at once (the executor's own shutdown would wait for it)."""
    if kill:
        for process in list(getattr(executor, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                process.kill()
    executor.shutdown(wait=False, cancel_futures=True)
