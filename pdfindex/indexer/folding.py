"""Pages matched only through their document's metadata: one hit per document.

Every page carries its file's title, file name, author, subject, keywords and
producer (``schema.page_fields``), so that ``title:report revenue`` finds the pages
of a report that mention revenue and the page filters apply to them. A word found
only there matched every page alike: ``title:culture`` listed all 352 pages of a
book, each with the same score. Here a page that matches one of the query's
metadata words and none of its own words (text, problem codes) is collected only
if it is the first such page of its document that the search reaches (pages are
matched in index order: the lowest page number the filters and the query let
through); its document's other such pages are passed over. Because it happens
while collecting, the total, paging, ``--by-document`` and highlights all see that
one hit, ranked by its score (the metadata's, which every such page shares). A
page whose own words match keeps its hit.

Cost, only for a query with metadata words (a plain word is one: it is looked for
in titles and file names too): per segment, the set of pages matching those words
(their postings, which are short: a title's words times its pages); per match, a
set lookup; for a page in the set, whether its own words match (a matcher only
moved forward); for the first such page of a document, its stored hash and its
document's pages (one posting list, in its own segment).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from whoosh.query import AndNot, Every, Not, NullQuery, Or, Query, Term
from whoosh.searching import Searcher

#: The fields a page holds for its document (the same value on every page).
METADATA_FIELDS = frozenset({"title", "filename", "author", "subject", "keywords", "producer"})


def _positive_leaves(query: Query) -> Iterator[Query]:
    """The leaves a page can match by: not the words it must not hold."""
    if isinstance(query, Not):
        return
    if isinstance(query, AndNot):  # Excluding too: nothing matches by its excluded part
        yield from _positive_leaves(query.a)
        return
    if query.is_leaf():
        yield query
        return
    for child in query.children():
        yield from _positive_leaves(child)


class MetadataFolding:
    """What a query matches pages by (its metadata words, its own words), and what
    every walk over its matches shares: each segment's pages matching the
    metadata words, and each passed-over document's pages."""

    def __init__(self, searcher: Searcher, metadata: list[Query], own: Query | None) -> None:
        self.segments = list(searcher.leaf_searchers())
        self.offsets = [offset for _, offset in self.segments]
        self._metadata = metadata
        self.own = own
        self._matching: dict[int, frozenset[int]] = {}
        self._pages: dict[int, frozenset[int]] = {}

    def metadata_matches(self, segment: int) -> frozenset[int]:
        """The pages of a segment (its own document numbers) matching a metadata word."""
        found = self._matching.get(segment)
        if found is None:
            subsearcher = self.segments[segment][0]
            found = self._matching[segment] = frozenset().union(
                *(leaf.matcher(subsearcher, subsearcher.boolean_context()).all_ids() for leaf in self._metadata))
        return found

    def pages_of(self, segment: int, sub_docnum: int) -> frozenset[int]:
        """The document numbers (of the whole index) of the document that holds this
        page: a document's pages are written together, into one segment."""
        subsearcher, offset = self.segments[segment]
        docnum = offset + sub_docnum
        pages = self._pages.get(docnum)
        if pages is None:
            doc_hash = subsearcher.stored_fields(sub_docnum).get("doc_hash")
            pages = frozenset(offset + d for d in subsearcher.docs_for_query(Term("doc_hash", doc_hash)))
            for page in pages:
                self._pages[page] = pages
        return pages

    def walk(self) -> Walk:
        """A new walk over the matches (in ascending order within it)."""
        return Walk(self)


class Walk:
    """One walk over a search's matches in ascending order (collecting them, or
    counting them again): which ones to keep."""

    def __init__(self, folding: MetadataFolding) -> None:
        self.folding = folding
        self._passed_over: set[int] = set()
        self._segment = -1
        self._own_matcher: Any = None

    def keep_metadata_match(self, segment: int, sub_docnum: int) -> bool:
        """For a match in ``segment`` that matches a metadata word: kept if it matches
        one of its own words, or is the first such page of its document."""
        if self._matches_own(segment, sub_docnum):
            return True
        docnum = self.folding.offsets[segment] + sub_docnum
        if docnum in self._passed_over:
            return False
        self._passed_over.update(self.folding.pages_of(segment, sub_docnum))
        return True

    def _matches_own(self, segment: int, sub_docnum: int) -> bool:
        own = self.folding.own
        if own is None:
            return False
        if segment != self._segment:
            subsearcher = self.folding.segments[segment][0]
            self._segment, self._own_matcher = segment, own.matcher(subsearcher, subsearcher.boolean_context())
        matcher = self._own_matcher
        if matcher.is_active() and matcher.id() < sub_docnum:
            matcher.skip_to(sub_docnum)
        return bool(matcher.is_active() and matcher.id() == sub_docnum)


def metadata_and_own(query: Query) -> tuple[list[Query], list[Query]] | None:
    """The leaves a page can match ``query`` by, as (its metadata words, its own
    words); None when no match is folded: the query has no metadata word, or an own
    leaf matches every page (every match is then a page's own). Both engines fold by it."""
    leaves = [leaf for leaf in _positive_leaves(query) if leaf is not NullQuery]
    metadata = [leaf for leaf in leaves if getattr(leaf, "fieldname", None) in METADATA_FIELDS]
    own = [leaf for leaf in leaves if getattr(leaf, "fieldname", None) not in METADATA_FIELDS]
    if not metadata or any(isinstance(leaf, Every) for leaf in own):
        return None
    return metadata, own


def metadata_folding(searcher: Searcher, query: Query) -> MetadataFolding | None:
    """The folding of ``query``'s metadata-only matches, or None when there are none
    (``metadata_and_own``)."""
    leaves = metadata_and_own(query)
    if leaves is None:
        return None
    metadata, own = leaves
    return MetadataFolding(searcher, metadata, None if not own else own[0] if len(own) == 1 else Or(own))
