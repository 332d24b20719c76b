"""Known-item search over the scans, for bench/ocr.py ``--known-item``: can a user
who remembers three words of a scanned document find it?

Queries: for each scan, ``QUERIES_PER_FILE`` queries of three words drawn (a random
generator seeded with ``--seed`` and the file's name) from the words of its truth
text that occur in at most ``MAX_DF`` distinct truth texts. The Latin truths share
one generated vocabulary, so none of their words is that rare: a file with fewer than
``POOL_MIN`` such words draws from its ``POOL_MIN`` rarest instead, and no query's
three words are all in another truth (as bench/known_item.py). Words are the producers
scorer's tokens, casefolded, letters only: Latin words of 3+ letters, Hangul words of
2+, and CJK character bigrams (Chinese and Japanese have no spaces). Several scans
are degradations of one source document and share its truth (``chromium__ko__clean``,
``__rotated`` and ``__fax``); rarity is counted over distinct truths, and in every
ranking a file's twins are passed over, so each query asks whether *this* scan's
text finds it before the other documents, not which of its twins OCR'd best.

Systems:

* **pdfindex**: ``pdfindex ingest`` of the scans into a temporary index
  (``PDFINDEX_INDEX_DIR``, embedded mode, with ``--ocr`` when ``ingest`` has it), then
  ``pdfindex search --json --by-document QUERY`` per query (its words ANDed).
* **every other system**: its texts from this run in an SQLite FTS5 table
  (``porter unicode61 remove_diacritics 2``, as bench/search_speed.py), ``MATCH``
  the three words (ANDed) ``ORDER BY rank``; when fewer than ``FEW`` documents hold
  all three, then the documents holding most of them, as pdfindex's search shows them
  (``_fts5_most_words``), so that both get the same search and the difference is the
  text (the note gives each system's figure with all three words alone). ``unicode61`` does not split Han and
  kana runs, so both the texts and the queries get a space around each such
  character and a CJK bigram is matched as a two-character phrase.

success@1 = the share of queries whose first document (twins passed over) is theirs.
"""
from __future__ import annotations

import csv
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Protocol

from pdfindex.indexer.relaxed import FEW, narrower

QUERIES_PER_FILE = 3
WORDS_PER_QUERY = 3
MAX_DF = 2  # a query word occurs in at most this many distinct truth texts ...
POOL_MIN = 12  # ... unless the file has fewer such words: then its 12 rarest
SEED = 22
FTS5_TOKENIZE = "porter unicode61 remove_diacritics 2"
SEARCH_LIMIT = 100  # documents fetched per pdfindex query: all of the corpus, twins included


class ScanLike(Protocol):
    """What this module reads of bench/ocr.py's Scan (no import back: ocr imports us)."""

    @property
    def path(self) -> Path: ...

    @property
    def stem(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Query:
    stem: str  # the scan that must come first
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Settings:
    work: Path  # scratch folder: the pdfindex index lives here
    per_file: int = QUERIES_PER_FILE
    seed: int = SEED
    timeout: float = 900.0
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    with_pdfindex: bool = True


@dataclass
class SystemScore:
    system: str
    how: str  # "pdfindex search" or "SQLite FTS5"
    queries: int
    missed: list[Query]
    note: str = ""

    @property
    def success(self) -> float:
        return 1 - len(self.missed) / self.queries if self.queries else 0.0


@dataclass
class Report:
    queries: list[Query]
    scores: list[SystemScore]

    def print(self) -> None:
        """The success@1 table, and what kept a system from being measured."""
        files = len({q.stem for q in self.queries})
        print(f"\nKnown-item search: {len(self.queries)} queries of {WORDS_PER_QUERY} words from {files} files"
              f" (words in <= {MAX_DF} distinct truths, else a file's {POOL_MIN} rarest; the three never all in"
              " another truth; a file's twins passed over)")
        for s in self.scores:
            found = s.queries - len(s.missed)
            print(f"  {s.system:15s} {s.how:16s} success@1 {s.success:.3f} ({found}/{s.queries})"
                  + (f"  {s.note}" if s.note else ""))

    def as_json(self) -> dict[str, object]:
        return {"queries": [asdict(q) for q in self.queries],
                "systems": [{"system": s.system, "how": s.how, "success_at_1": s.success, "queries": s.queries,
                             "missed": [asdict(q) for q in s.missed], "note": s.note} for s in self.scores]}


# ------------------------------------------------------------------ queries

def _latin(word: str) -> bool:
    return all(ord(ch) < 0x250 for ch in word)


def query_terms(truth: str, scorer: ModuleType) -> set[str]:
    """The words of a truth text a query may use: the scorer's tokens (so CJK text
    gives character bigrams), casefolded, letters only, long enough to be rare."""
    terms = set()
    for token in scorer.tokens(scorer.words(truth, extractor_output=False)):
        term = token.casefold()
        if not term.isalpha():
            continue
        if scorer.is_cjk(term):
            if len(term) == 2:
                terms.add(term)
        elif len(term) >= (3 if _latin(term) else 2):
            terms.add(term)
    return terms


def twins(truths: Mapping[str, str]) -> dict[str, set[str]]:
    """stem -> the other scans with the same truth text (degradations of one source)."""
    by_text: dict[str, set[str]] = {}
    for stem, text in truths.items():
        by_text.setdefault(text, set()).add(stem)
    return {stem: by_text[text] - {stem} for stem, text in truths.items()}


def word_pool(terms: set[str], df: Mapping[str, int], max_df: int = MAX_DF, least: int = POOL_MIN) -> list[str]:
    """The words a file's queries draw from: those in at most ``max_df`` distinct truths,
    or, when it has fewer than ``least`` of them, its ``least`` rarest words (ties
    kept). The Latin truths are written from one shared vocabulary, so no Latin word
    is in only two of them; without the second rule the Latin files get no query."""
    rare = sorted(t for t in terms if df[t] <= max_df)
    if len(rare) >= least:
        return rare
    ranked = sorted(terms, key=lambda t: (df[t], t))
    limit = df[ranked[min(least, len(ranked)) - 1]] if ranked else 0
    return sorted(t for t in terms if df[t] <= limit)


def make_queries(truths: Mapping[str, str], scorer: ModuleType, per_file: int = QUERIES_PER_FILE,
                 seed: int = SEED, max_df: int = MAX_DF,
                 pages: Mapping[str, Sequence[str]] | None = None) -> list[Query]:
    """Seeded queries of WORDS_PER_QUERY words from each file's pool (``word_pool``),
    distinct within a file; the words of a query are never all in another truth, so
    its file (and its twins) is the only right answer. With ``pages`` (stem -> the
    text of each page of its source), a query's words are all on one page: a page
    is what a searcher remembers, and what pdfindex finds."""
    distinct = {text: query_terms(text, scorer) for text in set(truths.values())}
    df: dict[str, int] = {}
    for terms in distinct.values():
        for term in terms:
            df[term] = df.get(term, 0) + 1
    queries = []
    for stem, text in truths.items():
        pool = word_pool(distinct[text], df, max_df)
        on_pages = [[t for t in pool if t in query_terms(page, scorer)] for page in (pages or {}).get(stem, ())]
        others = [terms for other, terms in distinct.items() if other != text]
        rng = random.Random(f"{seed}/{stem}")
        made: list[tuple[str, ...]] = []
        for _ in range(per_file * 20):
            page_pool = rng.choice(on_pages) if on_pages else pool
            if len(made) >= per_file or len(page_pool) < WORDS_PER_QUERY:
                if on_pages and len(made) < per_file:
                    continue
                break
            words = tuple(rng.sample(page_pool, WORDS_PER_QUERY))
            if words not in made and not any(set(words) <= terms for terms in others):
                made.append(words)
        queries += [Query(stem, words) for words in made]
    return queries


def first_other_than_twins(ranked: Sequence[str], query: Query, twin_map: Mapping[str, set[str]]) -> str | None:
    """The first stem of a ranking that is not a twin of the query's file."""
    return next((stem for stem in ranked if stem not in twin_map.get(query.stem, set())), None)


# ------------------------------------------------------------------ SQLite FTS5

def spaced(text: str, scorer: ModuleType) -> str:
    """Han and kana characters each made a token of their own for ``unicode61``."""
    return re.sub(f"([{scorer.HAN_KANA}])", r" \1 ", text)


def fts5_match(words: Sequence[str], scorer: ModuleType) -> str:
    """The MATCH expression: each word a quoted phrase (a CJK bigram: two tokens in a row), ANDed."""
    return " ".join(f'"{" ".join(spaced(w, scorer).split())}"' for w in words)


def fts5_score(system: str, texts: Mapping[str, str], queries: Sequence[Query], twin_map: Mapping[str, set[str]],
               scorer: ModuleType) -> SystemScore:
    """success@1 of one system's texts in an in-memory FTS5 table of pages (its text
    split at form feeds), as pdfindex indexes them: the file of the best page first."""
    try:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE docs USING fts5(stem UNINDEXED, body, tokenize='{FTS5_TOKENIZE}')")
    except sqlite3.OperationalError as exc:
        return SystemScore(system, "SQLite FTS5", len(queries), list(queries), f"no FTS5: {exc}")
    with conn:
        conn.executemany("INSERT INTO docs VALUES (?, ?)",
                         [(s, spaced(page, scorer)) for s, t in texts.items() for page in t.split("\f")])
    missed, strict_missed = [], 0
    for q in queries:
        ranked = _fts5_ranked(conn, q.words, scorer)
        strict_missed += first_other_than_twins(ranked, q, twin_map) != q.stem
        if first_other_than_twins(ranked + _fts5_most_words(conn, q, ranked, scorer), q, twin_map) != q.stem:
            missed.append(q)
    conn.close()
    return SystemScore(system, "SQLite FTS5", len(queries), missed,
                       f"then pages holding most of the words, as pdfindex; all three words alone:"
                       f" {len(queries) - strict_missed}/{len(queries)}")


def _fts5_ranked(conn: sqlite3.Connection, words: Sequence[str], scorer: ModuleType) -> list[str]:
    """The stems whose pages hold every word, best page first."""
    return list(dict.fromkeys(row[0] for row in conn.execute(
        "SELECT stem FROM docs WHERE docs MATCH ? ORDER BY rank", (fts5_match(words, scorer),))))


def _fts5_most_words(conn: sqlite3.Connection, query: Query, ranked: Sequence[str], scorer: ModuleType) -> list[str]:
    """What pdfindex's search shows after fewer than ``FEW`` documents holding every
    word (indexer/relaxed.py), done on FTS5 so both systems' texts get the same
    search: the documents whose pages hold the most of the words, by rank."""
    if len(ranked) >= FEW:
        return []
    for level in narrower(list(query.words)):
        found: dict[str, float] = {}
        for kept, _ in level:
            for stem, rank in conn.execute("SELECT stem, rank FROM docs WHERE docs MATCH ? ORDER BY rank",
                                           (fts5_match(kept, scorer),)):
                if stem not in ranked and rank < found.get(stem, 0.0):
                    found[stem] = rank
        if found:
            return sorted(found, key=found.__getitem__)
    return []


# ------------------------------------------------------------------ pdfindex ingest + search

def pdfindex_cli() -> list[str]:
    return [sys.executable, "-m", "pdfindex"]


def _run(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """A pdfindex command; on a timeout its process group (the ingest pool) is killed."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(env), text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def ingest_ocr_args(help_text: str) -> list[str]:
    """``--ocr`` for ingest if it has one (issue 22 is being built): bare when it is a
    flag, ``--ocr force`` when it takes a mode (the mode extract is measured in)."""
    found = re.search(r"--ocr(?:[ =](\{[^}]*\}|[A-Z_]+))?", help_text)
    if found is None:
        return []
    return ["--ocr"] if found.group(1) is None else ["--ocr", "force"]


def ingest_env(settings: Settings) -> dict[str, str]:
    """Embedded mode into our own index: a broker or an index of the user's is not ours
    to touch; a file may take as long as the bench allows a child."""
    env = {k: v for k, v in settings.env.items()
           if k not in ("PDFINDEX_INDEX_DIR", "PDFINDEX_BROKER_URL", "PDFINDEX_RESULT_BACKEND")}
    env["PDFINDEX_INDEX_DIR"] = str(settings.work / "index")
    env["PDFINDEX_FILE_TIMEOUT"] = str(settings.timeout)
    return env


def ingest(scans: Sequence[ScanLike], settings: Settings, env: Mapping[str, str]) -> str:
    """Ingest the scans; a note on how it went (time, CPU, exit status, --ocr or not)."""
    help_text = _run([*pdfindex_cli(), "ingest", "--help"], env, 120).stdout
    ocr = ingest_ocr_args(help_text)
    argv = [*pdfindex_cli(), "ingest", "-q", *ocr, *(str(s.path.resolve()) for s in scans)]
    start = time.perf_counter()
    done = _run(argv, env, settings.timeout * max(1, len(scans)))
    note = f"ingest {' '.join(ocr) or 'without --ocr (ingest has none yet)'}: {time.perf_counter() - start:.1f} s"
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        note += f", exit {done.returncode}" + (f": {lines[-1][:120]}" if lines else "")
    return note


def search(query: Query, env: Mapping[str, str], timeout: float) -> tuple[list[str], set[str]]:
    """The stems pdfindex ranks for a query, best document first, and those of them
    that hold only most of its words (shown after the few holding all: indexer/relaxed.py)."""
    argv = [*pdfindex_cli(), "search", "--json", "--by-document", "--limit", str(SEARCH_LIMIT), "--",
            " ".join(query.words)]
    done = _run(argv, env, timeout)
    if done.returncode:
        return [], set()
    result = json.loads(done.stdout)
    partly = {Path(hit["path"]).stem for hit in result["hits"] if hit.get("missing")}
    return [Path(doc["path"]).stem for doc in result["documents"]], partly


def pdfindex_score(scans: Sequence[ScanLike], queries: Sequence[Query], twin_map: Mapping[str, set[str]],
                   settings: Settings) -> SystemScore:
    settings.work.mkdir(parents=True, exist_ok=True)
    env = ingest_env(settings)
    try:
        note = ingest(scans, settings, env)
    except subprocess.TimeoutExpired:
        return SystemScore("pdfindex", "pdfindex search", len(queries), list(queries), "ingest timed out")
    missed, relaxed = [], 0
    for q in queries:
        ranked, partly = search(q, env, settings.timeout)
        if first_other_than_twins(ranked, q, twin_map) != q.stem:
            missed.append(q)
        elif q.stem in partly:
            relaxed += 1
    if relaxed:
        note += (f"; {relaxed} found by a page holding most of the words;"
                 f" by pages holding all three: {len(queries) - len(missed) - relaxed}/{len(queries)}")
    return SystemScore("pdfindex", "pdfindex search", len(queries), missed, note)


# ------------------------------------------------------------------ the measurement

def source_pages(scans: Sequence[ScanLike]) -> dict[str, list[str]]:
    """stem -> the page texts of the born-digital PDF each scan was made from (the
    manifest's ``layout`` names it in ``../producers/``), as pdfindex's text layer
    reads it (word F1 1.000 on that corpus): the truth files are whole documents,
    and a query must be one page's words. A scan whose source is missing gets none."""
    from pdfindex.pipeline import extract  # noqa: PLC0415 - only where known-item queries are made
    pages: dict[str, list[str]] = {}
    for scan in scans:
        manifest = scan.path.parent / "MANIFEST.tsv"
        rows = {r["file"]: r for r in csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t")}
        source = scan.path.parent.parent / "producers" / f"{rows.get(scan.stem, {}).get('layout', '')}.pdf"
        if source.is_file():
            pages[scan.stem] = [page.text for page in extract(source).pages]
    return pages


def measure(scans: Sequence[ScanLike], texts: Mapping[str, Mapping[str, str]], scorer: ModuleType,
            settings: Settings) -> Report:
    """success@1 for pdfindex (when asked) and for each system whose texts are given."""
    truths = {s.stem: s.path.with_suffix(".txt").read_text(encoding="utf-8") for s in scans}
    twin_map = twins(truths)
    queries = make_queries(truths, scorer, settings.per_file, settings.seed, pages=source_pages(scans))
    scores = [pdfindex_score(scans, queries, twin_map, settings)] if settings.with_pdfindex else []
    scores += [fts5_score(system, per, queries, twin_map, scorer) for system, per in texts.items()
               if system != "pdfindex"]
    return Report(queries, scores)
