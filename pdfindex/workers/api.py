"""The ingestion API: ingest, prune and remove, for the CLI and for Python callers.

Everything an ingest run decides (what changed, what is pruned, embedded pool or
Celery, copies' paths) happens behind ``ingest``, in the stages of ``run.py``, so
``pdfindex ingest`` and a Python program get the same behaviour from one place; the
CLI only parses arguments and prints the ``Summary``. Bad input (a password file
that cannot be read, paths that do not exist, no index for a dry run) raises
``IngestError`` with a message naming the path and the problem; broker faults raise
``BrokerError``, index faults the indexer's ``StorageError``.

    from pdfindex.workers.api import IngestOptions, ingest
    summary = ingest(["/srv/pdfs"], IngestOptions(recursive=True, prune=True))
    summary.indexed, summary.failed, summary.complete
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pdfindex import config

from .errors import IngestError
from .opening import open_index
from .options import IngestOptions, RemoveOptions
from .plan import indexed_under, prune_scope, removal
from .progress import NoProgress, Progress, Summary
from .run import STAGES, ProgressFactory, Run
from .session import apply_removal


@dataclass(slots=True)
class Removed:
    """What ``remove`` did (or, for a dry run, would do)."""

    #: every path taken off the index, sorted
    paths: list[str] = field(default_factory=list)
    #: documents deleted with their pages (no path of theirs left)
    documents: int = 0
    #: paths taken off documents that keep a copy elsewhere
    copies_kept: int = 0
    #: arguments that match no indexed path
    unmatched: list[str] = field(default_factory=list)
    dry_run: bool = False


def ingest(paths: Iterable[Path | str], options: IngestOptions | None = None,
           progress: ProgressFactory | None = None) -> Summary:
    """Ingest ``paths`` (files and folders): plan, prune (``options.prune``), extract
    in the embedded pool or through Celery (``PDFINDEX_BROKER_URL``), record the
    copies' paths, and return the summary. ``progress`` None reports nothing.

    Arguments that do not exist are listed in ``summary.not_found``, file arguments
    that are not PDFs in ``summary.not_pdf`` (all of them missing or not PDFs:
    IngestError); a folder argument that is missing or empty while the index holds
    files in it prunes nothing (``summary.not_pruned``). Files unchanged since an
    earlier run failed them are not extracted again but listed, with their reasons,
    in ``summary.still_failed``: they are still not indexed. A Ctrl-C stops the run
    with ``summary.interrupted`` set, after committing what arrived."""
    run = Run.begin(paths, options or IngestOptions(), progress or NoProgress)
    for stage in STAGES:
        stage(run)
        if run.finished:
            break
    return run.summary


def prune(paths: Iterable[Path | str], options: IngestOptions | None = None) -> Summary:
    """Only the pruning of an ingest: take off the index the files that are gone,
    among those ``paths`` cover (``options.recursive``: below folder arguments,
    else directly in them); nothing is extracted. The summary counts them in
    ``pruned`` (documents) and ``pruned_paths`` (copies' paths), and lists the
    arguments neither on disk nor in the index in ``not_found``."""
    options = options or IngestOptions()
    settings = options.settings or config.load()
    targets = [Path(p).absolute() for p in paths]
    index = open_index(options.index_dir or settings.index_dir, settings, dry_run=True)
    records = list(index.documents())
    scope = prune_scope(records, targets, options.recursive)
    known = [p for doc in records for p in doc.all_paths]
    not_found = [str(t) for t in targets if not os.path.lexists(t) and not indexed_under(str(t), known)]
    summary = Summary(pruned=len(scope.gone), pruned_paths=len(scope.lost), not_pruned=scope.kept,
                      not_found=not_found, dry_run=options.dry_run,
                      would_prune=scope.paths if options.dry_run else [])
    if not options.dry_run:
        apply_removal(index, scope)
    return summary


def remove(paths: Iterable[Path | str], options: RemoveOptions | None = None) -> Removed:
    """Take files off the index: each path as a file, or every indexed file below
    it as a folder, whether or not it still exists on disk. A document with a copy
    at another path keeps its pages under that path. Raises IngestError when no
    index exists."""
    options = options or RemoveOptions()
    settings = options.settings or config.load()
    index = open_index(options.index_dir or settings.index_dir, settings, dry_run=True)
    plan = removal(index.documents(), [Path(p) for p in paths])
    if not options.dry_run:
        apply_removal(index, plan)
    return Removed(paths=plan.paths, documents=len(plan.gone), copies_kept=len(plan.lost),
                   unmatched=plan.unmatched, dry_run=options.dry_run)


__all__ = ["IngestError", "IngestOptions", "NoProgress", "Progress", "ProgressFactory", "RemoveOptions", "Removed",
           "Summary", "ingest", "prune", "remove"]
