"""Rebuilding an index from its stored fields (``pdfindex reindex``): after a schema
or analyzer change, or to change its language or shard count. No PDF is extracted
again; the new generation is built beside the old one and swapped in atomically."""
from __future__ import annotations

import contextlib
from pathlib import Path

from whoosh.index import Index
from whoosh.util.filelock import try_for

from . import store
from .errors import IndexBusy, StorageError
from .merge import tiered_merge
from .schema import fields_from_stored
from .segment_writer import PageSegmentWriter
from .shards import parts, shard_of


def reindex(root: Path, language: str | None = None, batch_pages: int = 2000, lock_timeout: float = 30.0,
            shards: int | None = None) -> int:
    """``PageIndex.reindex`` for an index that this version cannot open any more.
    ``language`` None keeps the index's own, ``shards`` None its shard count. Holds
    the old generation's writer locks throughout, so no commit is lost. Only
    ``gen-*`` directories directly inside the root are ever written or removed."""
    root = Path(root)
    if language is not None:
        store.check_language(language)
    if shards is not None:
        store.check_shards(shards)
    with store.storage_faults(root, "reindexing"):
        old_path = store.trusted_generation(root)
        if old_path is None:
            raise StorageError(f"{root}: no index to rebuild; ingest files first")
        language = language or store.stored_language(root) or store.DEFAULT_LANGUAGE
        old = store.open_generation(root, old_path)
        old_shards = parts(old)
        locks = []
        try:
            for shard in old_shards:
                lock = shard.lock("WRITELOCK")
                if not try_for(lock.acquire, timeout=lock_timeout, delay=0.1):
                    raise IndexBusy("another process is writing to the index; reindex when it is done")
                locks.append(lock)
            copied = _copy_into_new_generation(root, old, language, batch_pages, shards or len(old_shards))
        finally:
            for lock in locks:
                lock.release()
        store.remove_generation(root, old_path)
    return copied


def _copy_into_new_generation(root: Path, old: Index, language: str, batch_pages: int, shards: int) -> int:
    new_path, new = store.new_generation(root, language, shards)
    targets = parts(new)
    for target in targets:
        target.storage.tracked = []  # closed on failure: open files would keep a full disk full
    copied = 0
    writers: list[PageSegmentWriter | None] = [None] * len(targets)
    counts = [0] * len(targets)
    try:
        with old.searcher() as searcher:
            for stored in searcher.all_stored_fields():
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
