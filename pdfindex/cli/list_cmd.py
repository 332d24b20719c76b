"""``pdfindex list``: documents (or pages) by status, OCR need, path and date,
straight from the index: no query, no scoring.

Also the command-line values that ``list`` and ``search`` share: bounded numbers
(NaN and out-of-range refused), dates, and ``--path`` resolved against the current
directory (a folder, a relative path or a glob; the index holds absolute paths).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .errors import EXIT_USAGE, CliError
from .shapes import listing_json
from .terminal import shown, write_json

if TYPE_CHECKING:
    from pdfindex.indexer import Listing

#: The version of every JSON document the CLI writes (docs/json.md); bumped when a
#: key changes meaning or goes away, not when one is added.
#: The most rows one command returns: a bigger --limit is a mistake, not a need.
MAX_LIMIT = 1_000_000
STATUSES = ("indexed", "failed", "encrypted", "empty")
#: pipeline.problems.ProblemCode, repeated so that building the parser imports no
#: extractor (a test checks they agree); docs/extraction.md says what each means.
PROBLEM_CODES = ("font_missing", "font_damaged", "stream_damaged", "cap_hit", "content_syntax", "xobject_missing",
                 "form_cycle", "structure_damaged", "box_invalid", "metadata_damaged", "page_stopped",
                 "text_suspect", "internal_error", "other")


# ---- values shared with `search` ------------------------------------------------------------

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


def _date(text: str, end_of_period: bool) -> float:
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
        raise argparse.ArgumentTypeError(
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


def since_arg(text: str) -> float:
    return _date(text, end_of_period=False)


def until_arg(text: str) -> float:
    return _date(text, end_of_period=True)


_GLOB = frozenset("*?[")


def resolve_path_glob(text: str, cwd: str | None = None) -> str:
    """``--path`` as an absolute glob over indexed paths: a relative path or glob is
    taken from the current directory (``latex*``, ``papers/2024``), ``~`` expanded,
    and a folder means everything under it. The index holds absolute paths, so a
    relative one used to match nothing, without a word."""
    if not text:
        raise CliError("--path: an empty path; give a folder, a file or a glob")
    if "\0" in text:
        raise CliError("--path: the path contains a NUL character")
    expanded = os.path.expanduser(text)
    absolute = os.path.normpath(os.path.join(cwd or os.getcwd(), expanded))
    if expanded.endswith(os.sep) and not absolute.endswith(os.sep):
        absolute += os.sep
    if not (_GLOB & set(text)) and (absolute.endswith(os.sep) or os.path.isdir(absolute)):
        return absolute.rstrip(os.sep) + os.sep + "*"
    return absolute


def problem_arg(text: str) -> str:
    """``--problems CODE``: one of the codes extraction records (a typo would
    list nothing without a word). "" (``--problems`` alone) is any code."""
    code = text.strip().lower()
    if code and code not in PROBLEM_CODES:
        raise argparse.ArgumentTypeError(f"{text!r} is not a problem code; the codes are {', '.join(PROBLEM_CODES)}")
    return code


def use_color() -> bool:
    """Bold only on a terminal, and not when NO_COLOR is set (https://no-color.org:
    present and not empty)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


# ---- the command ---------------------------------------------------------------------------

def add_commands(sub: Any) -> None:
    from .search_cmd import _index_arg  # noqa: PLC0415 - one definition of --index

    p = sub.add_parser("list", help="list documents (or pages) by status, OCR need, path and date, unscored",
                       description="List documents, or with --pages pages, straight from the index: no query, "
                                   "no scoring. Documents are listed by path; page criteria (--needs-ocr, "
                                   "--has-text, --min-coverage) keep the documents that have such a page.")
    ocr = p.add_mutually_exclusive_group()
    ocr.add_argument("--needs-ocr", dest="needs_ocr", action="store_const", const=True,
                     help="only pages flagged as needing OCR (documents: with at least one)")
    ocr.add_argument("--has-text", dest="needs_ocr", action="store_const", const=False,
                     help="only pages with a usable text layer (documents: with at least one)")
    p.add_argument("--status", choices=STATUSES, help="only files of this status")
    p.add_argument("--min-coverage", type=coverage_arg, help="only pages whose glyph coverage is at least this")
    p.add_argument("--path", dest="path_glob",
                   help="a folder, file or glob; relative ones are taken from the current directory")
    p.add_argument("--since", type=since_arg, help="files dated on or after this (created, else modified, "
                                                   "else file mtime): YYYY-MM-DD, YYYY-MM, YYYY or ISO date-time")
    p.add_argument("--until", type=until_arg, help="files dated on or before this (a day given alone is included)")
    p.add_argument("--problems", dest="problem", nargs="?", const="", type=problem_arg, metavar="CODE",
                   help="only pages with a problem extraction recorded (with CODE, that kind: "
                        f"{', '.join(PROBLEM_CODES[:-1])}), each listed with its problems; "
                        "documents: with at least one such page")
    p.add_argument("--pages", action="store_true", help="list pages rather than documents")
    p.add_argument("--limit", type=limit_arg, help="at most this many rows (default: all)")
    p.add_argument("--offset", type=offset_arg, default=0, help="skip this many rows first")
    p.add_argument("--json", action="store_true", help="the rows as JSON (docs/json.md)")
    _index_arg(p)
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    from pdfindex.indexer import ListFilters, Status  # noqa: PLC0415

    from .search_cmd import _user_errors, open_index  # noqa: PLC0415

    with _user_errors():
        if args.since is not None and args.until is not None and args.since > args.until:
            raise CliError("--since is after --until: nothing can match", EXIT_USAGE)
        filters = ListFilters(
            status=Status(args.status) if args.status else None, needs_ocr=args.needs_ocr,
            min_coverage=args.min_coverage,
            path_glob=resolve_path_glob(args.path_glob) if args.path_glob is not None else None,
            since=args.since, until=args.until, problem=args.problem,
        )
        with open_index(args, reading=True) as index:
            listing = (index.list_pages if args.pages else index.list_documents)(filters, args.limit, args.offset)
    if args.json:
        write_json(listing_json(listing, args.pages))
    else:
        _print_listing(listing, args.pages, problems=args.problem is not None, path_glob=filters.path_glob)
    return 0


def problem_counts(counts: dict[str, int]) -> str:
    """``font_missing 2, cap_hit 1``: most frequent first."""
    return ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _print_listing(listing: Listing, pages: bool, problems: bool = False, path_glob: str | None = None) -> None:
    """With ``problems``, each page is followed by its problems (code: message)
    and each document by its sums. With ``path_glob``, a document is shown under the
    path that matched it, followed by its other copies that match (``also at``)."""
    from pdfindex.indexer.listing import glob_selects  # noqa: PLC0415 - the index is loaded by now

    out = sys.stdout
    if pages:
        for hit in listing.pages:
            quality = "no text" if hit.coverage is None else f"coverage {hit.coverage:.2f}"
            out.write(f"{shown(hit.path)}  p.{hit.page}  {quality}{'  needs OCR' if hit.needs_ocr else ''}\n")
            if problems:
                for problem in hit.problems:
                    out.write(f"    {problem.code}: {shown(problem.message)}\n")
        unit = "pages"
    else:
        for doc in listing.documents:
            error = f"  {shown(doc.error)}" if doc.error else ""
            counts = f"  problems: {problem_counts(doc.problems)}" if problems and doc.problems else ""
            copies = [p for p in doc.all_paths[1:] if glob_selects(p, path_glob)] if path_glob else []
            also = f"  also at {', '.join(map(shown, copies))}" if copies else ""
            out.write(f"{shown(doc.path)}  {doc.status}  {doc.page_count} pages{error}{counts}{also}\n")
        unit = "documents"
    shown_rows = len(listing.pages if pages else listing.documents)
    more = f" (showing {shown_rows})" if shown_rows != listing.total else ""
    out.write(f"{listing.total:,} {unit}{more} in {listing.took:.3f} s\n")
