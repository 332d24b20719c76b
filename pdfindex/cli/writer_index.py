"""Which index a client of a distributed set-up reads, said where it matters.

``search`` and ``list`` read the index at this machine's PDFINDEX_INDEX_DIR (or
``--index``). In distributed mode that must be the writer's index, as the shared
folder is mounted here; one that is not was searched silently before (issue 20).
They now say on stderr which index they read, and warn when it is not the writer's
(workers/status.py). Reading does no harm, so it is a warning, not a refusal:
``ingest`` and ``remove``, which write, refuse.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pdfindex.contract.display import shown
from pdfindex.workers.errors import BrokerError
from pdfindex.workers.status import which_index

if TYPE_CHECKING:
    from pdfindex.config import Settings
    from pdfindex.indexer import PageIndex


def say_which(index: PageIndex, settings: Settings, quiet: bool) -> None:
    """One line on stderr in distributed mode (none in embedded mode): the writer's
    index is read (unless ``quiet``), or a warning naming both indexes."""
    if not settings.broker_url:
        return
    index_id = index.identity()
    try:
        current, problem = which_index(index.root, index_id, settings)
    except BrokerError as exc:
        print(f"pdfindex: warning: reading the index at {shown(str(index.root))}, which may not be the writer's: "
              f"{exc}", file=sys.stderr)
        return
    if current is None:
        if not quiet:
            print(f"pdfindex: reading the index at {shown(str(index.root))} (no index writer has announced its "
                  "index on this broker yet)", file=sys.stderr)
    elif problem is not None:
        print(f"pdfindex: warning: {shown(problem)}", file=sys.stderr)
    elif not quiet:
        print(f"pdfindex: reading the writer's index {shown(str(index.root))} (id {str(index_id)[:12]})",
              file=sys.stderr)
