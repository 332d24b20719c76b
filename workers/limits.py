"""Per-process limits of extraction workers, applied in each worker process."""
from __future__ import annotations

import resource


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
