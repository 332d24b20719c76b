"""What the commands that use the index share: opening it (``--index`` or
PDFINDEX_INDEX_DIR), and the errors of the layers below as the CLI's one-line
errors with their exit statuses."""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from pdfindex import config
from pdfindex.contract.display import shown
from pdfindex.indexer import PageIndex, QueryError, SearchIndexError, StorageError
from pdfindex.workers.errors import IngestError

from .errors import EXIT_STORAGE, EXIT_USAGE, CliError
from .writer_index import say_which


@contextmanager
def user_errors() -> Iterator[None]:
    """The index's, the settings' and the ingestion's errors as CliError: a fault
    of the index's storage exits 4, a bad query 2 (a bad command line), the rest 1."""
    try:
        yield
    except StorageError as exc:
        raise CliError(str(exc), EXIT_STORAGE) from None
    except QueryError as exc:  # a bad query is a bad command line
        raise CliError(str(exc), EXIT_USAGE) from None
    except (SearchIndexError, config.SettingsError, IngestError) as exc:
        raise CliError(str(exc)) from None


def open_index(args: argparse.Namespace, *, reading: bool = False) -> PageIndex:
    """The index of ``--index`` or PDFINDEX_INDEX_DIR. ``reading`` (search, list): in
    distributed mode, say on stderr whether it is the writer's (cli/writer_index.py)."""
    settings = config.load()
    root = args.index or settings.index_dir
    try:
        # searched in the language it was built with
        index = PageIndex(root, None, create=False)
    except FileNotFoundError:
        raise CliError(f"no index at {shown(str(root))}; ingest some PDFs first (or pass --index)") from None
    if reading:
        say_which(index, settings, getattr(args, "quiet", False))
    return index
