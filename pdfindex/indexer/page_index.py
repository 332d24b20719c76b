"""``PageIndex``: one index directory, read and written through the facade.

Searching, listing, counting and checking are here; writing is handed to the
writers (``writers``), which a search never loads; rebuilding is ``rebuild``'s.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from whoosh.index import Index
from whoosh.query import Term
from whoosh.searching import Searcher

from pdfindex.contract.records import (
    DocumentRecord,
    ListFilters,
    Listing,
    PageRecord,
    SearchOptions,
    SearchResult,
    Stats,
    Status,
)

from pdfindex.config import index_engine

from . import listing, store
from .consistency import check
from .engines import tantivy_engine
from .errors import is_storage_fault
from .marks import expand_terms
from .rebuild import reindex
from .schema import KIND_DOC, KIND_PAGE, doc_from_stored, holders
from .relaxed import relaxed_search
from .search import estimated_postings, run_search
from .shards import parts

if TYPE_CHECKING:
    from .writer import PageWriter
    from .writers import IndexWriter


class PageIndex:
    """One index directory. Reading is safe from any number of processes; writing
    goes through ``writer()``, of which one may be open at a time across processes.

    Every method raises StorageError (one line: the index, the problem, what to do)
    for a disk or file fault, and UntrustedIndex for a directory another user owns
    or may write, refused before anything in it is read.

    An index on Tantivy is a ``tantivy_index.TantivyPageIndex``, which
    ``PageIndex(root)`` gives where the index's settings (or, for a new one,
    ``new_engine``) say so: callers never choose the engine's class."""

    #: The engine under this index (``status`` shows it; docs/engines.md).
    engine = "whoosh"

    def __new__(cls, root: Path, language: str | None = None, *, create: bool = True,
                new_language: str = store.DEFAULT_LANGUAGE, new_shards: int = 1,
                new_engine: str | None = None) -> PageIndex:
        engine = store.stored_engine(Path(root)) or (store.check_engine(new_engine or index_engine()) if create
                                                     else store.DEFAULT_ENGINE)
        if cls is PageIndex and engine != "whoosh":
            return super().__new__(tantivy_engine().TantivyPageIndex)
        return super().__new__(cls)

    def __init__(self, root: Path, language: str | None = None, *, create: bool = True,
                 new_language: str = store.DEFAULT_LANGUAGE, new_shards: int = 1,
                 new_engine: str | None = None) -> None:
        """``language`` None: the one stored in the index (``new_language`` for a new
        one); given: the index must be in it (else ReindexNeeded), or is created in it.
        ``new_shards``: the shard count of an index created here (an existing one
        keeps its own); ``new_engine`` its engine (None: PDFINDEX_ENGINE's)."""
        self.root = Path(root)
        self.path, self._whoosh, self.language = store.open_index(self.root, language, create=create,
                                                                  new_language=new_language, new_shards=new_shards)
        self._cached_searcher: Searcher | None = None
        self._cached_for: Index | None = None

    @property
    def shards(self) -> int:
        """How many shards the index has (1: not sharded)."""
        return len(parts(self._ix))

    def identity(self, *, create: bool = False) -> str | None:
        """The index's id, the same across generations and machines that share the
        folder: what tells a distributed set-up's writer and clients that they use one
        index (paths differ between machines, ids do not). ``create``: a writer gives
        one to an index made before ids existed; None there otherwise."""
        return store.index_id(self.root, create=create)

    @property
    def _ix(self) -> Index:
        """The Whoosh index of the current generation, reopened after a reindex
        (by this process or another) switched to a new one."""
        target = store.current_target(self.root)
        if target is not None and target != self.path and target.resolve() != self.path.resolve():
            self.path, self._whoosh, self.language = store.open_index(self.root, None, create=False)
        return self._whoosh

    # ---- writing --------------------------------------------------------------

    def writer(self, batch_pages: int = 2000, lock_timeout: float = 30.0, *,
               processes: bool = False) -> IndexWriter:
        """The index's writer (a PageWriter, or a ShardedWriter routing to one per
        shard); ``batch_pages`` is per shard. ``processes``: a sharded index's
        shards are written by a process each (``ParallelShardedWriter``), for bulk
        ingestion; it costs a process start per shard."""
        return _writing().open_writer(lambda: self._ix, self.root, self.shards, batch_pages=batch_pages,
                                      lock_timeout=lock_timeout, processes=processes)

    def shard_writer(self, shard: int, batch_pages: int = 2000, lock_timeout: float = 30.0) -> PageWriter:
        """The writer of one shard alone, for a writer that owns that shard only (a
        Celery shard writer, on any host that shares the index's filesystem). It
        takes only documents of its shard (``shard_of``); a path given to one is
        released here, in this shard, and nowhere else: the caller tells the others
        (``holders`` finds who holds it)."""
        return _writing().open_shard_writer(lambda: self._ix, self.root, self.shards, shard,
                                            batch_pages=batch_pages, lock_timeout=lock_timeout)

    def holders(self, paths: Iterable[str]) -> dict[str, set[str]]:
        """The documents that hold each of ``paths`` (as one of their paths), as
        committed: one searcher for them all."""
        with self._faults("reading file records"):
            searcher = self._searcher()
            return {path: holders(searcher, path) for path in paths}

    def add(self, doc: DocumentRecord, pages: list[PageRecord]) -> None:
        """Add or replace one document in a commit of its own."""
        with self.writer() as writer:
            writer.add(doc, pages)

    def delete_document(self, doc_hash: str) -> bool:
        """Remove a document's record and pages; False when it was not indexed."""
        if self.document(doc_hash) is None:
            return False
        with self.writer() as writer:
            writer.delete(doc_hash)
        return True

    # ---- reading ----------------------------------------------------------------

    @contextmanager
    def _faults(self, doing: str) -> Iterator[None]:
        """Storage faults as StorageError; and the files Whoosh opened for a read
        that failed on a damaged file are closed (it leaves them open)."""
        with store.storage_faults(self.root, doing):
            storages = [shard.storage for shard in parts(self._ix)]
            outer = [storage.tracked for storage in storages]
            for storage in storages:
                storage.tracked = []
            try:
                yield
            except Exception as exc:
                if is_storage_fault(exc):
                    for storage in storages:
                        store.close_tracked(storage, only_removed=False)
                    self._drop_searcher()
                raise
            finally:
                for storage, before in zip(storages, outer, strict=True):
                    mine, storage.tracked = storage.tracked, before
                    if before is not None and mine:
                        before.extend(mine)

    def close(self) -> None:
        """Close the searcher kept open between searches (its files, when the index
        is read without memory maps); the next search opens another."""
        self._drop_searcher()

    def __enter__(self) -> PageIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop_searcher(self) -> None:
        cached, self._cached_searcher = self._cached_searcher, None
        if cached is not None:
            with contextlib.suppress(Exception):
                cached.close()

    def search(self, query: str, options: SearchOptions | None = None) -> SearchResult:
        with self._faults("searching"):
            searcher = self._searcher()
            return relaxed_search(lambda text, opts: run_search(searcher, text, opts), query,
                                  options or SearchOptions())

    def terms_to_mark(self, query: str, timeout: float = 5.0) -> frozenset[str]:
        """The indexed page-text terms ``query`` would match, as the index holds them
        (folded and stemmed; a lone CJK character as itself): what a page image marks
        (``marks.expand_terms``). Raises QueryError for a query the search would
        refuse. Expansion stops at ``timeout`` seconds and at the search's term cap:
        a cut expansion marks fewer words, never wrong ones."""
        with self._faults("reading the index for the words to mark"):
            return expand_terms(self._searcher(), query, time.monotonic() + timeout)

    def estimated_postings(self, query: str, options: SearchOptions | None = None) -> int | None:
        """What ``search`` would cost, in postings walked (None: a listing); for a
        server to keep costly searches from holding back cheap ones."""
        with self._faults("estimating a search"):
            return estimated_postings(self._searcher(), query, options or SearchOptions())

    def list_documents(self, filters: ListFilters | None = None, limit: int | None = None,
                       offset: int = 0) -> Listing:
        """File records passing ``filters``, by path, without a query or scoring."""
        with self._faults("listing documents"):
            return listing.list_documents(self._searcher(), filters or ListFilters(), limit, offset)

    def list_pages(self, filters: ListFilters | None = None, limit: int | None = None, offset: int = 0) -> Listing:
        """Pages passing ``filters``, by path and page, without a query or scoring."""
        with self._faults("listing pages"):
            return listing.list_pages(self._searcher(), filters or ListFilters(), limit, offset)

    def _searcher(self) -> Searcher:
        """A searcher kept open between searches (opening one reads every segment's
        files, which cost more than a rare-term search), renewed when the index has
        changed. So a PageIndex is for one thread at a time."""
        ix = self._ix
        cached = self._cached_searcher
        if cached is None or self._cached_for is not ix or not cached.up_to_date():
            if cached is not None:
                cached.close()
            cached = self._cached_searcher = ix.searcher()
            self._cached_for = ix
        return cached

    def document(self, doc_hash: str) -> DocumentRecord | None:
        with self._faults("reading a file record"):
            stored = self._searcher().document(key=doc_hash)
        return doc_from_stored(stored) if stored else None

    def documents(self, status: Status | None = None) -> Iterator[DocumentRecord]:
        """File records, optionally of one status."""
        with self._faults("reading file records"), self._ix.searcher() as searcher:
            records = [doc_from_stored(stored) for stored in searcher.documents(kind=KIND_DOC)]
        return (doc for doc in records if status is None or doc.status == status)

    def page_texts(self, doc_hash: str) -> dict[int, str]:
        with self._faults("reading page texts"), self._ix.searcher() as searcher:
            return {d["page"]: d.get("text", "") for d in searcher.documents(doc_hash=doc_hash, kind=KIND_PAGE)}

    def _document_counts(self) -> tuple[int, dict[str, int], dict[str, int]]:
        """Documents, by status, and per problem code the documents with such a page,
        from the file records (what ``stats`` reports on either engine)."""
        by_status: dict[str, int] = {}
        problem_documents: dict[str, int] = {}
        documents = 0
        for doc in self.documents():
            documents += 1
            by_status[str(doc.status)] = by_status.get(str(doc.status), 0) + 1
            for code in doc.problems:
                problem_documents[code] = problem_documents.get(code, 0) + 1
        return documents, by_status, problem_documents

    def stats(self) -> Stats:
        """Counts for ``status``: documents by status, pages, and per problem code
        the pages that have it (from the ``problem`` postings, no stored page read)
        and the documents with such a page (from the file records' sums)."""
        documents, by_status, problem_documents = self._document_counts()
        with self._faults("counting pages"):
            shard_pages = tuple(self._shard_pages())
            problem_pages: dict[str, int] = {}
            with self._ix.searcher() as searcher:
                if "problem" in searcher.schema:
                    for term in searcher.reader().lexicon("problem"):
                        code = term.decode("utf-8")
                        count = sum(1 for _ in searcher.docs_for_query(Term("problem", code)))  # not deleted ones
                        if count:
                            problem_pages[code] = count
        return Stats(documents, sum(shard_pages), by_status, store.size_on_disk(self.root), str(self.root),
                     problem_pages=problem_pages, problem_documents=problem_documents, shard_pages=shard_pages)

    def _shard_pages(self) -> Iterator[int]:
        for shard in parts(self._ix):
            with shard.searcher() as searcher:
                yield len(searcher.search(Term("kind", KIND_PAGE), limit=None, scored=False))

    def check(self) -> list[str]:
        """Consistency (``consistency.check``): what is wrong, empty when fine."""
        with self._faults("checking the index"):
            return check(parts(self._ix))

    # ---- maintenance --------------------------------------------------------------

    def reindex(self, language: str | None = None, batch_pages: int = 2000, shards: int | None = None) -> int:
        """Rebuild from stored fields into a new generation with the current schema
        and analysis (and ``language``, and ``shards``), then switch to it
        atomically. Returns the number of Whoosh documents copied; no PDF is
        re-extracted."""
        self._drop_searcher()
        copied = reindex(self.root, language or self.language, batch_pages, shards=shards)
        self._ix  # noqa: B018 - reopens the new generation, with its language
        return copied


def index_id(root: Path) -> str | None:
    """The id of the index at ``root`` without opening it (PageIndex.identity), None
    where there is no index or one made before ids."""
    return store.index_id(Path(root))


def _writing() -> ModuleType:
    """The writers' module, imported on the first write."""
    from . import writers  # noqa: PLC0415 - the index writers (and shard processes): not in a search's start-up

    return writers
