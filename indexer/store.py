"""Where the index lives on disk, and the atomic switch between generations.

``ROOT/current`` is a symlink to ``ROOT/gen-NNNNNN``, the Whoosh directory in use.
``reindex`` writes a new generation beside it and swaps the link with one
``os.replace``, so a reader sees either the old index or the new one, never a
half-built one. Each generation records its schema version and language in
``pdfindex.json``.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from whoosh import index as whoosh_index
from whoosh.index import Index

from .errors import ReindexNeeded
from .schema import SCHEMA_VERSION, build_schema

_META = "pdfindex.json"


def _current(root: Path) -> Path | None:
    link = root / "current"
    if not link.is_symlink() and not link.is_dir():
        return None
    target = link.resolve()
    return target if whoosh_index.exists_in(str(target)) else None


def current_target(root: Path) -> Path | None:
    """Where ``current`` points, without opening anything (cheap, per operation)."""
    try:
        return root / os.readlink(root / "current")
    except OSError:
        return None


def new_generation(root: Path, language: str) -> tuple[Path, Index]:
    """Create an empty Whoosh index in a fresh generation directory."""
    root.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.name[4:]) for p in root.glob("gen-*") if p.name[4:].isdigit()]
    path = root / f"gen-{max(numbers, default=0) + 1:06d}"
    path.mkdir()
    ix = whoosh_index.create_in(str(path), build_schema(language))
    (path / _META).write_text(json.dumps({"schema_version": SCHEMA_VERSION, "language": language}))
    return path, ix


def switch_to(root: Path, generation: Path) -> Path | None:
    """Point ``current`` at ``generation`` atomically; return the previous target."""
    previous = _current(root)
    tmp = root / f".current-{os.getpid()}"
    if tmp.is_symlink():
        tmp.unlink()
    tmp.symlink_to(generation.name)
    os.replace(tmp, root / "current")
    return previous


def open_index(root: Path, language: str, create: bool = True) -> tuple[Path, Index]:
    """Open the current generation, creating the first one when allowed."""
    path = _current(root)
    if path is None:
        if not create:
            raise FileNotFoundError(f"no index at {root}")
        path, ix = new_generation(root, language)
        switch_to(root, path)
        return path, ix
    meta = json.loads((path / _META).read_text()) if (path / _META).exists() else {}
    if meta.get("schema_version") != SCHEMA_VERSION or meta.get("language") != language:
        raise ReindexNeeded(
            f"the index at {root} was built with schema {meta.get('schema_version')} and language "
            f"{meta.get('language')!r}; this version uses schema {SCHEMA_VERSION} and language {language!r}: "
            "run `pdfindex reindex`"
        )
    return path, whoosh_index.open_dir(str(path))


def stored_language(root: Path) -> str | None:
    path = _current(root)
    if path is None or not (path / _META).exists():
        return None
    language = json.loads((path / _META).read_text()).get("language")
    return language if isinstance(language, str) else None


def remove_generation(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def size_on_disk(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink())
