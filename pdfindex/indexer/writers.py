"""Opening the index's writers: Whoosh's writing side and the shard processes,
imported on the first write (``PageIndex.writer``), never by a search."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from whoosh.index import Index

from .shard_processes import ParallelShardedWriter
from .sharded_writer import ShardedWriter, shard_index
from .shards import ShardedIndex
from .writer import PageWriter

#: What ``PageIndex.writer`` returns: each has PageWriter's interface.
IndexWriter: TypeAlias = PageWriter | ShardedWriter | ParallelShardedWriter


def open_writer(current: Callable[[], Index], root: Path, shards: int, *, batch_pages: int, lock_timeout: float,
                processes: bool) -> IndexWriter:
    """A PageWriter over ``current()``, or for a sharded index a ShardedWriter
    routing to one per shard (``processes``: a ParallelShardedWriter, a process a
    shard)."""
    if not isinstance(current(), ShardedIndex):
        return PageWriter(current, batch_pages=batch_pages, lock_timeout=lock_timeout, root=root)
    if processes:
        return ParallelShardedWriter(root, shards, batch_pages=batch_pages, lock_timeout=lock_timeout)
    return ShardedWriter(current, batch_pages=batch_pages, lock_timeout=lock_timeout, root=root)


def open_shard_writer(current: Callable[[], Index], root: Path, shards: int, shard: int, *, batch_pages: int,
                      lock_timeout: float) -> PageWriter:
    """The PageWriter of shard ``shard`` of ``shards`` alone."""
    if not 0 <= shard < shards:
        raise ValueError(f"{root}: no shard {shard} (the index has {shards})")
    ix = current if shards == 1 else shard_index(current, shard)
    return PageWriter(ix, batch_pages=batch_pages, lock_timeout=lock_timeout, root=root)
