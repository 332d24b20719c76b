"""Deciding what an ingest run has to do: which files are new or changed, which are
unchanged and skipped, and which indexed files are gone (for --prune)."""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pdfindex.indexer import DocumentRecord, PageIndex, Status

from .files import file_identity, find_pdfs, sha256_of


@dataclass(frozen=True, slots=True)
class Job:
    path: Path
    doc_hash: str


@dataclass(slots=True)
class Plan:
    jobs: list[Job] = field(default_factory=list)
    unchanged: int = 0
    #: files whose content is already indexed (or planned) under another path
    duplicates: int = 0
    #: documents all of whose paths are gone (--prune): to delete
    gone: list[DocumentRecord] = field(default_factory=list)
    #: (doc_hash, path): copies of content planned in this run, whose path can be
    #: recorded only once the content is indexed (``record_copies``)
    copies: list[tuple[str, str]] = field(default_factory=list)
    #: paths recorded on documents already indexed (copies) and removed (--prune,
    #: the document having another path left), by make_plan itself
    paths_added: int = 0
    paths_removed: int = 0


def make_plan(index: PageIndex, paths: Iterable[Path], recursive: bool, retry_encrypted: bool,
              prune: bool) -> Plan:
    """Unchanged means: the same path is indexed with the same size and mtime, or
    its content hash is unchanged. Files that failed stay skipped until they change
    (no endless retries); encrypted ones are retried when passwords are given.
    Identical content is indexed once: a copy of a file that is indexed (at a path
    that still exists) has its path recorded on that document here and now, so
    ``--path`` finds it and deleting one of the copies keeps the document; a copy of
    content planned in this run is in ``copies``. With ``prune``, a document loses
    its paths that are gone, and goes (``gone``) only when none is left."""
    records = list(index.documents())
    known = {path: doc for doc in records for path in doc.all_paths}
    by_hash = {doc.doc_hash: doc for doc in records}
    planned: set[str] = set()
    plan = Plan()
    add_paths: list[tuple[str, str]] = []
    for path in find_pdfs(paths, recursive):
        record = known.get(str(path))
        size, mtime = file_identity(path)
        retry = record is not None and record.status == Status.ENCRYPTED and retry_encrypted
        if record is not None and not retry and record.size == size and record.mtime == mtime:
            plan.unchanged += 1
            continue
        doc_hash = sha256_of(path)
        if record is not None and not retry and record.doc_hash == doc_hash:
            plan.unchanged += 1
            continue
        if doc_hash in planned:
            plan.duplicates += 1
            plan.copies.append((doc_hash, str(path)))
            continue
        other = by_hash.get(doc_hash)
        if other is not None and not retry and str(path) not in other.all_paths \
                and any(os.path.exists(p) for p in other.all_paths):
            plan.duplicates += 1
            add_paths.append((doc_hash, str(path)))
            continue
        planned.add(doc_hash)
        plan.jobs.append(Job(path, doc_hash))
    remove_paths: list[tuple[str, str]] = []
    if prune:
        for doc in records:
            lost = [p for p in doc.all_paths if _gone(p)]
            if len(lost) == len(doc.all_paths):
                plan.gone.append(doc)
            else:
                remove_paths.extend((doc.doc_hash, p) for p in lost)
    if add_paths or remove_paths:
        with index.writer() as writer:
            for doc_hash, added in add_paths:
                writer.add_path(doc_hash, added)
            for doc_hash, removed in remove_paths:
                writer.remove_path(doc_hash, removed)
    plan.paths_added, plan.paths_removed = len(add_paths), len(remove_paths)
    return plan


def record_copies(index: PageIndex, plan: Plan) -> None:
    """After the run: the paths of copies of content that this run indexed. (A copy
    of content that failed to index changes nothing: its path is then unknown to
    the index, and the next run plans it again.)"""
    if plan.copies:
        with index.writer() as writer:
            for doc_hash, path in plan.copies:
                writer.add_path(doc_hash, path)


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
