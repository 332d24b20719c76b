"""One corpus of 90 documents written into a sharded and an unsharded index, and how
their answers are compared, for the shard tests (tests/test_shards.py, in one
process; tests/test_shard_processes.py, a writer process per shard)."""
from __future__ import annotations

import random
from pathlib import Path

from pdfindex.indexer import PageIndex, SearchResult
from pdfindex.indexer.shards import shard_of
from tests.index_helpers import page, record, sha

_WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which but "
          "river stone market winter signal harbour copper lantern meadow orchard falcon glacier beacon "
          "quarry timber velvet saddle anchor compass thistle").split()
_CJK = ["中文", "检索", "系统", "全文", "社会", "城市", "教育", "公告"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return "".join(rng.choice(_CJK) for _ in range(rng.randint(4, 30)))
    weights = [1 / (r + 1) for r in range(len(_WORDS))]
    words = rng.choices(_WORDS, weights=weights, k=rng.randint(8, 160))
    return "\n".join(" ".join(words[i:i + 11]) for i in range(0, len(words), 11))


def corpus() -> list[tuple[object, list[object]]]:
    """90 documents of 1-5 pages (Zipf-weighted words, some CJK pages, half the pages
    at coverage 0.5), the same on every call: the records of each index compared."""
    rng = random.Random(1201)
    docs = []
    for n in range(90):
        pages = [page(p, _text(rng), coverage=rng.choice((1.0, 0.5))) for p in range(1, rng.randint(1, 5) + 1)]
        doc = record(f"shard-doc-{n}", f"/archive/{2000 + n % 4}/doc{n:03d}.pdf", pages,
                     title=" ".join(rng.sample(_WORDS[20:], 2)).title(), created=1.6e9 + n * 86400.0)
        docs.append((doc, pages))
    return docs


def build(root: Path, shards: int) -> PageIndex:
    """``corpus()`` written into a new index of ``shards`` shards at ``root``."""
    ix = PageIndex(root, "en", new_shards=shards)
    with ix.writer(batch_pages=60) as writer:  # several commits: several segments per shard
        for doc, pages in corpus():
            writer.add(doc, pages)  # type: ignore[arg-type]
    return ix


#: Queries of every kind the ranking must agree on, sharded or not.
QUERIES = ["river", "the", "harbour copper", '"of the"', '"river stone"', '"stone of the"', "lantern OR falcon",
           "glacier -harbour", "mead*", "title:falcon", "系统", "中文检索", "beacon AND quarry",
           "compass~1", '"in a"']


def ranked(result: SearchResult) -> tuple[list[float], set[tuple[str, int]]]:
    """The hits' scores in order, and which pages they are: equal scores may come
    in another order (ties follow document numbers), and the exact-form re-ranking
    of the best 30 may then take in another of the pages tied at its edge."""
    return [round(h.score, 6) for h in result.hits], {(h.doc_hash, h.page) for h in result.hits}


def other_shard_label(label: str, shards: int) -> str:
    """A label like ``label`` whose hash (``sha``) lands in another of ``shards`` shards:
    a file's new content that moves it to another shard."""
    home = shard_of(sha(label), shards)
    return next(f"{label}-v{n}" for n in range(100) if shard_of(sha(f"{label}-v{n}"), shards) != home)
