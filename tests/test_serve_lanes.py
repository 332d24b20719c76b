"""The server's two search lanes (server/lanes.py): a costly search runs in a search
process of a pool, one per core, and answers exactly what the same search answers in
the server process; a search process that dies is replaced without losing the
request. Real index on disk, real processes."""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pdfindex.contract.shapes import result_json
from pdfindex.indexer import PageIndex, QueryError, SearchOptions
from pdfindex.server.indexes import IndexPool
from pdfindex.server.lanes import HEAVY_POSTINGS, NICENESS, SearchLanes, usable_cores
from tests.index_helpers import page, record

COMMON = "ledger"
PAGES = 40


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lanes") / "index"
    ix = PageIndex(root)
    with ix.writer() as writer:
        for n in range(PAGES):
            pages = [page(1, f"{COMMON} balance quarterly rare{n}word"), page(2, f"{COMMON} of the accounts")]
            writer.add(record(f"doc{n}", f"/docs/{n:02d}.pdf", pages), pages)
    return root


@pytest.fixture
def lanes(root: Path) -> Iterator[SearchLanes]:
    lanes = SearchLanes(IndexPool(root), heavy_from=0)  # every query is costly: all go to the search process
    try:
        yield lanes
    finally:
        lanes.close()


def _answer(result: object) -> dict[str, object]:
    out = result_json(result)  # type: ignore[arg-type]
    out.pop("took")
    return out


QUERIES = [COMMON, f'"{COMMON} balance"', "rare7word", "rare1*", f"{COMMON} -quarterly", "nosuchword", "*"]


@pytest.mark.parametrize("by_document", [False, True])
def test_the_search_process_answers_what_the_server_process_answers(root: Path, lanes: SearchLanes,
                                                                     by_document: bool) -> None:
    here = PageIndex(root, None, create=False)
    for query in QUERIES:
        options = SearchOptions(limit=5, offset=2, by_document=by_document)
        assert _answer(lanes.search(query, options)) == _answer(here.search(query, options)), query


def test_a_bad_query_is_refused_before_any_lane(lanes: SearchLanes) -> None:
    with pytest.raises(QueryError, match="never closed"):
        lanes.search('"unclosed', SearchOptions())


def test_costs_tell_rare_from_common(root: Path) -> None:
    ix = PageIndex(root, None, create=False)
    rare = ix.estimated_postings("rare7word")
    common = ix.estimated_postings(COMMON)
    assert rare is not None and common is not None
    assert rare <= 3 < 2 * PAGES <= common  # the text field and the others: each page holds the common word
    assert ix.estimated_postings(f'"{COMMON} of"') >= common  # a phrase walks each word's postings
    assert ix.estimated_postings("*", SearchOptions(needs_ocr=False)) is None  # a listing: no query to cost
    assert rare <= HEAVY_POSTINGS


def _search_processes() -> list[multiprocessing.Process]:
    return [p for p in multiprocessing.active_children() if p.is_alive()]


def test_costly_searches_have_a_search_process_per_core(lanes: SearchLanes) -> None:
    """Started with the lanes, before any costly search: one process made each
    costly search wait for the one before it while a core stood idle."""
    assert len(_search_processes()) == lanes.processes == usable_cores()
    assert lanes.search(COMMON, SearchOptions()).total == 2 * PAGES
    processes = _search_processes()
    assert len(processes) == usable_cores()
    # ... and yield the cores to the server process's cheap searches (once each has
    # started: one may still be importing while the other answered)
    nicer = min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)  # the system caps it at 19
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(os.getpriority(os.PRIO_PROCESS, p.pid or 0) != nicer
                                              for p in processes):
        time.sleep(0.05)
    assert [os.getpriority(os.PRIO_PROCESS, p.pid or 0) for p in processes] == [nicer] * len(processes)


def test_a_search_process_that_dies_is_replaced_and_the_search_still_answered(root: Path, lanes: SearchLanes) -> None:
    here = PageIndex(root, None, create=False)
    expected = _answer(here.search(COMMON, SearchOptions()))
    assert _answer(lanes.search(COMMON, SearchOptions())) == expected
    first = _search_processes()
    assert first[0].pid is not None
    os.kill(first[0].pid, signal.SIGKILL)
    first[0].join(5)
    assert _answer(lanes.search(COMMON, SearchOptions())) == expected  # answered all the same
    assert _answer(lanes.search(COMMON, SearchOptions())) == expected  # by the new pool
    second = _search_processes()
    assert len(second) == usable_cores()
    assert not {p.pid for p in first} & {p.pid for p in second}
