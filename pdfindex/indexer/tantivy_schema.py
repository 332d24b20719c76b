"""The Tantivy index's fields, drawn from the one schema (``schema.build_schema``),
and a document's fields (``schema.doc_fields``, ``page_fields``) as a Tantivy document.

Our analysis stays ours: a text field's terms come from ``PageTokenizer.terms``
(folding, stems, CJK bigrams), exactly the terms Whoosh indexes, and reach Tantivy
joined by single spaces through a whitespace tokenizer registered on every opened
index, so a term's position is its index in that list, as in Whoosh. A term that
itself holds ASCII whitespace (a compatibility ligature can fold into words with
spaces) or is empty goes as a ``PreTokenizedString`` with the same positions.

Tantivy stores what Whoosh stores: the stored fields of the one schema, as one JSON
value (``stored``), so ``schema.doc_from_stored`` and ``fields_from_stored`` read
both engines alike. Word pairs (``text_pairs``) are not indexed: they were Whoosh's
way to make phrases of common words cheap, which Tantivy's phrase query is already.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import tantivy
from whoosh.fields import BOOLEAN, ID, KEYWORD, NUMERIC, Schema

from .analysis import PageTokenizer, PathsTokenizer
from .errors import SearchIndexError
from .schema import build_schema
from .textfields import PageText, WordPairs

#: The tokenizer of analysed fields: our terms, joined by spaces.
TERMS_TOKENIZER = "pdfindex_terms"
#: The field holding a document's stored fields (JSON).
STORED_FIELD = "stored"
_ASCII_SPACE = re.compile(r"[\t\n\v\f\r ]")


class NotSupported(SearchIndexError):
    """What the Tantivy engine cannot do yet (docs/engines.md): said, never answered wrong."""

    def __init__(self, what: str) -> None:
        super().__init__(f"not supported on the tantivy engine yet: {what}")


@lru_cache(maxsize=8)
def whoosh_schema(language: str) -> Schema:
    """The one schema: fields, their analysis, what is stored (both engines)."""
    return build_schema(language)


#: Text fields kept as fast columns too: the path is a sort key (``--sort path``);
#: the content hash groups pages by document in an aggregation (folding), where
#: reading each page's stored record cost half a common word's search.
FAST_TEXT = frozenset({"path", "doc_hash"})

#: How each field of the schema is indexed in Tantivy.
TERMS, RAW, MULTI_RAW, INTEGER, FLOAT, BOOL, SKIPPED = "terms", "raw", "multi_raw", "int", "float", "bool", "skip"


def kind_of(field: Any) -> str:
    """The Tantivy kind of a field of the one schema."""
    if isinstance(field, WordPairs) or not field.indexed:
        return SKIPPED
    if isinstance(field, PageText | KEYWORD):
        return TERMS
    if isinstance(field, ID):
        return MULTI_RAW if isinstance(field.analyzer, PathsTokenizer) else RAW
    if isinstance(field, NUMERIC):
        return INTEGER if field.numtype is int else FLOAT
    if isinstance(field, BOOLEAN):
        return BOOL
    raise NotSupported(f"a field of type {type(field).__name__}")


@lru_cache(maxsize=8)
def kinds(language: str) -> dict[str, str]:
    return {name: kind_of(field) for name, field in whoosh_schema(language).items()}


@lru_cache(maxsize=8)
def tantivy_schema(language: str, fast_text: frozenset[str] = FAST_TEXT) -> tantivy.Schema:
    """``fast_text``: the text fields with a fast column; an index written before
    the content hash had one is made with ``{"path"}`` (the tests do)."""
    builder = tantivy.SchemaBuilder()
    for name, kind in kinds(language).items():
        if kind == TERMS:
            builder.add_text_field(name, tokenizer_name=TERMS_TOKENIZER, index_option="position")
        elif kind in (RAW, MULTI_RAW):
            builder.add_text_field(name, tokenizer_name="raw", index_option="basic", fast=name in fast_text)
        elif kind == INTEGER:
            builder.add_integer_field(name, indexed=True, fast=True)
        elif kind == FLOAT:
            builder.add_float_field(name, indexed=True, fast=True)
        elif kind == BOOL:
            builder.add_boolean_field(name, indexed=True)
    builder.add_bytes_field(STORED_FIELD, stored=True)
    return builder.build()


def _registered(index: tantivy.Index) -> tantivy.Index:
    index.register_tokenizer(TERMS_TOKENIZER, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
    return index


def create(path: Path, language: str) -> tantivy.Index:
    """A new, empty Tantivy index in ``path`` (an empty generation directory)."""
    return _registered(tantivy.Index(tantivy_schema(language), path=str(path), reuse=False))


def open_tantivy(path: Path) -> tantivy.Index:
    return _registered(tantivy.Index.open(str(path)))


def reloaded(index: tantivy.Index, path: Path, seen: bytes | None) -> bytes | None:
    """Bring ``index`` (opened on ``path``) to the last commit of any process, given
    the ``meta.json`` it was last brought to (``seen``); returns the one it is at now.
    A commit rewrites that file whole (a rename), and the file names every segment
    and its deletions, so the same bytes mean the same index. Tantivy's own reload
    re-reads and compares its segments each time: 0.26 ms at 50,000 pages, against
    about 10 µs to read the file; a search paid it every time. The file is read
    before reloading, so what is returned is never newer than what was loaded."""
    try:
        meta: bytes | None = (path / "meta.json").read_bytes()
    except OSError:
        meta = None  # Tantivy's reload says what is wrong, and the next call reloads again
    if meta is None or meta != seen:
        index.reload()
    return meta


def to_document(fields: dict[str, Any], language: str) -> tantivy.Document:
    """A Whoosh document's fields (``schema.doc_fields``, ``page_fields``) as a
    Tantivy document, indexed as Whoosh indexes them and storing what it stores. A
    value a field cannot take raises ValueError naming the field (the reason a
    failure record gives)."""
    schema, field_kinds = whoosh_schema(language), kinds(language)
    doc = tantivy.Document()
    stored: dict[str, Any] = {}
    for name, value in fields.items():
        if name.startswith("_") or value is None:
            continue
        field = schema[name]
        try:
            _add(doc, name, value, field, field_kinds[name])
        except Exception as exc:
            raise ValueError(f"{name}: {type(exc).__name__}: {exc}") from exc
        if field.stored:
            stored[name] = fields.get(f"_stored_{name}", value)
    doc.add_bytes(STORED_FIELD, json.dumps(stored, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return doc


def _add(doc: tantivy.Document, name: str, value: Any, field: Any, kind: str) -> None:
    if kind == TERMS:
        _add_terms(doc, name, field.analyzer, value)
    elif kind == RAW:
        doc.add_text(name, value)
    elif kind == MULTI_RAW:
        for item in [value] if isinstance(value, str) else value:
            doc.add_text(name, item)
    elif kind == INTEGER:
        if not field.min_value <= int(value) <= field.max_value:  # Whoosh's range: the same records on both
            raise ValueError(f"{value} is out of the field's range")
        doc.add_integer(name, int(value))
    elif kind == FLOAT:
        doc.add_float(name, float(value))
    elif kind == BOOL:
        doc.add_boolean(name, bool(value))


def _add_terms(doc: tantivy.Document, name: str, analyzer: Any, value: str) -> None:
    # the problem codes' field is a keyword field: Whoosh's own analyzer
    terms = analyzer.terms(value) if isinstance(analyzer, PageTokenizer) else [t.text for t in analyzer(value)]
    if "" not in terms and not _ASCII_SPACE.search("".join(terms)):
        doc.add_text(name, " ".join(terms))
        return
    tokens = [tantivy.Token(term, position, 0, 0) for position, term in enumerate(terms)]
    doc.add_pre_tokenized_text(name, tantivy.PreTokenizedString(value, tokens))


def count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
    """How many live documents match ``query`` (deleted ones are not counted)."""
    return int(searcher.search(query, 1, count=True).count or 0)  # type: ignore[attr-defined]  # the stub omits it


def matching(searcher: tantivy.Searcher, query: tantivy.Query, few: int = 100) -> list[tantivy.DocAddress]:
    """Every live document matching ``query``, best first: one search when they are
    ``few`` or fewer, as they mostly are (a second, for all of them, when more)."""
    first = searcher.search(query, few, count=True)
    found = int(first.count or 0)  # type: ignore[attr-defined]  # count=True sets it; the stub omits it
    result = first if found <= few else searcher.search(query, found, count=False)
    return [address for _, address in result.hits]


def stored_of(doc: tantivy.Document) -> dict[str, Any]:
    """A document's stored fields, as Whoosh gives them."""
    raw = doc.get_first(STORED_FIELD)
    return dict(json.loads(bytes(raw).decode("utf-8", "surrogatepass"))) if raw is not None else {}
