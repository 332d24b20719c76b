"""Limits of one extraction: an address-space cap held only while a file is
extracted, so the index writer (which may share a worker process) is never capped;
and the set-up of a new extraction process."""
from __future__ import annotations

import gc
import resource
from collections.abc import Iterator
from contextlib import contextmanager


def settle_process() -> None:
    """In a new extraction process: what it inherited from its parent (a Celery
    worker imports a great deal) goes out of the garbage collector's sight. Extraction
    makes objects fast enough to run the collector often, and each full collection
    walked all of them: the Celery worker's processes extracted 10-20 % slower than
    the embedded pool's."""
    gc.freeze()


def limit_memory(max_memory_mb: int) -> None:
    """Cap the address space, so a decompression bomb raises MemoryError in its
    own file's extraction instead of exhausting the machine (0: no cap)."""
    if max_memory_mb <= 0:
        return
    limit = max_memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


@contextmanager
def memory_cap(max_memory_mb: int) -> Iterator[None]:
    """``limit_memory`` for the duration of the block, then the previous soft limit
    again (lowering and restoring a soft limit needs no privilege)."""
    previous = resource.getrlimit(resource.RLIMIT_AS)
    limit_memory(max_memory_mb)
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, previous)
