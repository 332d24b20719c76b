"""``pdfindex ingest``, ``worker`` and ``status``: filling the index and watching it.

Without ``PDFINDEX_BROKER_URL`` ingest runs embedded (a local process pool, this
process writing the index); with it, files go to Celery workers.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from pdfindex import config
from .errors import EXIT_INTERRUPTED, CliError
from .search_cmd import _index_arg, _user_errors, path_arg
from .terminal import shown

if TYPE_CHECKING:
    from pdfindex.workers.progress import Summary


def add_commands(sub: Any) -> None:
    p = sub.add_parser("ingest", help="extract PDFs and add their pages to the index")
    p.add_argument("paths", nargs="+", type=path_arg)
    p.add_argument("--recursive", "-r", action="store_true", help="descend into folders")
    p.add_argument("--password-file", type=path_arg, help="passwords to try on encrypted files, one a line")
    p.add_argument("--workers", type=int, help="extraction processes (default: CPU cores; embedded mode)")
    p.add_argument("--prune", action="store_true", help="remove indexed documents whose files are gone")
    _index_arg(p)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("worker", help="run a Celery worker (needs PDFINDEX_BROKER_URL)")
    p.add_argument("--queues", default="extract,index",
                   help="queues to consume: extract (extraction) and/or index (the single index writer)")
    p.add_argument("--concurrency", type=int, help="worker processes (the index queue always uses one)")
    p.add_argument("celery_args", nargs=argparse.REMAINDER, help="more arguments for `celery worker`")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("status", help="documents by status, failures with reasons, queue depth")
    p.add_argument("--json", action="store_true")
    _index_arg(p)
    p.set_defaults(func=cmd_status)


def cmd_ingest(args: argparse.Namespace) -> int:
    from pdfindex.indexer import PageIndex  # noqa: PLC0415 - keep Whoosh out of `pdfindex extract`
    from pdfindex.workers.files import read_passwords  # noqa: PLC0415
    from pdfindex.workers.plan import make_plan, record_copies  # noqa: PLC0415
    from pdfindex.workers.progress import Progress, Summary  # noqa: PLC0415

    with _user_errors():
        settings = config.load()
        for path in args.paths:
            if not path.exists():
                raise CliError(f"{path}: no such file or folder")
        try:
            passwords = read_passwords(args.password_file)
        except OSError as exc:
            raise CliError(f"{args.password_file}: cannot read password file: {exc.strerror}") from None
        if settings.broker_url or settings.roots:
            from pdfindex.workers.distributed import check_roots  # noqa: PLC0415

            check_roots(args.paths, settings)  # before anything is hashed: the files would be refused
        # An existing index keeps its own language; PDFINDEX_LANGUAGE is for a new one.
        index = PageIndex(args.index or settings.index_dir, new_language=settings.language)
        plan = make_plan(index, args.paths, args.recursive, retry_encrypted=bool(passwords), prune=args.prune)
        summary = Summary(unchanged=plan.unchanged + plan.duplicates, duplicates=plan.duplicates)
        if plan.gone:
            with index.writer() as writer:
                for doc in plan.gone:
                    writer.delete(doc.doc_hash)
            summary.pruned = len(plan.gone)
        progress = Progress(len(plan.jobs), summary)
        try:
            if settings.broker_url:
                from pdfindex.workers.distributed import run_distributed  # noqa: PLC0415

                run_distributed(index, plan.jobs, args.password_file, settings, summary, progress)
            else:
                from pdfindex.workers.embedded import run_embedded  # noqa: PLC0415

                run_embedded(index, plan.jobs, passwords, settings, summary, progress,
                             args.workers or settings.workers)
            record_copies(index, plan)  # copies of content this run indexed get their paths
        finally:
            progress.close()
    print(render_summary(summary))
    return EXIT_INTERRUPTED if summary.interrupted else 0


def render_summary(summary: Summary) -> str:
    """The end-of-run report; file names and reasons escaped for the terminal."""
    elapsed = time.monotonic() - summary.started
    rate = summary.pages / elapsed if elapsed > 0 else 0.0
    coverage = f"{sum(summary.coverages) / len(summary.coverages):.3f}" if summary.coverages else "n/a"
    lines = [
        "interrupted: the index holds everything committed so far; run the same command again to resume"
        if summary.interrupted else "done",
        f"  files indexed:        {summary.indexed}" + (f" (+{summary.empty} without text)" if summary.empty else ""),
        f"  skipped as unchanged: {summary.unchanged}"
        + (f" ({summary.duplicates} of them copies of other indexed files)" if summary.duplicates else ""),
        f"  failed:               {len(summary.failed) + len(summary.encrypted)}",
        f"  pages:                {summary.pages} ({rate:.1f} pages/s over {elapsed:.1f} s)",
        f"  mean coverage:        {coverage}",
        f"  pages needing OCR:    {summary.needs_ocr}",
    ]
    if summary.pruned:
        lines.append(f"  pruned (files gone):  {summary.pruned}")
    lines += [f"  FAILED {shown(path)}: {shown(reason)}" for path, reason in summary.encrypted + summary.failed]
    return "\n".join(lines)


def cmd_worker(args: argparse.Namespace) -> int:
    """A thin wrapper over `celery -A pdfindex.workers.app worker`; the index queue gets a
    worker of its own with one process, since only one may write the index."""
    from pdfindex.workers.app import app  # noqa: PLC0415

    settings = config.load()
    if not settings.broker_url:
        raise CliError("PDFINDEX_BROKER_URL is not set; the embedded mode needs no worker")
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    argv = ["worker", "--queues", ",".join(queues), "--loglevel", "INFO"]
    if queues == ["index"]:
        argv += ["--concurrency", "1"]
    elif args.concurrency:
        argv += ["--concurrency", str(args.concurrency)]
    if "index" in queues and queues != ["index"]:
        print("pdfindex: note: this worker also writes the index; run only one worker that consumes the "
              "index queue", file=sys.stderr)
    app.worker_main(argv + [a for a in args.celery_args if a != "--"])
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """``stats``'s report with the queue depths and failures spelled out."""
    from .search_cmd import cmd_status as status  # noqa: PLC0415

    return status(args)
