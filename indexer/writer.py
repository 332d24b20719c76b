"""The single index writer: batches of documents, one commit per batch.

Whoosh allows one writer per index (a lock file); everything that writes goes
through ``PageWriter``, a context manager that commits on success and cancels and
re-raises on error (never commit after an error). Never Whoosh's AsyncWriter: it
drops buffered writes when its process exits.

A commit writes new segment files and then replaces the table of contents in one
rename, so a writer killed mid-batch leaves the previous commit intact; the next
commit removes the orphaned files. A file's pages and its record go into the same
batch, so a document is in the index whole or not at all.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType

from whoosh.index import Index, LockError
from whoosh.writing import IndexWriter

from .errors import IndexBusy
from .records import DocumentRecord, PageRecord
from .schema import doc_fields, page_fields


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C (or SIGTERM) arriving during a commit is held until it is done: an
    interrupted Whoosh commit can be neither finished nor cancelled. (Masking the
    signal would not do: other threads, such as a process pool's, still take it.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, _frame: held.append(signum))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for pending in held:
            signal.raise_signal(pending)


class PageWriter:
    """Batches of document replacements and deletions, written at commit.

    Operations are kept until the commit (the lock is taken at the first one), so a
    document added twice in one batch, or two versions of one path, end as one:
    Whoosh's delete_by_term does not reach documents added by the same writer."""

    def __init__(self, ix: Callable[[], Index], batch_pages: int = 2000, lock_timeout: float = 30.0) -> None:
        self._ix = ix  # asked at each lock: a reindex may have switched generations
        self._batch_pages = batch_pages
        self._lock_timeout = lock_timeout
        self._writer: IndexWriter | None = None
        # doc_hash → (record, pages) to add, or None to delete; path → doc_hash added.
        self._ops: dict[str, tuple[DocumentRecord, list[PageRecord]] | None] = {}
        self._paths: dict[str, str] = {}
        self._pending = 0

    def __enter__(self) -> PageWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.commit()
        else:
            self.cancel()

    def _lock(self) -> None:
        if self._writer is None:
            try:
                self._writer = self._ix().writer(timeout=self._lock_timeout)
            except LockError:
                raise IndexBusy("another process is writing to the index; only one writer may run at a time") from None

    def add(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        """Replace whatever the index holds for this content or this path (a changed
        file) with the record and pages given; commits when the batch is full."""
        self._lock()
        earlier = self._paths.get(doc.path)
        if earlier is not None and earlier != doc.doc_hash:
            self._ops.pop(earlier, None)
        self._ops.pop(doc.doc_hash, None)
        self._ops[doc.doc_hash] = (doc, pages)
        self._paths[doc.path] = doc.doc_hash
        self._pending += 1 + len(pages)
        if self._pending >= self._batch_pages:
            self.commit()

    def delete(self, doc_hash: str) -> None:
        self._lock()
        self._ops.pop(doc_hash, None)
        self._ops[doc_hash] = None
        self._pending += 1

    def commit(self) -> None:
        if self._writer is None:
            return
        writer = self._writer
        with _signals_deferred():
            for doc_hash, op in self._ops.items():
                writer.delete_by_term("doc_hash", doc_hash)
                if op is not None:
                    doc, pages = op
                    writer.delete_by_term("path", doc.path)
                    writer.add_document(**doc_fields(doc))
                    for page in pages:
                        writer.add_document(**page_fields(doc, page))
            writer.commit()
            self._reset()  # before a held Ctrl-C is delivered

    def cancel(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
        self._reset()

    def _reset(self) -> None:
        self._writer = None
        self._ops.clear()
        self._paths.clear()
        self._pending = 0
