"""The page index: a facade over Whoosh (package ``whoosh-reloaded``).

Nothing outside this package imports ``whoosh``: the rest of pdfindex speaks in
records (``pdfindex.contract``: documents, pages, hits) through ``PageIndex``, so
another engine could replace Whoosh here alone. Modules: ``page_index``
(``PageIndex``), ``analysis`` (tokens), ``schema`` (fields), ``store`` (directories,
generations), ``writer`` and ``writers`` (the single writer), ``search``,
``listing``, ``rebuild`` (``reindex``), ``consistency`` (``PageIndex.check``).

This face is light: the records are the contract's, and each name that needs
Whoosh is imported from its module when first asked for (``pdfindex.faces``), so
``from pdfindex.indexer import Status`` loads no engine. ``lean_import`` sees that
Whoosh, whenever it comes, comes without the imports no search uses.
"""
from __future__ import annotations

if __name__ != "pdfindex.indexer":  # the top-level indexer/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.indexer, not {__name__} (README, Layout)")

from typing import TYPE_CHECKING

from pdfindex.contract.records import (
    DocumentHits,
    DocumentRecord,
    Hit,
    ListFilters,
    Listing,
    PageRecord,
    SearchOptions,
    SearchResult,
    Span,
    Stats,
    Status,
)
from pdfindex.faces import lazy_names

from . import lean_import  # noqa: F401 - before anything imports Whoosh

if TYPE_CHECKING:
    from .errors import IndexBusy, QueryError, ReindexNeeded, SearchIndexError, StorageError, UntrustedIndex
    from .page_index import PageIndex, index_id
    from .rebuild import reindex
    from .shards import shard_of
    from .writers import IndexWriter

__all__ = [
    "DocumentHits",
    "DocumentRecord",
    "Hit",
    "IndexBusy",
    "IndexWriter",
    "ListFilters",
    "Listing",
    "PageIndex",
    "PageRecord",
    "QueryError",
    "ReindexNeeded",
    "SearchIndexError",
    "SearchOptions",
    "SearchResult",
    "Span",
    "Stats",
    "Status",
    "StorageError",
    "UntrustedIndex",
    "index_id",
    "reindex",
    "shard_of",
]

__getattr__ = lazy_names(__name__, {
    "PageIndex": "page_index", "index_id": "page_index", "reindex": "rebuild", "shard_of": "shards",
    "IndexWriter": "writers",
    **dict.fromkeys(("IndexBusy", "QueryError", "ReindexNeeded", "SearchIndexError", "StorageError",
                     "UntrustedIndex"), "errors"),
})
