"""``pdfindex`` entry point: argument parsing and the error policy of the CLI.

Every failure the user can cause (a missing file, not a PDF, a wrong password, a bad
page range) ends as one line on stderr naming the file and the problem, and a
non-zero exit status; never a traceback.

Start-up is part of every search: a command's module is imported only when that
command runs (``search`` never loads the extraction layer and pdfminer, ``extract``
never loads Whoosh), and building the parser imports nothing but argparse.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from pdfindex import config
from . import ingest_cmd, list_cmd, search_cmd, serve_cmd
from .errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_PASSWORD, EXIT_USAGE, CliError
from .terminal import shown

#: Commands that read no settings: a bad PDFINDEX_* value must not stop them.
_WITHOUT_SETTINGS = {"extract", "glyphs", "explain"}
#: Commands that log nothing and whose start-up is measured: importing ``logging``
#: for them would cost ~10 ms of every search.
_WITHOUT_LOGGING = {"search", "list"}


def version() -> str:
    """The installed distribution's version, else the source tree's (a checkout run
    without installing)."""
    try:
        from pdfindex import __version__  # noqa: PLC0415
    except ImportError:  # installed before the pdfindex package existed
        from importlib.metadata import version as installed  # noqa: PLC0415

        return installed("pdfindex")
    return str(__version__)


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command function imported when the command runs, not when the parser is
    built."""
    def run(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), name)(args))
    return run


class _Version(argparse.Action):
    """``--version``, with the version looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"pdfindex {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pdfindex", description="Index PDFs for full-text search.")
    parser.add_argument("--version", action=_Version)
    _verbosity(parser, None)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="one of these; `pdfindex COMMAND --help` tells more")

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
    p.set_defaults(func=_lazy("pdfindex.cli.extract_cmd", "cmd_extract"))

    p = sub.add_parser("explain", help="why a page's text came out as it did: each glyph's gap, threshold "
                                       "and decision, with the SPEC rule behind it")
    p.add_argument("file", help="the PDF")
    p.add_argument("--page", type=int, required=True, help="the page to explain, from 1")
    p.add_argument("--near", metavar="TEXT", help="only the lines holding TEXT")
    p.add_argument("--password", help="the PDF's user or owner password")
    p.add_argument("--json", action="store_true", help="every decision as JSON")
    p.set_defaults(func=_lazy("pdfindex.cli.explain_cmd", "cmd_explain"))

    p = sub.add_parser("glyphs", help="print one page's glyph records, one JSON object a line")
    p.add_argument("file", help="the PDF")
    p.add_argument("--page", type=int, required=True, help="the page, from 1")
    p.add_argument("--password", help="the PDF's user or owner password")
    p.set_defaults(func=_lazy("pdfindex.cli.extract_cmd", "cmd_glyphs"))

    ingest_cmd.add_commands(sub)
    search_cmd.add_commands(sub)
    list_cmd.add_commands(sub)
    serve_cmd.add_commands(sub)
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


def _check_language(settings: config.Settings) -> None:
    """PDFINDEX_LANGUAGE must name a stemmer the index has (an unknown one used to
    mean no stemming, silently)."""
    if settings.language == "en":
        return  # the default: nothing to import for it
    from pdfindex.indexer import SearchIndexError  # noqa: PLC0415
    from pdfindex.indexer.store import check_language  # noqa: PLC0415

    try:
        check_language(settings.language)
    except SearchIndexError as exc:
        raise config.SettingsError(f"PDFINDEX_LANGUAGE: {exc}") from None


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Options may come between a search's words (`search free --json culture`):
    argparse stops a positional list at the first option, so the words after it come
    back unrecognised and are added to the query. Anything else unknown is an error."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((n for n, word in enumerate(words) if not word.startswith("-")), None)
    if command is not None and words[command] == "search":
        word = search_cmd.query_word_taken_for_option(words[command + 1:])
        if word is not None:  # argparse would answer with its usage, or read -hello as -h
            parser.exit(EXIT_USAGE, f"pdfindex: {search_cmd.dash_word_error(word)}\n")
    args, extra = parser.parse_known_args(words)
    if extra:
        if args.command == "search" and (dashed := [word for word in extra if word.startswith("-")]):
            parser.exit(EXIT_USAGE, f"pdfindex: {search_cmd.dash_word_error(dashed[0])}\n")
        if args.command != "search":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.query = " ".join(part for part in (args.query, *extra) if part)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    args.verbose, args.quiet = args.verbose or 0, bool(args.quiet)
    if args.command not in _WITHOUT_LOGGING:
        from . import logs  # noqa: PLC0415

        logs.configure(args.verbose, args.quiet)
    try:
        if args.command not in _WITHOUT_SETTINGS:
            _check_language(config.load())  # every setting checked before any work starts
        return int(args.func(args))
    except config.SettingsError as exc:
        return _fail(str(exc), EXIT_ERROR)
    except CliError as exc:
        return _fail(str(exc), exc.exit_status)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("pdfindex: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        status = _extraction_error(exc)
        if status is None:
            raise
        return _fail(str(exc), status)


def _extraction_error(exc: Exception) -> int | None:
    """The exit status of an extraction error, None for anything else. Looked up
    only if the extraction layer was loaded (only ``extract`` and ``glyphs`` do)."""
    pipeline = sys.modules.get("pdfindex.pipeline")
    if pipeline is None:
        return None
    if isinstance(exc, pipeline.PasswordError):
        return EXIT_PASSWORD
    if isinstance(exc, pipeline.ExtractionError):
        return EXIT_ERROR
    return None


def _fail(message: str, status: int) -> int:
    print(f"pdfindex: {shown(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
