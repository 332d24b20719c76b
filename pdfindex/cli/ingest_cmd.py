"""``pdfindex ingest`` and ``remove``: filling the index, taking files off it, and
watching it.

The work is ``pdfindex.workers.api``'s (planning, pruning, embedded pool or Celery,
copies); these functions only turn arguments into its options and its results into
lines and an exit status.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from types import FrameType

from pdfindex import config
from pdfindex.config.settings import ocr_languages
from pdfindex.contract.display import shown
from pdfindex.workers.api import IngestOptions, RemoveOptions, ingest, remove
from pdfindex.workers.progress import NoProgress, Progress, Summary
from pdfindex.workers.watch import Round, watch

from .errors import EXIT_INCOMPLETE, EXIT_INTERRUPTED, CliError
from .index_access import user_errors


def cmd_ingest(args: argparse.Namespace) -> int:
    """Arguments to ``workers.api.ingest`` and its summary to stdout; with -q, only
    what is wrong (the files not indexed, the paths not found), on stderr."""
    quiet = bool(getattr(args, "quiet", False))
    with user_errors():
        options = IngestOptions(index_dir=args.index, recursive=args.recursive, password_file=args.password_file,
                                workers=args.workers, prune=args.prune, retry_failed=args.retry_failed,
                                force=args.force, dry_run=args.dry_run, settings=with_ocr_args(config.load(), args))
        if args.watch:
            if args.dry_run:
                raise CliError("--watch and --dry-run cannot be used together")
            with _sigterm_as_ctrl_c() as stopped_by:
                return _watch(args, options, stopped_by, quiet)
        with _sigterm_as_ctrl_c() as stopped_by:
            summary = ingest(args.paths, options, progress=NoProgress if quiet else Progress)
    signal_name = stopped_by[0] if stopped_by else None
    if summary.dry_run:
        print(render_dry_run(summary))
    elif quiet:
        for line in ([_interrupted(signal_name)] if summary.interrupted else []) + problems(summary):
            print(f"pdfindex: {line}", file=sys.stderr)
    else:
        print(render_summary(summary, signal_name))
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return 0 if summary.complete else EXIT_INCOMPLETE


@contextlib.contextmanager
def _sigterm_as_ctrl_c() -> Iterator[list[str]]:
    """SIGTERM (``kill``, a service manager, a container stop) stops the run as
    Ctrl-C does: KeyboardInterrupt, which the ingest answers by committing what
    arrived. Python's default leaves SIGTERM deadly: the run ended without a word,
    and its pool processes wrote tracebacks into closed pipes. The list yielded gets
    the signal's name once it came. Only the first SIGTERM interrupts (a second must
    not cut the commit short); a process forked meanwhile dies of it as by default."""
    received: list[str] = []
    owner = os.getpid()

    def stop(signum: int, _frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a forked child that kept the handler: the default action
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if received:
            return
        received.append(signal.Signals(signum).name)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (a Python caller's thread): leave signals alone
        yield received
        return
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


def with_ocr_args(settings: config.Settings, args: argparse.Namespace) -> config.Settings:
    """``--ocr`` and ``--ocr-languages`` over the environment's settings (in Celery
    mode they decide which unchanged files' waiting pages are sent to OCR; the
    workers read pages as their own PDFINDEX_OCR settings say)."""
    if args.ocr:
        settings = replace(settings, ocr=args.ocr)
    if args.ocr_languages:
        settings = replace(settings, ocr_languages=ocr_languages(args.ocr_languages))
    return settings


def _interrupted(signal_name: str | None) -> str:
    by = f" ({signal_name})" if signal_name else ""
    return f"interrupted{by}: the index holds everything committed so far; run the same command again to resume"


def _failed_count(summary: Summary) -> str:
    """``3`` or ``3 (2 unchanged since they failed; --retry-failed to try again)``:
    a re-run must not look clean while files asked for are still not indexed."""
    total, still = len(summary.failures), len(summary.still_failed)
    if not still:
        return str(total)
    how_many = "" if still == total else f"{still} "
    return f"{total} ({how_many}unchanged since they failed; --retry-failed to try again)"


def _watch(args: argparse.Namespace, options: IngestOptions, stopped_by: list[str], quiet: bool) -> int:
    """``ingest --watch``: a line for each round of changes (with -q only the files
    that failed and the rounds that could not run, on stderr); Ctrl-C or SIGTERM ends
    it (exit 0 while waiting: nothing is lost, the index holds every round; 130 when
    it cut a round short, which the next run catches up with). The catch-up, the
    first round, names the files still failed from earlier runs, as a re-run of
    ``ingest`` does; later rounds name the files they take."""
    cut_short = False

    def say(line: str) -> None:
        if not quiet:
            print(line, flush=True)

    def report(done: Round) -> None:
        nonlocal cut_short
        if done.error:
            print(f"pdfindex: watch: {shown(done.error)}", file=sys.stderr, flush=True)
        if done.summary is not None:
            s = done.summary
            if s.interrupted:
                cut_short = True
                raise KeyboardInterrupt
            say(f"{time.strftime('%H:%M:%S')} indexed {s.indexed + s.empty}, unchanged {s.unchanged}, "
                f"failed {_failed_count(s)}" + (f", pruned {s.pruned}" if s.pruned else ""))
            for line in problems(s):
                if quiet:
                    print(f"pdfindex: {line}", file=sys.stderr, flush=True)
                else:
                    print(f"  {line}", flush=True)
        if done.removed is not None:
            for path in done.removed.paths:
                say(f"{time.strftime('%H:%M:%S')} removed {shown(path)}")

    say(f"watching {len(args.paths)} path{'s' if len(args.paths) != 1 else ''}; Ctrl-C stops")
    try:
        watch(args.paths, options, report=report)
    except KeyboardInterrupt:
        by = f" ({stopped_by[0]})" if stopped_by else ""
        if cut_short:
            print(f"interrupted{by}: the index holds everything committed so far; the next run catches up",
                  file=sys.stderr if quiet else sys.stdout, flush=True)
            return EXIT_INTERRUPTED
        say(f"stopped watching{by}; the index holds every change seen")
    return 0


def _skipped(summary: Summary) -> str | None:
    parts = []
    if summary.skipped_non_pdf:
        parts.append(f"{summary.skipped_non_pdf} non-PDF file{'s' if summary.skipped_non_pdf != 1 else ''}")
    if summary.skipped_folders:
        parts.append(f"{summary.skipped_folders} folder{'s' if summary.skipped_folders != 1 else ''} "
                     "(use --recursive)")
    return f"  skipped:              {', '.join(parts)}" if parts else None


def _notes(summary: Summary) -> list[str]:
    """The arguments that gave nothing to do, each with why."""
    return ([f"NOT FOUND {shown(path)}: no such file or folder" for path in summary.not_found]
            + [f"NOT A PDF {shown(path)}: no %PDF- header and not named *.pdf; not ingested"
               for path in summary.not_pdf]
            + [f"NOT PRUNED {shown(path)}: {shown(reason)}" for path, reason in summary.not_pruned])


def problems(summary: Summary) -> list[str]:
    """What makes a run incomplete (exit 5), one line each: the files asked for that
    are not indexed (this run's failures, then those unchanged since they failed),
    then the arguments that gave nothing to do. The summary's lines, and all -q
    prints."""
    return [f"FAILED {shown(path)}: {shown(reason)}" for path, reason in summary.failures] + _notes(summary)


def render_summary(summary: Summary, signal_name: str | None = None) -> str:
    """The end-of-run report; file names and reasons escaped for the terminal.
    ``signal_name``: what interrupted the run, when not Ctrl-C."""
    elapsed = time.monotonic() - summary.started
    rate = summary.pages / elapsed if elapsed > 0 else 0.0
    coverage = f"{sum(summary.coverages) / len(summary.coverages):.3f}" if summary.coverages else "n/a"
    lines = [
        _interrupted(signal_name) if summary.interrupted else "done",
        f"  files indexed:        {summary.indexed}" + (f" (+{summary.empty} without text)" if summary.empty else ""),
        f"  skipped as unchanged: {summary.unchanged}"
        + (f" ({summary.duplicates} of them copies of other indexed files)" if summary.duplicates else ""),
        f"  failed:               {_failed_count(summary)}",
        f"  pages:                {summary.pages} ({rate:.1f} pages/s over {elapsed:.1f} s)",
        f"  mean coverage:        {coverage}",
        f"  pages needing OCR:    {summary.needs_ocr}",
    ]
    if summary.ocr_queued and summary.ocr_in_background:
        lines.append(f"  pages queued for OCR: {summary.ocr_queued} (read by the workers of the ocr queue; "
                     "searchable as they finish: `pdfindex status`)")
    elif summary.ocr_queued:
        lines.append(f"  pages OCR'd:          {summary.ocr_pages} of {summary.ocr_queued}")
        if summary.ocr_failed or summary.ocr_given_up:
            first = summary.ocr_failure or "the OCR job failed"
            lines.append(f"  not OCR'd:            {summary.ocr_failed} page(s) (first: {first}; "
                         "`pdfindex list --problems ocr_failed`, `ingest --retry-failed` to try again)")
    skipped = _skipped(summary)
    if skipped:
        lines.append(skipped)
    if summary.pruned or summary.pruned_paths:
        lines.append(f"  pruned (files gone):  {summary.pruned}"
                     + (f" (+{summary.pruned_paths} paths of copies kept under another path)"
                        if summary.pruned_paths else ""))
    lines += [f"  {line}" for line in problems(summary)]
    return "\n".join(lines)


def render_dry_run(summary: Summary) -> str:
    """What an ingest would do; one line a path, so it can be read or grepped. The
    files unchanged since they failed are named as the real run would name them."""
    lines = ["dry run: nothing was changed",
             f"  would index:          {len(summary.would_index)}",
             f"  skipped as unchanged: {summary.unchanged}",
             f"  would prune:          {len(summary.would_prune)}"]
    if summary.still_failed:
        lines.append(f"  failed:               {_failed_count(summary)}")
    skipped = _skipped(summary)
    if skipped:
        lines.append(skipped)
    lines += [f"  INDEX {shown(path)}" for path in summary.would_index]
    lines += [f"  PRUNE {shown(path)}" for path in summary.would_prune]
    lines += [f"  {line}" for line in problems(summary)]
    return "\n".join(lines)


def cmd_remove(args: argparse.Namespace) -> int:
    """``pdfindex remove``: paths off the index through ``workers.api.remove``; one
    line a path removed, a total, and the arguments that matched nothing on stderr."""
    with user_errors():
        removed = remove(args.paths, RemoveOptions(index_dir=args.index, dry_run=args.dry_run,
                                                   settings=config.load()))
    if not removed.paths:
        first = removed.unmatched[0] if removed.unmatched else str(args.paths[0])
        more = f" (nor {len(removed.unmatched) - 1} more)" if len(removed.unmatched) > 1 else ""
        raise CliError(f"{first}: not in the index{more}; nothing removed")
    verb = "would remove" if removed.dry_run else "removed"
    for path in removed.paths:
        print(f"{verb} {shown(path)}")
    kept = f"; {removed.copies_kept} of them copies whose document stays under another path" \
        if removed.copies_kept else ""
    print(f"{'dry run: nothing was changed; ' if removed.dry_run else ''}{verb} {len(removed.paths)} "
          f"path{'s' if len(removed.paths) != 1 else ''}, {removed.documents} document"
          f"{'s' if removed.documents != 1 else ''} with their pages{kept}")
    for path in removed.unmatched:
        print(f"pdfindex: {shown(path)}: not in the index", file=sys.stderr)
    return EXIT_INCOMPLETE if removed.unmatched else 0
