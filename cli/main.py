"""``pdfindex`` entry point: argument parsing and the error policy of the CLI.

Every failure the user can cause (a missing file, not a PDF, a wrong password, a bad
page range) ends as one line on stderr naming the file and the problem, and a
non-zero exit status; never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pipeline import ExtractionError, PasswordError, PdfFile, iter_pages, parse_page_ranges

EXIT_ERROR = 1
EXIT_PASSWORD = 3


def _pages_arg(pdf: PdfFile, spec: str | None) -> list[int] | None:
    if spec is None:
        return None
    try:
        return parse_page_ranges(spec, pdf.page_count)
    except ValueError as exc:
        raise SystemExit(f"pdfindex: {pdf.name}: {exc}") from None


def cmd_extract(args: argparse.Namespace) -> int:
    pdf = PdfFile(args.file, args.password)
    numbers = _pages_arg(pdf, args.pages)
    out = sys.stdout
    if args.json:
        pages = []
        for page in iter_pages(pdf, numbers):
            q = page.quality
            pages.append({
                "page": page.number, "text": page.text, "glyphs": q.glyphs, "unresolved": q.unresolved,
                "coverage": None if q.coverage is None else round(q.coverage, 4), "needs_ocr": q.needs_ocr,
                "problems": page.problems,
            })
        json.dump({"file": pdf.name, "page_count": pdf.page_count, "pages": pages}, out, ensure_ascii=False)
        out.write("\n")
        return 0
    first = True
    for page in iter_pages(pdf, numbers):
        if not first:
            out.write("\f")
        out.write(page.text)
        out.write("\n")
        first = False
    return 0


def cmd_glyphs(args: argparse.Namespace) -> int:
    pdf = PdfFile(args.file, args.password)
    if not 1 <= args.page <= pdf.page_count:
        raise SystemExit(f"pdfindex: {pdf.name}: page {args.page} out of range 1-{pdf.page_count}")
    for page in iter_pages(pdf, [args.page], keep_glyphs=True):
        for glyph in page.glyphs:
            sys.stdout.write(json.dumps(glyph.as_dict(), ensure_ascii=False) + "\n")
        for problem in page.problems:
            print(f"pdfindex: {pdf.name}: page {page.number}: {problem}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pdfindex", description="Index PDFs for full-text search.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("extract", help="print a PDF's text, pages separated by form feeds")
    p.add_argument("file")
    p.add_argument("--pages", help="page ranges, e.g. 1-3,7")
    p.add_argument("--password")
    p.add_argument("--json", action="store_true", help="per-page text and quality as JSON")
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("glyphs", help="print one page's glyph records, one JSON object a line")
    p.add_argument("file")
    p.add_argument("--page", type=int, required=True)
    p.add_argument("--password")
    p.set_defaults(func=cmd_glyphs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except PasswordError as exc:
        print(f"pdfindex: {exc}", file=sys.stderr)
        return EXIT_PASSWORD
    except ExtractionError as exc:
        print(f"pdfindex: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("pdfindex: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
