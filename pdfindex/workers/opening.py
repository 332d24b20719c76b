"""The index an ingest, prune or removal works on: created for an ingest, which
fills it, and for nothing else; in distributed mode, first checked to be the index
the writer announced (``identity.py``): a client never plans or writes against
another."""
from __future__ import annotations

from pathlib import Path

from pdfindex import config
from pdfindex.indexer import PageIndex

from .errors import IngestError


class NoIndex(IngestError):
    """There is no index yet (and none is made for a dry run, a prune or a removal)."""


def open_index(root: Path, settings: config.Settings, dry_run: bool) -> PageIndex:
    """The index at ``root``, created unless ``dry_run``. An existing index keeps
    its own language; PDFINDEX_LANGUAGE is for a new one."""
    if settings.broker_url:
        from .identity import check_client  # noqa: PLC0415 - Redis only when a broker is used

        check_client(settings, root)
    try:
        return PageIndex(root, new_language=settings.language, create=not dry_run, new_shards=settings.shards)
    except FileNotFoundError:
        raise NoIndex(f"no index at {root}; ingest some PDFs first (or give the index folder)") from None
