"""The values of the command line's options, read as argparse types: bounded numbers
(NaN and out-of-range refused), dates, problem codes, paths, a language the index
can stem, a shard count, a port. Each refuses with the sentence argparse shows after
the option's name (exit 2). The rules the HTTP API shares (dates, ``--path``,
problem codes) are the contract's (``pdfindex.contract.options``); this module only
adapts them to argparse.
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pdfindex.contract.limits import MAX_SHARDS
from pdfindex.contract.options import OptionError, parse_date, parse_problem_code, resolve_path_glob

from .errors import EXIT_USAGE, CliError

#: The most rows one command returns: a bigger --limit is a mistake, not a need.
MAX_LIMIT = 1_000_000

_T = TypeVar("_T")


def _argument(read: Callable[[str], _T], text: str) -> _T:
    """``read(text)``, its OptionError as argparse's error for the option."""
    try:
        return read(text)
    except OptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def limit_arg(text: str) -> int:
    """``--limit``: a whole number from 1 to MAX_LIMIT."""
    value = _int(text)
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r}: must be from 1 to {MAX_LIMIT:,}")
    return value


def offset_arg(text: str) -> int:
    """``--offset``: a whole number, 0 or more."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be 0 or more")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def coverage_arg(text: str) -> float:
    """``--min-coverage``: a fraction from 0 to 1 (NaN, which compares false with
    everything, used to be accepted and match nothing)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a number from 0 to 1")
    return value


def since_arg(text: str) -> float:
    """``--since``: the start of the day, month or year given (or the moment)."""
    return _argument(lambda value: parse_date(value, end_of_period=False), text)


def until_arg(text: str) -> float:
    """``--until``: the end of the day, month or year given (or the moment)."""
    return _argument(lambda value: parse_date(value, end_of_period=True), text)


def dates_option(since: float | None, until: float | None) -> None:
    """``--since`` and ``--until`` together: a range that can hold something."""
    if since is not None and until is not None and since > until:
        raise CliError("--since is after --until: nothing can match", EXIT_USAGE)


def path_option(text: str | None) -> str | None:
    """``--path`` as the glob over indexed paths it means from the current
    directory (read once parsed, since the current directory is the caller's)."""
    if text is None:
        return None
    try:
        return resolve_path_glob(text)
    except OptionError as exc:
        raise CliError(f"--path: {exc}") from None


def problem_arg(text: str) -> str:
    """``--problems CODE``: one of the codes extraction records; "" (``--problems``
    alone) is any code."""
    return _argument(parse_problem_code, text)


def path_arg(text: str) -> Path:
    """A path from the command line. An empty one is refused: ``Path("")`` is the
    current directory, where an index would be created (and the folder made private)
    or which would be ingested whole, though nobody asked for either."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (it would mean the current directory); give a path")
    return Path(text)


def checked_language(language: str) -> str:
    """``language`` if the index can stem it (a code such as "fr", a name such as
    "french", or "none"), else OptionError listing the supported ones. For
    ``reindex --language`` and PDFINDEX_LANGUAGE alike."""
    # Whoosh's stemmers, only for a language that is given (the default needs no check)
    from pdfindex.indexer.store import UnknownLanguage, check_language  # noqa: PLC0415 - Whoosh

    try:
        return check_language(language)
    except UnknownLanguage as exc:
        raise OptionError(str(exc)) from None


def language_arg(text: str) -> str:
    """``--language``: one the analyzer can stem, else a bad command line listing
    the supported ones."""
    return _argument(checked_language, text.strip().lower())


def shard_count_arg(text: str) -> int:
    """``--shards``: from 1 to MAX_SHARDS."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= count <= MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"the shard count must be from 1 to {MAX_SHARDS}, not {count}")
    return count


def port_arg(text: str) -> int:
    """``--port``: 0 (the system chooses) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return port
