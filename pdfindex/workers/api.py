"""The ingestion API: ingest, prune and remove, for the CLI and for Python callers.

Everything an ingest run decides (what changed, what is pruned, embedded pool or
Celery, copies' paths) happens here, so ``pdfindex ingest`` and a Python program
get the same behaviour from one place; the CLI only parses arguments and prints
the ``Summary``. Bad input (a password file that cannot be read, paths that do not
exist, no index for a dry run) raises ``IngestError`` with a message naming the
path and the problem; broker faults raise ``BrokerError``, index faults the
indexer's ``StorageError``.

    from pdfindex.workers.api import IngestOptions, ingest
    summary = ingest(["/srv/pdfs"], IngestOptions(recursive=True, prune=True))
    summary.indexed, summary.failed, summary.complete
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pdfindex import config
from pdfindex.indexer import PageIndex, Status

from .errors import IngestError
from .files import is_pdf, read_passwords
from .plan import Plan, PathRemoval, apply_paths, make_plan, prune_scope, record_copies, removal
from .progress import NoProgress, Progress, Summary, password_hint

#: Makes the progress report of a run, given the number of files to extract and the
#: summary it fills in (``Progress`` itself is one: a bar on a terminal).
ProgressFactory = Callable[[int, Summary], Progress]


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How to ingest; every field has the CLI's default."""

    #: the index folder; None: ``settings.index_dir`` (PDFINDEX_INDEX_DIR)
    index_dir: Path | None = None
    #: descend into sub-folders of folder arguments
    recursive: bool = False
    #: passwords to try on encrypted files, one a line; also makes a run retry the
    #: encrypted files. None: the embedded pool uses PDFINDEX_PASSWORD_FILE if set.
    password_file: Path | None = None
    #: extraction processes (embedded mode); None: ``settings.workers``
    workers: int | None = None
    #: take off the index the files that are gone, among those the paths cover
    prune: bool = False
    #: extract again the files that failed or were encrypted, though unchanged
    retry_failed: bool = False
    #: extract again every file, though unchanged (after an extraction fix)
    force: bool = False
    #: plan only: list what would be indexed and pruned, change nothing
    dry_run: bool = False
    #: the settings; None: ``config.load()`` (the environment)
    settings: config.Settings | None = None


@dataclass(frozen=True, slots=True)
class RemoveOptions:
    index_dir: Path | None = None
    #: list what would be removed, change nothing
    dry_run: bool = False
    settings: config.Settings | None = None


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
    options = options or IngestOptions()
    settings = options.settings or config.load()
    targets = [Path(p).absolute() for p in paths]
    if not targets:
        raise IngestError("no files or folders given to ingest")
    password_file = options.password_file
    try:
        passwords = read_passwords(password_file or (None if settings.broker_url else settings.password_file))
    except OSError as exc:
        raise IngestError(f"{password_file or settings.password_file}: cannot read password file: "
                          f"{exc.strerror or exc}") from None
    if settings.broker_url or settings.roots:
        from .distributed import check_roots  # noqa: PLC0415 - Redis only when a broker is used

        check_roots(targets, settings)  # before anything is hashed: the files would be refused
    index: PageIndex | None
    try:  # a run that has nothing on disk to read creates no index
        index = _open(options.index_dir or settings.index_dir, settings,
                      options.dry_run or not any(map(_ingestible, targets)))
    except _NoIndex:
        if not options.dry_run:
            missing = [str(t) for t in targets if not os.path.lexists(t)]
            raise IngestError(_nothing_message(missing, [str(t) for t in targets if str(t) not in missing])) \
                from None
        index = None  # a dry run before the first ingest: everything would be indexed
    plan = make_plan(index, targets, options.recursive, retry_encrypted=password_file is not None,
                     prune=options.prune, retry_failed=options.retry_failed, force=options.force,
                     dry_run=options.dry_run)
    summary = _planned(plan, index, targets, options.prune)
    if options.dry_run or index is None:
        summary.dry_run = True
        summary.would_index = [str(job.path) for job in plan.jobs]
        summary.would_prune = plan.prune.paths
        return summary
    if plan.gone:
        apply_paths(index, [], PathRemoval(gone=plan.gone))
    report = (progress or NoProgress)(len(plan.jobs), summary)
    try:
        if settings.broker_url:
            from .distributed import run_distributed  # noqa: PLC0415

            run_distributed(index, plan.jobs, password_file, settings, summary, report)
        else:
            from .embedded import run_embedded  # noqa: PLC0415 - billiard only when extracting here

            run_embedded(index, plan.jobs, passwords, settings, summary, report, options.workers or settings.workers)
        record_copies(index, plan)  # copies of content this run indexed get their paths
    finally:
        report.close()
    return summary


def prune(paths: Iterable[Path | str], options: IngestOptions | None = None) -> Summary:
    """Only the pruning of an ingest: take off the index the files that are gone,
    among those ``paths`` cover (``options.recursive``: below folder arguments,
    else directly in them); nothing is extracted. The summary counts them in
    ``pruned`` (documents) and ``pruned_paths`` (copies' paths), and lists the
    arguments neither on disk nor in the index in ``not_found``."""
    options = options or IngestOptions()
    settings = options.settings or config.load()
    targets = [Path(p).absolute() for p in paths]
    index = _open(options.index_dir or settings.index_dir, settings, dry_run=True)
    records = list(index.documents())
    scope = prune_scope(records, targets, options.recursive)
    known = [p for doc in records for p in doc.all_paths]
    not_found = [str(t) for t in targets if not os.path.lexists(t) and str(t) not in known
                 and not any(p.startswith(str(t).rstrip("/") + "/") for p in known)]
    summary = Summary(pruned=len(scope.gone), pruned_paths=len(scope.lost), not_pruned=scope.kept,
                      not_found=not_found, dry_run=options.dry_run,
                      would_prune=scope.paths if options.dry_run else [])
    if not options.dry_run:
        apply_paths(index, [], scope)
    return summary


def remove(paths: Iterable[Path | str], options: RemoveOptions | None = None) -> Removed:
    """Take files off the index: each path as a file, or every indexed file below
    it as a folder, whether or not it still exists on disk. A document with a copy
    at another path keeps its pages under that path. Raises IngestError when no
    index exists."""
    options = options or RemoveOptions()
    settings = options.settings or config.load()
    index = _open(options.index_dir or settings.index_dir, settings, dry_run=True)
    plan = removal(index.documents(), [Path(p) for p in paths])
    if not options.dry_run:
        apply_paths(index, [], plan)
    return Removed(paths=plan.paths, documents=len(plan.gone), copies_kept=len(plan.lost),
                   unmatched=plan.unmatched, dry_run=options.dry_run)


class _NoIndex(IngestError):
    """There is no index yet (and none is made for a dry run, a prune or a removal)."""


def _open(root: Path, settings: config.Settings, dry_run: bool) -> PageIndex:
    """The index; created for an ingest, which fills it, not for anything else. An
    existing index keeps its own language; PDFINDEX_LANGUAGE is for a new one. In
    distributed mode it must first be the index the writer announced
    (workers/identity.py): a client never plans or writes against another."""
    if settings.broker_url:
        from .identity import check_client  # noqa: PLC0415 - Redis only when a broker is used

        check_client(settings, root)
    try:
        return PageIndex(root, new_language=settings.language, create=not dry_run, new_shards=settings.shards)
    except FileNotFoundError:
        raise _NoIndex(f"no index at {root}; ingest some PDFs first (or give the index folder)") from None


def _ingestible(path: Path) -> bool:
    """Whether an argument can give the run anything to do: a folder, or a file the
    walk takes for a PDF (``files.find_pdfs``)."""
    return path.is_dir() or (os.path.lexists(path) and (path.suffix.lower() == ".pdf" or is_pdf(path)))


def _missing_message(missing: list[str]) -> str:
    return (f"{missing[0]}: no such file or folder" if len(missing) == 1
            else f"none of the {len(missing)} paths given exists (first: {missing[0]}: no such file or folder)")


def _nothing_message(missing: list[str], not_pdf: list[str]) -> str:
    """Why a run whose every argument is missing or not a PDF does nothing."""
    if not not_pdf:
        return _missing_message(missing)
    problem = f"{not_pdf[0]}: not a PDF (no %PDF- header and not named *.pdf)"
    given = len(missing) + len(not_pdf)
    return (f"{problem}; nothing ingested" if given == 1
            else f"none of the {given} paths given is a PDF or a folder (first: {problem})")


def _planned(plan: Plan, index: PageIndex | None, paths: list[Path], pruning: bool) -> Summary:
    """The summary's counts known before anything is extracted. A missing argument
    is "not found" unless this run pruned it (an indexed file now gone) or listed
    it as a folder it did not prune; all of them missing and unknown to the index
    is an error, as there is nothing to do."""
    skipped = plan.skipped
    known = {p for doc in index.documents() for p in doc.all_paths} if skipped.missing and index else set()

    def indexed_under(path: str) -> bool:
        return path in known or any(k.startswith(path.rstrip("/") + "/") for k in known)

    missing = [str(p) for p in skipped.missing]
    unknown = [p for p in missing if not indexed_under(p)]
    not_pdf = [str(p) for p in plan.not_pdf]
    if (unknown or not_pdf) and set(unknown + not_pdf) >= {str(p) for p in paths}:
        raise IngestError(_nothing_message(list(dict.fromkeys(unknown)), not_pdf))
    kept = {folder for folder, _ in plan.prune.kept}
    not_found = [p for p in missing if not (pruning and (p in known or p in kept))]
    still_failed = [(path, password_hint(error) if status == Status.ENCRYPTED else error)
                    for path, status, error in plan.still_failed]
    return Summary(unchanged=plan.unchanged + plan.duplicates, duplicates=plan.duplicates,
                   pruned=len(plan.prune.gone), pruned_paths=len(plan.prune.lost),
                   skipped_non_pdf=skipped.non_pdf, skipped_folders=skipped.folders, not_found=not_found,
                   not_pdf=not_pdf, not_pruned=list(plan.prune.kept), still_failed=still_failed)


__all__ = ["IngestError", "IngestOptions", "NoProgress", "Progress", "ProgressFactory", "RemoveOptions", "Removed",
           "Summary", "ingest", "prune", "remove"]
