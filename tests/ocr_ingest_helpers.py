"""Helpers for tests/test_ocr_ingest.py (issue 22, OCR in ingestion): folders that
mix born-digital PDFs with scans of our own (tests/scans.py), the `pdfindex` command
run for real, and what the index says about each page afterwards (its source, its
OCR confidence, its problems, whether it waits for OCR).

A scanned page carries one line of large ordinary words (Helvetica at 20 pt, rendered
and stored as a clean 300 dpi grey scan): Tesseract reads such a page in one to three
seconds, and reads it right, so a test can search for the page's word. A "dense"
page is a full page of small text: it takes Tesseract more than ten seconds, which a
test uses to trip OCR's time limits.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pdfindex.indexer import PageIndex
from tests.builders import text_line
from tests.celery_helpers import Worker
from tests.ingest_helpers import ROOT, run_cli, write
from tests.pdfwriter import PdfWriter
from tests.scans import scanned

#: Words only the scanned pages carry, one set a page; the first word of each finds
#: its page. Ordinary words Tesseract reads without a slip at this size.
SCAN_LINES = (
    ("Marmalade", "harbour lighthouse"),
    ("Quartzite", "ferryman"),
    ("Bellflower", "tangerine orchard"),
    ("Pelican", "saxophone"),
    ("Walrus", "teapot"),
    ("Cinnamon", "glacier"),
)


def scan_word(n: int) -> str:
    """The word that finds scanned page ``n`` (from 0) of ``SCAN_LINES``."""
    return SCAN_LINES[n][0].lower()


def words_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A born-digital PDF: one page per entry, each string a line of Helvetica 20 pt."""
    w = PdfWriter()
    font = w.standard_font("Helvetica")
    for lines in pages:
        content = b"".join(text_line(72, 720 - 40 * i, b"(%s) Tj" % line.encode(), size=20)
                           for i, line in enumerate(lines))
        w.add_page(content, resources={"Font": {"F1": font}})
    return w.to_bytes()


#: The ordinary English lines around a scanned page's own words: with one short
#: line alone, Tesseract's script detection has too little to go on, and a page was
#: read as vertical Japanese.
FILLER = ("The quarterly minutes of the harbour office were read aloud",
          "and approved without changes by every member present today.",
          "Copies are kept in the archive beside the old ledger books.")


def scan_lines(n: int) -> list[str]:
    """The lines of scanned page ``n`` of ``SCAN_LINES``: its words, then the filler."""
    return [" ".join(SCAN_LINES[n]), *FILLER]


def scan_pdf(first: int, count: int) -> bytes:
    """An image-only PDF of ``count`` clean scanned pages, pages ``first`` ..
    ``first + count - 1`` of ``SCAN_LINES``."""
    return scanned(words_pdf([scan_lines(n) for n in range(first, first + count)]), "clean")


def mixed_pdf(text: str, first: int, count: int) -> bytes:
    """Page 1 a text layer saying ``text``; then ``count`` scanned pages of
    ``SCAN_LINES`` from ``first``."""
    lines = [[text], *[scan_lines(n) for n in range(first, first + count)]]
    return scanned(words_pdf(lines), "mixed")


def dense_pdf(text: str, scans: int, lines: int = 60) -> bytes:
    """Page 1 a text layer saying ``text``; then ``scans`` scanned pages full of small
    text (60 lines of 10 pt: more than ten seconds of Tesseract each here)."""
    w = PdfWriter()
    font = w.standard_font("Helvetica")
    w.add_page(text_line(72, 720, b"(%s) Tj" % text.encode(), size=20), resources={"Font": {"F1": font}})
    for p in range(scans):
        content = b"".join(text_line(50, 760 - 12 * i, b"(line %d of page %d with several ordinary words "
                                                       b"to read slowly) Tj" % (i, p), size=10)
                           for i in range(lines))
        w.add_page(content, resources={"Font": {"F1": font}})
    return scanned(w.to_bytes(), "mixed")


def build(folder: Path, files: dict[str, bytes]) -> dict[str, Path]:
    """``files`` (name: bytes) written under ``folder``; name: path."""
    return {name: write(folder / name, data) for name, data in files.items()}


# ---- what the run and the index say ------------------------------------------------

_OCR_LINE = re.compile(r"^  pages OCR'd:\s+(\d+) of (\d+)", re.M)
_QUEUED_LINE = re.compile(r"^  pages queued for OCR:\s+(\d+)", re.M)


def ocr_counts(stdout: str) -> tuple[int, int] | None:
    """The summary's "pages OCR'd: N of M" as (N, M); None when the run sent no page
    to OCR (the line is left out)."""
    found = _OCR_LINE.search(stdout)
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def queued_for_ocr(stdout: str) -> int | None:
    """The summary's "pages queued for OCR: N" of a Celery run."""
    found = _QUEUED_LINE.search(stdout)
    return None if found is None else int(found.group(1))


def pages(index: Path, *args: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """`pdfindex list --pages --json` (with ``args``): every page's row."""
    r = run_cli("list", "--pages", "--json", *args, "--index", index, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return list(json.loads(r.stdout)["hits"])


def by_page(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Rows of ``pages`` keyed by (file name, page number)."""
    return {(Path(row["path"]).name, row["page"]): row for row in rows}


def search(index: Path, query: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """`pdfindex search --json` (with ``args``)."""
    r = run_cli("search", query, "--json", "--limit", "100", *args, "--index", index, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return dict(json.loads(r.stdout))


def found(index: Path, query: str) -> list[tuple[str, int]]:
    """(file name, page) of every page ``query`` finds."""
    return sorted((Path(h["path"]).name, h["page"]) for h in search(index, query)["hits"])


def waiting(index: Path) -> dict[str, int | None]:
    """File name: the pages its record says wait for OCR (None: a record made with
    OCR off, or before OCR); nothing when the index does not exist yet."""
    if not (index / "current").exists():
        return {}
    return {Path(doc.path).name: doc.ocr_pending for doc in PageIndex(index).documents()}


def waiting_now(index: Path) -> dict[str, int | None]:
    """``waiting``, polled while a run may be creating the index: nothing until it opens."""
    try:
        return waiting(index)
    except Exception:  # the index half made: not there yet
        return {}


def ingested(index: Path) -> dict[str, float]:
    """File name: when its record was written (a file extracted again gets a new time)."""
    return {Path(doc.path).name: doc.ingested for doc in PageIndex(index).documents()}


# ---- a worker started through `pdfindex worker` --------------------------------------

def spawn_pdfindex_worker(name: str, queues: str, env: dict[str, str], log_dir: Path,
                          concurrency: int = 1) -> Worker:
    """`pdfindex worker --queues QUEUES` (its own process group; its output in
    ``log_dir/worker-NAME.log``), named ``NAME@host`` so tests/celery_helpers.py's
    ``wait_ready`` and ``Cluster.task_lines`` find its lines."""
    log = log_dir / f"worker-{name}.log"
    argv = [sys.executable, "-m", "pdfindex.cli.main", "worker", "--queues", queues, "--concurrency",
            str(concurrency), "--", "-n", f"{name}@%h", "--without-gossip", "--without-mingle",
            "--without-heartbeat"]
    with log.open("ab") as fh:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return Worker(name, proc, log)
