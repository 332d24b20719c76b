"""The Whoosh schema: one Whoosh document per page, plus one per PDF file.

Pages and file records share one index so that a document's pages and its record
are committed together or not at all. ``key`` is unique: ``<sha256>:<page>`` for a
page, ``<sha256>`` for the file record, so re-adding replaces. Every field is stored,
which is what lets ``reindex`` rebuild the index without re-extracting any PDF.

SCHEMA_VERSION changes whenever a field or the analysis changes; an index written
with another version (or language) asks for ``pdfindex reindex``.
"""
from __future__ import annotations

import math
import pickle
import re
from typing import Any

from whoosh.analysis import Analyzer
from whoosh.fields import BOOLEAN, ID, KEYWORD, NUMERIC, STORED, Schema
from whoosh.lang import has_stopwords, stopwords_for_language

from pdfindex.contract.problems import Problem
from pdfindex.contract.records import DocumentRecord, PageRecord, Status

from .analysis import PageTokenizer, PathsTokenizer
from .textfields import PAIR_FIELD, PageText, WordPairs, common_terms

#: 3: author, subject, keywords, created, modified, date, paths; exact forms
#: indexed beside stems. 4: exact forms no longer indexed (indexer/exact.py).
#: 5: page problems (stored ``problems``, keyword ``problem``) and their sums on
#: the file record (``problem_counts``); a reindexed older index has none.
#: 6: ``text_pairs``, adjacent common-word pairs for phrases (indexer/textfields.py).
#: 7: ``source``, ``ocr_confidence``, ``ocr_languages``, ``ocr_pending``: OCR (issue 22).
SCHEMA_VERSION = 7

KIND_PAGE = "page"
KIND_DOC = "doc"
#: Fields only file records have: a query about these alone searches records.
RECORD_FIELDS = frozenset({"error", "status"})


def analyzer(language: str) -> Analyzer:
    return PageTokenizer(language)


def _paths_field() -> ID:
    paths = ID(stored=True)
    paths.analyzer = PathsTokenizer()
    return paths


def _common_words(language: str) -> list[str]:
    """The words whose adjacent pairs are indexed: the language's stop words (an
    index of no language, or of one without a list, most often holds English)."""
    return sorted(stopwords_for_language(language if has_stopwords(language) else "en"))


def build_schema(language: str) -> Schema:
    text = analyzer(language)
    return Schema(
        key=ID(stored=True, unique=True),
        kind=ID(stored=True),
        doc_hash=ID(stored=True),
        path=ID(stored=True),
        filename=PageText(analyzer=text),  # words of the file name; the path is stored
        title=PageText(analyzer=text, stored=True),
        producer=PageText(analyzer=text, stored=True),
        page=NUMERIC(int, stored=True, shift_step=16),
        text=PageText(analyzer=text, stored=True, phrase=True, multitoken_query="phrase"),
        **{PAIR_FIELD: WordPairs(text, common_terms(text, _common_words(language)))},  # the page text again
        author=PageText(analyzer=text, stored=True),
        subject=PageText(analyzer=text, stored=True),
        keywords=PageText(analyzer=text, stored=True),
        # created, else modified, else mtime: --since/--until and --sort date
        # (whole seconds: Whoosh cannot make a sort column of a float field)
        date=NUMERIC(int, bits=64, signed=True, shift_step=16, sortable=True, default=0),
        paths=_paths_field(),  # every path of the content, as path_term(): --path
        coverage=NUMERIC(float, stored=True, shift_step=16),
        needs_ocr=BOOLEAN(stored=True),
        # where the text comes from: text, ocr, text+ocr (``source:ocr``); OCR's mean
        # confidence and languages; pages and files waiting for OCR (issue 22)
        source=ID(stored=True),
        ocr_confidence=STORED(),
        ocr_languages=STORED(),
        ocr_pending=STORED(),
        status=ID(stored=True),
        error=PageText(analyzer=text, stored=True),
        # a page's problem codes (``problem:font_missing``); the messages are stored
        # in ``problems``, the file record's sums in ``problem_counts``
        problem=KEYWORD(lowercase=True, scorable=False),
        problems=STORED(),
        problem_counts=STORED(),
        # Shown, never searched: stored only. (Every indexed NUMERIC value costs a
        # term per precision step, which dominated indexing time.)
        page_count=STORED(),
        glyphs=STORED(),
        unresolved=STORED(),
        size=STORED(),
        mtime=STORED(),
        ingested=STORED(),
        attempts=STORED(),
        mean_coverage=STORED(),
        created=STORED(),
        modified=STORED(),
    )


def filename_words(name: str) -> str:
    """"annual_report-2024.pdf" → "annual report 2024": each part findable, and the
    extension left out (every file would match a query for "pdf")."""
    return re.sub(r"[._\-]+", " ", re.sub(r"\.pdf$", "", name, flags=re.IGNORECASE))


_UNENCODABLE = re.compile("[\x00\ud800-\udfff]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\x00{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\x00u{code:04x}"


def path_term(path: str) -> str:
    """The indexed form of a path: valid Unicode, so Whoosh can encode it, and one
    to one. A name that is not UTF-8 reaches us as a str with lone surrogates
    (os.fsdecode); each of those becomes NUL + the byte's two hex digits (NUL itself,
    which no real path holds, and other lone surrogates become NUL + "u" + four).
    Valid paths are their own term; the stored field keeps the path as given."""
    return _UNENCODABLE.sub(lambda m: _escape(m.group()), path)


def holders(searcher: Any, path: str) -> set[str]:
    """The hashes of the file records that hold ``path`` (one of their paths) in
    what ``searcher`` sees."""
    return {h for stored in searcher.documents(paths=path_term(path), kind=KIND_DOC)
            if isinstance(h := stored.get("doc_hash"), str)}


def _filename_of(path: str) -> str:
    return path_term(path).replace("\\", "/").rsplit("/", 1)[-1]


#: Fields holding a page's whole text: checked for their type only.
_PAGE_TEXT = frozenset({"text", PAIR_FIELD})


def problem_in_fields(schema: Schema, fields: dict[str, Any]) -> str | None:
    """Why Whoosh would fail to add this document, or None. Whoosh adds a
    document's postings field by field and cannot take back the ones already added
    when a later field fails, so a batch's documents are checked before any is
    added. Page text is only checked for its type: analysing it twice would double
    the cost of indexing, and the tokenizer yields only valid Unicode words."""
    stored: dict[str, Any] = {}
    for name, value in fields.items():
        if name.startswith("_") or value is None:
            continue
        if name not in schema:
            return f"{name}: no such field"
        field = schema[name]
        try:
            if name in _PAGE_TEXT:
                if not isinstance(value, str):
                    return f"{name}: {type(value).__name__} is not text"
            elif field.indexed:
                for _ in field.index(value):
                    pass
            if field.stored and name not in _PAGE_TEXT:
                stored[name] = fields.get(f"_stored_{name}", value)
        except Exception as exc:  # noqa: BLE001 - what the field raises is the reason
            return f"{name}: {type(exc).__name__}: {exc}"
    try:
        pickle.dumps(stored, 2)
    except Exception as exc:  # noqa: BLE001 - likewise
        return f"stored fields: {type(exc).__name__}: {exc}"
    return None


def doc_fields(doc: DocumentRecord) -> dict[str, Any]:
    """The file record as a Whoosh document."""
    fields: dict[str, Any] = {
        "key": doc.doc_hash, "kind": KIND_DOC, "doc_hash": doc.doc_hash, "path": path_term(doc.path),
        "_stored_path": doc.path, "filename": filename_words(_filename_of(doc.path)), "title": doc.title,
        "producer": doc.producer,
        "page_count": doc.page_count,
        "size": doc.size, "mtime": doc.mtime, "ingested": doc.ingested, "status": str(doc.status),
        "error": doc.error, "attempts": doc.attempts, **_metadata_fields(doc),
    }
    if doc.problems:
        fields["problem_counts"] = {str(code): n for code, n in doc.problems.items()}  # plain text keys
    if doc.mean_coverage is not None:
        fields["mean_coverage"] = doc.mean_coverage
    if doc.ocr_pending is not None:
        fields["ocr_pending"] = doc.ocr_pending
    return fields


def date_term(seconds: float) -> int:
    """The indexed form of a date: whole seconds, clamped to what 64 bits hold."""
    return max(-(2**62), min(2**62, math.floor(seconds))) if math.isfinite(seconds) else 0


def _metadata_fields(doc: DocumentRecord) -> dict[str, Any]:
    """What a file record and each of its pages carry of the metadata: pages too,
    so that ``author:`` finds pages and the date filters apply to them."""
    paths = doc.all_paths
    fields: dict[str, Any] = {
        "author": doc.author, "subject": doc.subject, "keywords": doc.keywords, "date": date_term(doc.date),
        "paths": [path_term(p) for p in paths], "_stored_paths": paths,
    }
    if doc.created is not None:
        fields["created"] = doc.created
    if doc.modified is not None:
        fields["modified"] = doc.modified
    return fields


def page_fields(doc: DocumentRecord, page: PageRecord) -> dict[str, Any]:
    """One page as a Whoosh document, carrying its file's fields for filters."""
    fields: dict[str, Any] = {
        "key": f"{doc.doc_hash}:{page.number}", "kind": KIND_PAGE, "doc_hash": doc.doc_hash,
        "path": path_term(doc.path), "_stored_path": doc.path, "filename": filename_words(_filename_of(doc.path)),
        "title": doc.title, "producer": doc.producer, "page": page.number,
        "page_count": doc.page_count, "text": page.text, PAIR_FIELD: page.text, "glyphs": page.glyphs,
        "unresolved": page.unresolved,
        "needs_ocr": page.needs_ocr, "size": doc.size, "mtime": doc.mtime, "ingested": doc.ingested,
        **_metadata_fields(doc),
    }
    if page.coverage is not None:
        fields["coverage"] = page.coverage
    fields["source"] = page.source
    if page.ocr_confidence is not None:
        fields["ocr_confidence"] = page.ocr_confidence
        fields["ocr_languages"] = page.ocr_languages
    if page.ocr_pending:
        fields["ocr_pending"] = True
    if page.problems:
        fields["problem"] = " ".join(sorted({p.code for p in page.problems}))
        # plain tuples of plain text: pickled by Whoosh, so the index holds no class of ours
        fields["problems"] = [(str(p.code), p.message) for p in page.problems]
    return fields


def fields_from_stored(stored: dict[str, Any]) -> dict[str, Any]:
    """Rebuild a Whoosh document from its stored fields through the records, so a
    reindex also recomputes fields that are indexed but not stored."""
    doc = doc_from_stored(stored)
    if stored.get("kind") != KIND_PAGE:
        return doc_fields(doc)
    page = PageRecord(number=stored["page"], text=stored.get("text", ""), coverage=stored.get("coverage"),
                      glyphs=stored.get("glyphs", 0), unresolved=stored.get("unresolved", 0),
                      needs_ocr=bool(stored.get("needs_ocr", False)), problems=problems_of(stored),
                      source=stored.get("source", "text"), ocr_confidence=stored.get("ocr_confidence"),
                      ocr_languages=stored.get("ocr_languages", ""), ocr_pending=bool(stored.get("ocr_pending")))
    return page_fields(doc, page)


def problems_of(stored: dict[str, Any]) -> tuple[Problem, ...]:
    """A page's stored problems (none in an index from before schema 5)."""
    return tuple(Problem(str(code), str(message)) for code, message in stored.get("problems") or ())


def doc_from_stored(stored: dict[str, Any]) -> DocumentRecord:
    return DocumentRecord(
        doc_hash=stored["doc_hash"], path=stored.get("path", ""), status=Status(stored.get("status", "indexed")),
        page_count=stored.get("page_count", 0), title=stored.get("title", ""), producer=stored.get("producer", ""),
        size=stored.get("size", 0), mtime=stored.get("mtime", 0.0), ingested=stored.get("ingested", 0.0),
        error=stored.get("error", ""), attempts=stored.get("attempts", 1), mean_coverage=stored.get("mean_coverage"),
        author=stored.get("author", ""), subject=stored.get("subject", ""), keywords=stored.get("keywords", ""),
        created=stored.get("created"), modified=stored.get("modified"), paths=_paths_of(stored),
        problems=dict(stored.get("problem_counts") or {}), ocr_pending=stored.get("ocr_pending"),
    )


def _paths_of(stored: dict[str, Any]) -> list[str]:
    """The stored paths; one path alone is the record's ``path`` (``paths`` empty)."""
    paths = list(stored.get("paths") or [])
    return [] if paths == [stored.get("path", "")] else paths
