"""Finding PDFs, hashing them, reading them safely, reading the password file."""
from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import IngestError, OutsideRoots

_MAGIC_WINDOW = 1024  # §7.5.2 puts the header first; readers accept junk before it


def is_pdf(path: Path) -> bool:
    """By content, not by name: a PDF has "%PDF-" near its start."""
    try:
        with path.open("rb") as fh:
            return b"%PDF-" in fh.read(_MAGIC_WINDOW)
    except OSError:
        return False


@dataclass(slots=True)
class Skipped:
    """What ``find_pdfs`` passed over, for the summary: a user who forgot
    ``--recursive`` or pointed at the wrong folder should see it, not a silent 0."""

    #: files that are neither named ``*.pdf`` nor start like a PDF
    non_pdf: int = 0
    #: sub-folders of a folder argument, not entered without ``recursive``
    folders: int = 0
    #: arguments that do not exist (a deleted file, an unmounted share)
    missing: list[Path] = field(default_factory=list)


def find_pdfs(paths: Iterable[Path], recursive: bool, skipped: Skipped | None = None) -> Iterator[Path]:
    """PDF files among ``paths`` (files as given, folders listed, recursively when
    asked), each once, in a stable order, as absolute paths. A file is a PDF by its
    content, or by its name: a broken "x.pdf" is ingested so that its failure is
    recorded rather than silently passed over. What is passed over (non-PDF files,
    folders not entered, arguments that do not exist) is counted in ``skipped``."""
    skipped = skipped if skipped is not None else Skipped()
    seen: set[Path] = set()
    for root in paths:
        root = root.absolute()
        if root.is_dir():
            walker = root.rglob("*") if recursive else root.iterdir()
            entries = sorted(walker)
            candidates = [p for p in entries if p.is_file()]
            if not recursive:
                skipped.folders += sum(1 for p in entries if p.is_dir())
        elif not os.path.lexists(root):
            skipped.missing.append(root)
            continue
        else:
            candidates = [root]
        for path in candidates:
            if path in seen:
                continue
            if path.suffix.lower() == ".pdf" or is_pdf(path):
                seen.add(path)
                yield path
            else:
                seen.add(path)
                skipped.non_pdf += 1


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class FileRead:
    """A file's bytes with the hash and identity of exactly those bytes."""

    data: bytes
    doc_hash: str
    size: int
    mtime: float


#: Reads of a file that changes while it is read, before it is given up.
_READ_TRIES = 3


def _under(real: str, roots: Sequence[Path]) -> bool:
    for root in roots:
        top = os.path.realpath(root)
        if real == top or real.startswith(top.rstrip("/") + "/"):
            return True
    return False


def check_under_roots(path: Path, roots: Sequence[Path]) -> None:
    """Raise ``OutsideRoots`` unless ``path``, symlinks resolved, lies under a root.
    A cheap early check (before a file is even opened); ``read_pdf`` checks again
    on the opened file, which no symlink swapped in meanwhile can escape."""
    if not _under(os.path.realpath(path), roots):
        raise OutsideRoots(f"{path}: outside the configured roots (PDFINDEX_ROOTS); not read")


def _opened_path(fd: int, path: Path) -> str:
    """The real path of an open descriptor: what was opened, not what the name
    points to now."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc: the name's real path, checked right after opening
        return os.path.realpath(path)


def read_pdf(path: Path, roots: Sequence[Path] | None = None) -> FileRead:
    """Read a file once, for hashing and parsing the same bytes: the hash recorded
    for a document is always the hash of the text extracted from it. A file that
    changes while it is read (size or mtime differ before and after) is read again.

    With ``roots``, the opened file's real path must lie under one of them, else
    ``OutsideRoots``: a queue message cannot make a worker read outside its folders.
    Only regular files are read (a FIFO named x.pdf would block a worker for good).
    Raises OSError for a file that cannot be read or keeps changing."""
    for _ in range(_READ_TRIES):
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            if roots is not None and not _under(_opened_path(fd, path), roots):
                raise OutsideRoots(f"{path}: outside the configured roots (PDFINDEX_ROOTS); not read")
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode):
                raise OSError(f"{path}: not a regular file")
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read()
            after = os.fstat(fd)
        finally:
            os.close(fd)
        if before.st_size == after.st_size == len(data) and before.st_mtime_ns == after.st_mtime_ns:
            return FileRead(data, hashlib.sha256(data).hexdigest(), after.st_size, after.st_mtime)
    raise OSError(f"{path}: the file kept changing while it was read; try again when it is complete")


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


def check_roots(paths: Iterable[Path], roots: Sequence[Path]) -> None:
    """The client's side of PDFINDEX_ROOTS: refuse, before anything is hashed or
    enqueued, to ingest a path the workers would refuse to read. Raises IngestError
    (no roots set) or OutsideRoots naming the first path outside them."""
    if not roots:
        raise IngestError("PDFINDEX_ROOTS is not set: in distributed mode workers read only files under these "
                          f"folders (absolute paths separated by {os.pathsep!r}); set it, the same as the workers'")
    outside = []
    for path in paths:
        try:
            check_under_roots(Path(path).absolute(), roots)
        except OutsideRoots:
            outside.append(path)
    if outside:
        more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
        raise OutsideRoots(f"{outside[0]}: outside PDFINDEX_ROOTS ({os.pathsep.join(map(str, roots))})"
                           f"{more}; the workers would not read it")
