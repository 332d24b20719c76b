"""The OCR pass of an embedded ingest (issue 22): OCR costs seconds a page where
extraction costs milliseconds, so it must not hold back the files with a text
layer. Each file is extracted first with its OCR deferred (its text pages written
at once, its scanned pages marked ``ocr_pending``); then the file goes back to the
pool as an OCR job, behind the text jobs, with a time limit grown by its pages.

An OCR job that fails (its time limit, a crash, memory) must not lose the file's
text: the file is extracted once more without OCR and its waiting pages carry the
reason (``ocr_failed``), so they are not retried for ever. A run stopped between
the passes leaves the pages waiting in the index, and the next run's plan sends
them to OCR without extracting anything else again (``plan.ocr_jobs``).
"""
from __future__ import annotations

from pdfindex.config import Settings
from pdfindex.indexer import Status
from pdfindex.pipeline.ocr.options import OcrSettings

from .outcome import Outcome
from .plan import Job
from .progress import Summary


class OcrPhase:
    """The three ways a run extracts a file, and the OCR pass's bookkeeping."""

    def __init__(self, settings: Settings, summary: Summary) -> None:
        self.settings = settings
        self.summary = summary
        #: The text pass: OCR decided, not done (none at all when OCR is off).
        self.deferred = OcrSettings.text_pass(settings)
        #: The OCR pass.
        self.reading = OcrSettings.from_settings(settings)
        #: The text again, after an OCR pass failed.
        self.off = OcrSettings("off")
        self._abandoned: set[str] = set()

    def limit(self, pages: int) -> float:
        """Seconds an OCR job may take beyond a file's own limit: each page's."""
        return max(1, pages) * self.settings.ocr_page_timeout

    def queued(self, pages: int) -> None:
        self.summary.ocr_queued += pages

    def read(self, outcome: Outcome) -> str | None:
        """An OCR pass's outcome: None when it is to be written, else the reason
        it failed (the file then goes back for its text alone)."""
        if outcome.doc.status in (Status.FAILED, Status.ENCRYPTED):
            self._abandoned.add(outcome.doc.doc_hash)
            self.summary.ocr_given_up += 1
            return f"OCR of the file failed: {outcome.doc.error}"
        self.summary.ocr_done(outcome)
        return None

    def is_abandoned(self, job: Job) -> bool:
        return job.doc_hash in self._abandoned
