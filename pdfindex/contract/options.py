"""The option values that the command line and the HTTP API both take, read by one
set of rules: dates (``--since``/``--until``, ``since=``/``until=``), ``--path``
resolved against the current directory, and problem codes. Each raises
``OptionError`` with the sentence the user sees; the CLI turns it into a bad command
line, the server into a 400.
"""
from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from .problems import PROBLEM_CODES


class OptionError(ValueError):
    """A value that cannot be read; the message says why, quoting the value."""


def parse_date(text: str, end_of_period: bool) -> float:
    """A date or date-time in ISO 8601 (2024, 2024-03, 2024-03-15, 2024-03-15T10:00,
    with or without a UTC offset; without one, UTC) as epoch seconds. A day, month
    or year given alone means its start, or with ``end_of_period`` its end, so
    ``--until 2024-03-15`` includes that day."""
    raw = text.strip()
    try:
        if len(raw) == 4 and raw.isdigit():
            start, step = datetime(int(raw), 1, 1, tzinfo=UTC), "year"
        elif len(raw) == 7 and raw[4] == "-" and raw[:4].isdigit() and raw[5:].isdigit():
            start, step = datetime(int(raw[:4]), int(raw[5:]), 1, tzinfo=UTC), "month"
        else:
            start = datetime.fromisoformat(raw)
            step = "day" if len(raw) == 10 else ""
            if start.tzinfo is None:
                start = start.replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise OptionError(
            f"{text!r} is not a date (use YYYY-MM-DD, YYYY-MM, YYYY or an ISO date-time)") from None
    if not end_of_period or not step:
        return start.timestamp()
    try:
        if step == "year":
            end = start.replace(year=start.year + 1)
        elif step == "month":
            end = start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
        else:
            end = start + timedelta(days=1)
    except (ValueError, OverflowError):  # the year 9999
        return start.timestamp() + 366 * 86400
    return end.timestamp() - 1e-6


_GLOB = frozenset("*?[")


def resolve_path_glob(text: str, cwd: str | None = None) -> str:
    """A path option as an absolute glob over indexed paths: a relative path or glob
    is taken from the current directory (``latex*``, ``papers/2024``), ``~``
    expanded, and a folder means everything under it. The index holds absolute
    paths, so a relative one used to match nothing, without a word."""
    if not text:
        raise OptionError("an empty path; give a folder, a file or a glob")
    if "\0" in text:
        raise OptionError("the path contains a NUL character")
    expanded = os.path.expanduser(text)
    absolute = os.path.normpath(os.path.join(cwd or os.getcwd(), expanded))
    if expanded.endswith(os.sep) and not absolute.endswith(os.sep):
        absolute += os.sep
    if not (_GLOB & set(text)) and (absolute.endswith(os.sep) or os.path.isdir(absolute)):
        return absolute.rstrip(os.sep) + os.sep + "*"
    return absolute


def parse_problem_code(text: str) -> str:
    """One of the codes extraction records (a typo would list nothing without a
    word); "" is any code."""
    code = text.strip().lower()
    if code and code not in PROBLEM_CODES:
        raise OptionError(f"{text!r} is not a problem code; the codes are {', '.join(PROBLEM_CODES)}")
    return code
