"""When all the words of a query together find nothing: the pages that hold most of them.

OCR misreads a word now and then (a fax's ``August`` as ``Angnst``), and a person
remembers a word the page does not quite have. Three words typed, one of them not on the
page as indexed, and an AND finds nothing: the document is lost for a reason the user
cannot see. Web search engines answer such a query with the pages that hold most of its
words and say what each one lacks ("Missing: august"); so does this. The hits of a
relaxed search carry the words they lack, and the result's note says it was relaxed.

Only a query of plain words is relaxed, as a person types one: a ``+``, ``-``, field,
phrase, range, weight, fuzzy word, ``AND`` or ``OR`` says what was meant exactly
(``+took`` is how a word is made required). Only a search ordered by relevance: a list
ordered by date or path would mix pages holding more words with pages holding fewer.

Which pages hold most of the words is found with narrower queries, run by the engine's
own search (so filters, snippets and grouping are those of any search): each query of the
words but one, then, if none of those finds anything, of the words but two, and so on. A
page found with the words but ``w`` lacks ``w``: had it held every word, the whole query
would have found it; and at a lower level, had it held one more, the level above would
have. Bounded by ``MAX_WORDS`` and ``MAX_SEARCHES``, and by the search's time limit.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from pdfindex.contract.records import DocumentHits, Hit, SearchOptions, SearchResult

from .errors import QueryError
from .query_syntax import Word, read

#: A query of more plain words is not relaxed: its narrower queries grow too fast,
#: and a person who typed that many words is not recalling a few.
MAX_WORDS = 6
#: Narrower searches at most, all levels together.
MAX_SEARCHES = 20

Search = Callable[[str, SearchOptions], SearchResult]


def plain_words(text: str) -> list[str] | None:
    """The distinct words of a query made of plain words alone (at least two), as
    typed; None for any other query."""
    try:
        syntax = read(text)
    except QueryError:
        return None
    if len(syntax.groups) != 1:
        return None
    words: list[str] = []
    for clause in syntax.groups[0].clauses:
        node = clause.node
        if clause.sign or not isinstance(node, Word) or node.edits is not None or node.boost != 1.0:
            return None
        words.append(node.text)
    if text.split() != words:  # an explicit AND, or a weight of 1 written out
        return None
    distinct = list(dict.fromkeys(words))
    return distinct if 2 <= len(distinct) <= MAX_WORDS else None


def narrower(words: list[str]) -> Iterator[list[tuple[str, tuple[str, ...]]]]:
    """Level by level, most words first: each query of ``n`` of the words, with the
    words it leaves out."""
    for n in range(len(words) - 1, 0, -1):
        yield [(" ".join(kept), tuple(w for w in words if w not in kept))
               for kept in itertools.combinations(words, n)]


def relaxed_search(search: Search, text: str, options: SearchOptions) -> SearchResult:
    """``search(text, options)``; when that finds nothing (and was not cut short),
    the pages holding most of the words, if the query is ``plain_words``."""
    started = time.perf_counter()
    result = search(text, options)
    words = plain_words(text) if options.sort == "score" else None
    if result.total or result.partial or words is None:
        return result
    deadline = time.monotonic() + options.timeout
    wider = replace(options, offset=0, limit=options.offset + options.limit)
    searches = 0
    for level in narrower(words):
        found: list[tuple[SearchResult, tuple[str, ...]]] = []
        for query, missing in level:
            left = deadline - time.monotonic()
            if searches == MAX_SEARCHES or left <= 0:
                return result
            searches += 1
            try:
                narrow = search(query, replace(wider, timeout=left))
            except QueryError:  # the words left are all punctuation
                continue
            if narrow.partial:
                return result
            if narrow.total:
                found.append((narrow, missing))
        if found:
            return _merged(result, found, options, len(words), time.perf_counter() - started)
    return result


def _merged(nothing: SearchResult, found: list[tuple[SearchResult, tuple[str, ...]]], options: SearchOptions,
            words: int, took: float) -> SearchResult:
    """One result of the narrower searches of a level: each page (or document) once,
    best score first, with the words it lacks."""
    held = words - len(found[0][1])
    unit = "documents" if options.by_document else "pages"
    note = f"no page holds all {words} words: showing {unit} that hold {held} of them"
    note = "; ".join(filter(None, [nothing.note, note]))
    complete = all(r.total <= (len(r.groups) if options.by_document else len(r.hits)) for r, _ in found)
    window = slice(options.offset, options.offset + options.limit)
    if options.by_document:
        groups: dict[str, DocumentHits] = {}
        for r, missing in found:
            for group in r.groups:
                for hit in group.pages:
                    hit.missing = list(missing)
                best = groups.get(group.doc_hash)
                if best is None or _score(group.pages[0]) > _score(best.pages[0]):
                    groups[group.doc_hash] = group
        ranked_groups = sorted(groups.values(), key=lambda g: -_score(g.pages[0]))
        total = len(ranked_groups)
        shown_groups, hits = ranked_groups[window], []
    else:
        pages: dict[tuple[str, int], Hit] = {}
        for r, missing in found:
            for hit in r.hits:
                hit.missing = list(missing)
                pages.setdefault((hit.doc_hash, hit.page), hit)
        ranked = sorted(pages.values(), key=lambda h: -_score(h))
        total = len(ranked)
        shown_groups, hits = [], ranked[window]
    if not complete:
        total = max(total, *(r.total for r, _ in found))
    return replace(nothing, total=total, hits=hits, groups=shown_groups, took=took, note=note,
                   total_is_lower_bound=not complete or any(r.total_is_lower_bound for r, _ in found))


def _score(hit: Hit) -> float:
    return hit.score or 0.0
