"""Consistency of an index (``PageIndex.check``): what the tests and a suspicious
operator ask after a crash, a reindex or a change of shard count."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from whoosh.index import Index

from pdfindex.contract.records import Status

from .schema import KIND_DOC, KIND_PAGE
from .shards import shard_of


def check(shards: Sequence[Index]) -> list[str]:
    """Every indexed file has exactly its page count of pages and every page
    belongs to a file record, in the same shard, the shard its hash routes to, and
    no path is on two documents. Returns what is wrong (empty: fine)."""
    problems: list[str] = []
    holders: dict[str, list[str]] = {}
    for k, shard in enumerate(shards):
        where = f"shard {k}: " if len(shards) > 1 else ""
        with shard.searcher() as searcher:
            pages: dict[str, set[int]] = {}
            for stored in searcher.documents(kind=KIND_PAGE):
                pages.setdefault(stored["doc_hash"], set()).add(stored["page"])
            records = {d["doc_hash"]: d for d in searcher.documents(kind=KIND_DOC)}
        problems.extend(where + problem for problem in _shard_problems(pages, records))
        for doc_hash, record in records.items():
            home = shard_of(doc_hash, len(shards))
            if home != k:
                problems.append(f"{where}{record.get('path')}: belongs in shard {home}")
            for path in record.get("paths") or [record.get("path", "")]:
                holders.setdefault(path, []).append(doc_hash)
    problems.extend(f"{path}: held by {len(hashes)} documents" for path, hashes in holders.items()
                    if len(hashes) > 1)
    return problems


def _shard_problems(pages: dict[str, set[int]], records: dict[str, dict[str, Any]]) -> Iterator[str]:
    for doc_hash, numbers in pages.items():
        record = records.get(doc_hash)
        if record is None:
            yield f"pages of {doc_hash[:12]} have no file record"
        elif len(numbers) != record.get("page_count", 0):
            yield f"{record.get('path')}: {len(numbers)} pages indexed of {record.get('page_count')}"
    for record in records.values():
        if record.get("status") == Status.INDEXED and record.get("page_count", 0) and record["doc_hash"] not in pages:
            yield f"{record.get('path')}: indexed but no pages"
