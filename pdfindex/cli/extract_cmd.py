"""``pdfindex extract`` and ``pdfindex glyphs``: text and glyph records of one PDF."""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys

from pdfindex.contract.display import shown
from pdfindex.config.settings import load as load_settings
from pdfindex.config.settings import ocr_languages
from pdfindex.contract.problems import ProblemCode
from pdfindex.contract.shapes import JSON_VERSION, problems_json
from pdfindex.pipeline import DEFAULT_PARAMS, Params, PdfFile, export_text, iter_pages, parse_page_ranges
from pdfindex.pipeline.errors import as_problem
from pdfindex.pipeline.export import FORM_FEED
from pdfindex.pipeline.extract import Page
from pdfindex.pipeline.ocr.options import OcrSettings

from .errors import EXIT_USAGE, CliError
from .terminal import write_json


def _pages_arg(pdf: PdfFile, spec: str | None) -> list[int] | None:
    if spec is None:
        return None
    try:
        return parse_page_ranges(spec, pdf.page_count)
    except ValueError as exc:
        raise CliError(f"{shown(pdf.name)}: {exc}", EXIT_USAGE) from None


def page_arg(pdf: PdfFile, number: int) -> None:
    """``--page N`` of ``glyphs`` and ``explain``: a page the file has (exit 2)."""
    if not 1 <= number <= pdf.page_count:
        raise CliError(f"{shown(pdf.name)}: page {number} out of range 1-{pdf.page_count}", EXIT_USAGE)


_ESCAPES = {"n": "\n", "t": "\t", "f": "\f", "r": "\r", "\\": "\\"}
_ESCAPE = re.compile(r"\\([ntfr\\])")


def separator_arg(text: str) -> str:
    """``--separator``: backslash escapes for what a shell makes hard to type."""
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], text)


def params_arg(args: argparse.Namespace) -> Params:
    """The extraction parameters the command line chose: ``--no-threads``."""
    return dataclasses.replace(DEFAULT_PARAMS, threads=False) if args.no_threads else DEFAULT_PARAMS


def cmd_extract(args: argparse.Namespace) -> int:
    if args.json and (args.output or args.separator is not None or args.bom):
        raise CliError("--json cannot be combined with -o, --separator or --bom", EXIT_USAGE)
    pdf = PdfFile(args.file, args.password)
    numbers = _pages_arg(pdf, args.pages)
    ocr = ocr_settings(args)
    params = params_arg(args)
    if args.output or args.separator is not None or args.bom:
        return _export(pdf, numbers, args, ocr, params)
    out = sys.stdout
    if args.json:
        pages = [page_json(page) for page in iter_pages(pdf, numbers, params=params, layout=args.layout,
                                                         ocr=ocr, password=args.password)]
        write_json({"version": JSON_VERSION, "file": pdf.name, "page_count": pdf.page_count, "pages": pages}, out)
        return 0
    first = True
    told: set[str] = set()
    for page in iter_pages(pdf, numbers, params=params, layout=args.layout, ocr=ocr, password=args.password):
        _tell_ocr_failures(pdf.name, page, told)
        if not first:
            out.write("\f")
        out.write(page.text)
        out.write("\n")
        first = False
    return 0


def _tell_ocr_failures(name: str, page: Page, told: set[str]) -> None:
    """A page OCR should have read and did not: one line on stderr (each reason once
    per file), since the text on stdout cannot say why a scan came out empty."""
    for problem in map(as_problem, page.problems):
        if problem.code == ProblemCode.OCR_FAILED and str(problem) not in told:
            told.add(str(problem))
            print(f"pdfindex: {shown(name)}: page {page.number}: {problem}", file=sys.stderr)


def ocr_settings(args: argparse.Namespace) -> OcrSettings:
    """``--ocr`` and ``--ocr-languages`` over PDFINDEX_OCR and PDFINDEX_OCR_LANGUAGES."""
    settings = load_settings()
    languages = ocr_languages(args.ocr_languages) if args.ocr_languages else settings.ocr_languages
    return OcrSettings(args.ocr or settings.ocr, languages, timeout=settings.ocr_page_timeout)


def page_json(page: Page) -> dict[str, object]:
    """A page of ``extract --json`` (docs/json.md)."""
    q = page.quality
    info = page.ocr
    return {
        "page": page.number, "text": page.text, "glyphs": q.glyphs, "unresolved": q.unresolved,
        "coverage": None if q.coverage is None else round(q.coverage, 4),
        "needs_ocr": q.needs_ocr and page.source == "text", "suspect": bool(q.suspect),
        "source": page.source,
        "ocr": None if info is None else {
            "engine": info.engine, "languages": info.languages, "confidence": info.confidence,
            "low_confidence_share": info.low_share, "words": info.words, "how": info.how},
        "ocr_decision": page.ocr_decision,
        "problems": problems_json(map(as_problem, page.problems)),
    }


def _export(pdf: PdfFile, numbers: list[int] | None, args: argparse.Namespace, ocr: OcrSettings,
            params: Params) -> int:
    """R16: the range as one text, ``--separator`` between pages; to OUT (and a line
    on stderr saying how many pages went there) or to standard output."""
    separator = FORM_FEED if args.separator is None else separator_arg(args.separator)
    if not args.output:
        sys.stdout.flush()
        export_text(pdf, sys.stdout.buffer, pages=numbers, separator=separator, bom=args.bom, layout=args.layout,
                    params=params, ocr=ocr, password=args.password)
        return 0
    try:
        written = export_text(pdf, args.output, pages=numbers, separator=separator, bom=args.bom,
                              layout=args.layout, params=params, ocr=ocr)
    except OSError as exc:
        raise CliError(f"{shown(args.output)}: cannot write: {exc.strerror or exc}") from None
    print(f"pdfindex: {shown(pdf.name)}: {written} page{'s' if written != 1 else ''} written to "
          f"{shown(args.output)}", file=sys.stderr)
    return 0


def cmd_glyphs(args: argparse.Namespace) -> int:
    pdf = PdfFile(args.file, args.password)
    page_arg(pdf, args.page)
    for page in iter_pages(pdf, [args.page], keep_glyphs=True):
        for glyph in page.glyphs:
            write_json(glyph.as_dict())
        for problem in page.problems:
            print(f"pdfindex: {shown(pdf.name)}: page {page.number}: {shown(problem)}", file=sys.stderr)
    return 0
