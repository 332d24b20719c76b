"""One file's extraction outcome: its record and pages for the index, made by the
same function in a local process pool and in a Celery task, and sent as JSON
between processes (never pickled objects, never the PDF bytes)."""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from statistics import fmean

from billiard.exceptions import SoftTimeLimitExceeded

from pdfindex import pipeline
from pdfindex.indexer import DocumentRecord, PageRecord, Status
from pdfindex.contract.problems import MAX_LINE, Problem, ProblemCode, as_problem
from pdfindex.config.settings import LANGUAGE_NAME
from pdfindex.contract.enums import TEXT_SOURCES
from pdfindex.contract.shapes import problems_json
from pdfindex.pipeline.ocr.options import OcrSettings

from .files import FileRead, file_identity, read_pdf


#: What each field of a record may hold in JSON, for checking outcomes that come
#: from another process or through Redis: a forged hand-off item must not become
#: an index record of any shape it likes.
_NUMBER = (int, float)
_DOC_TYPES: dict[str, tuple[type, ...]] = {
    "doc_hash": (str,), "path": (str,), "status": (str,), "page_count": (int,), "title": (str,),
    "producer": (str,), "size": (int,), "mtime": _NUMBER, "ingested": _NUMBER, "error": (str,), "attempts": (int,),
    "mean_coverage": (*_NUMBER, type(None)), "author": (str,), "subject": (str,), "keywords": (str,),
    "created": (*_NUMBER, type(None)), "modified": (*_NUMBER, type(None)), "paths": (list,), "problems": (dict,),
    "ocr_pending": (int, type(None)),
}
#: A date further than this from the epoch (about year 5138) is no real date, and
#: would break showing it.
_MAX_SECONDS = 1e11
_PAGE_TYPES: dict[str, tuple[type, ...]] = {
    "number": (int,), "text": (str,), "coverage": (*_NUMBER, type(None)), "glyphs": (int,), "unresolved": (int,),
    "needs_ocr": (bool,), "problems": (list,), "source": (str,), "ocr_confidence": (*_NUMBER, type(None)),
    "ocr_languages": (str,), "ocr_pending": (bool,),
}
#: Problems one page may carry in an outcome: the extractor keeps 200 and a line
#: saying how many more (Params.max_page_problems); more is a forged item.
MAX_PAGE_PROBLEMS = 256
_CODES = frozenset(str(c) for c in ProblemCode)



def _page_problems(raw: object, what: str) -> tuple[Problem, ...]:
    """A page's problems from JSON: at most MAX_PAGE_PROBLEMS, each exactly a known
    code and a message of at most MAX_LINE characters."""
    if not isinstance(raw, list) or len(raw) > MAX_PAGE_PROBLEMS:
        raise ValueError(f"{what}: field 'problems' is not a list of at most {MAX_PAGE_PROBLEMS} problems")
    out = []
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"code", "message"}:
            raise ValueError(f"{what}: a problem is not a record with the fields ['code', 'message']")
        code, message = item["code"], item["message"]
        if not isinstance(code, str) or code not in _CODES:
            raise ValueError(f"{what}: unknown problem code {str(code)[:40]!r}")
        if not isinstance(message, str) or len(message) > MAX_LINE:
            raise ValueError(f"{what}: a problem message is not text of at most {MAX_LINE} characters")
        out.append(Problem(code, message))
    return tuple(out)


def _problem_sums(pages: Sequence[PageRecord]) -> dict[str, int]:
    """What a file record carries: its pages' problems counted per code."""
    sums: dict[str, int] = {}
    for page in pages:
        for problem in page.problems:
            sums[str(problem.code)] = sums.get(str(problem.code), 0) + 1
    return sums


#: Fields an outcome may leave out, with the value they then have: those added since
#: (OCR, issue 22), so a worker of the version before still hands over what the writer takes.
_DOC_OPTIONAL: dict[str, object] = {"ocr_pending": None}
_PAGE_OPTIONAL: dict[str, object] = {"source": "text", "ocr_confidence": None, "ocr_languages": "",
                                     "ocr_pending": False}


def _checked(raw: object, types: dict[str, tuple[type, ...]], what: str,
             optional: dict[str, object]) -> dict[str, object]:
    if isinstance(raw, dict):
        raw = {**optional, **raw}
    if not isinstance(raw, dict) or set(raw) != set(types):
        raise ValueError(f"{what}: not a record with the fields {sorted(types)}")
    for key, allowed in types.items():
        value = raw[key]
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise ValueError(f"{what}: field {key!r} has a {type(value).__name__}")
    if "paths" in raw and not all(isinstance(p, str) for p in raw["paths"]):
        raise ValueError(f"{what}: field 'paths' holds something other than text")
    for key in ("created", "modified"):
        stamp = raw.get(key)
        if isinstance(stamp, (int, float)) and not -_MAX_SECONDS <= stamp <= _MAX_SECONDS:  # NaN fails too
            raise ValueError(f"{what}: field {key!r} is not a date")
    return raw


@dataclass(frozen=True, slots=True)
class Outcome:
    doc: DocumentRecord
    pages: list[PageRecord]
    #: The hash the file was planned (and its progress is tracked) under; the
    #: record's own hash is that of the bytes actually extracted, which differs when
    #: the file changed in between.
    job_hash: str = ""

    def to_json(self) -> str:
        # ASCII escapes keep file names that are not UTF-8 (lone surrogates) lossless.
        # Problems are text with a code: written as {code, message} (asdict would write the text alone).
        pages = [{**asdict(p), "problems": problems_json(p.problems)} for p in self.pages]
        return json.dumps({"doc": asdict(self.doc), "pages": pages, "job_hash": self.job_hash or self.doc.doc_hash})

    @staticmethod
    def from_json(data: str | bytes) -> Outcome:
        """Parse and check an outcome; ValueError says what is malformed."""
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"outcome is not JSON: {str(exc)[:80]}") from None
        if not isinstance(raw, dict) or not isinstance(raw.get("pages"), list) \
                or not isinstance(raw.get("job_hash"), str):
            raise ValueError("outcome: not an object with doc, pages and job_hash")
        doc = dict(_checked(raw.get("doc"), _DOC_TYPES, "outcome record", _DOC_OPTIONAL))
        try:
            doc["status"] = Status(str(doc["status"]))
        except ValueError:
            raise ValueError(f"outcome record: unknown status {str(doc['status'])[:40]!r}") from None
        pages = []
        for p in raw["pages"]:
            fields = dict(_checked(p, _PAGE_TYPES, "outcome page", _PAGE_OPTIONAL))
            fields["problems"] = _page_problems(fields["problems"], "outcome page")
            _check_ocr(fields)
            pages.append(PageRecord(**fields))  # type: ignore[arg-type]
        sums = doc["problems"]
        if not all(type(n) is int for n in sums.values()) or sums != _problem_sums(pages):  # type: ignore[attr-defined]
            raise ValueError("outcome record: field 'problems' is not the sum of its pages' problems")
        return Outcome(DocumentRecord(**doc), pages, raw["job_hash"])  # type: ignore[arg-type]


def _check_ocr(fields: dict[str, object]) -> None:
    """A page's OCR fields from JSON: a known source, a confidence in 0-100, and
    languages that are Tesseract names (a forged item could otherwise store anything)."""
    if fields["source"] not in TEXT_SOURCES:
        raise ValueError(f"outcome page: unknown text source {str(fields['source'])[:40]!r}")
    confidence = fields["ocr_confidence"]
    if confidence is not None and not 0 <= confidence <= 100:  # type: ignore[operator]  # NaN fails too
        raise ValueError("outcome page: field 'ocr_confidence' is not in 0-100")
    languages = fields["ocr_languages"]
    if not isinstance(languages, str) or len(languages) > 200 or (
            languages and not all(LANGUAGE_NAME.fullmatch(name) for name in languages.split("+"))):
        raise ValueError("outcome page: field 'ocr_languages' is not Tesseract language names")


def page_record(page: pipeline.Page) -> PageRecord:
    """A page for the index. An OCR'd page no longer needs OCR (unless OCR failed:
    then it keeps the flag and an ``ocr_failed`` problem), and its coverage is its
    OCR confidence as a share: the quality figure of its text, as coverage is of a
    text layer's."""
    q = page.quality
    info = page.ocr if page.source != "text" else None
    return PageRecord(
        number=page.number, text=page.text,
        coverage=round(info.confidence / 100, 4) if info is not None and page.source == "ocr" else q.coverage,
        glyphs=q.glyphs, unresolved=q.unresolved, needs_ocr=q.needs_ocr and page.ocr is None,
        problems=_typed(page.problems), source=page.source,
        ocr_confidence=page.ocr.confidence if page.ocr is not None else None,
        ocr_languages=page.ocr.languages if page.ocr is not None else "", ocr_pending=page.ocr_pending)


def without_ocr(outcome: Outcome, reason: str) -> Outcome:
    """A file's text outcome after its OCR failed: its pages needing OCR carry the
    reason (``ocr_failed``) and wait no more, so no run retries them for ever."""
    problem = Problem(ProblemCode.OCR_FAILED, reason[:MAX_LINE])
    pages = [replace(p, problems=_typed([*p.problems, problem]), ocr_pending=False) if p.needs_ocr
             else replace(p, ocr_pending=False) for p in outcome.pages]
    doc = replace(outcome.doc, ocr_pending=0, problems=_problem_sums(pages))
    return Outcome(doc, pages, outcome.job_hash)


def failed(path: Path, doc_hash: str, status: Status, error: str, attempts: int = 1) -> Outcome:
    """A record without pages, for a file that could not be indexed (or read: then
    ``doc_hash`` is the planned one, there being no content to hash)."""
    try:
        size, mtime = file_identity(path)
    except OSError:
        size, mtime = 0, 0.0
    return Outcome(DocumentRecord(doc_hash=doc_hash, path=str(path), status=status, size=size, mtime=mtime,
                                  ingested=time.time(), error=error, attempts=attempts), [], doc_hash)


def extract_outcome(path: Path, doc_hash: str, passwords: list[str], attempts: int = 1,
                    roots: Sequence[Path] | None = None, ocr: OcrSettings | None = None) -> Outcome:
    """Extract one file into index records. Never raises for a bad file: a file
    that is not a PDF, needs a password we lack, or breaks the extractor becomes a
    record with a status and an error message naming the problem.

    The file is read once and the record carries the hash of exactly the bytes
    extracted, whatever ``doc_hash`` (the planned hash) says: a file rewritten
    since it was planned is recorded as what it now holds. With ``roots``, a file
    outside them is not read (``OutsideRoots`` propagates: the caller decides
    whether that is a record or a refused message). ``ocr``: which pages are OCR'd,
    or with ``defer`` only marked for a later OCR pass (None: none)."""
    try:
        read = read_pdf(path, roots)
    except OSError as exc:
        return failed(path, doc_hash, Status.FAILED, f"cannot read file: {exc.strerror or exc}", attempts)
    try:
        doc = _open(read.data, passwords, ocr)
        pages = [page_record(p) for p in doc.pages]
    except pipeline.PasswordError as exc:
        return _read_failed(path, read, doc_hash, Status.ENCRYPTED, exc.problem, attempts)
    except pipeline.ExtractionError as exc:
        return _read_failed(path, read, doc_hash, Status.FAILED, exc.problem, attempts)
    except MemoryError:
        return _read_failed(path, read, doc_hash, Status.FAILED,
                            "out of memory while extracting (memory limit per file)", attempts)
    except SoftTimeLimitExceeded:
        return _read_failed(path, read, doc_hash, Status.FAILED, "time limit per file exceeded", attempts)
    except Exception as exc:  # noqa: BLE001 - one file's crash must not stop the ingest
        return _read_failed(path, read, doc_hash, Status.FAILED,
                            f"extractor error: {type(exc).__name__}: {str(exc)[:160]}", attempts)
    coverages = [p.coverage for p in pages if p.coverage is not None]
    has_text = any(p.glyphs or (p.source != "text" and p.text.strip()) for p in pages)
    meta = doc.metadata
    return Outcome(
        DocumentRecord(
            doc_hash=read.doc_hash, path=str(path), status=Status.INDEXED if has_text else Status.EMPTY,
            page_count=len(pages), title=meta.title, producer=meta.producer,
            size=read.size, mtime=read.mtime, ingested=time.time(), attempts=attempts,
            mean_coverage=fmean(coverages) if coverages else None, author=meta.author, subject=meta.subject,
            keywords=meta.keywords, created=meta.created, modified=meta.modified, paths=[str(path)],
            problems=_problem_sums(pages),
            # None: no page was considered for OCR (it was off), so a later run with OCR
            # on takes the pages needing it as waiting (plan._waiting_for_ocr)
            ocr_pending=sum(p.ocr_pending for p in pages) if ocr is not None and ocr.mode != "off" else None,
        ),
        pages,
        doc_hash,
    )


def _typed(problems: Sequence[str]) -> tuple[Problem, ...]:
    """A page's problems as records, as many as an outcome may carry (the last
    kept says how many more there were)."""
    typed = [as_problem(p) for p in problems]
    if len(typed) > MAX_PAGE_PROBLEMS:
        dropped = len(typed) - MAX_PAGE_PROBLEMS + 1
        typed = [*typed[:MAX_PAGE_PROBLEMS - 1],
                 Problem(ProblemCode.CAP_HIT, f"{dropped} more problems on this page not listed")]
    return tuple(typed)


def _read_failed(path: Path, read: FileRead, job_hash: str, status: Status, error: str, attempts: int) -> Outcome:
    """A failure record for content that was read: under that content's hash and
    identity, so an unchanged file is not retried and a changed one is."""
    doc = DocumentRecord(doc_hash=read.doc_hash, path=str(path), status=status, size=read.size, mtime=read.mtime,
                         ingested=time.time(), error=error, attempts=attempts)
    return Outcome(doc, [], job_hash)


def _open(data: bytes, passwords: list[str], ocr: OcrSettings | None) -> pipeline.Document:
    """Try no password, then each password of the password file."""
    try:
        return pipeline.extract(data, ocr=ocr)
    except pipeline.PasswordError as first:
        for password in passwords:
            try:
                return pipeline.extract(data, password=password, ocr=ocr)
            except pipeline.PasswordError:
                continue
        if passwords:
            raise pipeline.PasswordError(first.source, "encrypted; no password in the password file opens it",
                                         missing=False) from None
        raise
