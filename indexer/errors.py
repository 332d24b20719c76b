"""Errors of the index facade; each message says what to do."""
from __future__ import annotations


class SearchIndexError(Exception):
    """Base class of index errors."""


class QueryError(SearchIndexError):
    """The query cannot be parsed or run."""


class IndexBusy(SearchIndexError):
    """Another process holds the index's single writer lock."""


class ReindexNeeded(SearchIndexError):
    """The index was written with another schema version or language."""
