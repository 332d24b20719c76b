"""``pdfindex`` entry point: argument parsing and the error policy of the CLI.

Every failure the user can cause (a missing file, not a PDF, a wrong password, a bad
page range) ends as one line on stderr naming the file and the problem, and a
non-zero exit status; never a traceback.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pipeline import ExtractionError, PasswordError

from . import extract_cmd, ingest_cmd, search_cmd
from .errors import CliError

EXIT_ERROR = 1
EXIT_PASSWORD = 3


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
        return int(args.func(args))
    except PasswordError as exc:
        print(f"pdfindex: {exc}", file=sys.stderr)
        return EXIT_PASSWORD
    except (ExtractionError, CliError) as exc:
        print(f"pdfindex: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("pdfindex: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
