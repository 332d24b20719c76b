"""Errors of the index facade; each message says what to do."""
from __future__ import annotations

import errno
import pickle
import struct
from pathlib import Path


class SearchIndexError(Exception):
    """Base class of index errors."""


class QueryError(SearchIndexError):
    """The query cannot be parsed or run. ``position`` is the 0-based offset in
    the query text of what is wrong, where it is known (the message gives it as
    a 1-based column), so a front end can point at it."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class IndexBusy(SearchIndexError):
    """Another process holds the index's single writer lock."""


class ReindexNeeded(SearchIndexError):
    """The index was written with another schema version or language."""


class StorageError(SearchIndexError):
    """The index cannot be read or written: disk full, read-only, permission denied,
    damaged metadata or table of contents. One line naming the index and the problem,
    and what to do about it."""


class UntrustedIndex(StorageError):
    """The index directory is refused before anything in it is read: Whoosh unpickles
    an index's files, so whoever can write them can run code as the user opening it."""


_SPACE = {errno.ENOSPC, errno.EDQUOT}
_DENIED = {errno.EACCES, errno.EPERM}


def short_line(text: object, limit: int = 120) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def storage_error(root: Path | str, doing: str, exc: BaseException, *, written: bool = False) -> StorageError:
    """The one-line StorageError for ``exc``, raised while ``doing`` on the index at
    ``root``. ``written`` says whether the operation was a commit, which leaves the
    index as it was before the batch."""
    nothing = "; nothing of this batch was written" if written else ""
    if isinstance(exc, OSError) and exc.errno in _SPACE:
        return StorageError(f"{root}: no space left on device while {doing}{nothing}; free space and re-run")
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return StorageError(f"{root}: the index is on a read-only file system ({doing}){nothing}; "
                            "remount it read-write or give another --index")
    if isinstance(exc, OSError) and exc.errno in _DENIED:
        where = f" ({short_line(exc.filename, 80)})" if exc.filename else ""
        return StorageError(f"{root}: permission denied while {doing}{where}{nothing}; the index must be "
                            "writable by the user running pdfindex (check its owner and mode)")
    if isinstance(exc, OSError):
        return StorageError(f"{root}: {short_line(exc.strerror or exc)} while {doing}{nothing}")
    if type(exc).__name__ == "ReadOnlyError":  # whoosh.store.ReadOnlyError
        return StorageError(f"{root}: the index was opened read-only ({doing})")
    return StorageError(f"{root}: the index is damaged ({type(exc).__name__}: {short_line(exc)}) while {doing}; "
                        "restore it from a backup, or delete it and ingest again")


def is_storage_fault(exc: BaseException) -> bool:
    """Faults of the disk or of the index's files (as opposed to our own bugs):
    what Whoosh raises reading a truncated or damaged file, and every OSError."""
    return isinstance(exc, OSError | EOFError | pickle.UnpicklingError | struct.error) or \
        type(exc).__name__ in {"ReadOnlyError", "EmptyIndexError", "IndexVersionError", "OutOfDateError"}
