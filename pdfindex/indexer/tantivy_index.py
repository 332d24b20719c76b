"""``PageIndex`` for an index on Tantivy (``PageIndex(root)`` gives one where the
index says so: ``page_index``, docs/engines.md).

The directory, its generations, the trust checks, the index's id, its language
and the atomic switch are ``store``'s, as for Whoosh; what is read and written in
a generation is Tantivy's (``tantivy_schema``, ``tantivy_writer``,
``tantivy_search``). What this engine cannot do yet raises NotSupported, never
answers differently.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import tantivy

from pdfindex.contract.records import (
    DocumentRecord,
    ListFilters,
    Listing,
    SearchOptions,
    SearchResult,
    Stats,
    Status,
)

from . import store, tantivy_listing
from .consistency import check
from .marks import expand_terms
from .page_index import PageIndex
from .rebuild import reindex
from .schema import KIND_DOC, KIND_PAGE, doc_from_stored, fields_from_stored
from .search import estimated_postings
from .tantivy_lexicon import Lexicon
from .tantivy_schema import (
    NotSupported,
    count,
    create,
    matching,
    open_tantivy,
    reloaded,
    stored_of,
    to_document,
)
from .relaxed import relaxed_search
from .tantivy_search import run_search
from .tantivy_writer import TantivyWriter, holders, open_writer, stored_documents

__all__ = ["NotSupported", "TantivyPageIndex", "copy_into_new_generation", "create", "stored_source"]

ENGINE = "tantivy"


class TantivyPageIndex(PageIndex):
    """One index directory on Tantivy, with ``PageIndex``'s interface."""

    engine = ENGINE

    def __init__(self, root: Path, language: str | None = None, *, create: bool = True,
                 new_language: str = store.DEFAULT_LANGUAGE, new_shards: int = 1,
                 new_engine: str | None = None) -> None:
        self.root = Path(root)
        self._open(language, create, new_language, new_shards)

    def _open(self, language: str | None, create: bool, new_language: str = store.DEFAULT_LANGUAGE,
              new_shards: int = 1) -> None:
        path, self.language, _ = store.open_current(self.root, language, create, new_language, new_shards, ENGINE)
        with store.storage_faults(self.root, "opening the index"):
            self._tantivy = open_tantivy(path)
        self.path = path
        self._meta: bytes | None = None  # the commit self._tantivy was last reloaded to (``reloaded``)

    def _generation(self) -> tuple[Path, tantivy.Index, str]:
        """The current generation, reopened after a reindex switched to a new one."""
        target = store.current_target(self.root)
        if target is not None and target != self.path and target.resolve() != self.path.resolve():
            self._open(None, False)
        return self.path, self._tantivy, self.language

    def _committed(self) -> tuple[tantivy.Index, str]:
        """The current generation's index at its last commit (by any process), and its language."""
        path, index, language = self._generation()
        self._meta = reloaded(index, path, self._meta)
        return index, language

    def _searcher(self) -> Any:
        """A searcher of the last commit (by any process)."""
        return self._committed()[0].searcher()

    @property
    def _ix(self) -> NoReturn:
        raise NotSupported("this operation")

    @property
    def shards(self) -> int:
        return 1

    @contextmanager
    def _faults(self, doing: str) -> Iterator[None]:
        with store.storage_faults(self.root, doing):
            yield

    def _drop_searcher(self) -> None:
        """Nothing is kept open between searches but Tantivy's own reader."""

    # ---- writing --------------------------------------------------------------

    def writer(self, batch_pages: int = 2000, lock_timeout: float = 30.0, *,  # type: ignore[override]
               processes: bool = False) -> TantivyWriter:
        return TantivyWriter(self._generation, self.root, batch_pages=batch_pages, lock_timeout=lock_timeout)

    def shard_writer(self, shard: int, batch_pages: int = 2000,  # type: ignore[override]
                     lock_timeout: float = 30.0) -> TantivyWriter:
        if shard != 0:
            raise ValueError(f"{self.root}: no shard {shard} (the index has 1)")
        return self.writer(batch_pages, lock_timeout)

    def holders(self, paths: Any) -> dict[str, set[str]]:
        with self._faults("reading file records"):
            searcher, schema = self._searcher(), self._tantivy.schema
            return {path: holders(searcher, schema, path) for path in paths}

    # ---- reading ----------------------------------------------------------------

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        with self._faults("searching"):
            index, language = self._committed()
            return relaxed_search(lambda text, opts: run_search(index, language, text, opts), query,
                                  options or SearchOptions())

    def _lexicon(self) -> Any:
        """The index as the Whoosh-side readers of terms see it (``tantivy_lexicon``)."""
        return Lexicon(self._searcher(), self._tantivy.schema, self.language)

    def terms_to_mark(self, query: str, timeout: float = 5.0) -> frozenset[str]:
        with self._faults("reading the index for the words to mark"):
            return expand_terms(self._lexicon(), query, time.monotonic() + timeout)

    def estimated_postings(self, query: str, options: SearchOptions | None = None) -> int | None:
        with self._faults("estimating a search"):
            return estimated_postings(self._lexicon(), query, options or SearchOptions())

    def list_documents(self, filters: ListFilters | None = None, limit: int | None = None,
                       offset: int = 0) -> Listing:
        with self._faults("listing documents"):
            return tantivy_listing.list_documents(self._searcher(), self._tantivy.schema, filters or ListFilters(),
                                                  limit, offset)

    def list_pages(self, filters: ListFilters | None = None, limit: int | None = None, offset: int = 0) -> Listing:
        with self._faults("listing pages"):
            return tantivy_listing.list_pages(self._searcher(), self._tantivy.schema, filters or ListFilters(),
                                              limit, offset)

    def _all(self, query: tantivy.Query) -> list[dict[str, Any]]:
        searcher = self._searcher()
        return [stored_of(searcher.doc(address)) for address in matching(searcher, query)]

    def _kind(self, kind: str) -> tantivy.Query:
        return tantivy.Query.term_query(self._tantivy.schema, "kind", kind)

    def document(self, doc_hash: str) -> DocumentRecord | None:
        with self._faults("reading a file record"):
            schema = self._tantivy.schema
            found = self._all(tantivy.Query.boolean_query([
                (tantivy.Occur.Must, tantivy.Query.term_query(schema, "key", doc_hash)),
                (tantivy.Occur.Must, self._kind(KIND_DOC))]))
        return doc_from_stored(found[0]) if found else None

    def documents(self, status: Status | None = None) -> Iterator[DocumentRecord]:
        with self._faults("reading file records"):
            records = [doc_from_stored(stored) for stored in self._all(self._kind(KIND_DOC))]
        return (doc for doc in records if status is None or doc.status == status)

    def page_texts(self, doc_hash: str) -> dict[int, str]:
        with self._faults("reading page texts"):
            stored = stored_documents(self._searcher(), self._tantivy.schema, doc_hash)
        return {d["page"]: d.get("text", "") for d in stored if d.get("kind") == KIND_PAGE}

    def stats(self) -> Stats:
        """``PageIndex.stats``: the problem codes' pages counted by search, so
        deleted pages (still in Tantivy's term counts until a merge) are not."""
        documents, by_status, problem_documents = self._document_counts()
        with self._faults("counting pages"):
            searcher, schema = self._searcher(), self._tantivy.schema
            pages = count(searcher, self._kind(KIND_PAGE))
            problem_pages: dict[str, int] = {}
            for code, _ in searcher.terms_with_prefix("problem", ""):
                if found := count(searcher, tantivy.Query.term_query(schema, "problem", code)):
                    problem_pages[code] = found
        return Stats(documents, pages, by_status, store.size_on_disk(self.root), str(self.root),
                     problem_pages=problem_pages, problem_documents=problem_documents, shard_pages=(pages,))

    def check(self) -> list[str]:
        """``consistency.check`` of the index's one shard."""
        with self._faults("checking the index"):
            return check([self._lexicon()])

    def reindex(self, language: str | None = None, batch_pages: int = 2000, shards: int | None = None) -> int:
        copied = reindex(self.root, language or self.language, batch_pages, shards=shards)
        self._generation()
        return copied


# ---- reindex (``rebuild``) ------------------------------------------------------------

@contextmanager
def stored_source(root: Path, old_path: Path, lock_timeout: float) -> Iterator[tuple[Iterator[dict[str, Any]], int]]:
    """The stored fields of every document of a Tantivy generation (and its shard
    count, 1), under its writer lock."""
    with store.storage_faults(root, "opening the index"):
        index = open_tantivy(old_path)
    lock = open_writer(index, lock_timeout, "another process is writing to the index; reindex when it is done")
    try:
        index.reload()  # what was committed before the lock was ours (the index was opened before)
        searcher = index.searcher()
        yield (stored_of(searcher.doc(address)) for address in matching(searcher, tantivy.Query.all_query())), 1
    finally:
        with contextlib.suppress(Exception):
            lock.rollback()
            lock.wait_merging_threads()


def copy_into_new_generation(root: Path, records: Iterable[dict[str, Any]], language: str, batch_pages: int,
                             shards: int) -> int:
    """A new Tantivy generation holding ``records`` (stored fields), switched to
    once whole; removed on any failure."""
    new_path, _ = store.new_generation(root, language, shards, ENGINE)
    copied = 0
    try:
        writer = open_writer(open_tantivy(new_path), 0.0, "another process is writing to the new index")
        try:
            for stored in records:
                writer.add_document(to_document(fields_from_stored(stored), language))
                copied += 1
                if copied % batch_pages == 0:
                    writer.commit()
            writer.commit()
        finally:
            writer.wait_merging_threads()
    except BaseException:
        store.remove_generation(root, new_path)
        raise
    store._tighten(root, new_path)
    store.switch_to(root, new_path)
    return copied
