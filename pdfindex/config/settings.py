"""Settings from environment variables and defaults, parsed once into a typed value.

Every knob a user or operator may turn lives here, with the variable that sets it;
code receives a ``Settings`` and never reads the environment itself.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from pdfindex.contract.enums import OCR_MODES
from pdfindex.contract.limits import MAX_SHARDS

N = TypeVar("N", int, float)

#: The index engines (docs/engines.md); the first is the default. Named here, where
#: PDFINDEX_ENGINE is read, and checked again by the index for what it stores.
ENGINES = ("whoosh", "tantivy")


#: The languages OCR reads unless told: French, German, English (read together, in
#: this order: French first read accents best, a report's accented words 13 of 23 right
#: as eng+deu+fra and 21 as fra+deu+eng, its English no worse: docs/ocr.md), Korean,
#: Japanese across and down, Simplified Chinese.
OCR_LANGUAGES = ("fra", "deu", "eng", "kor", "jpn", "jpn_vert", "chi_sim")
#: A Tesseract language name: it becomes a file name in the language data folder.
LANGUAGE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{1,31}")


class SettingsError(ValueError):
    """An environment variable holds a value we cannot use; the message names it."""


def _default_index_dir(env: Mapping[str, str]) -> Path:
    """The per-user data directory of the XDG Base Directory spec."""
    base = env.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(base):  # the spec: a relative XDG_DATA_HOME is invalid, ignore it
        base = str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "pdfindex" / "index"


def _number(env: Mapping[str, str], name: str, default: N, minimum: N, maximum: N | None = None) -> N:
    """A number of the default's type (int or float), at least ``minimum`` (and at
    most ``maximum``)."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    kind = type(default)
    try:
        value = kind(raw)
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a {'whole ' if kind is int else ''}number") from None
    if not math.isfinite(value):
        raise SettingsError(f"{name}={raw!r} must be a finite number")
    if value < minimum:
        raise SettingsError(f"{name}={raw!r} must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise SettingsError(f"{name}={raw!r} must be at most {maximum}")
    return value


#: Broker URL schemes the workers and the hand-off queue both understand (Redis only:
#: the hand-off between extraction and the writer is a pair of Redis lists).
BROKER_SCHEMES = ("redis", "rediss", "unix")


def redact_url(url: str) -> str:
    """The URL without its password, for messages and logs (a broker URL is often
    pasted into a bug report)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port is not None else ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))
    except ValueError:  # unparsable: hide everything between the scheme and the host
        if "@" not in url:
            return url
        scheme, sep, rest = url.partition("://")
        return f"{scheme}{sep}***@{rest.rsplit('@', 1)[-1]}" if sep else "***@" + url.rsplit("@", 1)[-1]


def _broker_url(env: Mapping[str, str], name: str) -> str:
    raw = (env.get(name) or "").strip()
    if not raw:
        return ""
    shown = redact_url(raw)
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise SettingsError(f"{name}={shown!r} is not a valid URL ({exc})") from None
    if parts.scheme not in BROKER_SCHEMES:
        raise SettingsError(f"{name}={shown!r}: the broker must be Redis "
                            f"(redis://, rediss:// or unix://), not {parts.scheme or 'a URL without a scheme'}")
    if parts.scheme == "unix" and not parts.path:
        raise SettingsError(f"{name}={shown!r}: a unix:// URL needs the socket path (unix:///run/redis.sock)")
    return raw


def _absolute_path(env: Mapping[str, str], name: str) -> Path | None:
    raw = env.get(name) or ""
    if not raw.strip():
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise SettingsError(f"{name}={raw!r} must be an absolute path")
    return path


def _roots(env: Mapping[str, str]) -> tuple[Path, ...]:
    """PDFINDEX_ROOTS: absolute folders separated by os.pathsep. Relative entries are
    refused rather than resolved against whatever directory a worker started in."""
    raw = env.get("PDFINDEX_ROOTS") or ""
    roots: list[Path] = []
    for entry in raw.split(os.pathsep):
        if not entry.strip():
            continue
        if "\0" in entry:
            raise SettingsError(f"PDFINDEX_ROOTS: {entry!r} contains a NUL character")
        path = Path(entry).expanduser()
        if not path.is_absolute():
            raise SettingsError(f"PDFINDEX_ROOTS: {entry!r} is not an absolute path")
        path = Path(os.path.normpath(path))
        if path not in roots:
            roots.append(path)
    return tuple(roots)


@dataclass(frozen=True, slots=True)
class Settings:
    #: PDFINDEX_INDEX_DIR: where the index lives (default: $XDG_DATA_HOME/pdfindex/index).
    index_dir: Path
    #: PDFINDEX_LANGUAGE: stemming language of the analyzer ("en"; "none" turns it off).
    language: str = "en"
    #: PDFINDEX_SEARCH_TIMEOUT: seconds a search may run before partial results return.
    search_timeout: float = 5.0
    #: PDFINDEX_BATCH_PAGES: pages per index commit (per shard).
    batch_pages: int = 2000
    #: PDFINDEX_SHARDS: shards of an index created from now on (an index keeps the
    #: count it was created with; ``reindex --shards N`` changes it).
    shards: int = 1
    #: PDFINDEX_ENGINE: the engine of an index created from now on, whoosh or tantivy
    #: (an index keeps the engine it was created with; ``reindex --engine E`` changes it).
    engine: str = ENGINES[0]
    #: PDFINDEX_WORKERS: extraction processes of the embedded pool (default: CPU cores).
    workers: int = 1
    #: PDFINDEX_FILE_TIMEOUT: seconds one file may take before it is recorded as failed
    #: (soft limit, then a hard kill PDFINDEX_FILE_HARD_TIMEOUT seconds in, default +30).
    file_timeout: float = 120.0
    file_hard_timeout: float = 150.0
    #: PDFINDEX_MAX_MEMORY_MB: address-space limit of an extraction process, so a
    #: decompression bomb fails its file instead of the machine (0: no limit).
    max_memory_mb: int = 2048
    #: PDFINDEX_MAX_ATTEMPTS: deliveries of one file before it is recorded as failed
    #: (a file that kills its worker is not retried forever).
    max_attempts: int = 3
    #: PDFINDEX_BROKER_URL: Celery broker (e.g. redis://127.0.0.1:6379/0); empty = embedded mode.
    broker_url: str = ""
    #: PDFINDEX_RESULT_BACKEND: Celery result backend; defaults to the broker URL.
    result_backend: str = ""
    #: PDFINDEX_ROOTS: folders (absolute, separated by os.pathsep) the workers may read
    #: PDFs from; distributed workers refuse to start without it, so a message from
    #: the queue can never make them read anything else.
    roots: tuple[Path, ...] = ()
    #: PDFINDEX_PASSWORD_FILE: passwords the extraction workers try on encrypted files
    #: (the workers' own file: passwords never travel through the broker).
    password_file: Path | None = None
    #: PDFINDEX_SIGNING_KEY / _CERT / _CERT_STORE: Celery message signing (the "auth"
    #: serializer): this node's private key and certificate (PEM) and the certificates
    #: (a folder or glob) whose signatures are accepted. All three or none.
    signing_key: Path | None = None
    signing_cert: Path | None = None
    signing_cert_store: str = ""
    #: PDFINDEX_OCR: which pages are OCR'd: auto (those without a usable text layer),
    #: off, force (every page).
    ocr: str = "auto"
    #: PDFINDEX_OCR_LANGUAGES: Tesseract languages OCR may read, joined by "+"; the
    #: Latin-script ones are read together, the others tried per page (issue 22).
    ocr_languages: tuple[str, ...] = OCR_LANGUAGES
    #: PDFINDEX_OCR_PAGE_TIMEOUT: seconds OCR may take on one page.
    ocr_page_timeout: float = 120.0
    #: PDFINDEX_OCR_FILE_TIMEOUT: seconds an OCR task of a Celery worker may take on one
    #: file (the embedded pool gives each file its pages' OCR_PAGE_TIMEOUT instead).
    ocr_file_timeout: float = 3600.0

    @property
    def signing(self) -> bool:
        return self.signing_key is not None


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    index_dir = env.get("PDFINDEX_INDEX_DIR") or ""
    language = (env.get("PDFINDEX_LANGUAGE") or "en").strip().lower()
    broker = _broker_url(env, "PDFINDEX_BROKER_URL")
    file_timeout = _number(env, "PDFINDEX_FILE_TIMEOUT", 120.0, 0.1)
    return Settings(
        index_dir=Path(index_dir).expanduser() if index_dir else _default_index_dir(env),
        language=language,
        search_timeout=_number(env, "PDFINDEX_SEARCH_TIMEOUT", 5.0, 0.01),
        batch_pages=_number(env, "PDFINDEX_BATCH_PAGES", 2000, 1),
        shards=_number(env, "PDFINDEX_SHARDS", 1, 1, MAX_SHARDS),
        engine=index_engine(env),
        workers=_number(env, "PDFINDEX_WORKERS", os.cpu_count() or 1, 1),
        file_timeout=file_timeout,
        file_hard_timeout=_number(env, "PDFINDEX_FILE_HARD_TIMEOUT", file_timeout + 30.0, file_timeout),
        max_memory_mb=_number(env, "PDFINDEX_MAX_MEMORY_MB", 2048, 0),
        max_attempts=_number(env, "PDFINDEX_MAX_ATTEMPTS", 3, 1),
        broker_url=broker,
        result_backend=(env.get("PDFINDEX_RESULT_BACKEND") or "").strip() or broker,
        roots=_roots(env),
        password_file=_absolute_path(env, "PDFINDEX_PASSWORD_FILE"),
        ocr=_choice(env, "PDFINDEX_OCR", OCR_MODES),
        ocr_languages=ocr_languages(env.get("PDFINDEX_OCR_LANGUAGES") or "", "PDFINDEX_OCR_LANGUAGES"),
        ocr_page_timeout=_number(env, "PDFINDEX_OCR_PAGE_TIMEOUT", 120.0, 1.0),
        ocr_file_timeout=_number(env, "PDFINDEX_OCR_FILE_TIMEOUT", 3600.0, 1.0),
        **_signing(env),  # type: ignore[arg-type]
    )


def index_engine(env: Mapping[str, str] | None = None) -> str:
    """PDFINDEX_ENGINE alone: what the index reads when it creates an index and its
    caller gave no engine (the workers open the index with the other settings)."""
    return _choice(os.environ if env is None else env, "PDFINDEX_ENGINE", ENGINES)


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (the first by default), case-insensitive."""
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return choices[0]
    if raw not in choices:
        raise SettingsError(f"{name}={raw!r} is not one of {', '.join(choices)}")
    return raw


def ocr_languages(raw: str, name: str = "--ocr-languages") -> tuple[str, ...]:
    """Tesseract language names joined by "+" ("eng+deu+kor"), each checked: a name
    becomes a file name in the language data folder, so nothing but letters, digits
    and underscores."""
    if not raw.strip():
        return OCR_LANGUAGES
    names = tuple(dict.fromkeys(part.strip() for part in raw.split("+") if part.strip()))
    for part in names:
        if not LANGUAGE_NAME.fullmatch(part):
            raise SettingsError(f"{name}: {part!r} is not a Tesseract language name (such as eng, deu, jpn_vert)")
    if not names:
        raise SettingsError(f"{name}: no language given")
    return names


def _signing(env: Mapping[str, str]) -> dict[str, Path | str | None]:
    names = ("PDFINDEX_SIGNING_KEY", "PDFINDEX_SIGNING_CERT", "PDFINDEX_SIGNING_CERT_STORE")
    given = [name for name in names if (env.get(name) or "").strip()]
    if not given:
        return {}
    if len(given) != len(names):
        missing = ", ".join(name for name in names if name not in given)
        raise SettingsError(f"message signing needs all of {', '.join(names)}; {missing} not set")
    store = env[names[2]].strip()
    if not os.path.isabs(os.path.expanduser(store)):
        raise SettingsError(f"{names[2]}={store!r} must be an absolute path (a folder or a glob)")
    return {"signing_key": _absolute_path(env, names[0]), "signing_cert": _absolute_path(env, names[1]),
            "signing_cert_store": os.path.expanduser(store)}
