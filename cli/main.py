"""``pdfindex`` entry point: argument parsing and the error policy of the CLI.

Every failure the user can cause (a missing file, not a PDF, a wrong password, a bad
page range) ends as one line on stderr naming the file and the problem, and a
non-zero exit status; never a traceback.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import config
from pipeline import ExtractionError, PasswordError

from . import extract_cmd, ingest_cmd, search_cmd
from .errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_PASSWORD, CliError
from .terminal import shown

#: Commands that read no settings: a bad PDFINDEX_* value must not stop them.
_WITHOUT_SETTINGS = {"extract", "glyphs"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pdfindex", description="Index PDFs for full-text search.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("extract", help="print a PDF's text, pages separated by form feeds")
    p.add_argument("file")
    p.add_argument("--pages", help="page ranges, e.g. 1-3,7")
    p.add_argument("--password")
    p.add_argument("--json", action="store_true", help="per-page text and quality as JSON")
    p.set_defaults(func=extract_cmd.cmd_extract)

    p = sub.add_parser("glyphs", help="print one page's glyph records, one JSON object a line")
    p.add_argument("file")
    p.add_argument("--page", type=int, required=True)
    p.add_argument("--password")
    p.set_defaults(func=extract_cmd.cmd_glyphs)

    ingest_cmd.add_commands(sub)
    search_cmd.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command not in _WITHOUT_SETTINGS:
            config.load()  # every setting checked before any work starts
        return int(args.func(args))
    except PasswordError as exc:
        return _fail(str(exc), EXIT_PASSWORD)
    except (ExtractionError, config.SettingsError) as exc:
        return _fail(str(exc), EXIT_ERROR)
    except CliError as exc:
        return _fail(str(exc), exc.exit_status)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("pdfindex: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _fail(message: str, status: int) -> int:
    print(f"pdfindex: {shown(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
