"""``pdfindex search``, ``stats`` and ``reindex``: the index from the command line.

The index layer is imported inside the commands, so ``pdfindex extract`` does not
load Whoosh.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import config

from .errors import EXIT_STORAGE, CliError
from .terminal import shown, write_json

if TYPE_CHECKING:
    from indexer import Hit, PageIndex, SearchResult

BOLD, RESET = "\x1b[1m", "\x1b[0m"


def add_commands(sub: Any) -> None:
    p = sub.add_parser("search", help="search the index")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--by-document", action="store_true", help="group pages per document, best page first")
    p.add_argument("--min-coverage", type=float, help="only pages whose glyph coverage is at least this")
    ocr = p.add_mutually_exclusive_group()
    ocr.add_argument("--needs-ocr", dest="needs_ocr", action="store_const", const=True,
                     help="only pages flagged as needing OCR")
    ocr.add_argument("--has-text", dest="needs_ocr", action="store_const", const=False,
                     help="only pages with a usable text layer")
    p.add_argument("--path", dest="path_glob", help="only files whose path matches this glob")
    p.add_argument("--json", action="store_true")
    _index_arg(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("stats", help="documents, pages, failures and size of the index")
    p.add_argument("--json", action="store_true")
    _index_arg(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("reindex", help="rebuild the index after a schema or analyzer change, without re-extracting")
    p.add_argument("--language", help="stemming language for the rebuilt index (e.g. en, de, none)")
    _index_arg(p)
    p.set_defaults(func=cmd_reindex)


def path_arg(text: str) -> Path:
    """A path from the command line. An empty one is refused: ``Path("")`` is the
    current directory, where an index would be created (and the folder made private)
    or which would be ingested whole, though nobody asked for either."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (it would mean the current directory); give a path")
    return Path(text)


def _index_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=path_arg,
                   help="index directory (default: $PDFINDEX_INDEX_DIR or the user data dir)")


@contextmanager
def _user_errors() -> Iterator[None]:
    from indexer import SearchIndexError, StorageError  # noqa: PLC0415 - keep Whoosh out of `pdfindex extract`
    from workers.errors import IngestError  # noqa: PLC0415

    try:
        yield
    except StorageError as exc:
        raise CliError(str(exc), EXIT_STORAGE) from None
    except (SearchIndexError, config.SettingsError, IngestError) as exc:
        raise CliError(str(exc)) from None


def open_index(args: argparse.Namespace, *, create: bool = False) -> PageIndex:
    from indexer import PageIndex  # noqa: PLC0415

    settings = config.load()
    root = args.index or settings.index_dir
    try:
        return PageIndex(root, settings.language, create=create)
    except FileNotFoundError:
        raise CliError(f"no index at {shown(str(root))}; ingest some PDFs first (or pass --index)") from None


def cmd_search(args: argparse.Namespace) -> int:
    from indexer import SearchOptions  # noqa: PLC0415

    with _user_errors():
        settings = config.load()
        if args.limit < 1 or args.offset < 0:
            raise CliError("--limit must be at least 1 and --offset at least 0")
        index = open_index(args)
        result = index.search(args.query, SearchOptions(
            limit=args.limit, offset=args.offset, by_document=args.by_document, min_coverage=args.min_coverage,
            needs_ocr=args.needs_ocr, path_glob=args.path_glob, timeout=settings.search_timeout,
        ))
    if args.json:
        write_json(_result_json(result))
    else:
        _print_result(result, bold=sys.stdout.isatty())
    return 0


def _hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "path": hit.path, "page": hit.page, "score": round(hit.score, 4), "title": hit.title,
        "coverage": None if hit.coverage is None else round(hit.coverage, 4), "needs_ocr": hit.needs_ocr,
        "snippet": hit.snippet, "highlights": [[s.start, s.end] for s in hit.spans], "doc_hash": hit.doc_hash,
    }


def _result_json(result: SearchResult) -> dict[str, Any]:
    out: dict[str, Any] = {"query": result.query, "total": result.total, "took": round(result.took, 4),
                           "partial": result.partial}
    if result.note:
        out["note"] = result.note
    if result.groups:
        out["documents"] = [{"path": g.path, "title": g.title, "doc_hash": g.doc_hash, "score": round(g.score, 4),
                             "pages": [_hit_json(h) for h in g.pages]} for g in result.groups]
    else:
        out["hits"] = [_hit_json(h) for h in result.hits]
    return out


def _marked(hit: Hit, bold: bool) -> str:
    """The snippet, escaped piece by piece so that only our own bold codes reach
    the terminal."""
    if not bold or not hit.spans:
        return shown(hit.snippet)
    parts, last = [], 0
    for span in hit.spans:
        parts += [shown(hit.snippet[last:span.start]), BOLD, shown(hit.snippet[span.start:span.end]), RESET]
        last = span.end
    parts.append(shown(hit.snippet[last:]))
    return "".join(parts)


def _coverage(value: float | None) -> str:
    return "no text" if value is None else f"coverage {value:.2f}"


def _print_result(result: SearchResult, bold: bool) -> None:
    out = sys.stdout
    if result.groups:
        for group in result.groups:
            best = group.pages[0]
            numbers = ", ".join(str(h.page) for h in group.pages)
            out.write(f"{shown(group.path)}  pages {numbers}  score {group.score:.2f}\n")
            out.write(f"    p.{best.page} ({_coverage(best.coverage)}): {_marked(best, bold)}\n")
        unit = "documents"
    else:
        for hit in result.hits:
            out.write(f"{shown(hit.path)}  p.{hit.page}  score {hit.score:.2f}  {_coverage(hit.coverage)}\n")
            out.write(f"    {_marked(hit, bold)}\n")
        unit = "pages"
    out.write(f"{result.total} {unit} matched in {result.took:.3f} s\n")
    if result.note:
        out.write(f"note: {shown(result.note)}\n")


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB"):
        if value < 1000:
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def cmd_stats(args: argparse.Namespace) -> int:
    with _user_errors():
        stats = open_index(args).stats()
    if args.json:
        write_json({"documents": stats.documents, "pages": stats.pages, "by_status": stats.by_status,
                    "size_bytes": stats.size_bytes, "location": stats.location})
        return 0
    print(f"index:     {shown(stats.location)}")
    print(f"documents: {stats.documents}" + "".join(f"  {k}: {v}" for k, v in sorted(stats.by_status.items())))
    print(f"pages:     {stats.pages}")
    print(f"size:      {human_size(stats.size_bytes)}")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from indexer import reindex  # noqa: PLC0415
    from indexer.store import stored_language  # noqa: PLC0415

    with _user_errors():
        settings = config.load()
        root = args.index or settings.index_dir
        if stored_language(root) is None:
            raise CliError(f"no index at {shown(str(root))}")
        copied = reindex(root, args.language or settings.language)
    print(f"reindexed {copied} records into {shown(str(root))}")
    return 0
