"""Deciding what an ingest run has to do: which files are new or changed, which are
unchanged and skipped, and which indexed files are gone (for --prune)."""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from indexer import DocumentRecord, PageIndex, Status

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
    gone: list[DocumentRecord] = field(default_factory=list)


def make_plan(index: PageIndex, paths: Iterable[Path], recursive: bool, retry_encrypted: bool,
              prune: bool) -> Plan:
    """Unchanged means: the same path is indexed with the same size and mtime, or
    its content hash is unchanged. Files that failed stay skipped until they change
    (no endless retries); encrypted ones are retried when passwords are given.
    Identical content is indexed once: a copy of a file that is indexed (at a path
    that still exists) or already planned counts as a duplicate."""
    known = {doc.path: doc for doc in index.documents()}
    by_hash = {doc.doc_hash: doc.path for doc in known.values()}
    planned: set[str] = set()
    plan = Plan()
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
        elsewhere = by_hash.get(doc_hash)
        if doc_hash in planned or (elsewhere is not None and elsewhere != str(path) and not retry
                                   and os.path.exists(elsewhere)):
            plan.duplicates += 1
            continue
        planned.add(doc_hash)
        plan.jobs.append(Job(path, doc_hash))
    if prune:
        plan.gone = [doc for doc in known.values() if _gone(doc.path)]
    return plan


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
