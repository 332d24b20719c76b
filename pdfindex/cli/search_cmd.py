"""``pdfindex search``, ``stats`` and ``reindex``: the index from the command line.

The index layer is imported inside the commands, so ``pdfindex extract`` does not
load Whoosh.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pdfindex import config
from .errors import EXIT_NONE_FOUND, EXIT_STORAGE, EXIT_USAGE, CliError
from .list_cmd import (
    coverage_arg,
    limit_arg,
    offset_arg,
    resolve_path_glob,
    since_arg,
    until_arg,
    use_color,
)
from .shapes import result_json, status_json
from .terminal import shown, write_json
from .writer_index import say_which

if TYPE_CHECKING:
    from pdfindex.indexer import Hit, PageIndex, SearchResult

BOLD, RESET = "\x1b[1m", "\x1b[0m"
#: indexer.records.COUNT_CAP, repeated so that building the parser imports no Whoosh
#: (a test checks they agree).
COUNT_CAP = 1000


#: The query language (indexer/query.py), for ``search --help``.
SEARCH_DESCRIPTION = """\
Search the index. Words are ANDed; each matches its other forms too (runs: run,
running), without accents or case.

  word1 word2        pages with both words       word1 OR word2    either
  -word, NOT word    pages without the word      +word             the word is required (also in OR)
  "two words"        the words in this order     "two words"~3     at most 3 words apart
  ( ... )            grouping                    word^2            weight a word twice
  field:word         text, title, author, subject, keywords, producer, filename,
                     error, status (indexed, failed, encrypted, empty), problem
                     (a code: font_missing, stream_damaged, cap_hit, ...; see
                     pdfindex list --help); field:(a OR b)
  wor*  w?rd         prefix, wildcards           word~  word~2     fuzzy: up to 1 or 2 edits
  [a TO m]  {a TO m} a range of words (inclusive, exclusive)

A query is at most 1,000 characters and 64 words; wildcards, ranges and fuzzy
words expand to at most 1,000 index terms (a note says when more matched). A
mistake (an unclosed quote or parenthesis, an unknown field, an operator with
nothing after it) is an error naming its column, exit status 2. A query that
finds nothing suggests a correction from the index's words. A query starting
with - goes after --:  pdfindex search -- -draft report"""

SEARCH_EXAMPLES = """\
examples:
  pdfindex search free culture                   pages with both words
  pdfindex search '"free culture" -license'      the phrase, without "license"
  pdfindex search 'title:(annual OR yearly) report'
  pdfindex search 'invoic* AND (paid OR settled)' --by-document
  pdfindex search 'error:password status:encrypted' --json"""


#: The one-letter options of ``search``: its -h, and the -v/-q every command takes
#: (cli/main.py). A test checks them against the parser.
SHORT_OPTIONS = frozenset("hvq")
_NEGATIVE_NUMBER = re.compile(r"-\d+(?:[.,]\d+)*")


def query_word_taken_for_option(words: Sequence[str]) -> str | None:
    """A search's query word that starts with "-" and comes before any "--" (the
    command line after the word ``search``), or None. argparse reads "-free" as an
    unknown option, "-quality" as -q given an argument and "-hello" as -h, and
    answers with its usage: the CLI names the word and says to put it after "--"
    instead. A word of one-letter options only (-v, -vv) is left to argparse."""
    for word in words:
        if word == "--":
            return None
        if (word.startswith("-") and not word.startswith("--") and len(word) > 2
                and not _NEGATIVE_NUMBER.fullmatch(word) and not set(word[1:]) <= SHORT_OPTIONS):
            return word
    return None


def dash_word_error(word: str) -> str:
    """The one line for a query word taken for an option."""
    return (f'search: {word} is not an option (pdfindex search --help lists them); a query starting with "-" '
            f'goes after "--", as in: pdfindex search -- {word}')


class _JoinWords(argparse.Action):
    """The positional words as one query string (``pdfindex search free culture``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, " ".join(values) if isinstance(values, list) else str(values or ""))


def add_commands(sub: Any) -> None:
    p = sub.add_parser("search", help="search the index", description=SEARCH_DESCRIPTION, epilog=SEARCH_EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("query", nargs="*", action=_JoinWords, metavar="WORD",
                   help="the query; several words are joined into one (quote it to keep the shell off * ( ) \")")
    p.add_argument("--limit", type=limit_arg, default=10, help="at most this many hits (default 10)")
    p.add_argument("--offset", type=offset_arg, default=0, help="skip this many hits first")
    p.add_argument("--by-document", action="store_true", help="group pages per document, best page first")
    p.add_argument("--min-coverage", type=coverage_arg, help="only pages whose glyph coverage is at least this")
    ocr = p.add_mutually_exclusive_group()
    ocr.add_argument("--needs-ocr", dest="needs_ocr", action="store_const", const=True,
                     help="only pages flagged as needing OCR")
    ocr.add_argument("--has-text", dest="needs_ocr", action="store_const", const=False,
                     help="only pages with a usable text layer")
    p.add_argument("--path", dest="path_glob",
                   help="only files under this folder, or matching this path or glob (relative: from here)")
    p.add_argument("--since", type=since_arg, help="files dated on or after this ISO date or time (created, "
                   "else modified, else the file's mtime), e.g. 2024-01-31")
    p.add_argument("--until", type=until_arg, help="files dated on or before this (a day given alone is included)")
    p.add_argument("--sort", choices=("score", "date", "path"), default="score",
                   help="order of hits: score (default), date (newest first) or path")
    p.add_argument("--fail-if-none", action="store_true",
                   help="exit with status 1 when nothing matched (as grep does), for scripts")
    p.add_argument("--exact-count", action="store_true",
                   help=f"count every match (by default counting stops at {COUNT_CAP:,}, shown as {COUNT_CAP:,}+)")
    p.add_argument("--json", action="store_true", help="the hits as JSON (docs/json.md), highlights as offsets")
    _index_arg(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("stats", help="documents, pages, failures and size of the index",
                       description="The short form of `pdfindex status`: documents by status, pages, failures "
                                   "and the index's size.")
    p.add_argument("--json", action="store_true", help="the same keys as status --json (docs/json.md)")
    _index_arg(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("reindex", help="rebuild the index after a schema or analyzer change, without re-extracting",
                       description="Rebuild the index from its stored page text (no PDF is extracted again) and "
                                   "swap it in atomically: after a schema or analyzer change, or to change its "
                                   "language or shard count.")
    p.add_argument("--language", type=language_arg,
                   help="stemming language for the rebuilt index (e.g. en, fr, de, none; default: keep the index's)")
    p.add_argument("--shards", type=_shard_count,
                   help="shards of the rebuilt index (1-64; default: keep the index's count)")
    _index_arg(p)
    p.set_defaults(func=cmd_reindex)


def _shard_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= count <= config.MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"the shard count must be from 1 to {config.MAX_SHARDS}, not {count}")
    return count


def language_arg(text: str) -> str:
    """``--language``: one the analyzer can stem, else a bad command line listing
    the supported ones."""
    from pdfindex.indexer import SearchIndexError  # noqa: PLC0415 - only when the option is given
    from pdfindex.indexer.store import check_language  # noqa: PLC0415

    try:
        return check_language(text.strip().lower())
    except SearchIndexError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def path_arg(text: str) -> Path:
    """A path from the command line. An empty one is refused: ``Path("")`` is the
    current directory, where an index would be created (and the folder made private)
    or which would be ingested whole, though nobody asked for either."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (it would mean the current directory); give a path")
    return Path(text)


def _index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=path_arg,
                   help="index directory (default: $PDFINDEX_INDEX_DIR or the user data dir)")


@contextmanager
def _user_errors() -> Iterator[None]:
    from pdfindex.indexer import QueryError, SearchIndexError, StorageError  # noqa: PLC0415 - keep Whoosh out of `pdfindex extract`
    from pdfindex.workers.errors import IngestError  # noqa: PLC0415

    try:
        yield
    except StorageError as exc:
        raise CliError(str(exc), EXIT_STORAGE) from None
    except QueryError as exc:  # a bad query is a bad command line
        raise CliError(str(exc), EXIT_USAGE) from None
    except (SearchIndexError, config.SettingsError, IngestError) as exc:
        raise CliError(str(exc)) from None


def open_index(args: argparse.Namespace, *, create: bool = False, reading: bool = False) -> PageIndex:
    """The index of ``--index`` or PDFINDEX_INDEX_DIR. ``reading`` (search, list): in
    distributed mode, say on stderr whether it is the writer's (cli/writer_index.py)."""
    from pdfindex.indexer import PageIndex  # noqa: PLC0415

    settings = config.load()
    root = args.index or settings.index_dir
    try:
        # searched in the language it was built with
        index = PageIndex(root, None, create=create)
    except FileNotFoundError:
        raise CliError(f"no index at {shown(str(root))}; ingest some PDFs first (or pass --index)") from None
    if reading:
        say_which(index, settings, getattr(args, "quiet", False))
    return index


def cmd_search(args: argparse.Namespace) -> int:
    from pdfindex.indexer import SearchOptions  # noqa: PLC0415

    with _user_errors():
        settings = config.load()
        path_glob = resolve_path_glob(args.path_glob) if args.path_glob is not None else None
        if args.since is not None and args.until is not None and args.since > args.until:
            raise CliError("--since is after --until: nothing can match", EXIT_USAGE)
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
    return EXIT_NONE_FOUND if args.fail_if_none and not result.total else 0


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


def _coverage(value: float | None) -> str:
    return "no text" if value is None else f"coverage {value:.2f}"


def _day(stamp: float | None) -> str:
    from datetime import UTC, datetime  # noqa: PLC0415

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
            out.write(f"    p.{best.page} ({_coverage(best.coverage)}): {_marked(best, bold)}\n")
        unit, shown_count = "document", len(result.groups)
    else:
        for hit in result.hits:
            out.write(f"{shown(hit.path)}  p.{hit.page}{_score(hit.score)}  {_coverage(hit.coverage)}\n")
            out.write(_about(hit))
            out.write(f"    {_marked(hit, bold)}\n")
        unit, shown_count = "page", len(result.hits)
    plural = "" if result.total == 1 and not result.total_is_lower_bound else "s"
    out.write(f"{total_text(result.total, result.total_is_lower_bound)} {unit}{plural} matched in {result.took:.3f} s"
              f"{_showing(result, offset, shown_count)}\n")
    if result.note:
        out.write(f"note: {shown(result.note)}\n")
    if result.suggestion:
        out.write(f"did you mean: {shown(result.suggestion)}\n")


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


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB"):
        if value < 1000:
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def status_report(args: argparse.Namespace) -> dict[str, Any]:
    """What ``status`` and ``stats`` report (``shapes.status_json``): ``stats`` is
    only the shorter text form."""
    with _user_errors(), open_index(args) as index:
        return status_json(index, config.load())


def cmd_status(args: argparse.Namespace) -> int:
    report = status_report(args)
    if args.json:
        write_json(report)
        return 0
    _print_counts(report, size_inline=True)
    if report["queues"] is not None:
        print("queues:    " + "  ".join(f"{k}: {v}" for k, v in report["queues"].items()))
        print(f"writer:    {_writer_line(report)}")
    for failure in report["failures"]:
        print(f"  {failure['status']} {shown(failure['path'])}: {shown(failure['error'])} "
              f"(attempts: {failure['attempts']})")
    return 0


def _writer_line(report: dict[str, Any]) -> str:
    """The index the broker's writer announced, and whether it is this one."""
    writer = report["writer_index"]
    if writer is None:
        return "no index writer has started on this broker yet"
    line = (f"{shown(writer['path'])} on {shown(writer['host'])} (id {writer['id'][:12]}), "
            f"{'running' if writer['running'] else 'not running'}")
    if writer["id"] != report["index_id"]:
        line += " - NOT this index: set PDFINDEX_INDEX_DIR to the writer's index folder"
    return line


def cmd_stats(args: argparse.Namespace) -> int:
    report = status_report(args)
    if args.json:
        write_json(report)
        return 0
    _print_counts(report, size_inline=False)
    return 0


def _count(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'' if n == 1 else 's'}"


def _print_counts(report: dict[str, Any], size_inline: bool) -> None:
    size = human_size(report["size_bytes"])
    print(f"index:     {shown(report['location'])}" + (f" ({size})" if size_inline else "")
          + (f"  id {report['index_id'][:12]}" if report["index_id"] else ""))
    print(f"documents: {report['documents']}"
          + "".join(f"  {k}: {v}" for k, v in sorted(report["by_status"].items())))
    shards = report["shard_pages"]
    print(f"pages:     {report['pages']}" + (f"  in {len(shards)} shards: {', '.join(map(str, shards))}"
                                              if len(shards) > 1 else ""))
    if report["problems"]:
        print("problems:  " + "  ".join(f"{code}: {_count(c['pages'], 'page')} in {_count(c['documents'], 'document')}"
                                        for code, c in report["problems"].items())
              + "  (pdfindex list --pages --problems [CODE])")
    print(f"language:  {shown(report['language'])}")
    if not size_inline:
        print(f"size:      {size}")


def cmd_reindex(args: argparse.Namespace) -> int:
    from pdfindex.indexer import reindex  # noqa: PLC0415
    from pdfindex.indexer.store import stored_language  # noqa: PLC0415

    with _user_errors():
        settings = config.load()
        root = args.index or settings.index_dir
        before = stored_language(root)
        if before is None:
            raise CliError(f"no index at {shown(str(root))}")
        language = args.language or before  # without --language the index keeps its own
        copied = reindex(root, language, shards=args.shards)
    shards = f", {args.shards} shard{'s' if args.shards > 1 else ''}" if args.shards else ""
    print(f"reindexed {copied} records into {shown(str(root))} (language {shown(language)}{shards})")
    return 0
