"""An ingest run as a pipeline: the stages, named in one place (``STAGES``), each
taking the run and filling in its part, in the way paperless-ngx's consume task
lists its plugins.

    read passwords -> check roots -> open the index -> plan -> count -> dry run -> write

Everything before ``write`` only reads: the plan (``plan.make_plan``) is pure, and
a dry run ends the run after listing it. ``write`` is the run's one writer session
(``session.py``): the plan's path changes, then extraction's outcomes (the embedded
pool's, written here; with a broker the Celery writer writes them), then the
copies' paths.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pdfindex import config
from pdfindex.indexer import PageIndex, Status

from .errors import IngestError
from . import files, opening
from .options import IngestOptions
from .plan import Plan, indexed_under, make_plan
from .progress import Progress, Summary, password_hint
from .session import Session

if TYPE_CHECKING:
    from pdfindex.indexer import IndexWriter

#: Makes the progress report of a run, given the number of files to extract and the
#: summary it fills in (``Progress`` itself is one: a bar on a terminal).
ProgressFactory = Callable[[int, Summary], Progress]


@dataclass(slots=True)
class Run:
    """One ingest run, as its stages fill it in."""

    targets: list[Path]
    options: IngestOptions
    settings: config.Settings
    progress: ProgressFactory
    passwords: list[str] = field(default_factory=list)
    #: None: no index yet, and a dry run makes none
    index: PageIndex | None = None
    plan: Plan = field(default_factory=Plan)
    summary: Summary = field(default_factory=Summary)
    #: set by a stage that ends the run early (a dry run)
    finished: bool = False

    @classmethod
    def begin(cls, paths: Iterable[Path | str], options: IngestOptions, progress: ProgressFactory) -> Run:
        targets = [Path(p).absolute() for p in paths]
        if not targets:
            raise IngestError("no files or folders given to ingest")
        return cls(targets, options, options.settings or config.load(), progress)


def read_passwords(run: Run) -> None:
    """The password file given, else (embedded mode) PDFINDEX_PASSWORD_FILE's;
    IngestError naming it when it cannot be read."""
    given, settings = run.options.password_file, run.settings
    try:
        run.passwords = files.read_passwords(given or (None if settings.broker_url else settings.password_file))
    except OSError as exc:
        raise IngestError(f"{given or settings.password_file}: cannot read password file: "
                          f"{exc.strerror or exc}") from None


def check_roots(run: Run) -> None:
    """With a broker or PDFINDEX_ROOTS, before anything is hashed: every path under
    the roots (the workers would refuse the files)."""
    if run.settings.broker_url or run.settings.roots:
        files.check_roots(run.targets, run.settings.roots)


def open_index(run: Run) -> None:
    """The index, created unless the run has nothing on disk to read (or is a dry
    run). No index and nothing to read: IngestError saying why nothing was done; a
    dry run before the first ingest goes on without an index (everything would be
    indexed)."""
    options = run.options
    try:
        run.index = opening.open_index(options.index_dir or run.settings.index_dir, run.settings,
                               options.dry_run or not any(map(_ingestible, run.targets)))
    except opening.NoIndex:
        if not options.dry_run:
            missing = [str(t) for t in run.targets if not os.path.lexists(t)]
            raise IngestError(_nothing_message(missing, [str(t) for t in run.targets if str(t) not in missing])) \
                from None


def plan(run: Run) -> None:
    """What changed, what is unchanged, what is pruned (``plan.make_plan``): read only."""
    options = run.options
    run.plan = make_plan(run.index, run.targets, options.recursive, retry_encrypted=options.password_file is not None,
                         prune=options.prune, retry_failed=options.retry_failed, force=options.force,
                         ocr=run.settings.ocr != "off")


def count(run: Run) -> None:
    """The summary's counts known before anything is extracted."""
    plan = run.plan
    still_failed = [(path, password_hint(error) if status == Status.ENCRYPTED else error)
                    for path, status, error in plan.still_failed]
    run.summary = Summary(unchanged=plan.unchanged + plan.duplicates, duplicates=plan.duplicates,
                          pruned=len(plan.prune.gone), pruned_paths=len(plan.prune.lost),
                          skipped_non_pdf=plan.skipped.non_pdf, skipped_folders=plan.skipped.folders,
                          not_found=_not_found(run), not_pdf=[str(p) for p in plan.not_pdf],
                          not_pruned=list(plan.prune.kept), still_failed=still_failed)


def dry_run(run: Run) -> None:
    """A dry run (or one without an index) ends here, listing what would be indexed
    and pruned."""
    if run.options.dry_run or run.index is None:
        summary = run.summary
        summary.dry_run = True
        summary.would_index = [str(job.path) for job in run.plan.jobs]
        summary.would_prune = run.plan.prune.paths
        run.finished = True


def write(run: Run) -> None:
    """The run's writer session (``session.py``): path changes, outcomes, copies.
    Embedded, the session writes each outcome as the pool's processes finish it
    (a sharded index through a process per shard); with a broker it waits for the
    Celery writer to write them."""
    plan, index, settings, summary = run.plan, run.index, run.settings, run.summary
    assert index is not None  # the dry_run stage ends a run without one
    report = run.progress(len(plan.jobs), summary)
    embedded = not settings.broker_url
    try:
        def open_writer() -> IndexWriter:
            if embedded and (plan.jobs or plan.ocr_jobs):
                return index.writer(batch_pages=settings.batch_pages, processes=True)
            return index.writer()

        with Session(open_writer, summary, report) as session:
            session.change_paths(plan.add_paths, plan.prune)
            if embedded:
                from .embedded import run_embedded  # noqa: PLC0415 - billiard only when extracting here

                run_embedded(plan.jobs, run.passwords, settings, summary, run.options.workers or settings.workers,
                             session, plan.ocr_jobs)
            else:
                from .distributed import run_distributed  # noqa: PLC0415 - Redis only when a broker is used

                run_distributed(index, plan.jobs, run.options.password_file, settings, summary, report, plan.ocr_jobs)
            session.record_copies(plan.copies)
    finally:
        report.close()


#: An ingest run, stage by stage; a stage may end the run (``Run.finished``).
STAGES: tuple[Callable[[Run], None], ...] = (
    read_passwords, check_roots, open_index, plan, count, dry_run, write,
)


def _not_found(run: Run) -> list[str]:
    """The missing arguments to name, unless this run pruned them (an indexed file
    now gone) or listed them as a folder it did not prune."""
    plan = run.plan
    missing = [str(p) for p in plan.skipped.missing]
    known = {p for doc in run.index.documents() for p in doc.all_paths} if missing and run.index else set()
    _refuse_nothing(run, [p for p in missing if not indexed_under(p, known)])
    kept = {folder for folder, _ in plan.prune.kept}
    return [p for p in missing if not (run.options.prune and (p in known or p in kept))]


def _refuse_nothing(run: Run, unknown: list[str]) -> None:
    """IngestError when every argument is missing and unknown to the index, or not a
    PDF: there is nothing to do."""
    not_pdf = [str(p) for p in run.plan.not_pdf]
    if (unknown or not_pdf) and set(unknown + not_pdf) >= {str(p) for p in run.targets}:
        raise IngestError(_nothing_message(list(dict.fromkeys(unknown)), not_pdf))


def _ingestible(path: Path) -> bool:
    """Whether an argument can give the run anything to do: a folder, or a file the
    walk takes for a PDF (``files.find_pdfs``)."""
    return path.is_dir() or (os.path.lexists(path) and (path.suffix.lower() == ".pdf" or files.is_pdf(path)))


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
