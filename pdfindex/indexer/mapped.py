"""Segment files read through a memory map without being copied into memory.

Whoosh maps a compound segment file itself, then wraps each sub-file in a
``BufferFile``, whose stream is a ``BytesIO`` over the map: ``BytesIO`` copies
what it is given, so opening a searcher read the whole index into private memory
(600 MB and half a second at 50,000 pages; every one-search command paid it).
Here the storage maps the segment file and hands Whoosh a file whose ``subset``
(the path ``CompoundStorage`` takes when it does not map by itself) is a slice of
the same map: only what a query reads is paged in, from the page cache, and the
reads are memory slices as fast as the copy's.
"""
from __future__ import annotations

import mmap
import os
from contextlib import suppress
from typing import Any

from whoosh.filedb.structfile import BufferFile

#: Files mapped rather than read: Whoosh's compound segment files.
MAPPED_SUFFIX = ".seg"


class _ViewStream:
    """What ``BytesIO`` offers a ``StructFile`` (read, readline: ``pickle.load``
    wants both; seek, tell), over a memoryview and without copying it."""

    def __init__(self, view: memoryview) -> None:
        self._view = view
        self._pos = 0

    def read(self, size: int | None = -1) -> bytes:
        start = self._pos
        end = len(self._view) if size is None or size < 0 else min(start + size, len(self._view))
        self._pos = max(start, end)
        return bytes(self._view[start:end])

    def readline(self, size: int | None = -1) -> bytes:
        view, start = self._view, self._pos
        limit = len(view) if size is None or size < 0 else min(start + size, len(view))
        end = start
        while end < limit and view[end] != 0x0A:
            end += 1
        return self.read(min(end + 1, limit) - start)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        with suppress(BufferError):  # slices handed out still use it: freed with them
            self._view.release()


class MappedFile(BufferFile):
    """A read-only ``StructFile`` over a slice of a memory map; its subsets are
    slices too. The file that owns the map closes it (once no slice is left:
    a map with slices cannot close, and is then freed with the last of them)."""

    def __init__(self, view: memoryview, name: str | None = None, owner: mmap.mmap | None = None) -> None:
        # Not BufferFile.__init__: it would wrap the view in a copying BytesIO.
        self._buf = view
        self._name = name
        self._owner = owner
        self.file = _ViewStream(view)
        self.onclose = None
        self.is_real = False
        self.is_closed = False

    def subset(self, position: int, length: int, name: str | None = None) -> MappedFile:
        return MappedFile(self._buf[position:position + length], name=name or self._name)

    def close(self) -> None:
        super().close()
        if self._owner is not None:
            with suppress(BufferError):
                self._owner.close()


def open_mapped(path: str, name: str) -> Any:
    """The file at ``path`` as a ``MappedFile`` (an empty file cannot be mapped:
    it is read as an empty buffer)."""
    with open(path, "rb") as raw:
        if os.fstat(raw.fileno()).st_size == 0:
            return MappedFile(memoryview(b""), name=name)
        source = mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ)
    return MappedFile(memoryview(source), name=name, owner=source)
