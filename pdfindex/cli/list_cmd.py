"""``pdfindex list``: documents (or pages) by status, OCR need, path and date,
straight from the index: no query, no scoring."""
from __future__ import annotations

import argparse
import sys

from pdfindex.contract.display import shown
from pdfindex.contract.records import ListFilters, Listing, Status
from pdfindex.contract.shapes import listing_json
from pdfindex.indexer.listing import glob_selects

from .arguments import dates_option, path_option
from .index_access import open_index, user_errors
from .terminal import write_json


def cmd_list(args: argparse.Namespace) -> int:
    with user_errors():
        dates_option(args.since, args.until)
        filters = ListFilters(
            status=Status(args.status) if args.status else None, needs_ocr=args.needs_ocr,
            min_coverage=args.min_coverage, path_glob=path_option(args.path_glob),
            since=args.since, until=args.until, problem=args.problem,
        )
        with open_index(args, reading=True) as index:
            listing = (index.list_pages if args.pages else index.list_documents)(filters, args.limit, args.offset)
    if args.json:
        write_json(listing_json(listing, args.pages))
    else:
        _print_listing(listing, args.pages, problems=args.problem is not None, path_glob=filters.path_glob)
    return 0


def problem_counts(counts: dict[str, int]) -> str:
    """``font_missing 2, cap_hit 1``: most frequent first."""
    return ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _print_listing(listing: Listing, pages: bool, problems: bool = False, path_glob: str | None = None) -> None:
    """With ``problems``, each page is followed by its problems (code: message)
    and each document by its sums. With ``path_glob``, a document is shown under the
    path that matched it, followed by its other copies that match (``also at``)."""
    out = sys.stdout
    if pages:
        for hit in listing.pages:
            quality = ("no text" if hit.coverage is None else f"coverage {hit.coverage:.2f}") \
                if hit.source != "ocr" or hit.ocr_confidence is None else f"OCR {hit.ocr_confidence:.0f} %"
            out.write(f"{shown(hit.path)}  p.{hit.page}  {quality}{'  needs OCR' if hit.needs_ocr else ''}\n")
            if problems:
                for problem in hit.problems:
                    out.write(f"    {problem.code}: {shown(problem.message)}\n")
        unit = "pages"
    else:
        for doc in listing.documents:
            error = f"  {shown(doc.error)}" if doc.error else ""
            counts = f"  problems: {problem_counts(doc.problems)}" if problems and doc.problems else ""
            copies = [p for p in doc.all_paths[1:] if glob_selects(p, path_glob)] if path_glob else []
            also = f"  also at {', '.join(map(shown, copies))}" if copies else ""
            out.write(f"{shown(doc.path)}  {doc.status}  {doc.page_count} pages{error}{counts}{also}\n")
        unit = "documents"
    shown_rows = len(listing.pages if pages else listing.documents)
    more = f" (showing {shown_rows})" if shown_rows != listing.total else ""
    out.write(f"{listing.total:,} {unit}{more} in {listing.took:.3f} s\n")
