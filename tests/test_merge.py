"""indexer/merge.py: commits merge segments by tiers, never the whole index."""
from __future__ import annotations

from pathlib import Path

import pytest

from pdfindex.indexer import PageIndex, merge
from tests.index_helpers import page, record


def _segment_sizes(ix: PageIndex) -> list[int]:
    return sorted(s.doc_count_all() for s in ix._ix._segments())


def test_segments_merge_in_tiers_and_nothing_is_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(merge, "MERGE_FACTOR", 3)
    monkeypatch.setattr(merge, "MAX_MERGED_DOCS", 40)  # scaled down like the batches
    ix = PageIndex(tmp_path / "ix", "en")
    sizes = []
    for n in range(12):  # 12 commits of 2 documents of 1 page each: 4 Whoosh documents a commit
        with ix.writer() as w:
            for k in range(2):
                pages = [page(1, f"word{n} shared")]
                w.add(record(f"c{n}d{k}", f"/r/{n}-{k}.pdf", pages), pages)
        sizes.append(_segment_sizes(ix))
    # the third commit that finds three tier-0 segments (4 docs) merges them into its
    # own: 16 docs, tier 1; three of those would make 48 > 40 docs: never merged
    assert sizes == [[4], [4, 4], [4, 4, 4], [16], [4, 16], [4, 4, 16], [4, 4, 4, 16], [16, 16], [4, 16, 16],
                     [4, 4, 16, 16], [4, 4, 4, 16, 16], [16, 16, 16]]
    assert ix.search("shared").total == 24
    assert all(ix.search(f"word{n}").total == 2 for n in range(12))
