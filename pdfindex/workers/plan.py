"""Deciding what an ingest, prune or remove has to do: which files are new or
changed, which are unchanged and skipped, and which indexed paths are gone (for
--prune) or named for removal.

Pruning and removal are scoped to the paths given: an index may hold documents of
several folders, shares and disks, and "the file is missing" must never reach
beyond what the user pointed at (an unmounted share would otherwise empty the
index). Planning writes nothing: it says what to do, and the run's writer session
(``session.py``) does it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Set
from dataclasses import dataclass, field
from pathlib import Path

from pdfindex.indexer import DocumentRecord, ListFilters, PageIndex, Status

from .files import Skipped, file_identity, find_pdfs, sha256_of


@dataclass(frozen=True, slots=True)
class Job:
    path: Path
    doc_hash: str
    #: For an OCR job: the pages waiting (time limits and progress count them).
    pages: int = 0


@dataclass(slots=True)
class PathRemoval:
    """Paths to take off indexed documents: a document whose every path is taken
    goes (``gone``), one with a path left keeps its pages (``lost``)."""

    #: documents all of whose paths are taken: to delete
    gone: list[DocumentRecord] = field(default_factory=list)
    #: (doc_hash, path): paths taken off documents that keep another path
    lost: list[tuple[str, str]] = field(default_factory=list)
    #: folder arguments not pruned, each with the reason (missing, unmounted)
    kept: list[tuple[str, str]] = field(default_factory=list)
    #: arguments that match no indexed path (``remove``)
    unmatched: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        """Every path taken off the index, sorted: what a dry run lists."""
        return sorted([p for doc in self.gone for p in doc.all_paths] + [p for _, p in self.lost])


@dataclass(slots=True)
class Plan:
    jobs: list[Job] = field(default_factory=list)
    unchanged: int = 0
    #: files whose content is already indexed (or planned) under another path
    duplicates: int = 0
    #: --prune: documents all of whose paths in scope are gone, and paths lost
    prune: PathRemoval = field(default_factory=PathRemoval)
    #: (doc_hash, path): copies of content planned in this run, whose path can be
    #: recorded only once the content is indexed (``session.Session.record_copies``)
    copies: list[tuple[str, str]] = field(default_factory=list)
    #: (doc_hash, path): copies of content already indexed, whose paths are recorded first
    add_paths: list[tuple[str, str]] = field(default_factory=list)
    #: what the walk passed over (non-PDF files, folders, missing arguments)
    skipped: Skipped = field(default_factory=Skipped)
    #: (path, status, error): files that failed or were encrypted and are unchanged
    #: since: skipped (not extracted again), yet still not indexed, which the run
    #: must say as the run that failed them did
    still_failed: list[tuple[str, Status, str]] = field(default_factory=list)
    #: file arguments that are not PDFs: asked for by name, so named back (the
    #: non-PDF files a folder holds are only counted in ``skipped``)
    not_pdf: list[Path] = field(default_factory=list)
    #: unchanged files with pages waiting for OCR (an earlier run stopped before it,
    #: or the index was built before OCR existed): OCR'd, nothing else extracted again
    ocr_jobs: list[Job] = field(default_factory=list)

    @property
    def gone(self) -> list[DocumentRecord]:
        return self.prune.gone

    @property
    def paths_added(self) -> int:
        return len(self.add_paths)

    @property
    def paths_removed(self) -> int:
        return len(self.prune.lost)


def make_plan(index: PageIndex | None, paths: Iterable[Path], recursive: bool, retry_encrypted: bool,
              prune: bool, *, retry_failed: bool = False, force: bool = False, ocr: bool = False) -> Plan:
    """Unchanged means: the same path is indexed with the same size and mtime, or
    its content hash is unchanged. Files that failed stay skipped until they change
    (no endless retries) unless ``retry_failed``, and are listed in ``still_failed``
    rather than counted as unchanged (they are still not indexed, and a re-run must
    not look clean); encrypted ones are retried when
    passwords are given (``retry_encrypted``); ``force`` re-extracts every file
    (after an extraction fix). Identical content is indexed once: a copy of a file
    that is indexed (even one whose other paths are gone: a move) goes to ``add_paths``, so
    ``--path`` finds it and deleting one of the copies keeps the document; a copy
    of content planned in this run goes to ``copies``. With ``prune``, paths in the
    scope of ``paths`` that are gone are planned for removal (``prune_scope``):
    a document loses its paths that are gone here and now, and goes (``gone``)
    only when none is left. File arguments that are not PDFs go to ``not_pdf``.
    With ``ocr``, unchanged files with pages waiting for OCR go to ``ocr_jobs``.

    Nothing is written: the run's writer session applies the plan (``session.py``).
    ``index`` None: no index yet (a dry run), so nothing is indexed."""
    paths = [Path(p).absolute() for p in paths]
    records = list(index.documents()) if index is not None else []
    planner = _Planner(records, _Retry(encrypted=retry_encrypted or retry_failed, failed=retry_failed, force=force),
                       _waiting_for_ocr(index, records, retry_failed) if ocr else {})
    for path in find_pdfs(paths, recursive, planner.plan.skipped):
        planner.file(path)
    planner.name_not_pdfs(paths)
    if prune:  # a document that gains a path in this run (a move) loses its old ones, never its pages
        moving = {doc_hash for doc_hash, _ in planner.plan.add_paths}
        planner.plan.prune = prune_scope(records, paths, recursive, moving=moving)
    return planner.plan


def _waiting_for_ocr(index: PageIndex | None, records: list[DocumentRecord], retry_failed: bool) -> dict[str, int]:
    """The contents with pages waiting for OCR, and how many: as their records count
    them, or for a record that made no OCR decision (``ocr_pending`` None: extracted
    with OCR off, or before OCR) its pages that need it; with ``retry_failed``, the
    pages of those whose OCR failed too."""
    waiting = {doc.doc_hash: doc.ocr_pending for doc in records if doc.ocr_pending}
    asked = {doc.doc_hash for doc in records
             if doc.ocr_pending is None or (retry_failed and doc.problems.get("ocr_failed"))}
    if index is not None and asked:
        for page in index.list_pages(ListFilters(needs_ocr=True)).pages:
            if page.doc_hash in asked:
                waiting[page.doc_hash] = waiting.get(page.doc_hash, 0) + 1
    return waiting


#: Statuses of a file that is recorded but not indexed.
_FAILED = (Status.FAILED, Status.ENCRYPTED)


@dataclass(frozen=True, slots=True)
class _Retry:
    """Which recorded files are extracted again although unchanged."""

    encrypted: bool
    failed: bool
    force: bool

    def wanted(self, record: DocumentRecord) -> bool:
        return self.force or (record.status == Status.ENCRYPTED and self.encrypted) or (
            record.status == Status.FAILED and self.failed)


class _Planner:
    """A plan as the walk fills it in: the index's records by path and by content,
    and the contents planned and files found so far."""

    def __init__(self, records: list[DocumentRecord], retry: _Retry, ocr_waiting: dict[str, int]) -> None:
        self.plan = Plan()
        self.retry = retry
        self.ocr_waiting = ocr_waiting
        self.known = {path: doc for doc in records for path in doc.all_paths}
        self.by_hash = {doc.doc_hash: doc for doc in records}
        self.planned: set[str] = set()
        self.found: set[Path] = set()

    def file(self, path: Path) -> None:
        """One PDF the walk found: unchanged (by size and mtime, else by content),
        or to be indexed (``_content``)."""
        self.found.add(path)
        record = self.known.get(str(path))
        retry = record is not None and self.retry.wanted(record)
        size, mtime = file_identity(path)
        if record is not None and not retry and record.size == size and record.mtime == mtime:
            self._unchanged(str(path), record)
            return
        doc_hash = sha256_of(path)
        if record is not None and not retry and record.doc_hash == doc_hash:
            self._unchanged(str(path), record)
            return
        self._content(path, doc_hash, retry)

    def _content(self, path: Path, doc_hash: str, retry: bool) -> None:
        """A file whose content the index does not hold under its path: a copy of
        content planned in this run, a new path of content indexed, or a job."""
        plan = self.plan
        if doc_hash in self.planned:
            plan.duplicates += 1
            plan.copies.append((doc_hash, str(path)))
            return
        other = self.by_hash.get(doc_hash)
        # Identical content is the same text, wherever its other paths went: a file
        # moved (its old path gone) gets its new path recorded, not extracted again.
        if other is not None and not retry and not self.retry.force and str(path) not in other.all_paths:
            if other.status in _FAILED:
                plan.still_failed.append((str(path), other.status, other.error))
            else:
                plan.duplicates += 1
            plan.add_paths.append((doc_hash, str(path)))
            return
        self.planned.add(doc_hash)
        plan.jobs.append(Job(path, doc_hash))

    def _unchanged(self, path: str, record: DocumentRecord) -> None:
        """An unchanged file: counted as such, unless it is unchanged since it failed."""
        if record.status in _FAILED:
            self.plan.still_failed.append((path, record.status, record.error))
            return
        self.plan.unchanged += 1
        pages = self.ocr_waiting.pop(record.doc_hash, 0)  # one job for the content, whichever copy
        if pages:
            self.plan.ocr_jobs.append(Job(Path(path), record.doc_hash, pages))

    def name_not_pdfs(self, paths: list[Path]) -> None:
        """File arguments the walk did not take for PDFs: named, so no longer one of
        its quiet count."""
        for arg in dict.fromkeys(paths):
            if arg not in self.found and os.path.lexists(arg) and not arg.is_dir():
                self.plan.not_pdf.append(arg)
                self.plan.skipped.non_pdf = max(0, self.plan.skipped.non_pdf - 1)


def indexed_under(path: str, known: Iterable[str]) -> bool:
    """Whether the index knows ``path``, as a file or as a folder holding files."""
    return any(k == path or k.startswith(path.rstrip("/") + "/") for k in known)


def _inside(path: str, folder: str, recursive: bool) -> bool:
    """Whether ``path`` lies in ``folder``: anywhere below it, or (not recursive)
    directly in it, as the walk of an ingest run sees it."""
    top = folder.rstrip("/") + "/"
    if not path.startswith(top):
        return False
    return recursive or "/" not in path[len(top):]


def prune_scope(records: Iterable[DocumentRecord], paths: Iterable[Path], recursive: bool,
                moving: Set[str] = frozenset()) -> PathRemoval:
    """The indexed paths that are gone, among those the arguments cover: a file
    argument, or the files of a folder argument (below it with ``recursive``, else
    directly in it). A folder argument that does not exist, or exists but is empty
    while the index holds documents in it, is taken for an unmounted share or a
    mistyped path: nothing in it is pruned, and it is listed in ``kept`` with the
    reason. A path that cannot be looked at now (permission denied, a share timing
    out) is not gone. A document of ``moving`` (it gains a path in the same run) only
    loses the paths that are gone, whichever they are: it is never deleted."""
    records = list(records)
    indexed = {p for doc in records for p in doc.all_paths}
    scopes: list[tuple[str, bool]] = []  # (argument, is a folder)
    out = PathRemoval()
    for arg in dict.fromkeys(str(Path(p).absolute()) for p in paths):
        inside = [p for p in indexed if _inside(p, arg, recursive)]
        if os.path.isdir(arg):
            if inside and not _has_entries(arg):
                out.kept.append((arg, f"empty folder with {len(inside)} indexed file(s) in it: taken for an "
                                      "unmounted share, nothing in it pruned"))
                continue
            scopes.append((arg, True))
        elif arg in indexed:
            scopes.append((arg, False))  # a file argument, there or gone
        elif inside:
            out.kept.append((arg, f"folder not found (missing or not mounted) with {len(inside)} indexed "
                                  "file(s) in it: nothing in it pruned"))

    def covered(path: str) -> bool:
        return any(path == arg if not folder else _inside(path, arg, recursive) for arg, folder in scopes)

    for doc in records:
        lost = [p for p in doc.all_paths if covered(p) and _gone(p)]
        if lost and len(lost) == len(doc.all_paths) and doc.doc_hash not in moving:
            out.gone.append(doc)
        else:
            out.lost.extend((doc.doc_hash, p) for p in lost)
    return out


def removal(records: Iterable[DocumentRecord], paths: Iterable[Path]) -> PathRemoval:
    """The indexed paths ``pdfindex remove`` takes off: each argument as a file, or
    every path below it as a folder, whether or not it exists on disk. A document
    with a copy outside them loses only these paths; ``unmatched`` lists the
    arguments that match nothing."""
    records = list(records)
    given = [Path(p).absolute() for p in paths]
    # As typed (an ingest records ``absolute()`` paths, ".." kept) and normalized.
    args = list(dict.fromkeys(a for p in given for a in (str(p), os.path.normpath(p))))
    matched: set[str] = set()
    out = PathRemoval()
    for doc in records:
        lost = []
        for p in doc.all_paths:
            hit = next((a for a in args if p == a or _inside(p, a, True)), None)
            if hit is not None:
                matched.add(hit)
                lost.append(p)
        if lost and len(lost) == len(doc.all_paths):
            out.gone.append(doc)
        else:
            out.lost.extend((doc.doc_hash, p) for p in lost)
    out.unmatched = [str(p) for p in given if str(p) not in matched and os.path.normpath(p) not in matched]
    return out


def _has_entries(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except OSError:
        return True  # cannot look: not taken for empty


def _gone(path: str) -> bool:
    """Only a file that is really not there is gone: one that cannot be looked at
    now (permission denied, a share timing out) keeps its record."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False
