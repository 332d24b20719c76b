"""Known-item search on ../shared/corpus/producers: does a query made from a file's
own text find that file first?

Each truth file (the text a PDF was made from) gives, deterministically (a random
generator seeded with the file's name), up to ``--per-file`` two- and three-word
phrases of consecutive words and as many word triples drawn from anywhere in it,
keeping only queries whose words, as typed, do not all occur in any other truth
file (so exactly one document is the right answer). The PDFs are indexed through
pipeline.extract and PageIndex; success@1 is the share of queries whose best
document (``--by-document``) is the file. It is measured with the exact-form
boost off (stems only: the ranking before issue 8) and on. From the project root,
through the installed package (or as ``python -m bench.known_item``)::

    .venv/bin/python bench/known_item.py [--corpus DIR] [--per-file N]
"""
from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pdfindex import pipeline
from pdfindex.indexer import DocumentRecord, PageIndex, PageRecord, SearchOptions, Status, analysis, exact

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "producers"
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    path: str  # the PDF that must come first


def _words(text: str) -> list[str]:
    return [analysis.fold(w) for w in _WORD.findall(text)]


def _phrases(text: str, n: int) -> list[list[str]]:
    """Every run of ``n`` words of 3+ letters separated by spaces only (a phrase
    as it reads in the text: no punctuation, number or line end inside)."""
    out: list[list[str]] = []
    for line in text.splitlines():
        tokens = list(re.finditer(r"\S+", line))
        for i in range(len(tokens) - n + 1):
            run = [t.group() for t in tokens[i:i + n]]
            if all(_WORD.fullmatch(w) for w in run):
                out.append([analysis.fold(w) for w in run])
    return out


def make_queries(corpus: Path, per_file: int = 6) -> list[Query]:
    raw = {pdf: pdf.with_suffix(".txt").read_text(encoding="utf-8", errors="replace")
           for pdf in sorted(corpus.glob("*.pdf")) if pdf.with_suffix(".txt").exists()}
    vocab = {pdf: set(_words(text)) for pdf, text in raw.items()}
    flat = {pdf: " ".join(analysis.fold(w) for w in re.findall(r"\S+", text)) for pdf, text in raw.items()}
    queries: list[Query] = []
    for pdf, text in raw.items():
        rng = random.Random(hashlib.sha256(pdf.name.encode()).hexdigest())
        others = [p for p in raw if p != pdf]
        candidates = _phrases(text, 2) + _phrases(text, 3)
        words = sorted(vocab[pdf])
        made: list[str] = []
        for attempt in range(per_file * 40):
            if len(made) >= per_file * 2:
                break
            if attempt % 2 == 0:
                if not candidates:
                    continue
                picked = rng.choice(candidates)
                unique = not any(" ".join(picked) in flat[o] for o in others)
                query = '"' + " ".join(picked) + '"'
            else:  # three words from anywhere in the file
                if len(words) < 3:
                    continue
                picked = rng.sample(words, 3)
                unique = not any(set(picked) <= vocab[o] for o in others)
                query = " ".join(picked)
            if unique and query not in made and len(set(picked)) == len(picked):
                made.append(query)
        queries += [Query(q, str(pdf)) for q in made]
    return queries


def build_index(corpus: Path, root: Path) -> tuple[PageIndex, float]:
    started = time.perf_counter()
    ix = PageIndex(root, "en")
    with ix.writer() as writer:
        for pdf in sorted(corpus.glob("*.pdf")):
            data = pdf.read_bytes()
            doc = pipeline.extract(data)
            pages = [PageRecord(number=p.number, text=p.text, coverage=p.quality.coverage, glyphs=p.quality.glyphs,
                                unresolved=p.quality.unresolved, needs_ocr=p.quality.needs_ocr) for p in doc.pages]
            writer.add(DocumentRecord(doc_hash=hashlib.sha256(data).hexdigest(), path=str(pdf),
                                      status=Status.INDEXED, page_count=doc.page_count, size=len(data),
                                      title=doc.metadata.title), pages)
    return ix, time.perf_counter() - started


def success_at_1(ix: PageIndex, queries: list[Query], boost: float) -> tuple[float, list[Query]]:
    """The share of queries whose best document is theirs, with this exact-form
    boost (0: stems only), and the queries missed."""
    saved = exact.EXACT_WEIGHT
    exact.EXACT_WEIGHT = boost
    missed: list[Query] = []
    try:
        for q in queries:
            result = ix.search(q.text, SearchOptions(limit=1, by_document=True, highlight=False, timeout=30))
            if not result.groups or result.groups[0].path != q.path:
                missed.append(q)
    finally:
        exact.EXACT_WEIGHT = saved
    return (1 - len(missed) / len(queries)) if queries else 0.0, missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--per-file", type=int, default=6)
    parser.add_argument("--show-missed", action="store_true")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"known_item: no corpus at {args.corpus}", file=sys.stderr)
        return 1
    queries = make_queries(args.corpus, args.per_file)
    with tempfile.TemporaryDirectory() as tmp:
        ix, took = build_index(args.corpus, Path(tmp) / "index")
        files = len(list(args.corpus.glob("*.pdf")))
        phrases = sum(q.text.startswith('"') for q in queries)
        print(f"{files} PDFs indexed in {took:.1f} s; {len(queries)} queries ({phrases} phrases)")
        for label, boost in (("stems only (before)", 0.0), (f"exact forms x{exact.EXACT_WEIGHT:g} (after)",
                                                            exact.EXACT_WEIGHT)):
            rate, missed = success_at_1(ix, queries, boost)
            print(f"success@1 {label}: {rate:.3f} ({len(queries) - len(missed)}/{len(queries)})")
            if args.show_missed:
                for q in missed:
                    print(f"    missed {q.text!r} -> {Path(q.path).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
