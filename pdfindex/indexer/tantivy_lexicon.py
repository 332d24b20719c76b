"""Tantivy's term dictionary and stored fields seen as the few parts of a Whoosh
searcher that our readers of terms use: query expansion
(``query_expansion.bound_expansions``), spelling suggestions
(``query_suggestion.suggest``), the words a page image marks
(``marks.expand_terms``), the cost of a search (``search.estimated_postings``) and
the consistency check (``consistency.check``, of one shard). So a prefix,
wildcard, range or fuzzy word expands to the same terms, under the same cap and
notes, a misspelt word gets the same suggestion, and so on, on both engines, from
one code.

What they read: the schema (ours), a field's terms from a prefix or from a term
on, in term order (UTF-8 byte order, which is Python's string order), a term's
page count, the pages holding a term in index order, stored fields.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import tantivy
from whoosh.query import Term

from .tantivy_schema import matching, stored_of, whoosh_schema


class Lexicon:
    """A read-only Whoosh-like searcher (and its reader) over a Tantivy searcher."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema, language: str) -> None:
        self._searcher, self._schema = searcher, schema
        self.schema = whoosh_schema(language)

    def reader(self) -> Lexicon:
        return self

    def searcher(self) -> Lexicon:
        """Itself, as the one shard's searcher (``consistency.check``)."""
        return self

    def __enter__(self) -> Lexicon:
        return self

    def __exit__(self, *exc: object) -> None:
        """Nothing to close: Tantivy's searcher is dropped with this view."""

    def documents(self, **terms: str) -> Iterator[dict[str, Any]]:
        """The stored fields of the documents holding every one of ``terms``."""
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, tantivy.Query.term_query(self._schema, name, text))
                                             for name, text in terms.items()])
        return (stored_of(self._searcher.doc(address)) for address in matching(self._searcher, query))

    def _terms(self, name: str, prefix: str) -> list[str]:
        return sorted(term for term, _ in self._searcher.terms_with_prefix(name, prefix))

    def expand_prefix(self, name: str, prefix: str) -> Iterator[bytes]:
        return (term.encode("utf-8") for term in self._terms(name, prefix))

    def terms_from(self, name: str, start: bytes) -> Iterator[tuple[str, bytes]]:
        first = start.decode("utf-8")
        return ((name, term.encode("utf-8")) for term in self._terms(name, "") if term >= first)

    def doc_frequency(self, name: str, text: str) -> int:
        return int(self._searcher.doc_freq(name, text))

    def docs_for_query(self, query: Term) -> Iterator[tantivy.DocAddress]:
        found = matching(self._searcher, tantivy.Query.term_query(self._schema, query.fieldname, query.text))
        return iter(sorted(found, key=lambda address: (address.segment_ord, address.doc)))

    def stored_fields(self, address: tantivy.DocAddress) -> dict[str, Any]:
        return stored_of(self._searcher.doc(address))
