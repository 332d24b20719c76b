"""``pdfindex`` entry point: the command table and the error policy of the CLI.

Every failure the user can cause (a missing file, not a PDF, a wrong password, a bad
page range) ends as one line on stderr naming the file and the problem, and a
non-zero exit status; never a traceback.

Start-up is part of every search: the parser (``parsers``) imports nothing but
argparse, the option readers and the contract, and ``COMMANDS`` names the function
of each command by its module, imported only when that command runs (``search``
never loads the extraction layer and pdfminer, ``extract`` never loads Whoosh). So
each command module imports what it needs at its top.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from pdfindex import config
from pdfindex.contract.display import shown
from pdfindex.contract.options import OptionError

from .arguments import checked_language
from .errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_PASSWORD, EXIT_USAGE, CliError
from .parsers import build_parser, dash_word_error, query_word_taken_for_option

#: Each command's function, as "module:function", imported when the command runs.
COMMANDS = {
    "extract": "pdfindex.cli.extract_cmd:cmd_extract",
    "glyphs": "pdfindex.cli.extract_cmd:cmd_glyphs",
    "explain": "pdfindex.cli.explain_cmd:cmd_explain",
    "ingest": "pdfindex.cli.ingest_cmd:cmd_ingest",
    "remove": "pdfindex.cli.ingest_cmd:cmd_remove",
    "worker": "pdfindex.cli.worker_cmd:cmd_worker",
    "status": "pdfindex.cli.status_cmd:cmd_status",
    "stats": "pdfindex.cli.status_cmd:cmd_stats",
    "search": "pdfindex.cli.search_cmd:cmd_search",
    "reindex": "pdfindex.cli.reindex_cmd:cmd_reindex",
    "list": "pdfindex.cli.list_cmd:cmd_list",
    "serve": "pdfindex.cli.serve_cmd:cmd_serve",
}
#: Commands that read no settings: a bad PDFINDEX_* value must not stop them.
_WITHOUT_SETTINGS = {"extract", "glyphs", "explain"}
#: Commands that log nothing and whose start-up is measured: importing ``logging``
#: for them would cost ~10 ms of every search.
_WITHOUT_LOGGING = {"search", "list"}


def command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function of command ``name``, its module imported now."""
    module, function = COMMANDS[name].split(":")
    run: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), function)
    return run


def _check_language(settings: config.Settings) -> None:
    """PDFINDEX_LANGUAGE must name a stemmer the index has (an unknown one used to
    mean no stemming, silently)."""
    if settings.language == "en":
        return  # the default: nothing to import for it
    try:
        checked_language(settings.language)
    except OptionError as exc:
        raise config.SettingsError(f"PDFINDEX_LANGUAGE: {exc}") from None


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """Options may come between a search's words (`search free --json culture`):
    argparse stops a positional list at the first option, so the words after it come
    back unrecognised and are added to the query. Anything else unknown is an error."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    position = next((n for n, word in enumerate(words) if not word.startswith("-")), None)
    if position is not None and words[position] == "search":
        word = query_word_taken_for_option(words[position + 1:])
        if word is not None:  # argparse would answer with its usage, or read -hello as -h
            parser.exit(EXIT_USAGE, f"pdfindex: {dash_word_error(word)}\n")
    args, extra = parser.parse_known_args(words)
    if extra:
        if args.command == "search" and (dashed := [word for word in extra if word.startswith("-")]):
            parser.exit(EXIT_USAGE, f"pdfindex: {dash_word_error(dashed[0])}\n")
        if args.command != "search":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.query = " ".join(part for part in (args.query, *extra) if part)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    args.verbose, args.quiet = args.verbose or 0, bool(args.quiet)
    if args.command not in _WITHOUT_LOGGING:
        from . import logs  # noqa: PLC0415 - logging (~10 ms), which search and list start without

        logs.configure(args.verbose, args.quiet)
    try:
        if args.command not in _WITHOUT_SETTINGS:
            _check_language(config.load())  # every setting checked before any work starts
        return int(command(args.command)(args))
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
    only if the extraction layer was loaded (only ``extract``, ``glyphs`` and
    ``explain`` do)."""
    errors = sys.modules.get("pdfindex.pipeline.errors")
    if errors is None:
        return None
    if isinstance(exc, errors.PasswordError):
        return EXIT_PASSWORD
    if isinstance(exc, errors.ExtractionError):
        return EXIT_ERROR
    return None


def _fail(message: str, status: int) -> int:
    print(f"pdfindex: {shown(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
