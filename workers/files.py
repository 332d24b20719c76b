"""Finding PDFs, hashing them, reading the password file."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

_MAGIC_WINDOW = 1024  # §7.5.2 puts the header first; readers accept junk before it


def is_pdf(path: Path) -> bool:
    """By content, not by name: a PDF has "%PDF-" near its start."""
    try:
        with path.open("rb") as fh:
            return b"%PDF-" in fh.read(_MAGIC_WINDOW)
    except OSError:
        return False


def find_pdfs(paths: Iterable[Path], recursive: bool) -> Iterator[Path]:
    """PDF files among ``paths`` (files as given, folders listed, recursively when
    asked), each once, in a stable order, as absolute paths. A file is a PDF by its
    content, or by its name: a broken "x.pdf" is ingested so that its failure is
    recorded rather than silently passed over."""
    seen: set[Path] = set()
    for root in paths:
        root = root.absolute()
        if root.is_dir():
            walker = root.rglob("*") if recursive else root.iterdir()
            candidates = sorted(p for p in walker if p.is_file())
        else:
            candidates = [root]
        for path in candidates:
            if path not in seen and (path.suffix.lower() == ".pdf" or is_pdf(path)):
                seen.add(path)
                yield path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_passwords(path: Path | None) -> list[str]:
    """One password a line (blank lines ignored); tried in order on encrypted files."""
    if path is None:
        return []
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\r\n") for line in fh if line.strip()]


def file_identity(path: Path) -> tuple[int, float]:
    """Size and modification time: the cheap "unchanged?" check before hashing."""
    st = os.stat(path)
    return st.st_size, st.st_mtime
