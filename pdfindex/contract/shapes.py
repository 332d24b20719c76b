"""The JSON shapes of docs/json.md, built in one place for ``--json`` and the HTTP
API (server/), so that both always answer alike. They read records and take what
they report as arguments: nothing here opens an index or asks a broker.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .problems import Problem
from .records import DocumentRecord, Hit, Listing, SearchResult, Stats, Status, WriterIndex

#: The "version" of every JSON output (docs/json.md): raised when a key changes meaning.
JSON_VERSION = 1


def json_text(value: Any) -> str:
    """One JSON document. Non-ASCII text stays readable; a lone surrogate (a
    non-UTF-8 file name) is written as its JSON escape, which a JSON reader turns
    back into the same string."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "backslashreplace").decode("utf-8")


def hit_json(hit: Hit) -> dict[str, Any]:
    """One hit, the same keys for a search, a grouped search and a listing of pages."""
    return {
        "path": hit.path, "page": hit.page, "score": _score(hit.score), "title": hit.title,
        "coverage": None if hit.coverage is None else round(hit.coverage, 4), "needs_ocr": hit.needs_ocr,
        "source": hit.source, "ocr_confidence": hit.ocr_confidence,
        "snippet": hit.snippet, "highlights": [[s.start, s.end] for s in hit.spans], "doc_hash": hit.doc_hash,
        "author": hit.author, "created": hit.created, "modified": hit.modified,
        "paths": list(hit.paths or [hit.path]), "problems": problems_json(hit.problems),
        "missing": list(hit.missing),
    }


def _score(score: float | None) -> float | None:
    """A relevance, or None for hits ordered by date or path (they are not scored)."""
    return None if score is None else round(score, 4)


def problems_json(problems: Iterable[Problem]) -> list[dict[str, str]]:
    """A page's problems as the index holds them (code and message each)."""
    return [{"code": str(p.code), "message": p.message} for p in problems]


def document_json(doc: DocumentRecord) -> dict[str, Any]:
    """One file record."""
    return {
        "path": doc.path, "doc_hash": doc.doc_hash, "status": str(doc.status), "page_count": doc.page_count,
        "title": doc.title, "author": doc.author, "subject": doc.subject, "keywords": doc.keywords,
        "producer": doc.producer, "created": doc.created, "modified": doc.modified,
        "mtime": doc.mtime, "size": doc.size, "ingested": doc.ingested, "error": doc.error,
        "attempts": doc.attempts,
        "mean_coverage": None if doc.mean_coverage is None else round(doc.mean_coverage, 4),
        "paths": list(doc.paths or [doc.path]),
        "problems": dict(sorted(doc.problems.items())),
        "ocr_pending": doc.ocr_pending,
    }


def result_json(result: SearchResult) -> dict[str, Any]:
    """A search: the same keys whether grouped or not. ``hits`` always holds every
    page shown, in order, each of one shape; grouped, ``documents`` lists the
    documents with the numbers of their pages among the hits."""
    out: dict[str, Any] = {"version": JSON_VERSION, "query": result.query, "total": result.total,
                           "total_is_lower_bound": result.total_is_lower_bound, "took": round(result.took, 4),
                           "partial": result.partial, "note": result.note, "suggestion": result.suggestion,
                           "all_words_total": result.all_words_total}
    hits: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = []
    if result.groups:
        for g in result.groups:
            hits += [hit_json(h) for h in g.pages]
            documents.append({"path": g.path, "title": g.title, "doc_hash": g.doc_hash, "score": _score(g.score),
                              "pages": [h.page for h in g.pages]})
    else:
        hits = [hit_json(h) for h in result.hits]
    out["hits"] = hits
    out["documents"] = documents
    return out


def listing_json(listing: Listing, pages: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"version": JSON_VERSION, "total": listing.total, "took": round(listing.took, 4)}
    if pages:
        out["hits"] = [hit_json(h) for h in listing.pages]
    else:
        out["documents"] = [document_json(d) for d in listing.documents]
    return out


def status_json(stats: Stats, documents: Iterable[DocumentRecord], *, index_id: str | None, language: str,
                engine: str, queues: dict[str, int] | None = None, writer: WriterIndex | None = None) -> dict[str, Any]:
    """What ``status`` and ``stats`` report, the same keys in both: the index's
    counts, its failed and encrypted ``documents``, problem counts, and, when a
    broker is configured, the queues' depths and the index its writer announced."""
    failures = [{"path": d.path, "status": str(d.status), "error": d.error, "attempts": d.attempts}
                for d in documents if d.status in (Status.FAILED, Status.ENCRYPTED)]
    writer_json = None if writer is None else {"id": writer.id, "path": writer.path, "host": writer.host,
                                               "running": writer.running}
    return {"version": JSON_VERSION, "location": stats.location, "index_id": index_id, "writer_index": writer_json,
            "language": language, "engine": engine,
            "documents": stats.documents, "by_status": stats.by_status, "pages": stats.pages,
            "size_bytes": stats.size_bytes, "shard_pages": list(stats.shard_pages), "queues": queues,
            "failures": failures,
            "problems": {code: {"pages": n, "documents": stats.problem_documents.get(code, 0)}
                         for code, n in sorted(stats.problem_pages.items(), key=lambda kv: (-kv[1], kv[0]))}}
