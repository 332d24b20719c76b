"""An index of N shards: N Whoosh indexes, written apart and searched as one.

One Whoosh index has one writer, and its commit is single-threaded Python: a
cluster's extraction outruns it at a few cores. A sharded generation holds N Whoosh
indexes (``shard-00`` ...), each with its own writer lock, so N writers can run at
once (``PageWriter`` per shard; ``ShardedWriter`` routes to them). A document, its
pages and its record live in one shard, chosen by its content hash
(``shard_of``), so a document is still committed whole or not at all.

Searching opens every shard's segments as one ``MultiReader``: document
frequencies, field lengths and document counts are summed over all of them, so
BM25 scores (and a search's hits) are those of one index holding the same pages;
only equal scores may come in another order (Whoosh breaks ties by document
number, which follows the shards).

The shard count is fixed when the index is created (``PDFINDEX_SHARDS``) and
stored in the generation's ``pdfindex.json``; ``reindex`` may change it. One shard
is the plain layout: the Whoosh index in the generation directory itself.
"""
from __future__ import annotations

import hashlib
from typing import Any

from whoosh.index import FileIndex, Index
from whoosh.reading import EmptyReader, MultiReader
from whoosh.searching import Searcher

#: A shard's directory inside its generation.
SHARD_FORMAT = "shard-{:02d}"


def shard_of(doc_hash: object, count: int) -> int:
    """The shard of a document: a stable hash of its content hash (the same in
    every process and on every host, unlike Python's ``hash``). A hash that is not
    text (which the writer turns into a failure record) goes to the first shard."""
    if count <= 1 or not isinstance(doc_hash, str):
        return 0
    digest = hashlib.blake2b(doc_hash.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def parts(ix: Index) -> list[FileIndex]:
    """The Whoosh indexes of an index: its shards, or the index itself."""
    return list(ix.shards) if isinstance(ix, ShardedIndex) else [ix]


class ShardedIndex(Index):
    """The shards of one generation as one read-only Whoosh index."""

    def __init__(self, shards: list[FileIndex]) -> None:
        self.shards = shards

    @property
    def schema(self) -> Any:
        return self.shards[0].schema

    def latest_generation(self) -> tuple[int, ...]:
        return tuple(shard.latest_generation() for shard in self.shards)

    def reader(self, reuse: Any = None) -> Any:
        leaves: list[Any] = []
        generations: list[int] = []
        for shard in self.shards:
            reader = shard.reader()
            generations.append(reader.generation())
            if isinstance(reader, MultiReader):
                leaves.extend(reader.readers)
            elif not isinstance(reader, EmptyReader):
                leaves.append(reader)
        if not leaves:
            return EmptyReader(self.schema)
        return MultiReader(leaves, generation=tuple(generations))

    def searcher(self, **kwargs: Any) -> Searcher:
        return Searcher(self.reader(), fromindex=self, **kwargs)

    def close(self) -> None:
        for shard in self.shards:
            shard.close()
