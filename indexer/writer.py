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

from types import TracebackType

from whoosh.index import Index, LockError
from whoosh.writing import IndexWriter

from .errors import IndexBusy
from .records import DocumentRecord, PageRecord
from .schema import doc_fields, page_fields


class PageWriter:
    def __init__(self, ix: Index, batch_pages: int = 500, lock_timeout: float = 30.0) -> None:
        self._ix = ix
        self._batch_pages = batch_pages
        self._lock_timeout = lock_timeout
        self._writer: IndexWriter | None = None
        self._pending = 0

    def __enter__(self) -> PageWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.commit()
        else:
            self.cancel()

    def _open(self) -> IndexWriter:
        if self._writer is None:
            try:
                self._writer = self._ix.writer(timeout=self._lock_timeout)
            except LockError:
                raise IndexBusy("another process is writing to the index; only one writer may run at a time") from None
        return self._writer

    def add(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        """Replace whatever the index holds for this content or this path (a changed
        file) with the record and pages given; commits when the batch is full."""
        writer = self._open()
        writer.delete_by_term("doc_hash", doc.doc_hash)
        writer.delete_by_term("path", doc.path)
        writer.add_document(**doc_fields(doc))
        for page in pages:
            writer.add_document(**page_fields(doc, page))
        self._pending += 1 + len(pages)
        if self._pending >= self._batch_pages:
            self.commit()

    def delete(self, doc_hash: str) -> None:
        self._open().delete_by_term("doc_hash", doc_hash)
        self._pending += 1

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._writer = None
            self._pending = 0

    def cancel(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None
            self._pending = 0
