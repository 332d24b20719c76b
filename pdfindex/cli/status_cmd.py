"""``pdfindex status`` and ``stats``: documents by status, pages, failures, problem
counts and size of the index, and with a broker its queues and writer."""
from __future__ import annotations

import argparse
from typing import Any

from pdfindex import config
from pdfindex.contract.display import shown
from pdfindex.workers.status import status_report

from .index_access import open_index, user_errors
from .terminal import write_json


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB"):
        if value < 1000:
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def cmd_status(args: argparse.Namespace) -> int:
    """The counts with the queues, the writer and every failure spelled out."""
    return _show(args, detailed=True)


def cmd_stats(args: argparse.Namespace) -> int:
    """The short form: the same report (and JSON), the counts only."""
    return _show(args, detailed=False)


def _show(args: argparse.Namespace, detailed: bool) -> int:
    with user_errors(), open_index(args) as index:
        report = status_report(index, config.load())
    if args.json:
        write_json(report)
        return 0
    _print_counts(report, size_inline=detailed)
    if not detailed:
        return 0
    if report["queues"] is not None:
        print("queues:    " + "  ".join(f"{k}: {v}" for k, v in report["queues"].items()))
        print(f"writer:    {_writer_line(report)}")
    for failure in report["failures"]:
        print(f"  {failure['status']} {shown(failure['path'])}: {shown(failure['error'])} "
              f"(attempts: {failure['attempts']})")
    return 0


def _writer_line(report: dict[str, Any]) -> str:
    """The index the broker's writer announced, and whether it is this one."""
    writer = report["writer_index"]
    if writer is None:
        return "no index writer has started on this broker yet"
    line = (f"{shown(writer['path'])} on {shown(writer['host'])} (id {writer['id'][:12]}), "
            f"{'running' if writer['running'] else 'not running'}")
    if writer["id"] != report["index_id"]:
        line += " - NOT this index: set PDFINDEX_INDEX_DIR to the writer's index folder"
    return line


def _count(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def _print_counts(report: dict[str, Any], size_inline: bool) -> None:
    size = human_size(report["size_bytes"])
    print(f"index:     {shown(report['location'])}" + (f" ({size})" if size_inline else "")
          + (f"  id {report['index_id'][:12]}" if report["index_id"] else ""))
    print(f"documents: {report['documents']}"
          + "".join(f"  {k}: {v}" for k, v in sorted(report["by_status"].items())))
    shards = report["shard_pages"]
    print(f"pages:     {report['pages']}" + (f"  in {len(shards)} shards: {', '.join(map(str, shards))}"
                                              if len(shards) > 1 else ""))
    if report["problems"]:
        print("problems:  " + "  ".join(f"{code}: {_count(c['pages'], 'page')} in {_count(c['documents'], 'document')}"
                                        for code, c in report["problems"].items())
              + "  (pdfindex list --pages --problems [CODE])")
    print(f"language:  {shown(report['language'])}")
    print(f"engine:    {report['engine']}")
    if not size_inline:
        print(f"size:      {size}")
