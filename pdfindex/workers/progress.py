"""What an ingest run reports: a live progress bar on a terminal (plain log lines
when not a terminal), a ``logging`` line per finished file (INFO: ``-v``) and the
summary at the end."""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from tqdm import tqdm

from pdfindex.contract.problems import ProblemCode
from pdfindex.indexer import DocumentRecord, Status

from .outcome import Outcome

log = logging.getLogger(__name__)


def brief(outcome: Outcome) -> dict[str, Any]:
    """What the summary needs of an outcome, small enough to pass through Redis."""
    pages = outcome.pages
    return {
        "status": str(outcome.doc.status), "path": outcome.doc.path, "error": outcome.doc.error,
        "pages": len(pages), "needs_ocr": sum(1 for p in pages if p.needs_ocr),
        "coverages": [round(p.coverage, 4) for p in pages if p.coverage is not None],
        "ocr_pending": sum(1 for p in pages if p.ocr_pending),
    }


def brief_of_record(doc: DocumentRecord) -> dict[str, Any]:
    """The same from an index record, when the outcome itself is gone."""
    return {
        "status": str(doc.status), "path": doc.path, "error": doc.error, "pages": doc.page_count, "needs_ocr": 0,
        "coverages": [] if doc.mean_coverage is None else [doc.mean_coverage], "ocr_pending": doc.ocr_pending or 0,
    }


#: The extractor's reason for an encrypted file opened without any password.
_PASSWORD_REQUIRED = "a password is required"


def password_hint(reason: str) -> str:
    """"A password is required" with what to do about it: the summary is where the
    user reads it, and the option must be named there."""
    if not reason.endswith(_PASSWORD_REQUIRED):
        return reason
    return f"{reason}: give it in a file with --password-file (Celery workers: their PDFINDEX_PASSWORD_FILE)"


@dataclass(slots=True)
class Summary:
    indexed: int = 0
    empty: int = 0
    encrypted: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: (path, reason): files that failed or stayed encrypted in an earlier run and are
    #: unchanged since: not extracted again (``retry_failed`` does), still not indexed
    still_failed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0  # indexed and unchanged; copies of indexed files included
    duplicates: int = 0
    pruned: int = 0
    #: paths taken off documents that keep another path (--prune)
    pruned_paths: int = 0
    #: what the walk passed over: non-PDF files, folders not entered (no --recursive)
    skipped_non_pdf: int = 0
    skipped_folders: int = 0
    #: arguments that do not exist and are unknown to the index
    not_found: list[str] = field(default_factory=list)
    #: file arguments that are not PDFs (those found in folders: ``skipped_non_pdf``)
    not_pdf: list[str] = field(default_factory=list)
    #: (folder, reason): folder arguments whose files were not pruned (missing, unmounted)
    not_pruned: list[tuple[str, str]] = field(default_factory=list)
    #: a dry run: nothing changed; the paths that would be indexed and pruned
    dry_run: bool = False
    would_index: list[str] = field(default_factory=list)
    would_prune: list[str] = field(default_factory=list)
    pages: int = 0
    needs_ocr: int = 0
    coverages: list[float] = field(default_factory=list)
    interrupted: bool = False
    started: float = field(default_factory=time.monotonic)
    #: OCR (issue 22): pages sent to OCR, pages it read, files whose OCR failed
    ocr_queued: int = 0
    ocr_pages: int = 0
    ocr_given_up: int = 0
    #: the ocr queue's workers read the pages after the run (Celery mode)
    ocr_in_background: bool = False
    #: pages OCR was asked to read and did not, and the first reason
    ocr_failed: int = 0
    ocr_failure: str = ""

    def record(self, outcome: Outcome) -> None:
        self.add(brief(outcome))

    def add(self, info: dict[str, Any]) -> None:
        """Count one finished file from its ``brief``."""
        status, path, error = Status(info["status"]), info["path"], info["error"]
        ocr = f", {info['needs_ocr']} needing OCR" if info["needs_ocr"] else ""
        if error:
            log.info("%s %s: %s", status, path, error)
        else:
            log.info("%s %s (%d page%s%s)", status, path, info["pages"], "" if info["pages"] == 1 else "s", ocr)
        if status == Status.INDEXED:
            self.indexed += 1
        elif status == Status.EMPTY:
            self.empty += 1
        elif status == Status.ENCRYPTED:
            self.encrypted.append((path, password_hint(error)))
        else:
            self.failed.append((path, error))
        self.pages += info["pages"]
        self.needs_ocr += info["needs_ocr"]
        self.ocr_queued += info.get("ocr_pending", 0)
        self.coverages.extend(info["coverages"])

    def ocr_done(self, outcome: Outcome) -> None:
        """A file's OCR pass: its pages read are no longer pages needing OCR."""
        read = sum(1 for p in outcome.pages if p.ocr_confidence is not None)
        self.ocr_pages += read
        self.needs_ocr = max(0, self.needs_ocr - read)
        for page in outcome.pages:
            failures = [p for p in page.problems if p.code == ProblemCode.OCR_FAILED]
            if failures:
                self.ocr_failed += 1
                self.ocr_failure = self.ocr_failure or str(failures[0])

    def moved(self, before: Status, after: Status) -> None:
        """A file counted as ``before`` whose second outcome (OCR) is ``after``."""
        if before == after:
            return
        for status, step in ((before, -1), (after, 1)):
            if status == Status.INDEXED:
                self.indexed += step
            elif status == Status.EMPTY:
                self.empty += step

    def rejected(self, counted_as: Status, path: str, error: str) -> None:
        """A file counted as ``counted_as`` that the index could not take and
        recorded as failed instead."""
        if counted_as == Status.INDEXED:
            self.indexed -= 1
        elif counted_as == Status.EMPTY:
            self.empty -= 1
        else:
            return
        log.info("failed %s: %s", path, error)
        self.failed.append((path, error))

    @property
    def files_done(self) -> int:
        return self.indexed + self.empty + len(self.encrypted) + len(self.failed)

    @property
    def failures(self) -> list[tuple[str, str]]:
        """(path, reason) of every file asked for that is not indexed: this run's
        failures, then those unchanged since an earlier run failed them."""
        return self.encrypted + self.failed + self.still_failed

    @property
    def complete(self) -> bool:
        """Everything asked for is indexed or unchanged: no file failed (in this run
        or, unchanged since, in an earlier one), no argument was missing or not a PDF,
        no folder was left unpruned (the CLI's exit status 0)."""
        return not (self.failures or self.not_found or self.not_pdf or self.not_pruned)


class Progress:
    """Files and pages done, pages/second, ETA and failures: a bar on a terminal,
    a log line every few seconds otherwise."""

    def __init__(self, total: int, summary: Summary, stream: TextIO | None = None, interval: float = 5.0) -> None:
        self.stream = stream or sys.stderr
        self.summary = summary
        self.total = total
        self.interval = interval
        self._last_log = 0.0
        self._bar: tqdm | None = None
        if self.stream.isatty():
            self._bar = tqdm(total=total, unit="file", file=self.stream, dynamic_ncols=True)

    def _postfix(self) -> str:
        s = self.summary
        elapsed = time.monotonic() - s.started
        rate = s.pages / elapsed if elapsed > 0 else 0.0
        ocr = f", OCR {s.ocr_pages}/{s.ocr_queued} pages" if s.ocr_queued else ""
        return f"{s.pages} pages, {rate:.1f} pages/s{ocr}, {len(s.failed) + len(s.encrypted)} failed"

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(self._postfix(), refresh=False)
            self._bar.update(1)
            return
        now = time.monotonic()
        done = self.summary.files_done
        if now - self._last_log >= self.interval or done == self.total:
            self._last_log = now
            elapsed = now - self.summary.started
            eta = (self.total - done) * elapsed / done if done else 0.0
            self.stream.write(f"pdfindex: {done}/{self.total} files, {self._postfix()}, ETA {eta:.0f} s\n")
            self.stream.flush()

    def refresh(self) -> None:
        """Something other than a file finished (an OCR pass): the figures anew."""
        if self._bar is not None:
            self._bar.set_postfix_str(self._postfix())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class NoProgress(Progress):
    """Progress that reports nothing: the default for Python callers of
    ``workers.api``, whose stderr is theirs."""

    def __init__(self, total: int, summary: Summary) -> None:
        self.stream = sys.stderr
        self.summary = summary
        self.total = total
        self.interval = 0.0
        self._last_log = 0.0
        self._bar = None

    def advance(self) -> None:
        return
