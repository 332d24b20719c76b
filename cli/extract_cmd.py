"""``pdfindex extract`` and ``pdfindex glyphs``: text and glyph records of one PDF."""
from __future__ import annotations

import argparse
import sys

from pdfindex.pipeline import PdfFile, iter_pages, parse_page_ranges
from pdfindex.pipeline.problems import code_of

from .errors import CliError
from .shapes import JSON_VERSION
from .terminal import shown, write_json


def _pages_arg(pdf: PdfFile, spec: str | None) -> list[int] | None:
    if spec is None:
        return None
    try:
        return parse_page_ranges(spec, pdf.page_count)
    except ValueError as exc:
        raise CliError(f"{pdf.name}: {exc}") from None


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
                "problems": [{"code": str(code_of(p)), "message": str(p)} for p in page.problems],
            })
        write_json({"version": JSON_VERSION, "file": pdf.name, "page_count": pdf.page_count, "pages": pages}, out)
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
        raise CliError(f"{pdf.name}: page {args.page} out of range 1-{pdf.page_count}")
    for page in iter_pages(pdf, [args.page], keep_glyphs=True):
        for glyph in page.glyphs:
            write_json(glyph.as_dict())
        for problem in page.problems:
            print(f"pdfindex: {shown(pdf.name)}: page {page.number}: {shown(problem)}", file=sys.stderr)
    return 0
