"""When a commit merges segments: by tiers of size, so a merge never rewrites the
whole index.

Whoosh's default (MERGE_SMALL) merges the smallest segments up to a point set by a
Fibonacci heuristic meant for small commits; with our 2,000-page batches it
periodically merges everything into one segment (the 20th commit at ~40,000 pages
rewrote 250 MB and stopped the writer for over three minutes), and each such merge
is larger than the last. Here segments are grouped by the order of magnitude of
their page count; when MERGE_FACTOR segments share a tier they are merged into the
commit's new segment (one tier per commit), which lands in the next tier. A merge
never makes a segment of more than MAX_MERGED_DOCS: merging costs about as much per
page as indexing it, so with 2,000-page batches a page is rewritten once (into a
~20,000-page segment) and never again, and no commit stops for longer than merging
that many pages takes. The price is more segments at a million pages (~50), which
searching pays for far less than the writer would for larger merges.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from whoosh.reading import SegmentReader

MERGE_FACTOR = 10
MAX_MERGED_DOCS = 60_000


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
