"""``pdfindex worker``: a Celery worker of the distributed mode."""
from __future__ import annotations

import argparse
import sys

from pdfindex import config
from pdfindex.workers.app import app, shard_queues, startup_problem
from pdfindex.workers.lanes import is_writer_queue

from . import logs
from .errors import CliError


def cmd_worker(args: argparse.Namespace) -> int:
    """A thin wrapper over `celery -A pdfindex.workers.app worker`. A worker of writer
    queues only gets one process (a shard is written by one writer at a time), and
    one of shard queues (`index.K`) also takes `index`, to route what extraction
    hands off to the shards' lanes.

    The worker's start-up checks (broker reachable, roots, password file) run here
    first, so that a worker that cannot start ends as every command's error does:
    one line, exit 1 (the Celery app's own check, run again when Celery starts,
    exits 2, a bad command line to a script)."""
    settings = config.load()
    if not settings.broker_url:
        raise CliError("PDFINDEX_BROKER_URL is not set; the embedded mode needs no worker")
    problem = startup_problem(settings)
    if problem is not None:
        raise CliError(problem)
    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    try:
        shards = shard_queues(set(queues))
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if shards is not None and "index" not in queues:
        queues.insert(0, "index")  # a shard writer also routes the common lane to the shards' lanes
    writes = list(filter(is_writer_queue, queues))
    # -q: errors only. Otherwise INFO, a line per task (-v changes nothing; DEBUG on the root logger
    # would turn on pdfminer.six's line per token).
    level = "ERROR" if getattr(args, "quiet", False) else "INFO"
    argv = ["worker", "--queues", ",".join(queues), "--loglevel", level]
    if writes == queues:
        argv += ["--concurrency", "1"]
    elif args.concurrency:
        argv += ["--concurrency", str(args.concurrency)]
    if writes and writes != queues:
        print("pdfindex: note: this worker also writes the index; run its writer queues in a worker of "
              "their own (`--queues index`, or `--queues index.K` per shard)", file=sys.stderr)
    logs.hand_over()
    app.worker_main(argv + [a for a in args.celery_args if a != "--"])
    return 0
