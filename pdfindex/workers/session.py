"""What an ingest run writes, through one writer session: the plan's path changes,
the outcomes of extraction, and the copies' paths, in that order.

The order matters. Path changes (copies of content already indexed, paths pruned,
documents gone) are committed before any outcome: a file extracted again must
meet its document as the plan left it (a document pruned is deleted first, not
merged into its new version), and with a broker the Celery writer, which takes the
index's lock for the outcomes, must find them committed. The copies of content
this run indexed come last, once their content is in the index: a copy of content
that failed to index changes nothing (its path stays unknown to the index, and the
next run plans it again).

A session is one ``PageIndex.writer``, opened at its first operation (so that an
embedded run's pool starts first: opening a writer imports the index's writing
side). It commits when its batch is full, after the path changes, when extraction
ends (the embedded pool commits what arrived before it stops), and when the session
ends; an error cancels what it had not committed, and Ctrl-C is answered by the
extraction, which returns normally so that what arrived is committed.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Self

from pdfindex.indexer import PageIndex, Status

from .outcome import Outcome
from .plan import PathRemoval
from .progress import Progress, Summary

if TYPE_CHECKING:
    from pdfindex.indexer import IndexWriter


def change_paths(writer: IndexWriter, add: Iterable[tuple[str, str]], removal: PathRemoval) -> None:
    """Queue in ``writer``: the copies' paths ``add`` (doc_hash, path), then what
    ``removal`` takes off (a document goes with its last path, its record and pages
    together)."""
    for doc_hash, added in add:
        writer.add_path(doc_hash, added)
    for doc in removal.gone:
        writer.delete(doc.doc_hash)
    for doc_hash, removed in removal.lost:
        writer.remove_path(doc_hash, removed)


def apply_removal(index: PageIndex, removal: PathRemoval) -> None:
    """A prune or a removal: its paths taken off in one commit (no writer at all,
    nor its lock, when there is nothing to take)."""
    if removal.gone or removal.lost:
        with index.writer() as writer:
            change_paths(writer, (), removal)


class Session:
    """An ingest run's one writer session (a context manager): path changes,
    outcomes and copies through one ``IndexWriter``, each outcome counted in the
    summary and the progress report as it is written. When the session ends, the
    files the index could not take (written as failure records in their place) are
    counted as failed instead of what they were counted as."""

    def __init__(self, open_writer: Callable[[], IndexWriter], summary: Summary, progress: Progress) -> None:
        self._open_writer = open_writer
        self._opened: IndexWriter | None = None
        self._summary = summary
        self._progress = progress
        self._counted: dict[str, Status] = {}  # doc_hash -> the status its outcome was counted as

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._opened is None:
            return
        self._opened.__exit__(kind, exc, tb)
        if exc is None:
            for record in self._opened.rejected:
                self._summary.rejected(self._counted.get(record.doc_hash, Status.FAILED), record.path, record.error)

    def open(self) -> IndexWriter:
        """The session's writer, opened at the first call (an embedded run calls this
        while its pool starts, which hides the cost)."""
        if self._opened is None:
            self._opened = self._open_writer().__enter__()
        return self._opened

    def change_paths(self, add: Iterable[tuple[str, str]], removal: PathRemoval) -> None:
        """The plan's path changes, committed at once (see the module's text)."""
        add = list(add)
        if add or removal.gone or removal.lost:
            change_paths(self.open(), add, removal)
            self.commit()

    def commit(self) -> None:
        """Commit what the session holds (it goes on: the writer takes the lock again
        at its next operation)."""
        if self._opened is not None:
            self._opened.commit()

    def write(self, outcome: Outcome) -> None:
        """One file's outcome: written, counted, and shown."""
        self.open().add(outcome.doc, outcome.pages)
        self._summary.record(outcome)
        self._counted[outcome.doc.doc_hash] = outcome.doc.status
        self._progress.advance()

    def write_again(self, outcome: Outcome) -> None:
        """A file's second outcome (its OCR pass): it replaces the first in the index,
        and the summary's counts follow its status; not a file more done."""
        self.open().add(outcome.doc, outcome.pages)
        before = self._counted.get(outcome.doc.doc_hash)
        if before is not None:
            self._summary.moved(before, outcome.doc.status)
            self._counted[outcome.doc.doc_hash] = outcome.doc.status
        self._progress.refresh()

    def record_copies(self, copies: Iterable[tuple[str, str]]) -> None:
        """The paths of copies (doc_hash, path) of content this run indexed."""
        for doc_hash, path in copies:
            self.open().add_path(doc_hash, path)
