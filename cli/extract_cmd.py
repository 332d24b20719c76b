"""``pdfindex extract`` and ``pdfindex glyphs``: text and glyph records of one PDF."""
from __future__ import annotations

import argparse
import json
import sys

from pipeline import PdfFile, iter_pages, parse_page_ranges


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
