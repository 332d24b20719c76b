"""The server's read-only view of one index, shared by its request threads.

A ``PageIndex`` keeps one searcher open and renews it when the writer has committed
(so a running ``pdfindex ingest`` shows up without a restart), and is for one thread
at a time. The server keeps a few of them and lends one per request: opening a
searcher reads every segment, which a request must not pay, and searches hold the
GIL anyway, so more than a couple gain nothing but memory.
"""
from __future__ import annotations

import queue
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pdfindex.indexer import PageIndex


class IndexPool:
    """``size`` PageIndex objects over ``root``, lent one at a time."""

    def __init__(self, root: Path, size: int = 2) -> None:
        self.root = Path(root)
        first = PageIndex(self.root, None, create=False)  # FileNotFoundError: no index there
        self.language = first.language
        self._free: queue.Queue[PageIndex] = queue.Queue()
        self._free.put(first)
        for _ in range(size - 1):
            self._free.put(PageIndex(self.root, None, create=False))

    @contextmanager
    def index(self) -> Iterator[PageIndex]:
        ix = self._free.get()
        try:
            yield ix
        finally:
            self._free.put(ix)
