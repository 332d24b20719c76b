"""The query language of ``pdfindex search`` (the CLI and any other front end share it).

Syntax (also in ``pdfindex search --help``)::

    free culture          both words (words are ANDed)
    free OR culture       either word            NOT free, -free   pages without it
    +free                 the word is required, also inside an OR group
    "free culture"        the words adjacent and in order ("..."~2: up to 2 words apart)
    title:report          a field: text, title, author, subject, keywords, producer,
                          filename, error, status, problem  (title:(a OR b) for a group)
    cult*  c?lture        prefix and wildcards   cultur~  cultur~2  fuzzy (edits)
    [a TO c]  {a TO c}    a range of terms (inclusive / exclusive)
    word^2                weight a word

Why our own parser rather than Whoosh's: Whoosh's parser never says a query is wrong.
It reads an unbalanced quote as a word, ``title:(`` as the word "titl", an unknown
field as a phrase, ignores ``-word``, and its parse time grows with the square of the
query's length. This one is linear, refuses what it cannot read with a ``QueryError``
that names the problem and its position, and limits a query's size.

Reading a query goes in stages, as in Whoosh's own ``qparser``: ``query_syntax`` reads
the text into tokens and the tokens into syntax nodes (no Whoosh there), ``query_build``
turns the nodes into a Whoosh query over an index's schema. ``query_expansion`` expands
wildcards, prefixes, ranges and fuzzy words within a budget and the search's deadline;
``query_suggestion`` proposes a corrected query when nothing matched. This module is
their face: the rest of the index imports from here.
"""
from __future__ import annotations

from .query_build import DEFAULT_FIELDS, MAX_QUERY_TERMS, LoneCJK, ParsedQuery, WordSpan, parse
from .query_expansion import MAX_EXPANDED_TERMS, Expansion, bound_expansions
from .query_suggestion import suggest
from .query_syntax import FIELDS, MAX_BOOST, MAX_FUZZY_EDITS, MAX_NESTING, MAX_QUERY_CHARS

__all__ = [
    "DEFAULT_FIELDS", "FIELDS", "MAX_BOOST", "MAX_EXPANDED_TERMS", "MAX_FUZZY_EDITS", "MAX_NESTING",
    "MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "Expansion", "LoneCJK", "ParsedQuery", "WordSpan",
    "bound_expansions", "parse", "suggest",
]
