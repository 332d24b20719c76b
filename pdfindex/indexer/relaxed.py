"""After the pages holding every word of a query, when they are few: the pages that hold
most of them.

OCR misreads a word now and then (a fax's ``August`` as ``Angnst``), and a person
remembers a word the page does not quite have. Three words typed, one of them not on the
page as indexed, and an AND passes the page over, or finds nothing at all: the document is
lost for a reason the user cannot see. Web search engines show, after the pages holding
every word, the pages that hold most of them, each saying what it lacks ("Missing:
august"); so does this, when fewer than ``FEW`` pages (or documents) hold every word. The
pages holding every word always come first; the others carry the words they lack, and the
result's note says how many of each there are.

Only a query of plain words is relaxed, as a person types one: a ``+``, ``-``, field,
phrase, range, weight, fuzzy word, ``AND`` or ``OR`` says what was meant exactly
(``+took`` is how a word is made required). Only a search ordered by relevance: a list
ordered by date or path would mix pages holding more words with pages holding fewer.

Which pages hold most of the words is found with narrower queries, run by the engine's
own search (so filters, snippets and grouping are those of any search): each query of the
words but one, then, if those find no page beyond the first ones, of the words but two, and
so on; one level is shown. A page found at a level and not above lacks exactly the words
its query left out: had it held one more, the level above would have found it. Bounded by
``MAX_WORDS`` and ``MAX_SEARCHES``, and by the search's time limit; past either, the first
search's result is returned as it was.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from pdfindex.contract.records import DocumentHits, Hit, SearchOptions, SearchResult

from .errors import QueryError
from .query_syntax import Word, read

#: Fewer pages (documents, grouped) than this holding every word, and the pages
#: holding most of them follow.
FEW = 10
#: A query of more plain words is not relaxed: its narrower queries grow too fast,
#: and a person who typed that many words is not recalling a few.
MAX_WORDS = 6
#: Narrower searches at most, all levels together.
MAX_SEARCHES = 20

Search = Callable[[str, SearchOptions], SearchResult]
Unit = Hit | DocumentHits


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


def narrower(words: list[str]) -> Iterator[list[tuple[tuple[str, ...], tuple[str, ...]]]]:
    """Level by level, most words first: each ``n`` of the words, with the words
    left out."""
    for n in range(len(words) - 1, 0, -1):
        yield [(kept, tuple(w for w in words if w not in kept)) for kept in itertools.combinations(words, n)]


def relaxed_search(search: Search, text: str, options: SearchOptions) -> SearchResult:
    """``search(text, options)``, followed, when fewer than ``FEW`` pages hold every
    word of a ``plain_words`` query, by the pages holding most of them."""
    started = time.perf_counter()
    result = search(text, options)
    if result.partial or result.total >= FEW or result.total_is_lower_bound or options.sort != "score":
        return result
    words = plain_words(text)
    if words is None:
        return result
    deadline = time.monotonic() + options.timeout
    full = result
    if options.offset or len(_units(result, options)) < result.total:  # every page holding all the words
        full = search(text, replace(options, offset=0, limit=FEW))
    first = _units(full, options)
    seen = {_key(unit) for unit in first}
    # Narrower searches highlight nothing: most of their hits are not shown (``_highlighted``).
    fetch = replace(options, offset=0, limit=options.offset + options.limit + len(first), highlight=False)
    searches = 0
    for level in narrower(words):
        found: dict[str | tuple[str, int], tuple[Unit, str, int]] = {}
        complete = True
        for kept, missing in level:
            query = " ".join(kept)
            left = deadline - time.monotonic()
            if searches == MAX_SEARCHES or left <= 0:
                return result
            searches += 1
            try:
                narrow = search(query, replace(fetch, timeout=left))
            except QueryError:  # the words left are all punctuation
                continue
            if narrow.partial:
                return result
            units = _units(narrow, options)
            complete = complete and narrow.total <= len(units) and not narrow.total_is_lower_bound
            for rank, unit in enumerate(units):
                if _key(unit) not in seen and _key(unit) not in found:
                    _lacks(unit, missing)
                    found[_key(unit)] = (unit, query, rank)
        if found:
            more = sorted(found.values(), key=lambda item: _score(item[0]), reverse=True)
            shown = (first + [unit for unit, _, _ in more])[options.offset:options.offset + options.limit]
            if options.highlight and not _highlighted(search, shown, more, options, deadline):
                return result
            return _joined(full, shown, (len(first), len(more)), complete, options,
                           (len(words), len(words) - len(level[0][1])), time.perf_counter() - started)
    return result


def _highlighted(search: Search, shown: list[Unit], more: list[tuple[Unit, str, int]], options: SearchOptions,
                 deadline: float) -> bool:
    """Snippets for the shown pages that a narrower search found, in place: that
    search again, highlighting, as far down as the lowest of them (for the first
    results page, a few hits each); False past the time limit."""
    at = {_key(unit): n for n, unit in enumerate(shown)}
    deepest: dict[str, int] = {}
    for unit, query, rank in more:
        if _key(unit) in at:
            deepest[query] = max(deepest.get(query, 0), rank)
    for query, rank in deepest.items():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        again = search(query, replace(options, offset=0, limit=rank + 1, timeout=left))
        if again.partial:
            return False
        for unit in _units(again, options):
            n = at.get(_key(unit))
            if n is not None and _lacking(shown[n]):  # found by this query, not one holding every word
                _lacks(unit, tuple(_lacking(shown[n])))
                shown[n] = unit
    return True


def _units(result: SearchResult, options: SearchOptions) -> list[Unit]:
    return list(result.groups) if options.by_document else list(result.hits)


def _key(unit: Unit) -> str | tuple[str, int]:
    return unit.doc_hash if isinstance(unit, DocumentHits) else (unit.doc_hash, unit.page)


def _lacks(unit: Unit, missing: tuple[str, ...]) -> None:
    for hit in unit.pages if isinstance(unit, DocumentHits) else [unit]:
        hit.missing = list(missing)


def _lacking(unit: Unit) -> list[str]:
    return (unit.pages[0] if isinstance(unit, DocumentHits) else unit).missing


def _score(unit: Unit) -> float:
    return unit.score or 0.0


def _joined(full: SearchResult, shown: list[Unit], counts: tuple[int, int], complete: bool, options: SearchOptions,
            held_of: tuple[int, int], took: float) -> SearchResult:
    """The window asked for of the pages holding every word then those holding
    ``held`` of the ``words``, with a note saying how many of each."""
    (first, more), (words, held) = counts, held_of
    unit = "documents" if options.by_document else "pages"
    if first:
        said = (f"{first} {unit[:-1] + ' holds' if first == 1 else unit + ' hold'} all {words} words;"
                f" then {more} that hold{'s' if more == 1 else ''} {held}")
    else:
        said = f"no page holds all {words} words: showing {unit} that hold {held} of them"
    return replace(full, total=first + more, total_is_lower_bound=not complete, took=took, all_words_total=first,
                   hits=[] if options.by_document else shown,  # type: ignore[arg-type]
                   groups=shown if options.by_document else [],  # type: ignore[arg-type]
                   note="; ".join(filter(None, [full.note, said])))
