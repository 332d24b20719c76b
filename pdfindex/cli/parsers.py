"""The command line's grammar: every command's parser, its options and their help.

Building the parser imports argparse, the option readers (``arguments``) and the
contract, nothing else: ``pdfindex search`` pays for no other command's modules, and
``main`` imports the command that runs (``main.COMMANDS``) once its arguments are
read.
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from pdfindex import __version__
from pdfindex.config import ENGINES
from pdfindex.contract.limits import COUNT_CAP, MAX_SHARDS
from pdfindex.contract.problems import PROBLEM_CODES
from pdfindex.contract.enums import OCR_MODES, SORT_ORDERS, Status

from .arguments import (
    coverage_arg,
    language_arg,
    limit_arg,
    offset_arg,
    path_arg,
    port_arg,
    problem_arg,
    shard_count_arg,
    since_arg,
    until_arg,
)

#: The environment variable holding the API token (``serve --token`` wins over it).
TOKEN_ENV = "PDFINDEX_API_TOKEN"

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
nothing after it) is an error naming its column, exit status 2. When fewer than
10 pages hold every word of 2-6 plain words, the pages holding most of them
follow, each with the words it lacks (+word to require one). A query that finds
nothing suggests a correction from the index's words. A query starting
with - goes after --:  pdfindex search -- -draft report"""

SEARCH_EXAMPLES = """\
examples:
  pdfindex search free culture                   pages with both words
  pdfindex search '"free culture" -license'      the phrase, without "license"
  pdfindex search 'title:(annual OR yearly) report'
  pdfindex search 'invoic* AND (paid OR settled)' --by-document
  pdfindex search 'error:password status:encrypted' --json"""


#: The one-letter options of ``search``: its -h, and the -v/-q every command takes
#: (``_verbosity``). A test checks them against the parser.
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


class _Version(argparse.Action):
    """``--version``."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"pdfindex {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pdfindex", description="Index PDFs for full-text search.")
    parser.add_argument("--version", action=_Version)
    _verbosity(parser, None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="one of these; `pdfindex COMMAND --help` tells more")
    _add_extraction(sub)
    _add_ingestion(sub)
    _add_index_commands(sub)
    _add_list(sub)
    _add_serve(sub)
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    for command in {id(p): p for p in sub.choices.values()}.values():
        _verbosity(command, argparse.SUPPRESS)  # also after the command: `pdfindex ingest -v docs/`
    for name, command in sub.choices.items():
        text = helps.get(name)
        if not command.description and text:  # `pdfindex CMD --help` says what CMD does
            command.description = f"{text[0].upper()}{text[1:]}."
    return parser


def _verbosity(parser: argparse.ArgumentParser, default: object) -> None:
    """-v/-q, global options. A command's copies default to SUPPRESS so that they
    leave a value given before the command in place."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=default,
                       help="a line per file (-vv: debug lines too)")
    group.add_argument("-q", "--quiet", action="store_true", default=default,
                       help="errors only, no progress")


def _index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=path_arg,
                   help="index directory (default: $PDFINDEX_INDEX_DIR or the user data dir)")


def _add_extraction(sub: Any) -> None:
    p = sub.add_parser("extract", help="print a PDF's text, pages separated by form feeds")
    p.add_argument("file", help="the PDF")
    p.add_argument("--pages", help="page ranges, e.g. 1-3,7 (empty: all)")
    p.add_argument("--password", help="the PDF's user or owner password")
    p.add_argument("--json", action="store_true", help="per-page text and quality as JSON")
    p.add_argument("-o", "--output", metavar="OUT", help="write the text to OUT (replaced whole once written)")
    p.add_argument("--separator", help=r"between pages (default a form feed; \n, \t, \f, \r, \\ understood)")
    p.add_argument("--bom", action="store_true", help="begin with a UTF-8 byte order mark")
    p.add_argument("--layout", action="store_true",
                   help="keep the page's arrangement: columns side by side, table cells aligned (R15)")
    _threads_arg(p)
    _ocr_args(p)

    p = sub.add_parser("explain", help="why a page's text came out as it did: each glyph's gap, threshold "
                                       "and decision, with the SPEC rule behind it")
    p.add_argument("file", help="the PDF")
    p.add_argument("--page", type=int, required=True, help="the page to explain, from 1")
    p.add_argument("--near", metavar="TEXT", help="only the lines holding TEXT")
    p.add_argument("--password", help="the PDF's user or owner password")
    p.add_argument("--json", action="store_true", help="every decision as JSON")
    _threads_arg(p)
    _ocr_args(p)

    p = sub.add_parser("glyphs", help="print one page's glyph records, one JSON object a line")
    p.add_argument("file", help="the PDF")
    p.add_argument("--page", type=int, required=True, help="the page, from 1")
    p.add_argument("--password", help="the PDF's user or owner password")


def _threads_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-threads", action="store_true",
                   help="keep content-stream order on pages with article beads instead of following the "
                        "document's article threads")


def _ocr_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ocr", choices=OCR_MODES,
                   help="OCR pages without a usable text layer (auto), none (off) or every page (force); "
                        "default PDFINDEX_OCR, else auto")
    p.add_argument("--ocr-languages", metavar="LANGS",
                   help="Tesseract languages joined by +, e.g. eng+deu+kor (default PDFINDEX_OCR_LANGUAGES, "
                        "else fra+deu+eng+kor+jpn+jpn_vert+chi_sim)")


def _add_ingestion(sub: Any) -> None:
    p = sub.add_parser("ingest", help="extract PDFs and add their pages to the index",
                       description="Find the PDFs among PATHs (by content, and any *.pdf), skip those unchanged "
                                   "since they were indexed, extract and index the rest, and end with a summary; "
                                   "exit 5 when a file asked for is not indexed (failed, encrypted, not a PDF, "
                                   "not found). Ctrl-C or SIGTERM stops it cleanly; a re-run resumes.")
    p.add_argument("paths", nargs="+", type=path_arg, metavar="PATH",
                   help="a PDF, or a folder of them (its sub-folders too with --recursive)")
    p.add_argument("--recursive", "-r", action="store_true", help="descend into folders")
    p.add_argument("--password-file", type=path_arg, help="passwords to try on encrypted files, one a line")
    p.add_argument("--workers", type=int, help="extraction processes (default: CPU cores; embedded mode)")
    p.add_argument("--prune", action="store_true",
                   help="remove indexed documents whose files are gone, among the paths given")
    p.add_argument("--retry-failed", action="store_true",
                   help="extract again the files that failed or were encrypted, though unchanged")
    p.add_argument("--force", action="store_true",
                   help="extract again every file, though unchanged (e.g. after an extraction fix)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be indexed and pruned; change nothing")
    p.add_argument("--watch", action="store_true",
                   help="catch up (pruning among the paths), then keep the index current as files are added, "
                        "changed, moved or deleted, until Ctrl-C or SIGTERM")
    _ocr_args(p)
    _index_arg(p)

    p = sub.add_parser("remove", help="take files, or every file under a folder, off the index",
                       description="Take files, or every indexed file below a folder, off the index, whether or "
                                   "not they still exist on disk; a document with an identical copy elsewhere "
                                   "loses only that path.")
    p.add_argument("paths", nargs="+", type=path_arg, metavar="PATH",
                   help="an indexed file, or a folder: every indexed file below it")
    p.add_argument("--dry-run", action="store_true", help="list what would be removed; change nothing")
    _index_arg(p)

    p = sub.add_parser("worker", help="run a Celery worker (needs PDFINDEX_BROKER_URL)",
                       description="Run a Celery worker of the distributed mode (a thin wrapper over `celery -A "
                                   "pdfindex.workers.app worker`): extraction, the index writer, or both. It "
                                   "needs PDFINDEX_BROKER_URL and PDFINDEX_ROOTS, and stops at once (exit 1) "
                                   "when the broker cannot be reached.")
    p.add_argument("--queues", default="extract,index,ocr",
                   help="queues to consume: extract (extraction), index (the index writer of every shard), "
                        "ocr (OCR of scanned pages: seconds a page, best in workers of their own), "
                        "or index.K (the writer of shard K alone; several may share a worker)")
    p.add_argument("--concurrency", type=int, help="worker processes (a writer's queues always use one)")
    p.add_argument("celery_args", nargs=argparse.REMAINDER, help="more arguments for `celery worker`")

    p = sub.add_parser("status", help="documents by status, failures with reasons, queue depth",
                       description="Documents by status, pages (per shard when sharded), failures with their "
                                   "reasons and attempts, the index's size, and the queues' depths when a "
                                   "broker is configured.")
    p.add_argument("--json", action="store_true", help="the same as JSON (docs/json.md)")
    _index_arg(p)


def _filter_args(p: argparse.ArgumentParser, documents: str) -> None:
    """The page and file filters search and list share (``documents``: what a page
    criterion means for a listing of documents)."""
    p.add_argument("--min-coverage", type=coverage_arg, help="only pages whose glyph coverage is at least this")
    ocr = p.add_mutually_exclusive_group()
    ocr.add_argument("--needs-ocr", dest="needs_ocr", action="store_const", const=True,
                     help=f"only pages flagged as needing OCR{documents}")
    ocr.add_argument("--has-text", dest="needs_ocr", action="store_const", const=False,
                     help=f"only pages with a usable text layer{documents}")
    p.add_argument("--path", dest="path_glob",
                   help="only files under this folder, or matching this path or glob (relative: from here)")
    p.add_argument("--since", type=since_arg, help="files dated on or after this (created, else modified, else the "
                                                   "file's mtime): YYYY-MM-DD, YYYY-MM, YYYY or ISO date-time")
    p.add_argument("--until", type=until_arg, help="files dated on or before this (a day given alone is included)")


def _add_index_commands(sub: Any) -> None:
    p = sub.add_parser("search", help="search the index", description=SEARCH_DESCRIPTION, epilog=SEARCH_EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("query", nargs="*", action=_JoinWords, metavar="WORD",
                   help="the query; several words are joined into one (quote it to keep the shell off * ( ) \")")
    p.add_argument("--limit", type=limit_arg, default=10, help="at most this many hits (default 10)")
    p.add_argument("--offset", type=offset_arg, default=0, help="skip this many hits first")
    p.add_argument("--by-document", action="store_true", help="group pages per document, best page first")
    _filter_args(p, "")
    p.add_argument("--sort", choices=SORT_ORDERS, default="score",
                   help="order of hits: score (default), date (newest first) or path")
    p.add_argument("--fail-if-none", action="store_true",
                   help="exit with status 1 when no page holds every word (as grep does), for scripts")
    p.add_argument("--exact-count", action="store_true",
                   help=f"count every match (by default counting stops at {COUNT_CAP:,}, shown as {COUNT_CAP:,}+)")
    p.add_argument("--json", action="store_true", help="the hits as JSON (docs/json.md), highlights as offsets")
    _index_arg(p)

    p = sub.add_parser("stats", help="documents, pages, failures and size of the index",
                       description="The short form of `pdfindex status`: documents by status, pages, failures "
                                   "and the index's size.")
    p.add_argument("--json", action="store_true", help="the same keys as status --json (docs/json.md)")
    _index_arg(p)

    p = sub.add_parser("reindex", help="rebuild the index after a schema or analyzer change, without re-extracting",
                       description="Rebuild the index from its stored page text (no PDF is extracted again) and "
                                   "swap it in atomically: after a schema or analyzer change, or to change its "
                                   "language, shard count or engine.")
    p.add_argument("--language", type=language_arg,
                   help="stemming language for the rebuilt index (e.g. en, fr, de, none; default: keep the index's)")
    p.add_argument("--shards", type=shard_count_arg,
                   help=f"shards of the rebuilt index (1-{MAX_SHARDS}; default: keep the index's count)")
    p.add_argument("--engine", choices=ENGINES,
                   help="search engine of the rebuilt index (docs/engines.md; default: keep the index's)")
    _index_arg(p)


def _add_list(sub: Any) -> None:
    p = sub.add_parser("list", help="list documents (or pages) by status, OCR need, path and date, unscored",
                       description="List documents, or with --pages pages, straight from the index: no query, "
                                   "no scoring. Documents are listed by path; page criteria (--needs-ocr, "
                                   "--has-text, --min-coverage) keep the documents that have such a page.")
    _filter_args(p, " (documents: with at least one)")
    p.add_argument("--status", choices=[str(status) for status in Status], help="only files of this status")
    p.add_argument("--problems", dest="problem", nargs="?", const="", type=problem_arg, metavar="CODE",
                   help="only pages with a problem extraction recorded (with CODE, that kind: "
                        f"{', '.join(PROBLEM_CODES[:-1])}), each listed with its problems; "
                        "documents: with at least one such page")
    p.add_argument("--pages", action="store_true", help="list pages rather than documents")
    p.add_argument("--limit", type=limit_arg, help="at most this many rows (default: all)")
    p.add_argument("--offset", type=offset_arg, default=0, help="skip this many rows first")
    p.add_argument("--json", action="store_true", help="the rows as JSON (docs/json.md)")
    _index_arg(p)


def _add_serve(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve the search page and the JSON API over HTTP",
                       description="Serve the index over HTTP: the search page at / and the JSON API "
                                   "under /api (described at /openapi.json). The index is "
                                   "opened read-only and follows what ingests commit.")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; anything else needs a token)")
    p.add_argument("--port", type=port_arg, default=8080, help="port (default 8080)")
    p.add_argument("--token", help=f"require this token ('Authorization: Bearer ...'); default ${TOKEN_ENV}")
    p.add_argument("--password-file", type=path_arg,
                   help="passwords to try on encrypted files' page images, one a line "
                        "(default $PDFINDEX_PASSWORD_FILE)")
    _index_arg(p)
