"""Helpers for the page-index tests: records built by hand, records made from PDFs
by the real extraction pipeline, CJK PDFs drawn with the predefined Uni*-UCS2
CMaps (no ToUnicode), and an independent text folding used to check highlights.

Records are what the workers hand to ``PageIndex``; building them here keeps the
index tests independent of the worker code.
"""
from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from pathlib import Path

from pdfindex import pipeline
from pdfindex.indexer import DocumentRecord, PageRecord, Status
from tests.builders import font_resources
from tests.pdfwriter import PdfWriter

# Predefined CMaps mapping UCS-2 codes to CIDs, with their character collections.
GB = ("UniGB-UCS2-H", ("Adobe", "GB1", 2))
JIS = ("UniJIS-UCS2-H", ("Adobe", "Japan1", 2))
KS = ("UniKS-UCS2-H", ("Adobe", "Korea1", 1))


def sha(label: str) -> str:
    """A stable content hash for a test document named ``label``."""
    return hashlib.sha256(label.encode()).hexdigest()


def page(number: int, text: str, coverage: float | None = 1.0, needs_ocr: bool = False) -> PageRecord:
    glyphs = len(text.replace(" ", ""))
    unresolved = 0 if coverage is None else round(glyphs * (1 - coverage))
    return PageRecord(number=number, text=text, coverage=coverage, glyphs=glyphs, unresolved=unresolved,
                      needs_ocr=needs_ocr)


def record(label: str, path: str, pages: list[PageRecord], *, status: Status = Status.INDEXED,
           doc_hash: str | None = None, **kw: object) -> DocumentRecord:
    """The file record of ``pages`` (its page count is theirs unless given)."""
    kw.setdefault("page_count", len(pages))
    return DocumentRecord(doc_hash=doc_hash or sha(label), path=path, status=status, **kw)  # type: ignore[arg-type]


def u16(text: str) -> bytes:
    """A hex string operand for the Uni*-UCS2 CMaps: the text's UCS-2 code units."""
    return b"<" + text.encode("utf-16-be").hex().upper().encode() + b">"


def cjk_pdf(pages: list[list[str]], cmap: tuple[str, tuple[str, str, int]]) -> bytes:
    """A PDF whose pages draw these lines (top to bottom) with a CID font using a
    predefined Unicode CMap, so the text comes back through the CMap alone."""
    name, ordering = cmap
    w = PdfWriter()
    font = w.type0_font(base_font="TestCJK", encoding=name, cid_subtype="CIDFontType0", ordering=ordering)
    for lines in pages:
        content = b"".join(b"BT /F1 12 Tf 72 %d Td %s Tj ET\n" % (720 - 24 * i, u16(line))
                           for i, line in enumerate(lines))
        w.add_page(content, resources=font_resources(font))
    return w.to_bytes()


def extracted(data: bytes, path: str, **kw: object) -> tuple[DocumentRecord, list[PageRecord]]:
    """The records the pipeline's extraction of ``data`` makes, as an ingester would."""
    doc = pipeline.extract(data)
    pages = [PageRecord(number=p.number, text=p.text, coverage=p.quality.coverage, glyphs=p.quality.glyphs,
                        unresolved=p.quality.unresolved, needs_ocr=p.quality.needs_ocr) for p in doc.pages]
    rec = DocumentRecord(doc_hash=hashlib.sha256(data).hexdigest(), path=path, status=Status.INDEXED,
                         page_count=doc.page_count, size=len(data), **kw)  # type: ignore[arg-type]
    return rec, pages


_MARKS = re.compile("[\u0300-\u036f]")


def folded(text: str) -> str:
    """Compatibility forms, case and accents removed: how a user compares words
    (written independently of the indexer's analysis)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return unicodedata.normalize("NFKC", _MARKS.sub("", decomposed))


def index_dirs(root: Path) -> list[str]:
    """The generation directories under an index root, sorted."""
    return sorted(p.name for p in root.iterdir() if p.name.startswith("gen-"))


def shard_writer_pids(root: Path) -> list[int]:
    """The living shard writer processes (indexer/shard_processes.py) of the index at
    ``root``, found by their command lines: tests check that none is left behind."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"pdfindex.indexer.shard_processes" in argv and str(root).encode() in argv and state != "Z":
            pids.append(int(entry.name))
    return pids


def wait_for_shard_writers_to_end(root: Path) -> None:
    """Fail unless the shard writer processes of the index at ``root`` are gone within
    15 s (they end on their own once their writer is closed or its caller died)."""
    deadline = time.monotonic() + 15
    while shard_writer_pids(root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shard_writer_pids(root) == []
