"""``pdfindex search``: hits with their snippets, or the search's JSON (docs/json.md)."""
from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from pdfindex import config
from pdfindex.contract.display import shown
from pdfindex.contract.records import Hit, SearchOptions, SearchResult
from pdfindex.contract.shapes import result_json

from .arguments import dates_option, path_option
from .errors import EXIT_NONE_FOUND
from .index_access import open_index, user_errors
from .terminal import use_color, write_json

BOLD, RESET = "\x1b[1m", "\x1b[0m"


def cmd_search(args: argparse.Namespace) -> int:
    with user_errors():
        settings = config.load()
        path_glob = path_option(args.path_glob)
        dates_option(args.since, args.until)
        with open_index(args, reading=True) as index:
            result = index.search(args.query, SearchOptions(
                limit=args.limit, offset=args.offset, by_document=args.by_document, min_coverage=args.min_coverage,
                needs_ocr=args.needs_ocr, path_glob=path_glob, timeout=settings.search_timeout,
                exact_count=args.exact_count, since=args.since, until=args.until, sort=args.sort,
            ))
    if args.json:
        write_json(result_json(result))
    else:
        _print_result(result, args.offset, bold=use_color())
    every_word = result.total if result.all_words_total is None else result.all_words_total
    return EXIT_NONE_FOUND if args.fail_if_none and not every_word else 0


def total_text(total: int, lower_bound: bool) -> str:
    return f"{total:,}+" if lower_bound else f"{total:,}"


def _marked(hit: Hit, bold: bool) -> str:
    """The snippet, escaped piece by piece so that only our own bold codes reach
    the terminal."""
    if not bold or not hit.spans:
        return shown(hit.snippet)
    parts, last = [], 0
    for span in hit.spans:
        parts += [shown(hit.snippet[last:span.start]), BOLD, shown(hit.snippet[span.start:span.end]), RESET]
        last = span.end
    parts.append(shown(hit.snippet[last:]))
    return "".join(parts)


def _score(score: float | None) -> str:
    """The score as shown ("  score 3.85"), or nothing: hits ordered by date or path
    are not scored."""
    return "" if score is None else f"  score {score:.2f}"


def _coverage(hit: Hit) -> str:
    """The page's text quality: a text layer's coverage, or OCR's confidence."""
    if hit.source == "ocr" and hit.ocr_confidence is not None:
        return f"OCR {hit.ocr_confidence:.0f} %"
    quality = "no text" if hit.coverage is None else f"coverage {hit.coverage:.2f}"
    return quality + (" + OCR" if hit.source == "text+ocr" else "")


def _day(stamp: float | None) -> str:
    try:
        return "" if stamp is None else datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return ""


def _about(hit: Hit) -> str:
    """The hit's metadata line: title, author, date, other paths of its content."""
    parts = [shown(hit.title)] if hit.title else []
    if hit.author:
        parts.append(f"by {shown(hit.author)}")
    day = _day(hit.created if hit.created is not None else hit.modified)
    if day:
        parts.append(day)
    others = [p for p in hit.paths if p != hit.path]
    if others:
        parts.append("also at " + ", ".join(shown(p) for p in others))
    return f"    {' · '.join(parts)}\n" if parts else ""


def _print_result(result: SearchResult, offset: int, bold: bool) -> None:
    out = sys.stdout
    if result.groups:
        for group in result.groups:
            best = group.pages[0]
            numbers = ", ".join(str(h.page) for h in group.pages)
            out.write(f"{shown(group.path)}  pages {numbers}{_score(group.score)}\n")
            out.write(_about(best))
            out.write(f"    p.{best.page} ({_coverage(best)}): {_marked(best, bold)}\n")
            out.write(_missing(best))
        unit, shown_count = "document", len(result.groups)
    else:
        for hit in result.hits:
            out.write(f"{shown(hit.path)}  p.{hit.page}{_score(hit.score)}  {_coverage(hit)}\n")
            out.write(_about(hit))
            out.write(f"    {_marked(hit, bold)}\n")
            out.write(_missing(hit))
        unit, shown_count = "page", len(result.hits)
    plural = "" if result.total == 1 and not result.total_is_lower_bound else "s"
    out.write(f"{total_text(result.total, result.total_is_lower_bound)} {unit}{plural} matched in {result.took:.3f} s"
              f"{_showing(result, offset, shown_count)}\n")
    if result.note:
        out.write(f"note: {shown(result.note)}\n")
    if result.suggestion:
        out.write(f"did you mean: {shown(result.suggestion)}\n")


def _missing(hit: Hit) -> str:
    """The query's words a relaxed search's hit lacks (``indexer.relaxed``)."""
    return f"    missing: {' '.join(shown(w) for w in hit.missing)}\n" if hit.missing else ""


def _showing(result: SearchResult, offset: int, count: int) -> str:
    """Which of the matches are shown, when not all of them: ", showing 11-20
    (--offset 20 for more)"."""
    if not result.total or (offset == 0 and count >= result.total and not result.total_is_lower_bound):
        return ""
    if not count:
        return f", showing none (--offset {offset} is past the last)"
    shown_range = f"{offset + 1}" if count == 1 else f"{offset + 1}-{offset + count}"
    more = offset + count < result.total or result.total_is_lower_bound
    return f", showing {shown_range}" + (f" (--offset {offset + count} for more)" if more else "")
