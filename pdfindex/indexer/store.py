"""Where the index lives on disk, who may have written it, and the atomic switch
between generations.

``ROOT/current`` is a symlink to ``ROOT/gen-NNNNNN``, the Whoosh directory in use.
``reindex`` writes a new generation beside it and swaps the link with one
``os.replace``, so a reader sees either the old index or the new one, never a
half-built one. Each generation records its schema version, language and engine
(Whoosh or Tantivy: docs/engines.md) in ``pdfindex.json``. ``ROOT/index-id`` names the index itself, across generations:
distributed mode compares it, never a path, to tell two indexes apart.

An index is code: Whoosh unpickles its table of contents and stored fields, so
whoever can write those files can run code as the user who opens them. Before
anything is read, ``trusted_generation`` refuses a root, generation or file that
another user owns or may write, and a ``current`` link that leads anywhere but a
``gen-NNNNNN`` directly inside the root. What we create is private (directories
0700, files 0600, whatever the umask): the index holds the text of
password-protected PDFs.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile
from whoosh.index import TOC, FileIndex, clean_files
from whoosh.lang import has_stemmer, languages
from whoosh.util.filelock import FcntlLock

from pdfindex.config import ENGINES
from pdfindex.contract.limits import MAX_SHARDS

from .errors import (
    ReindexNeeded,
    SearchIndexError,
    StorageError,
    UntrustedIndex,
    is_storage_fault,
    storage_error,
)
from .mapped import MAPPED_SUFFIX, open_mapped
from .engines import tantivy_engine
from .schema import SCHEMA_VERSION, build_schema
from .shards import SHARD_FORMAT, ShardedIndex

_META = "pdfindex.json"
_ID = "index-id"
_ID_FORMAT = re.compile(r"[0-9a-f]{32}\Z")
INDEX_NAME = "MAIN"
_GENERATION = re.compile(r"gen-[0-9]{6,}\Z")
_TOC = re.compile(rf"_{INDEX_NAME}_([0-9]+)\.toc\Z")
_TOC_TEMP = re.compile(rf"_{INDEX_NAME}_[0-9]+\.toc\.[0-9.]+\Z")
_DIR_MODE, _FILE_MODE = 0o700, 0o600
_TANTIVY_META = "meta.json"
#: The engine of an index whose settings name none (made before engines existed).
DEFAULT_ENGINE = ENGINES[0]


# ---- private files ------------------------------------------------------------------

class _PrivateLock(FcntlLock):
    """Whoosh's flock lock, on a lock file created 0600."""

    def acquire(self, blocking: bool = False) -> bool:
        if not os.path.exists(self.filename):
            os.close(os.open(self.filename, os.O_CREAT | os.O_WRONLY, _FILE_MODE))
        return bool(super().acquire(blocking))


class PrivateStorage(FileStorage):
    """Whoosh's file storage creating every file 0600 and directory 0700, whatever
    the umask (changing the umask would be process-wide, so other threads' files too)."""

    #: Files created or opened through this storage (and its temporary ones) while
    #: a writer works or an index is being opened: what a failure leaves open is
    #: closed from here (Whoosh does not), else a full disk stays full.
    tracked: list[Any] | None = None

    def create_file(self, name: str, excl: bool = False, mode: str = "wb", **kwargs: Any) -> Any:
        flags = os.O_CREAT | os.O_RDWR | (os.O_EXCL if excl else os.O_TRUNC)
        fd = os.open(self._fpath(name), flags, _FILE_MODE)
        try:
            os.fchmod(fd, _FILE_MODE)  # an existing file keeps its mode through O_TRUNC
            fileobj = os.fdopen(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        return self._track(StructFile(fileobj, name=name, **kwargs), name)

    def open_file(self, name: str, **kwargs: Any) -> Any:
        if name.endswith(MAPPED_SUFFIX):  # mapped here, not copied (Whoosh's own mapping is off)
            return self._track(open_mapped(self._fpath(name), name), name)
        return self._track(super().open_file(name, **kwargs), name)

    def _track(self, opened: Any, name: str) -> Any:
        if self.tracked is not None:
            self.tracked.append((self._fpath(name), opened))
        return opened

    def temp_storage(self, name: str | None = None) -> PrivateStorage:
        path = os.path.join(self.folder, name or f"{INDEX_NAME}.tmp")
        make_private_dir(Path(path), exist_ok=True)
        temp = PrivateStorage(path)
        temp.tracked = self.tracked
        return temp

    def lock(self, name: str) -> _PrivateLock:
        return _PrivateLock(self._fpath(name))


def make_private_dir(path: Path, *, exist_ok: bool = False) -> None:
    """A directory only its owner can enter (mkdir's mode is filtered by the umask,
    hence the chmod)."""
    try:
        path.mkdir(mode=_DIR_MODE)
    except FileExistsError:
        if not exist_ok:
            raise
        return
    os.chmod(path, _DIR_MODE)


def _tighten(root: Path, generation: Path) -> None:
    """Indexes written before files were private: make them so, where we can
    (only taking group and other bits away: an owner's own read-only mode stays)."""
    for path in (root, generation):
        _private(path)
    for folder, dirs, files in os.walk(generation):  # does not follow links
        for name in [*dirs, *files]:
            _private(Path(folder) / name)


def _private(path: Path) -> None:
    try:
        st = os.lstat(path)
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid == os.geteuid() and not stat.S_ISLNK(st.st_mode) and mode & 0o077:
            os.chmod(path, mode & 0o700)
    except OSError:
        pass  # read-only file system, or not ours: the trust check has said what matters


# ---- trust ----------------------------------------------------------------------------

def _refuse(root: Path, what: str, why: str, fix: str) -> UntrustedIndex:
    return UntrustedIndex(
        f"{root}: refusing to open the index: {what} {why} (an index's files are unpickled, so whoever can "
        f"write them can run code as you); {fix}"
    )


def _check_owner_and_mode(root: Path, path: Path, st: os.stat_result, label: str) -> None:
    euid = os.geteuid()
    if st.st_uid != euid:
        raise _refuse(root, label, f"is owned by uid {st.st_uid}, not by you (uid {euid})",
                      f"if you trust it, `chown -R {euid} {root}`, else give another --index")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = " and ".join(name for name, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH))
                           if st.st_mode & bit)
        raise _refuse(root, label, f"is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})",
                      f"if you trust it, `chmod -R go-w {root}`, else give another --index")


def trusted_generation(root: Path) -> Path | None:
    """The generation ``current`` names, after checking the root, that generation
    and every file in it; None when there is no ``current`` yet. Nothing is opened
    for reading here, so nothing is unpickled before the check."""
    try:
        root_st = os.stat(root)  # the root itself may be a link the user made
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(root_st.st_mode):
        raise StorageError(f"{root}: not a directory; give an index directory with --index")
    _check_owner_and_mode(root, root, root_st, "the index directory")
    link = root / "current"
    try:
        link_st = os.lstat(link)
    except FileNotFoundError:
        return None
    if not stat.S_ISLNK(link_st.st_mode):
        raise _refuse(root, "`current`", "is not a link to a generation directory",
                      f"remove {link} if you did not make it")
    target = os.readlink(link)
    if not _GENERATION.match(target):
        raise _refuse(root, "`current`", f"points to {target!r}, not to a gen-NNNNNN directory inside the index",
                      f"remove {link} if you did not make it")
    generation = root / target
    try:
        gen_st = os.lstat(generation)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(gen_st.st_mode):
        raise _refuse(root, target, "is not a directory", f"remove {generation} if you did not make it")
    _check_owner_and_mode(root, generation, gen_st, target)
    _check_tree(root, generation, target, depth=2)  # shard-NN/MAIN.tmp
    return generation


def _check_tree(root: Path, directory: Path, label: str, depth: int) -> None:
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:  # a writer's temporary directory, just removed
        return
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:  # removed by a commit meanwhile
            continue
        name = f"{label}/{entry.name}"
        if stat.S_ISDIR(st.st_mode) and depth > 0:
            _check_owner_and_mode(root, Path(entry.path), st, name)
            _check_tree(root, Path(entry.path), name, depth - 1)
        elif stat.S_ISREG(st.st_mode):
            _check_owner_and_mode(root, Path(entry.path), st, name)
        else:
            raise _refuse(root, name, "is not a regular file", f"remove {entry.path} if you did not make it")


def _has_toc(generation: Path) -> bool:
    """Whether the generation holds a committed index: a Whoosh table of contents,
    or Tantivy's ``meta.json`` (written once the index is created)."""
    first = generation / SHARD_FORMAT.format(0)
    folder = first if first.is_dir() else generation
    return any(_TOC.match(name) or name == _TANTIVY_META for name in os.listdir(folder))


def _current(root: Path) -> Path | None:
    generation = trusted_generation(root)
    return generation if generation is not None and _has_toc(generation) else None


def current_target(root: Path) -> Path | None:
    """Where ``current`` points, without opening anything (cheap, per operation)."""
    try:
        return root / os.readlink(root / "current")
    except OSError:
        return None


# ---- generations ------------------------------------------------------------------------

@contextmanager
def storage_faults(root: Path, doing: str, *, written: bool = False) -> Iterator[None]:
    """Disk and file faults as one StorageError line (our own errors pass through)."""
    try:
        yield
    except StorageError:
        raise
    except Exception as exc:
        if not is_storage_fault(exc):
            raise
        raise storage_error(root, doing, exc, written=written) from exc


def new_generation(root: Path, language: str, shards: int = 1,
                   engine: str = DEFAULT_ENGINE) -> tuple[Path, FileIndex | ShardedIndex | None]:
    """Create an empty index in a fresh generation directory: one Whoosh index, or
    ``shards`` of them in ``shard-NN`` folders; or a Tantivy index (returned as
    None: its engine's module opens it)."""
    check_language(language)
    check_shards(shards)
    check_engine(engine)
    if engine != "whoosh" and shards != 1:
        raise tantivy_engine().NotSupported(f"sharded indexes ({shards} shards)")
    with storage_faults(root, "creating the index"):
        if not root.exists():
            root.parent.mkdir(parents=True, exist_ok=True)
            make_private_dir(root, exist_ok=True)
        numbers = [int(p.name[4:]) for p in root.glob("gen-*") if _GENERATION.match(p.name)]
        path = root / f"gen-{max(numbers, default=0) + 1:06d}"
        make_private_dir(path)
        storages: list[PrivateStorage] = []
        try:
            schema = build_schema(language)
            indexes = []
            if engine == "tantivy":
                tantivy_engine().create(path, language)
            for folder in _shard_folders(path, shards) if engine == "whoosh" else []:
                make_private_dir(folder, exist_ok=True)
                storage = PrivateStorage(str(folder))
                storage.tracked = []  # what a full disk leaves open is closed, else its space stays taken
                storages.append(storage)
                indexes.append(storage.create_index(schema, indexname=INDEX_NAME))
            meta = json.dumps({"schema_version": SCHEMA_VERSION, "language": language, "shards": shards,
                               "engine": engine})
            fd = os.open(path / _META, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, _FILE_MODE)
            with os.fdopen(fd, "w") as out:
                out.write(meta)
        except BaseException:
            for storage in storages:
                close_tracked(storage, only_removed=False)
            shutil.rmtree(path, ignore_errors=True)
            raise
        for storage in storages:
            storage.tracked = None
        _tighten(root, path)  # what the engine wrote with the umask's modes
        if not indexes:
            return path, None
        return path, indexes[0] if shards == 1 else ShardedIndex(indexes)


def _shard_folders(generation: Path, shards: int) -> list[Path]:
    return [generation] if shards == 1 else [generation / SHARD_FORMAT.format(k) for k in range(shards)]


def check_engine(engine: object) -> str:
    """An engine an index may be created with, else UnknownEngine naming them."""
    if engine not in ENGINES:
        raise UnknownEngine(f"unknown index engine {engine!r}; the engines are {', '.join(ENGINES)}")
    return str(engine)


def engine_of(root: Path, meta: dict[str, Any]) -> str:
    """The engine a generation's settings name (Whoosh before engines existed); an
    engine this version does not know is an error, never a guess."""
    engine = meta.get("engine", DEFAULT_ENGINE)
    if engine not in ENGINES:
        raise UnknownEngine(f"{root}: the index was made with the engine {engine!r}, which this version of "
                            f"pdfindex does not know (it knows {', '.join(ENGINES)}): open it with the version "
                            "that made it, or delete the index and ingest again")
    return str(engine)


def stored_engine(root: Path) -> str | None:
    """The engine of the index at ``root`` (checked: UnknownEngine), None without one."""
    with storage_faults(root, "reading the index settings"):
        path = _current(root)
        if path is None:
            return None
        meta = _read_meta(root, path)
    return engine_of(root, meta)


class UnknownEngine(StorageError):
    """An engine name that is not one of ENGINES."""


def check_shards(shards: object) -> int:
    """A shard count an index may have, else StorageError saying which may."""
    if not isinstance(shards, int) or isinstance(shards, bool) or not 1 <= shards <= MAX_SHARDS:
        raise StorageError(f"the shard count must be a whole number from 1 to {MAX_SHARDS}, not {shards!r}")
    return shards


def switch_to(root: Path, generation: Path) -> Path | None:
    """Point ``current`` at ``generation`` atomically; return the previous target."""
    with storage_faults(root, "switching to a new generation"):
        previous = _current(root)
        tmp = root / f".current-{os.getpid()}"
        if tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(generation.name)
        os.replace(tmp, root / "current")
        return previous


def _read_meta(root: Path, generation: Path) -> dict[str, Any]:
    path = generation / _META
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (ValueError, UnicodeDecodeError) as exc:
        raise StorageError(f"{root}: {generation.name}/{_META} is damaged ({type(exc).__name__}); "
                           "restore it from a backup, or delete the index and ingest again") from None
    if not isinstance(meta, dict):
        raise StorageError(f"{root}: {generation.name}/{_META} is damaged (not a JSON object); "
                           "restore it from a backup, or delete the index and ingest again")
    return meta


#: The language used when a new index is made and none is given.
DEFAULT_LANGUAGE = "en"


def supported_languages() -> list[str]:
    """Language codes with a stemmer, and "none" (no stemming)."""
    return [*sorted(languages), "none"]


def check_language(language: str) -> str:
    """``language`` if the analyzer can stem it (a code such as "fr" or a name such
    as "french"), else UnknownLanguage listing the supported codes: an unknown one
    used to mean "no stemming" without a word."""
    if language == "none" or (language and has_stemmer(language)):
        return language
    raise UnknownLanguage(f"unknown language {language!r}; supported: {', '.join(supported_languages())}")


class UnknownLanguage(SearchIndexError):
    """A stemming language the analyzer does not have."""


def open_index(root: Path, language: str | None, create: bool = True, new_language: str = DEFAULT_LANGUAGE,
               new_shards: int = 1) -> tuple[Path, FileIndex | ShardedIndex, str]:
    """Open the current generation of a Whoosh index, creating the first one (in
    ``language``, else ``new_language``, with ``new_shards`` shards) when allowed;
    returns it with its language. ``language`` None takes the language stored in
    the index (what every reader and writer wants: the index was analysed with
    it); a language given must be the stored one. Raises FileNotFoundError when
    there is no index and ``create`` is False, EngineChanged when the index is on
    another engine (a reindex changed it under an open PageIndex)."""
    path, language, meta = open_current(root, language, create, new_language, new_shards, "whoosh")
    return path, open_generation(root, path, shards_of(root, meta)), language


class EngineChanged(SearchIndexError):
    """The index was rebuilt on another engine while it was open."""


def open_current(root: Path, language: str | None, create: bool = True, new_language: str = DEFAULT_LANGUAGE,
                 new_shards: int = 1, engine: str = DEFAULT_ENGINE) -> tuple[Path, str, dict[str, Any]]:
    """The checks and creation every engine shares (``open_index`` says which): the
    current generation, its language and its settings. The index must be on
    ``engine`` (a new one is made on it), else EngineChanged: a reindex moved it to
    another engine under an open PageIndex."""
    for name in (language, new_language):
        if name is not None:
            check_language(name)
    with storage_faults(root, "opening the index"):
        path = _current(root)
    if path is None:
        if not create:
            raise FileNotFoundError(f"no index at {root}")
        _refuse_foreign_folder(root)
        language = language or new_language
        path, _ = new_generation(root, language, new_shards, engine)
        switch_to(root, path)
        _tighten(root, path)
        index_id(root, create=True)
        with storage_faults(root, "opening the index"):
            return path, language, _read_meta(root, path)
    with storage_faults(root, "opening the index"):
        meta = _read_meta(root, path)
    stored = meta.get("language")
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise ReindexNeeded(
            f"the index at {root} was built with schema {meta.get('schema_version')}; this version uses schema "
            f"{SCHEMA_VERSION}: run `pdfindex reindex` (it keeps the index's language, {stored!r})"
        )
    if not isinstance(stored, str):
        raise StorageError(f"{root}: {path.name}/{_META} names no language; run `pdfindex reindex --language L`")
    if language is not None and stored != language:
        raise ReindexNeeded(
            f"the index at {root} is in language {stored!r}, not {language!r} (PDFINDEX_LANGUAGE): set "
            f"PDFINDEX_LANGUAGE={stored}, or run `pdfindex reindex --language {language}` to change the index"
        )
    _tighten(root, path)
    if (stored_on := engine_of(root, meta)) != engine:
        raise EngineChanged(f"the index at {root} is now on the {stored_on} engine (`pdfindex reindex --engine`): "
                            "open it again")
    return path, stored, meta


def _refuse_foreign_folder(root: Path) -> None:
    """A new index goes into a new or empty folder (or one left by an interrupted
    first creation): never into a folder of the user's documents, which creating an
    index would make private (0700) and fill with generations."""
    with storage_faults(root, "creating the index"):
        if not root.is_dir():
            return
        foreign = [p.name for p in root.iterdir()
                   if not (_GENERATION.match(p.name) or p.name.startswith(".current-") or p.name == _ID)]
    if foreign:
        raise StorageError(f"{root}: not an index and not empty (it holds {foreign[0]!a}"
                           f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}); "
                           "give a new or empty folder for the index")


def shards_of(root: Path, meta: dict[str, Any]) -> int:
    """The shard count a generation's settings give (1 before shards existed)."""
    shards = meta.get("shards", 1)
    try:
        return check_shards(shards)
    except StorageError:
        raise StorageError(f"{root}: {_META} gives {shards!r} shards; restore it from a backup, "
                           "or delete the index and ingest again") from None


def open_generation(root: Path, path: Path, shards: int | None = None) -> FileIndex | ShardedIndex:
    """The index of a generation that ``trusted_generation`` has checked: one
    Whoosh index, or a ShardedIndex (``shards`` None: as its settings say).
    Opening reads the tables of contents, and a damaged one can fail in any way.
    Segment files are read through memory maps (``indexer.mapped``): pages come
    from the page cache as queries touch them, nothing is copied, so opening costs
    a one-search command no more than plain reads would."""
    if shards is None:
        with storage_faults(root, "opening the index"):
            shards = shards_of(root, _read_meta(root, path))
    indexes = [_open_whoosh(root, path, folder) for folder in _shard_folders(path, shards)]
    return indexes[0] if shards == 1 else ShardedIndex(indexes)


#: Opens of a shard that may meet a commit of another process, one after the other.
_OPEN_ATTEMPTS = 5


def _open_whoosh(root: Path, path: Path, folder: Path) -> FileIndex:
    """Whoosh lists the newest table of contents, then opens it and the segment files
    it names; a commit of another process in between writes a newer table and removes
    the older one and the segments it merged away (the server's search processes met
    it during an ingest). A file gone so is opened again from the newer commit."""
    attempt = 1
    while True:
        try:
            return _open_once(root, path, folder)
        except FileNotFoundError as exc:
            if attempt == _OPEN_ATTEMPTS:
                raise storage_error(root, "opening the index", exc) from exc
            attempt += 1


def _open_once(root: Path, path: Path, folder: Path) -> FileIndex:
    storage = PrivateStorage(str(folder), supports_mmap=False)  # segment files: open_file maps them
    storage.tracked = []
    try:
        return storage.open_index(INDEX_NAME)
    except Exception as exc:  # unpickling a damaged TOC raises anything
        close_tracked(storage, only_removed=False)
        if isinstance(exc, FileNotFoundError):
            raise  # removed by a commit meanwhile: the caller opens again
        if isinstance(exc, OSError):
            raise storage_error(root, "opening the index", exc) from exc
        raise StorageError(f"{root}: the table of contents of {path.name} is damaged ({type(exc).__name__}); "
                           "restore it from a backup, or delete the index and ingest again") from exc
    finally:
        storage.tracked = None


def index_id(root: Path, *, create: bool = False) -> str | None:
    """The index's identity: a random id written when it was created, kept by
    ``reindex`` (it lives beside the generations). ``create``: give one to an index
    made before ids existed (a writer does; readers only read). None without one."""
    path = root / _ID
    with storage_faults(root, "reading the index id", written=create):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if not create:
                return None
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, _FILE_MODE)
            except FileExistsError:  # another writer made it meanwhile: theirs stands
                return index_id(root)
            with os.fdopen(fd, "w") as out:
                out.write(uuid.uuid4().hex + "\n")
            return index_id(root)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(root, _ID, "is not a regular file", f"remove {path} if you did not make it")
        _check_owner_and_mode(root, path, st, _ID)
        text = path.read_text(encoding="ascii", errors="replace").strip()
    if not _ID_FORMAT.match(text):
        raise StorageError(f"{root}: {_ID} is damaged (not 32 hex digits); remove it and let the writer make a new "
                           "one (clients of a distributed set-up then need the writer to start again)")
    return text


def stored_language(root: Path) -> str | None:
    with storage_faults(root, "reading the index settings"):
        path = _current(root)
        if path is None:
            return None
        language = _read_meta(root, path).get("language")
    return language if isinstance(language, str) else None


def remove_generation(root: Path, path: Path) -> None:
    """Remove a generation, but only a real ``gen-*`` directory directly inside the
    root: never through a link, never anything else."""
    try:
        inside = path.parent.resolve() == root.resolve() and _GENERATION.match(path.name) is not None
        st = os.lstat(path)
    except OSError:
        return
    if inside and stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
        shutil.rmtree(path, ignore_errors=True)


def remove_orphans(storage: FileStorage, indexname: str) -> None:
    """Remove what a failed commit left: segment files the latest table of contents
    does not name, unfinished TOCs and the writer's temporary directory. Call it
    holding the writer lock, so no commit is under way."""
    toc = TOC.read(storage, indexname)
    clean_files(storage, indexname, toc.generation, toc.segments)
    for name in storage.list():
        if _TOC_TEMP.match(name):
            with suppress(OSError):
                storage.delete_file(name)
    shutil.rmtree(os.path.join(storage.folder, f"{indexname}.tmp"), ignore_errors=True)


def close_tracked(storage: Any, *, only_removed: bool = True) -> None:
    """Close what ``storage`` tracked (with ``only_removed``, only the files that
    no longer exist: a failed writer's, once ``remove_orphans`` has run; an open
    file's space is not freed by removing it) and stop tracking."""
    tracked = getattr(storage, "tracked", None)
    storage.tracked = None
    for path, opened in tracked or ():
        if not only_removed or not os.path.exists(path):
            with suppress(Exception):
                opened.close()


def size_on_disk(root: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(root):  # does not follow links
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total
