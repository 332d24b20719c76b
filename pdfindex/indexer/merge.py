"""When a commit merges segments: by tiers of size, so a merge never rewrites the
whole index.

Whoosh's default (MERGE_SMALL) merges the smallest segments up to a point set by a
Fibonacci heuristic meant for small commits; with our 2,000-page batches it
periodically merges everything into one segment (the 20th commit at ~40,000 pages
rewrote 250 MB and stopped the writer for over three minutes), and each such merge
is larger than the last. Here segments are grouped by the order of magnitude of
their page count; when MERGE_FACTOR segments share a tier they are merged into the
commit's new segment (one tier per commit), which lands in the next tier. A merge
never makes a segment of more than MAX_MERGED_DOCS: Whoosh merges by re-adding every
posting through its sorting pool, which costs more per page than indexing it (ten
2,000-page segments took over two minutes, the ten commits that wrote them 110 s).
So the segments of full batches are never merged by the writer, and what is merged is
the litter of small commits (a Celery writer committing a few files at a time). The
price is one segment per batch (25 at 50,000 pages with 2,000-page batches); searching
pays for them far less than the writer would for merging them.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from whoosh.reading import SegmentReader

MERGE_FACTOR = 10
MAX_MERGED_DOCS = 10_000


def _tier(segment: Any) -> int:
    return int(math.log10(max(segment.doc_count_all(), 1)))


def tiered_merge(writer: Any, segments: list[Any]) -> list[Any]:
    """A Whoosh merge policy: the segments to keep; those merged are added to the
    writer's new segment."""
    tiers: dict[int, list[Any]] = defaultdict(list)
    for segment in segments:
        tiers[_tier(segment)].append(segment)
    chosen: list[Any] = []
    for tier in sorted(tiers):
        members = sorted(tiers[tier], key=lambda s: s.doc_count_all())[:MERGE_FACTOR]
        if len(members) == MERGE_FACTOR and sum(s.doc_count_all() for s in members) <= MAX_MERGED_DOCS:
            chosen = members
            break
    if not chosen:
        return segments
    merging = {id(s) for s in chosen}
    for segment in chosen:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        try:
            writer.add_reader(reader)
        finally:
            reader.close()
    return [s for s in segments if id(s) not in merging]
