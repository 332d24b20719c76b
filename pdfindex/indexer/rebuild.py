"""Rebuilding an index from its stored fields (``pdfindex reindex``): after a schema
or analyzer change, or to change its language, shard count or engine. No PDF is
extracted again; the new generation is built beside the old one and swapped in
atomically. Both engines store the same fields (``schema.fields_from_stored``
rebuilds a document from them), so either one's generation is copied into
either; the Tantivy side's reading and writing is ``tantivy_index``'s."""
from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from whoosh.util.filelock import try_for

from . import store
from .engines import tantivy_engine
from .errors import IndexBusy, StorageError
from .merge import tiered_merge
from .schema import fields_from_stored
from .segment_writer import PageSegmentWriter
from .shards import parts, shard_of


def reindex(root: Path, language: str | None = None, batch_pages: int = 2000, lock_timeout: float = 30.0,
            shards: int | None = None, engine: str | None = None) -> int:
    """``PageIndex.reindex`` for an index that this version cannot open any more.
    ``language`` None keeps the index's own, ``shards`` None its shard count,
    ``engine`` None its engine. Holds the old generation's writer locks
    throughout, so no commit is lost. Only ``gen-*`` directories directly inside
    the root are ever written or removed."""
    root = Path(root)
    if language is not None:
        store.check_language(language)
    if shards is not None:
        store.check_shards(shards)
    if engine is not None:
        store.check_engine(engine)
    with store.storage_faults(root, "reindexing"):
        old_path = store.trusted_generation(root)
        if old_path is None:
            raise StorageError(f"{root}: no index to rebuild; ingest files first")
        language = language or store.stored_language(root) or store.DEFAULT_LANGUAGE
        old_engine = store.stored_engine(root) or store.DEFAULT_ENGINE
        engine = engine or old_engine
        source = _whoosh_source if old_engine == "whoosh" else tantivy_engine().stored_source
        with source(root, old_path, lock_timeout) as (records, old_shards):
            shards = shards or old_shards
            if engine == "whoosh":
                copied = _copy_into_new_generation(root, records, language, batch_pages, shards)
            else:
                copied = tantivy_engine().copy_into_new_generation(root, records, language, batch_pages, shards)
        store.remove_generation(root, old_path)
    return copied


@contextlib.contextmanager
def _whoosh_source(root: Path, old_path: Path, lock_timeout: float) -> Iterator[tuple[Iterator[dict[str, Any]], int]]:
    """The stored fields of every document of a Whoosh generation, and its shard
    count, under its writer locks."""
    old = store.open_generation(root, old_path)
    old_shards = parts(old)
    locks = []
    try:
        for shard in old_shards:
            lock = shard.lock("WRITELOCK")
            if not try_for(lock.acquire, timeout=lock_timeout, delay=0.1):
                raise IndexBusy("another process is writing to the index; reindex when it is done")
            locks.append(lock)
        with old.searcher() as searcher:
            yield searcher.all_stored_fields(), len(old_shards)
    finally:
        for lock in locks:
            lock.release()


def _copy_into_new_generation(root: Path, records: Iterable[dict[str, Any]], language: str, batch_pages: int,
                              shards: int) -> int:
    new_path, new = store.new_generation(root, language, shards)
    assert new is not None  # a Whoosh generation
    targets = parts(new)
    for target in targets:
        target.storage.tracked = []  # closed on failure: open files would keep a full disk full
    copied = 0
    writers: list[PageSegmentWriter | None] = [None] * len(targets)
    counts = [0] * len(targets)
    try:
        for stored in records:
            doc_hash = stored.get("doc_hash")
            k = shard_of(doc_hash, len(targets))
            writer = writers[k]
            if writer is None:
                writer = writers[k] = PageSegmentWriter(targets[k])
            writer.add_document(**fields_from_stored(stored))
            copied += 1
            counts[k] += 1
            if counts[k] % batch_pages == 0:
                writer.commit(mergetype=tiered_merge)
                writers[k] = None
        for writer in writers:
            if writer is not None:
                writer.commit(mergetype=tiered_merge)
    except BaseException:
        for writer in writers:
            with contextlib.suppress(Exception):
                if writer is not None and not writer.is_closed:
                    writer.cancel()
        for target in targets:
            store.close_tracked(target.storage, only_removed=False)
        store.remove_generation(root, new_path)
        raise
    for target in targets:
        target.storage.tracked = None
    store.switch_to(root, new_path)
    return copied
