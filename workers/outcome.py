"""One file's extraction outcome: its record and pages for the index, made by the
same function in a local process pool and in a Celery task, and sent as JSON
between processes (never pickled objects, never the PDF bytes)."""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import fmean

from billiard.exceptions import SoftTimeLimitExceeded

import pipeline
from indexer import DocumentRecord, PageRecord, Status

from .files import file_identity


@dataclass(frozen=True, slots=True)
class Outcome:
    doc: DocumentRecord
    pages: list[PageRecord]

    def to_json(self) -> str:
        return json.dumps({"doc": asdict(self.doc), "pages": [asdict(p) for p in self.pages]}, ensure_ascii=False)

    @staticmethod
    def from_json(data: str | bytes) -> Outcome:
        raw = json.loads(data)
        doc = raw["doc"]
        doc["status"] = Status(doc["status"])
        return Outcome(DocumentRecord(**doc), [PageRecord(**p) for p in raw["pages"]])


def failed(path: Path, doc_hash: str, status: Status, error: str, attempts: int = 1) -> Outcome:
    """A record without pages, for a file that could not be indexed."""
    try:
        size, mtime = file_identity(path)
    except OSError:
        size, mtime = 0, 0.0
    return Outcome(DocumentRecord(doc_hash=doc_hash, path=str(path), status=status, size=size, mtime=mtime,
                                  ingested=time.time(), error=error, attempts=attempts), [])


def extract_outcome(path: Path, doc_hash: str, passwords: list[str], attempts: int = 1) -> Outcome:
    """Extract one file into index records. Never raises for a bad file: a file
    that is not a PDF, needs a password we lack, or breaks the extractor becomes a
    record with a status and an error message naming the problem."""
    size, mtime = file_identity(path)
    try:
        doc = _open(path, passwords)
        pages = [
            PageRecord(number=p.number, text=p.text, coverage=p.quality.coverage, glyphs=p.quality.glyphs,
                       unresolved=p.quality.unresolved, needs_ocr=p.quality.needs_ocr)
            for p in doc.pages
        ]
    except pipeline.PasswordError as exc:
        return failed(path, doc_hash, Status.ENCRYPTED, exc.problem, attempts)
    except pipeline.ExtractionError as exc:
        return failed(path, doc_hash, Status.FAILED, exc.problem, attempts)
    except MemoryError:
        return failed(path, doc_hash, Status.FAILED, "out of memory while extracting (memory limit per file)", attempts)
    except SoftTimeLimitExceeded:
        return failed(path, doc_hash, Status.FAILED, "time limit per file exceeded", attempts)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not stop the ingest
        return failed(path, doc_hash, Status.FAILED, f"extractor error: {type(exc).__name__}: {exc}", attempts)
    coverages = [p.coverage for p in pages if p.coverage is not None]
    has_text = any(p.glyphs for p in pages)
    return Outcome(
        DocumentRecord(
            doc_hash=doc_hash, path=str(path), status=Status.INDEXED if has_text else Status.EMPTY,
            page_count=len(pages), title=doc.info.get("Title", ""), producer=doc.info.get("Producer", ""),
            size=size, mtime=mtime, ingested=time.time(), attempts=attempts,
            mean_coverage=fmean(coverages) if coverages else None,
        ),
        pages,
    )


def _open(path: Path, passwords: list[str]) -> pipeline.Document:
    """Try no password, then each password of the password file."""
    try:
        return pipeline.extract(path)
    except pipeline.PasswordError as first:
        for password in passwords:
            try:
                return pipeline.extract(path, password=password)
            except pipeline.PasswordError:
                continue
        if passwords:
            raise pipeline.PasswordError(first.source, "encrypted; no password in the password file opens it",
                                         missing=False) from None
        raise
