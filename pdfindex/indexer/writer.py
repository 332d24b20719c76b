"""The single index writer: batches of documents, one commit per batch.

Whoosh allows one writer per index (a lock file); everything that writes goes
through ``PageWriter``, a context manager that commits on success and cancels and
re-raises on error (never commit after an error). Never Whoosh's AsyncWriter: it
drops buffered writes when its process exits.

A commit writes new segment files and then replaces the table of contents in one
rename, so a writer killed mid-batch leaves the previous commit intact; the next
commit removes the orphaned files. A file's pages and its record go into the same
batch, so a document is in the index whole or not at all.

A writer must never stall the ones after it: whatever a commit raises, the Whoosh
writer is cancelled, what it wrote is removed (a full disk stays full otherwise)
and the lock is released, in this process as for others. A document Whoosh cannot
take (a bad value in a field) is checked before anything of it is added and
becomes a failure record, so one bad file does not fail the batch.
"""
from __future__ import annotations

import contextlib
import dataclasses
import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from whoosh.index import TOC, Index
from whoosh.util.filelock import try_for

from pdfindex.contract.records import DocumentRecord, PageRecord, Status

from . import store
from .errors import IndexBusy, short_line
from .merge import tiered_merge
from .segment_writer import PageSegmentWriter
from .schema import KIND_DOC, doc_fields, fields_from_stored, holders, page_fields, path_term, problem_in_fields

#: Held during a commit: Ctrl-C, a stop, and Celery's soft time limit.
HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)
_BAD_HASH = re.compile(r"[\s\x00-\x1f\x7f\ud800-\udfff]")


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM or SIGUSR1 arriving during a commit is held until it is done:
    an interrupted Whoosh commit can be neither finished nor cancelled. (Masking the
    signal would not do: other threads, such as a process pool's, still take it.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, _frame: held.append(signum))
                for signum in HELD_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for pending in held:
            signal.raise_signal(pending)


@dataclasses.dataclass(slots=True)
class _PathChange:
    """Paths to add to or remove from a document already indexed."""

    add: list[str] = dataclasses.field(default_factory=list)
    remove: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(slots=True)
class _Changes:
    """What a commit does, worked out against the index as the lock found it: the
    documents it deletes, what it adds (a record and pages to analyse, or stored
    documents rebuilt with other paths), and the paths it takes from documents the
    batch does not otherwise change."""

    deletes: list[str] = dataclasses.field(default_factory=list)
    adds: dict[str, tuple[DocumentRecord, list[PageRecord]] | list[dict[str, Any]]] = dataclasses.field(
        default_factory=dict)
    #: doc_hash -> paths other documents now hold
    taken: dict[str, set[str]] = dataclasses.field(default_factory=dict)


def plain_key(doc_hash: object) -> bool:
    """Whether a document hash can be a Whoosh term: text, not empty, without
    spaces, control characters or lone surrogates."""
    return isinstance(doc_hash, str) and bool(doc_hash) and not _BAD_HASH.search(doc_hash)


def _stored(searcher: Any, doc_hash: str) -> tuple[list[dict[str, Any]], list[str] | None]:
    """A document's stored Whoosh documents, and the paths its record holds (None:
    no record of it in the index)."""
    stored_docs = list(searcher.documents(doc_hash=doc_hash))
    record = next((d for d in stored_docs if d.get("kind") == KIND_DOC), None)
    return stored_docs, None if record is None else list(record.get("paths") or [record.get("path", "")])


def with_paths(doc: DocumentRecord, paths: list[str]) -> DocumentRecord:
    return dataclasses.replace(doc, path=paths[0], paths=paths)


def failure_record(doc: DocumentRecord, problem: str) -> DocumentRecord:
    """The record written in place of a document the index cannot take."""
    return DocumentRecord(
        doc_hash=doc.doc_hash, path=doc.path if isinstance(doc.path, str) else repr(doc.path),
        status=Status.FAILED, error=f"cannot be indexed: {short_line(problem, 200)}", attempts=1,
    )


class Batch:
    """A writer as a context manager: commits on success, cancels and re-raises on
    error (never commit after an error)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.commit()
        else:
            self.cancel()

    def commit(self) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Free what the writer holds besides its batch (a sharded writer's
        processes); a no-op for a writer in this process."""


class PageWriter(Batch):
    """Batches of document replacements and deletions, written at commit.

    A document new to the index (neither its content nor any of its paths is
    there, nor in this batch) is analysed and added at once, so a bulk ingest
    indexes while extraction goes on instead of all at its commit. Every other
    operation is kept until the commit (the lock is taken at the first one), so a
    document added twice in one batch, or two versions of one path, end as one:
    Whoosh's delete_by_term does not reach documents added by the same writer.
    An operation on what was added at once commits the batch first, for the same
    reason.

    ``rejected`` lists, for every document the index could not take, the failure
    record written in its place (or, where even that was impossible, as for a
    document hash that is not text, the record that was left out)."""

    def __init__(self, ix: Callable[[], Index], batch_pages: int = 2000, lock_timeout: float = 30.0,
                 root: Path | str = "the index") -> None:
        self._ix = ix  # asked at each lock: a reindex may have switched generations
        self._root = root
        self._batch_pages = batch_pages
        self._lock_timeout = lock_timeout
        self._writer: PageSegmentWriter | None = None
        self._whoosh_lock: Any = None
        # doc_hash → (record, pages) to add, or None to delete; path → doc_hash added.
        self._ops: dict[str, tuple[DocumentRecord, list[PageRecord]] | _PathChange | None] = {}
        self._paths: dict[str, str] = {}
        # What was added at once: the documents' hashes, and their paths.
        self._added: set[str] = set()
        self._added_paths: dict[str, str] = {}  # path → hash
        self._searcher: Any = None  # of the index as the lock found it
        self._pending = 0
        self._rejected: list[DocumentRecord] = []  # by this batch, so far
        self.rejected: list[DocumentRecord] = []

    def _lock(self) -> None:
        """Take the lock ourselves rather than in SegmentWriter: it reads the table
        of contents after locking, and if that fails nobody could release the lock."""
        if self._writer is not None:
            return
        with store.storage_faults(Path(self._root), "taking the writer lock"):
            ix = self._ix()
            lock = ix.lock("WRITELOCK")
            if not try_for(lock.acquire, timeout=self._lock_timeout, delay=0.1):
                raise IndexBusy("another process is writing to the index; only one writer may run at a time")
            ix.storage.tracked = []
            try:
                self._writer = PageSegmentWriter(ix, _lk=False)
                self._searcher = self._writer.searcher()
            except BaseException:
                if self._writer is not None:
                    self._abandon(self._writer)
                    self._writer = None
                with contextlib.suppress(Exception):
                    store.remove_orphans(ix.storage, ix.indexname)
                store.close_tracked(ix.storage)
                lock.release()
                raise
            self._whoosh_lock = lock

    def add(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        """Replace whatever the index holds for this content or this path (a changed
        file) with the record and pages given; commits when the batch is full."""
        path = doc.path if isinstance(doc.path, str) else repr(doc.path)
        self._lock_for(doc.doc_hash, path)
        if doc.doc_hash not in self._ops and path not in self._paths and self._is_new(doc):
            self._add_now(doc, pages)
            return
        earlier = self._paths.get(path)
        if earlier is not None and earlier != doc.doc_hash:
            self._ops.pop(earlier, None)
        before = self._ops.pop(doc.doc_hash, None)
        if isinstance(before, tuple):  # the same content again: its paths add up
            doc = with_paths(doc, list(dict.fromkeys([*doc.all_paths, *before[0].all_paths])))
        elif isinstance(before, _PathChange):
            kept = [p for p in [*doc.all_paths, *before.add] if p not in before.remove or p in doc.all_paths]
            doc = with_paths(doc, list(dict.fromkeys(kept)))
        self._ops[doc.doc_hash] = (doc, pages)
        self._paths[path] = doc.doc_hash
        self._count(1 + len(pages))

    def _lock_for(self, doc_hash: str, path: str | None) -> None:
        """The lock, for an operation on this content or path; an operation on what
        this batch added at once commits the batch first (Whoosh's deletions do not
        reach what its own writer added)."""
        self._lock()
        if doc_hash in self._added or (path is not None and path in self._added_paths):
            self.commit()
            self._lock()

    def _is_new(self, doc: DocumentRecord) -> bool:
        """Whether nothing in the index has this content or any of its paths (in
        the ``path`` field too, as an index built before ``paths`` holds them)."""
        if not plain_key(doc.doc_hash):
            return False
        if not all(isinstance(p, str) for p in doc.all_paths):
            return False
        found = self._searcher.document_number
        return found(doc_hash=doc.doc_hash) is None and all(
            found(path=path_term(p)) is None and found(paths=path_term(p)) is None for p in doc.all_paths)

    def _add_now(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        """Analyse and add a new document now. Ctrl-C is held meanwhile: a document
        half added could be neither committed nor taken back."""
        writer = self._writer
        assert writer is not None
        with signals_deferred():
            try:
                with store.storage_faults(Path(self._root), "adding a document to the batch", written=True):
                    for fields in self._documents(writer.schema, doc, pages, self._rejected):
                        writer.add_document(**fields)
            except BaseException:
                self.cancel()  # the batch so far goes too: the caller learns it was not written
                raise
        self._added.add(doc.doc_hash)
        self._added_paths.update(dict.fromkeys(doc.all_paths, doc.doc_hash))
        self._count(1 + len(pages))

    def _count(self, operations: int) -> None:
        self._pending += operations
        if self._pending >= self._batch_pages:
            self.commit()

    def add_path(self, doc_hash: str, path: str) -> None:
        """Record one more path of an indexed document's content (a copy), taking it
        from whatever document held it before."""
        self._change_paths(doc_hash, add=path)

    def remove_path(self, doc_hash: str, path: str) -> None:
        """Forget one path of a document; the document goes with its last path."""
        self._change_paths(doc_hash, remove=path)

    def _change_paths(self, doc_hash: str, add: str | None = None, remove: str | None = None) -> None:
        self._lock_for(doc_hash, add)
        op = self._ops.get(doc_hash, _PathChange())
        if op is None:
            return
        if isinstance(op, tuple):
            paths = [p for p in op[0].all_paths if p != remove] + ([add] if add and add not in op[0].all_paths else [])
            if not paths:
                self._ops[doc_hash] = None
            else:
                self._ops[doc_hash] = (with_paths(op[0], paths), op[1])
        else:
            if add:
                op.add.append(add)
                op.remove = [p for p in op.remove if p != add]
            if remove:
                op.remove.append(remove)
                op.add = [p for p in op.add if p != remove]
            self._ops[doc_hash] = op
        self._count(1)

    def release(self, path: str) -> None:
        """Take ``path`` from every document holding it: a sharded index gives it to
        a document in another shard."""
        for holder in self._holders(path):
            self.remove_path(holder, path)

    def _holders(self, path: str) -> set[str]:
        """The documents holding ``path`` as this writer will leave the index: in
        the index as the lock found it (a document added again keeps its paths),
        unless this batch deletes them or takes the path from them, and in the
        batch."""
        self._lock()
        indexed = holders(self._searcher, path)
        batch = {h for h in (self._paths.get(path), self._added_paths.get(path)) if h is not None}
        batch.update(other for other, op in self._ops.items() if isinstance(op, _PathChange) and path in op.add)
        kept = set()
        for other in indexed | batch:
            op = self._ops.get(other, _PathChange())
            if op is None or (isinstance(op, _PathChange) and path in op.remove):
                continue
            if isinstance(op, tuple) and other not in indexed and path not in op[0].all_paths:
                continue
            kept.add(other)
        return kept

    def delete(self, doc_hash: str) -> None:
        self._lock_for(doc_hash, None)
        self._ops.pop(doc_hash, None)
        self._ops[doc_hash] = None
        self._pending += 1

    def commit(self) -> None:
        """Write the batch. On any failure nothing of it is in the index, the lock is
        free and the files it wrote are gone; storage faults raise StorageError."""
        writer = self._writer
        if writer is None:
            return
        rejected = self._rejected
        with signals_deferred():
            try:
                with store.storage_faults(Path(self._root), "committing a batch", written=True):
                    self._apply(writer, rejected)
                    self._close_searcher()
                    writer.commit(mergetype=tiered_merge)
            except BaseException:
                if not self._landed(writer):
                    self._abandon(writer)
                    self._release()
                    self._reset()
                    raise
            writer.storage.tracked = None
            self._release()
            self._reset()  # before a held Ctrl-C is delivered
        self.rejected.extend(rejected)

    def _apply(self, writer: PageSegmentWriter, rejected: list[DocumentRecord]) -> None:
        """All of the batch's deletions first, then its additions: Whoosh's
        delete_by_term does not reach documents the same writer added. A path given
        to one document is taken from any other that held it (a changed file, or a
        copy replacing another content); one left without paths is deleted."""
        changes = _Changes()
        for doc_hash, op in self._ops.items():
            if not plain_key(doc_hash):
                if isinstance(op, tuple):
                    rejected.append(failure_record(op[0], f"the document hash {doc_hash!r} is not a plain text key"))
                continue
            changes.deletes.append(doc_hash)
            if op is not None:
                self._change(changes, doc_hash, op)
        for other, lost in changes.taken.items():
            stored_docs, known = _stored(self._searcher, other)
            if known is None:
                continue
            changes.deletes.append(other)
            left = [p for p in known if p not in lost]
            if left:
                changes.adds[other] = self._restored(stored_docs, left)
        self._write(writer, changes, rejected)

    def _change(self, changes: _Changes, doc_hash: str,
                op: tuple[DocumentRecord, list[PageRecord]] | _PathChange) -> None:
        """What an addition or a path change does to the document as stored: a new
        version keeps the stored paths, a path change edits them (one for a document
        not in the index changes nothing); the paths it takes are claimed."""
        stored_docs, known = _stored(self._searcher, doc_hash)
        if isinstance(op, tuple):
            doc, pages = op
            if known and isinstance(doc.path, str):
                doc = with_paths(doc, list(dict.fromkeys([*doc.all_paths, *known])))
            self._claim(changes, doc_hash, [doc.path] if isinstance(doc.path, str) else [])
            changes.adds[doc_hash] = (doc, pages)
        elif known is not None:
            paths = [p for p in dict.fromkeys([*known, *op.add]) if p not in op.remove]
            self._claim(changes, doc_hash, op.add)
            if paths:
                changes.adds[doc_hash] = self._restored(stored_docs, paths)

    def _claim(self, changes: _Changes, doc_hash: str, paths: list[str]) -> None:
        """``paths`` are ``doc_hash``'s now: every other stored document holding one
        (and not otherwise changed by the batch) loses it."""
        for path in paths:
            for other in holders(self._searcher, path):
                if other != doc_hash and other not in self._ops:
                    changes.taken.setdefault(other, set()).add(path)

    def _write(self, writer: PageSegmentWriter, changes: _Changes, rejected: list[DocumentRecord]) -> None:
        for doc_hash in changes.deletes:
            writer.delete_by_term("doc_hash", doc_hash)
        for doc_hash, item in changes.adds.items():
            if isinstance(item, tuple):
                documents = self._documents(writer.schema, item[0], item[1], rejected)
                if documents and doc_hash not in changes.taken:
                    writer.delete_by_term("path", documents[0]["path"])  # an index built before paths
            else:
                documents = item
            for fields in documents:
                writer.add_document(**fields)

    @staticmethod
    def _restored(stored_docs: list[dict[str, Any]], paths: list[str]) -> list[dict[str, Any]]:
        """A document's Whoosh documents rebuilt from their stored fields, with
        other paths (``paths[0]`` its path now)."""
        return [fields_from_stored({**stored, "path": paths[0], "paths": paths}) for stored in stored_docs]

    @staticmethod
    def _documents(schema: Any, doc: DocumentRecord, pages: list[PageRecord],
                   rejected: list[DocumentRecord]) -> list[dict[str, Any]]:
        """The Whoosh documents for a file, all checked; a failure record instead
        when any of them would fail; nothing when even that would."""
        try:
            documents = [doc_fields(doc), *(page_fields(doc, page) for page in pages)]
            problem = next((p for p in map(lambda f: problem_in_fields(schema, f), documents) if p), None)
        except Exception as exc:  # noqa: BLE001 - a record of the wrong shape: the reason is the error
            problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            return documents
        failure = failure_record(doc, problem)
        fields = doc_fields(failure)
        if problem_in_fields(schema, fields) is None:
            rejected.append(failure)
            return [fields]
        rejected.append(failure_record(doc, f"{problem}; not even a failure record could be written"))
        return []

    @staticmethod
    def _landed(writer: PageSegmentWriter) -> bool:
        """Whether the commit's table of contents was written before the failure
        (in Whoosh's clean-up after it): then the batch is in the index."""
        try:
            return bool(TOC._latest_generation(writer.storage, writer.indexname) >= writer.generation)
        except Exception:  # noqa: BLE001 - cannot tell: treat as not written
            return False

    @staticmethod
    def _abandon(writer: PageSegmentWriter) -> None:
        """Cancel a writer whose commit or batch failed, and remove what it wrote.
        Each step may fail the same way (a full disk): the next still runs."""
        if not writer.is_closed:
            try:
                writer.cancel()
            except Exception:  # noqa: BLE001 - closing its files may hit the same fault
                with contextlib.suppress(Exception):
                    writer._tempstorage.destroy()
                writer.is_closed = True
        with contextlib.suppress(Exception):
            store.remove_orphans(writer.storage, writer.indexname)
        store.close_tracked(writer.storage)

    def _release(self) -> None:
        lock, self._whoosh_lock = self._whoosh_lock, None
        if lock is not None:
            with contextlib.suppress(Exception):
                lock.release()

    def cancel(self) -> None:
        if self._writer is not None:
            self._abandon(self._writer)
        self._release()
        self._reset()

    def _close_searcher(self) -> None:
        searcher, self._searcher = self._searcher, None
        if searcher is not None:
            with contextlib.suppress(Exception):
                searcher.close()

    def _reset(self) -> None:
        self._close_searcher()
        self._writer = None
        self._ops.clear()
        self._paths.clear()
        self._added.clear()
        self._added_paths.clear()
        self._rejected = []
        self._pending = 0

