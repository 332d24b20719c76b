"""``pdfindex explain FILE --page N [--near TEXT]``: the decisions behind one page's text."""
from __future__ import annotations

import argparse
import dataclasses
import sys

from pdfindex.contract.display import shown
from pdfindex.contract.shapes import JSON_VERSION
from pdfindex.pipeline import Page, PdfFile, iter_pages
from pdfindex.pipeline.explain import Explanation, explain_page

from .extract_cmd import ocr_settings, page_arg, page_json, params_arg
from .terminal import write_json


def cmd_explain(args: argparse.Namespace) -> int:
    pdf = PdfFile(args.file, args.password)
    page_arg(pdf, args.page)
    params = params_arg(args)
    result = explain_page(pdf, args.page, params, near=args.near)
    page = next(iter_pages(pdf, [args.page], params=params, ocr=ocr_settings(args), password=args.password))
    if args.json:
        ocr = page_json(page)
        write_json({"version": JSON_VERSION, "file": pdf.name, **dataclasses.asdict(result),
                    "ocr": {key: ocr[key] for key in ("source", "ocr", "ocr_decision")},
                    "ocr_words": [w.as_dict() for w in page.ocr.boxes] if page.ocr else []})
        return 0
    _print(result, pdf.name)
    _print_ocr(page, args.near)
    return 0


def _print_ocr(page: Page, near: str | None) -> None:
    """Why the page was or was not OCR'd, and what OCR read: its words with their
    confidence, by line (``--near``: the lines holding TEXT)."""
    out = sys.stdout
    out.write(f"\nOCR: {shown(page.ocr_decision)}\n")
    info = page.ocr
    if info is None:
        return
    out.write(f"  {info.engine}, {info.languages}: mean confidence {info.confidence:.0f} %, "
              f"{info.low_share:.0%} of {info.words} words under 60 %; text from {page.source}\n")
    out.write(f"  how: {shown(info.how)}\n")
    mapped = page.text_map
    if mapped is None:
        return
    for number, text in sorted(mapped.line_texts().items()):
        if near and near not in text:
            continue
        words = [w for w, line in zip(mapped.glyphs, mapped.lines, strict=True) if line == number]
        out.write(f"  line {number}: " + " ".join(f"{shown(w.text)}({w.confidence:.0f})" for w in words) + "\n")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print(result: Explanation, name: str) -> None:
    out = sys.stdout
    x0, y0, x1, y1 = result.box
    out.write(f"{shown(name)}, page {result.page}: visible box {x0:.1f} {y0:.1f} {x1:.1f} {y1:.1f} (R10)\n")
    if result.suspect:
        out.write(f"text suspect (R7, beyond): {shown(result.suspect)}\n")
    line = 0
    for step in result.steps:
        if step.line != line:
            line = step.line
            out.write(f"\nline {line}: {shown(step.line_rule)}\n")
            out.write(f"  {'glyph':<8} {'x':>8} {'y':>8} {'height':>7} {'gap':>6} {'thresh':>6}  decision\n")
        decision = step.space_rule or ("" if step.new_line else step.line_rule)
        out.write(f"  {shown(repr(step.text)):<8} {step.x:8.2f} {step.y:8.2f} {step.height:7.2f} {_num(step.gap):>6} "
                  f"{_num(step.threshold):>6}  {shown(decision)}\n")
    if result.dropped:
        out.write(f"\noutside the visible box, dropped (R10): {len(result.dropped)} glyphs\n")
        for text, x, y in result.dropped[:50]:
            out.write(f"  {shown(repr(text)):<8} {x:8.2f} {y:8.2f}\n")
