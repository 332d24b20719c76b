"""Did you mean: a query that found nothing, with each word the index does not hold
replaced by the nearest one it does, written as the pages write it."""
from __future__ import annotations

import itertools
import time
import unicodedata
from collections import Counter
from typing import Any

from whoosh.query import Term
from whoosh.searching import Searcher
from whoosh.support.levenshtein import damerau_levenshtein

from .analysis import fold, is_cjk
from .query_build import DEFAULT_FIELDS, ParsedQuery
from .query_syntax import NUMBER

#: The field whose terms spelling suggestions come from.
SUGGESTION_FIELD = "text"
#: At most this long looking for suggestions (after a search that found nothing).
SUGGESTION_SECONDS = 0.3
#: Pages whose stored text is read to find how a suggested term is written.
SURFACE_PAGES = 5


def _suggestion_field(schema: Any) -> str | None:
    return SUGGESTION_FIELD if SUGGESTION_FIELD in schema else None


def _nearest(reader: Any, name: str, term: str, deadline: float) -> str | None:
    """The index term nearest ``term`` (1 edit before 2; more pages first)."""
    best: tuple[int, int, str] | None = None
    for n, btext in enumerate(reader.expand_prefix(name, term[:1]), 1):
        if n % 256 == 0 and time.monotonic() > deadline:
            break
        cand = btext.decode("utf-8")
        if abs(len(cand) - len(term)) > 2 or cand == term:
            continue
        dist = damerau_levenshtein(cand, term, 3)
        if dist > 2 or (len(term) <= 4 and dist > 1):
            continue
        key = (dist, -reader.doc_frequency(name, cand), cand)
        if best is None or key < best:
            best = key
    return best[2] if best else None


def suggest(searcher: Searcher, parsed: ParsedQuery, deadline: float) -> str:
    """A corrected query made of the index's own words, or "": each plain word
    the index does not hold at all is replaced by the nearest one it does, as the
    pages write it (an index term is a stem: "librari")."""
    schema = searcher.schema
    name = _suggestion_field(schema)
    if name is None or not parsed.words:
        return ""
    reader = searcher.reader()
    analyse = schema[name].analyzer
    text, changed = parsed.text, False
    deadline = min(deadline, time.monotonic() + SUGGESTION_SECONDS)
    nearest_of: dict[str, str | None] = {}  # each distinct word looked up once
    for span in sorted(parsed.words, key=lambda span: span.start, reverse=True):
        word = span.text
        if time.monotonic() > deadline:
            return ""  # a half-corrected query would mislead
        tokens = [t.text for t in analyse(word, mode="query")]
        if len(tokens) != 1 or is_cjk(tokens[0]) or NUMBER.fullmatch(tokens[0]):
            continue
        term = tokens[0]
        if any(reader.doc_frequency(f, t) for f in DEFAULT_FIELDS if f in schema
               for t in [a.text for a in schema[f].analyzer(word, mode="query")]):
            continue
        if term not in nearest_of:
            nearest_of[term] = _nearest(reader, name, term, deadline)
        nearest = nearest_of[term]
        if nearest is None:
            continue
        written = _written_form(searcher, name, nearest, word, deadline) or _surface(word, term, nearest, analyse)
        text, changed = text[:span.start] + written + text[span.end:], True
    return text if changed else ""


def _written_form(searcher: Searcher, name: str, term: str, word: str, deadline: float) -> str | None:
    """How the pages write the words indexed as ``term`` (a stem, folded: "librari"):
    of the words of the first SURFACE_PAGES pages holding it that analyse to it,
    the one nearest to what the user typed ("libaries" → "libraries", not
    "library"), then the most frequent, lower-cased ("Library" → "library"), accents
    kept ("francai" → "français"). None if no page shows one in time. Asked only
    after a search that found nothing, so a search with hits never pays for it."""
    analyse = searcher.schema[name].analyzer
    counts: Counter[str] = Counter()
    for docnum in itertools.islice(searcher.docs_for_query(Term(name, term)), SURFACE_PAGES):
        if time.monotonic() > deadline:
            break
        stored = searcher.stored_fields(docnum).get(name)
        if isinstance(stored, str):
            counts.update(unicodedata.normalize("NFKC", t.original).lower()
                          for t in analyse(stored, mode="index", keeporiginal=True) if t.text == term)
    if not counts:
        return None
    typed = fold(word)
    return min(counts, key=lambda form: (damerau_levenshtein(fold(form), typed), -counts[form], form))


def _surface(word: str, stem: str, nearest: str, analyse: Any) -> str:
    """A readable form of the index term ``nearest`` when no page shows one: a stem
    ("financ") gets back the ending the user's word had ("finnance" → "finance")
    when that stems to it."""
    folded = word.casefold()
    common = 0
    while common < min(len(folded), len(stem)) and folded[common] == stem[common]:
        common += 1
    ending = folded[common:] if common == len(stem) else ""
    if ending:
        candidate = nearest + ending
        if [t.text for t in analyse(candidate, mode="query")] == [nearest]:
            return candidate
    return nearest
