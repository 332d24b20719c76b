"""The single writer of an index on Tantivy, with ``PageWriter``'s interface and rules.

Tantivy allows one writer per index (its own lock file), which this writer holds
from its first operation to its commit, as ``PageWriter`` holds Whoosh's. A
commit is Tantivy's: its ``meta.json`` replaced in one step, so a writer killed
mid-batch leaves the previous commit whole; a cancel rolls the batch back. A
document is written as Whoosh's writer writes it: its record and pages checked
first (``PageWriter._documents``: a bad one becomes a failure record), its
content's earlier version replaced with the paths kept, and a path it takes
taken from whatever document held it before.

Tantivy's deletions reach only documents added before them, so an operation on a
document this batch has already written, or on one of its paths, commits the
batch first; everything else is written at once.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tantivy

from pdfindex.contract.records import DocumentRecord, PageRecord

from . import store
from .errors import IndexBusy
from .schema import KIND_DOC, doc_fields, fields_from_stored, page_fields, path_term
from .tantivy_schema import matching, reloaded, stored_of, to_document
from .writer import Batch, failure_record, plain_key, signals_deferred, with_paths

#: Tantivy's indexing memory: its segments are flushed past it.
_HEAP_BYTES = 128_000_000


def open_writer(index: tantivy.Index, lock_timeout: float, busy: str) -> tantivy.IndexWriter:
    """Tantivy's writer, which holds its lock, waiting up to ``lock_timeout`` seconds
    for another process's; then IndexBusy(``busy``)."""
    deadline = time.monotonic() + lock_timeout
    while True:
        try:
            return index.writer(heap_size=_HEAP_BYTES, num_threads=1)
        except ValueError as exc:
            if "lock" not in str(exc).lower():
                raise
            if time.monotonic() > deadline:
                raise IndexBusy(busy) from None
            time.sleep(0.1)


def stored_documents(searcher: tantivy.Searcher, schema: tantivy.Schema, doc_hash: str) -> list[dict[str, Any]]:
    """The stored fields of a document's record and pages, as committed."""
    query = tantivy.Query.term_query(schema, "doc_hash", doc_hash)
    return [stored_of(searcher.doc(address)) for address in matching(searcher, query)]


def holders(searcher: tantivy.Searcher, schema: tantivy.Schema, path: str) -> set[str]:
    """The hashes of the file records holding ``path`` (``schema.holders``)."""
    query = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, tantivy.Query.term_query(schema, "kind", KIND_DOC)),
        (tantivy.Occur.Must, tantivy.Query.term_query(schema, "paths", path_term(path)))])
    return {h for address in matching(searcher, query)
            if isinstance(h := stored_of(searcher.doc(address)).get("doc_hash"), str)}


class TantivyWriter(Batch):
    """Document replacements, path changes and deletions, committed every
    ``batch_pages`` operations and at the end (``PageWriter``'s interface)."""

    def __init__(self, index: Callable[[], tuple[Path, tantivy.Index, str]], root: Path, *,
                 batch_pages: int = 2000, lock_timeout: float = 30.0) -> None:
        self._index = index  # asked at each lock: a reindex may have switched generations
        self._root = root
        self._batch_pages = batch_pages
        self._lock_timeout = lock_timeout
        self._writer: tantivy.IndexWriter | None = None
        self._generation: Path | None = None
        self._tantivy: tantivy.Index | None = None
        self._meta: bytes | None = None  # the commit self._tantivy was last reloaded to (``reloaded``)
        self._language = ""
        self._touched: set[str] = set()
        self._touched_paths: set[str] = set()
        self._pending = 0
        self._rejected: list[DocumentRecord] = []  # by this batch, so far
        self.rejected: list[DocumentRecord] = []

    def _lock(self) -> tantivy.IndexWriter:
        if self._writer is not None:
            return self._writer
        with store.storage_faults(self._root, "taking the writer lock"):
            self._generation, self._tantivy, self._language = self._index()
            self._meta = None
            self._writer = open_writer(self._tantivy, self._lock_timeout, "another process is writing to the "
                                       "index; only one writer may run at a time")
            return self._writer

    def _searcher(self) -> tantivy.Searcher:
        """The index as last committed (this batch's own writes are not in it)."""
        assert self._tantivy is not None and self._generation is not None
        self._meta = reloaded(self._tantivy, self._generation, self._meta)
        return self._tantivy.searcher()

    @property
    def _schema(self) -> tantivy.Schema:
        assert self._tantivy is not None
        return self._tantivy.schema

    def _before(self, doc_hash: str, paths: list[str]) -> tantivy.IndexWriter:
        """The writer, for an operation on this content or these paths; an operation
        on what this batch wrote commits the batch first."""
        self._lock()
        if doc_hash in self._touched or any(p in self._touched_paths for p in paths):
            self.commit()
        return self._lock()

    def add(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        """Replace whatever the index holds for this content or this path with the
        record and pages given (the content's other paths are kept)."""
        path = doc.path if isinstance(doc.path, str) else repr(doc.path)
        writer = self._before(doc.doc_hash, [path])
        if not plain_key(doc.doc_hash):
            self._rejected.append(failure_record(doc, f"the document hash {doc.doc_hash!r} is not a plain text key"))
            return
        searcher = self._searcher()
        known = _paths_of(stored_documents(searcher, self._schema, doc.doc_hash))
        if known and isinstance(doc.path, str):
            doc = with_paths(doc, list(dict.fromkeys([*doc.all_paths, *known])))
        with signals_deferred():
            try:
                with store.storage_faults(self._root, "adding a document to the batch", written=True):
                    self._claim(writer, searcher, doc.doc_hash, [doc.path] if isinstance(doc.path, str) else [])
                    writer.delete_documents_by_term("doc_hash", doc.doc_hash)
                    for document in self._documents(doc, pages):
                        writer.add_document(document)
            except BaseException:
                self.cancel()  # the batch so far goes too: the caller learns it was not written
                raise
        self._done(doc.doc_hash, doc.all_paths, 1 + len(pages))

    def _documents(self, doc: DocumentRecord, pages: list[PageRecord]) -> list[tantivy.Document]:
        """The Tantivy documents of a file, all made before any is added; else a
        failure record. Made is checked: a value Tantivy cannot take raises here, not
        half-way through adding (Whoosh's writer needs ``problem_in_fields`` for that,
        a quarter of this writer's time when it ran here too)."""
        try:
            fields = [doc_fields(doc), *(page_fields(doc, page) for page in pages)]
            return [to_document(f, self._language) for f in fields]
        except Exception as exc:  # noqa: BLE001 - a record or value Tantivy cannot take: the reason is the error
            problem = f"{type(exc).__name__}: {exc}"
        failure = failure_record(doc, problem)
        try:
            documents = [to_document(doc_fields(failure), self._language)]
        except Exception:  # noqa: BLE001 - as PageWriter: the record is named, nothing is written
            failure, documents = failure_record(doc, f"{problem}; not even a failure record could be written"), []
        self._rejected.append(failure)
        return documents

    def _claim(self, writer: tantivy.IndexWriter, searcher: tantivy.Searcher, doc_hash: str,
               paths: list[str]) -> None:
        """``paths`` are ``doc_hash``'s now: every other document holding one loses
        it, and goes when it has no path left."""
        for path in paths:
            for other in holders(searcher, self._schema, path) - {doc_hash}:
                stored = stored_documents(searcher, self._schema, other)
                left = [p for p in _paths_of(stored) or [] if p != path]
                self._rewrite(writer, other, stored, left)

    def _rewrite(self, writer: tantivy.IndexWriter, doc_hash: str, stored: list[dict[str, Any]],
                 paths: list[str]) -> None:
        """A document again from its stored fields, with ``paths`` (none: deleted)."""
        writer.delete_documents_by_term("doc_hash", doc_hash)
        for fields in stored if paths else []:
            writer.add_document(to_document(fields_from_stored({**fields, "path": paths[0], "paths": paths}),
                                            self._language))
        self._touched.add(doc_hash)
        self._touched_paths.update(paths)

    def add_path(self, doc_hash: str, path: str) -> None:
        """Record one more path of an indexed document's content (a copy), taking it
        from whatever document held it before."""
        self._change_paths(doc_hash, add=path)

    def remove_path(self, doc_hash: str, path: str) -> None:
        """Forget one path of a document; the document goes with its last path."""
        self._change_paths(doc_hash, remove=path)

    def _change_paths(self, doc_hash: str, add: str | None = None, remove: str | None = None) -> None:
        writer = self._before(doc_hash, [p for p in (add, remove) if p])
        searcher = self._searcher()
        stored = stored_documents(searcher, self._schema, doc_hash)
        known = _paths_of(stored)
        if known is None:
            return
        with store.storage_faults(self._root, "changing a document's paths", written=True):
            if add:
                self._claim(writer, searcher, doc_hash, [add])
            paths = [p for p in dict.fromkeys([*known, *([add] if add else [])]) if p != remove]
            self._rewrite(writer, doc_hash, stored, paths)
        self._count(1)

    def release(self, path: str) -> None:
        """Take ``path`` from every document holding it."""
        self._lock()
        if path in self._touched_paths:
            self.commit()
            self._lock()
        for holder in holders(self._searcher(), self._schema, path):
            self.remove_path(holder, path)

    def delete(self, doc_hash: str) -> None:
        writer = self._before(doc_hash, [])
        with store.storage_faults(self._root, "deleting a document", written=True):
            writer.delete_documents_by_term("doc_hash", doc_hash)
        self._done(doc_hash, [], 1)

    def _done(self, doc_hash: str, paths: list[str], operations: int) -> None:
        self._touched.add(doc_hash)
        self._touched_paths.update(paths)
        self._count(operations)

    def _count(self, operations: int) -> None:
        self._pending += operations
        if self._pending >= self._batch_pages:
            self.commit()

    def commit(self) -> None:
        """Write the batch: all of it, or (on any failure) none of it, and the lock
        is free either way."""
        writer = self._writer
        if writer is None:
            return
        rejected = self._rejected
        with signals_deferred():
            try:
                with store.storage_faults(self._root, "committing a batch", written=True):
                    writer.commit()
            except BaseException:
                self.cancel()
                raise
            self._release()
            if self._generation is not None:
                store._tighten(self._root, self._generation)  # the files Tantivy made with the umask's modes
            self._reset()
        self.rejected.extend(rejected)

    def cancel(self) -> None:
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.rollback()
        self._release()
        self._reset()

    def _release(self) -> None:
        """Drop Tantivy's writer, which frees its lock (after its merges finish)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.wait_merging_threads()

    def _reset(self) -> None:
        self._touched.clear()
        self._touched_paths.clear()
        self._pending = 0
        self._rejected = []


def _paths_of(stored: list[dict[str, Any]]) -> list[str] | None:
    """The paths a document's stored record holds (None: no record of it)."""
    record = next((d for d in stored if d.get("kind") == KIND_DOC), None)
    return None if record is None else list(record.get("paths") or [record.get("path", "")])
