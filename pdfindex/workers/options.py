"""How to ingest and remove: the options of ``api.ingest``, ``api.prune`` and
``api.remove``, each with the CLI's default."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pdfindex import config


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How to ingest; every field has the CLI's default."""

    #: the index folder; None: ``settings.index_dir`` (PDFINDEX_INDEX_DIR)
    index_dir: Path | None = None
    #: descend into sub-folders of folder arguments
    recursive: bool = False
    #: passwords to try on encrypted files, one a line; also makes a run retry the
    #: encrypted files. None: the embedded pool uses PDFINDEX_PASSWORD_FILE if set.
    password_file: Path | None = None
    #: extraction processes (embedded mode); None: ``settings.workers``
    workers: int | None = None
    #: take off the index the files that are gone, among those the paths cover
    prune: bool = False
    #: extract again the files that failed or were encrypted, though unchanged
    retry_failed: bool = False
    #: extract again every file, though unchanged (after an extraction fix)
    force: bool = False
    #: plan only: list what would be indexed and pruned, change nothing
    dry_run: bool = False
    #: the settings; None: ``config.load()`` (the environment)
    settings: config.Settings | None = None


@dataclass(frozen=True, slots=True)
class RemoveOptions:
    index_dir: Path | None = None
    #: list what would be removed, change nothing
    dry_run: bool = False
    settings: config.Settings | None = None
