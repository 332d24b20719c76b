"""Settings from environment variables and defaults, parsed once into a typed value.

Every knob a user or operator may turn lives here, with the variable that sets it;
code receives a ``Settings`` and never reads the environment itself.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

N = TypeVar("N", int, float)


class SettingsError(ValueError):
    """An environment variable holds a value we cannot use; the message names it."""


def _default_index_dir(env: Mapping[str, str]) -> Path:
    """The per-user data directory of the XDG Base Directory spec."""
    base = env.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(base):  # the spec: a relative XDG_DATA_HOME is invalid, ignore it
        base = str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Path(base) / "pdfindex" / "index"


def _number(env: Mapping[str, str], name: str, default: N, minimum: N) -> N:
    """A number of the default's type (int or float), at least ``minimum``."""
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
    return value


@dataclass(frozen=True, slots=True)
class Settings:
    #: PDFINDEX_INDEX_DIR: where the index lives (default: $XDG_DATA_HOME/pdfindex/index).
    index_dir: Path
    #: PDFINDEX_LANGUAGE: stemming language of the analyzer ("en"; "none" turns it off).
    language: str = "en"
    #: PDFINDEX_SEARCH_TIMEOUT: seconds a search may run before partial results return.
    search_timeout: float = 5.0
    #: PDFINDEX_BATCH_PAGES: pages per index commit.
    batch_pages: int = 2000
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


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    index_dir = env.get("PDFINDEX_INDEX_DIR") or ""
    language = (env.get("PDFINDEX_LANGUAGE") or "en").strip().lower()
    broker = (env.get("PDFINDEX_BROKER_URL") or "").strip()
    file_timeout = _number(env, "PDFINDEX_FILE_TIMEOUT", 120.0, 0.1)
    return Settings(
        index_dir=Path(index_dir).expanduser() if index_dir else _default_index_dir(env),
        language=language,
        search_timeout=_number(env, "PDFINDEX_SEARCH_TIMEOUT", 5.0, 0.01),
        batch_pages=_number(env, "PDFINDEX_BATCH_PAGES", 2000, 1),
        workers=_number(env, "PDFINDEX_WORKERS", os.cpu_count() or 1, 1),
        file_timeout=file_timeout,
        file_hard_timeout=_number(env, "PDFINDEX_FILE_HARD_TIMEOUT", file_timeout + 30.0, file_timeout),
        max_memory_mb=_number(env, "PDFINDEX_MAX_MEMORY_MB", 2048, 0),
        max_attempts=_number(env, "PDFINDEX_MAX_ATTEMPTS", 3, 1),
        broker_url=broker,
        result_backend=(env.get("PDFINDEX_RESULT_BACKEND") or "").strip() or broker,
    )
