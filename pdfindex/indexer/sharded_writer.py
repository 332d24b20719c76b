"""The writer of a sharded index: a PageWriter per shard, and the paths between them.

Each operation goes to the shard of its document (``shards.shard_of``). What
crosses shards is a path: a changed file is a new content, so its new version may
land in another shard than the old one, and a copy may replace another content.
One index's writer takes a path given to one document from any other that held it;
here every other shard is told to let it go (``PageWriter.release``), so no path
ends up on two documents. ``ShardRouter`` does this routing for both sharded
writers: this one, and ``shard_processes.ParallelShardedWriter``.

Each shard commits on its own when its batch is full; ``commit`` commits them all.
A failure in one shard cancels the others' batches: each shard's index is as its
last commit left it, so a document is in the index whole or not at all. A path
taken from a document in a shard that committed, for a document in a shard that
failed, is gone from both until the file is ingested again (the failure is
reported, and the next ingest sees the file as new).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pdfindex.contract.records import DocumentRecord, PageRecord

from .shards import ShardedIndex, shard_of
from .writer import Batch, PageWriter


def shard_index(ix: Callable[[], ShardedIndex], k: int) -> Callable[[], Any]:
    """Shard ``k`` of the index as it is at each lock (a reindex may switch it)."""
    return lambda: ix().shards[k]


class ShardRouter(Batch):
    """``PageWriter``'s operations, each sent to the shard of its document
    (``_to``); a path given to a document is released by every other shard."""

    def __init__(self, shards: int) -> None:
        self._shard_count = shards

    def _to(self, shard: int, how: str, *args: Any) -> None:
        """Have shard ``shard``'s PageWriter do ``how(*args)``."""
        raise NotImplementedError

    def _release_elsewhere(self, shard: int, path: object) -> None:
        if isinstance(path, str):
            for other in range(self._shard_count):
                if other != shard:
                    self._to(other, "release", path)

    def add(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        shard = shard_of(doc.doc_hash, self._shard_count)
        self._release_elsewhere(shard, doc.path)
        self._to(shard, "add", doc, pages)

    def add_path(self, doc_hash: str, path: str) -> None:
        shard = shard_of(doc_hash, self._shard_count)
        self._release_elsewhere(shard, path)
        self._to(shard, "add_path", doc_hash, path)

    def remove_path(self, doc_hash: str, path: str) -> None:
        self._to(shard_of(doc_hash, self._shard_count), "remove_path", doc_hash, path)

    def release(self, path: str) -> None:
        for shard in range(self._shard_count):
            self._to(shard, "release", path)

    def delete(self, doc_hash: str) -> None:
        self._to(shard_of(doc_hash, self._shard_count), "delete", doc_hash)


class ShardedWriter(ShardRouter):
    """``PageWriter``'s interface over the shards of one index, all written in
    this process."""

    def __init__(self, ix: Callable[[], ShardedIndex], batch_pages: int = 2000, lock_timeout: float = 30.0,
                 root: Path | str = "the index") -> None:
        self._writers = [PageWriter(shard_index(ix, k), batch_pages=batch_pages, lock_timeout=lock_timeout, root=root)
                         for k in range(len(ix().shards))]
        super().__init__(len(self._writers))

    @property
    def rejected(self) -> list[DocumentRecord]:
        return [record for writer in self._writers for record in writer.rejected]

    def _to(self, shard: int, how: str, *args: Any) -> None:
        getattr(self._writers[shard], how)(*args)

    def commit(self) -> None:
        for done, writer in enumerate(self._writers):
            try:
                writer.commit()
            except BaseException:
                for rest in self._writers[done + 1:]:
                    rest.cancel()
                raise

    def cancel(self) -> None:
        for writer in self._writers:
            writer.cancel()
