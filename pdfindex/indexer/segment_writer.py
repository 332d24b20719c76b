"""Whoosh's segment writer, with the lengths its commit needs read once.

When a commit writes its postings, Whoosh asks for the length of the posting's
field in the posting's page, for every posting (to keep each block's shortest and
longest field, which bound its BM25 scores): a seek and a read through the
segment's lengths column each time, a sixth of the commit. Here each field's
lengths are loaded into memory once per commit and looked up from there; the
values, and so the segment's bytes, are the same.
"""
from __future__ import annotations

from typing import Any

from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
from whoosh.util.numeric import byte_to_length
from whoosh.writing import SegmentWriter


class _LoadedLengths:
    """``doc_field_length`` of a per-document reader, from each field's column
    loaded whole."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._loaded: dict[str, Any] = {}

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int | None:
        lengths = self._loaded.get(fieldname)
        if lengths is None:
            column = self._reader._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
            lengths = self._loaded[fieldname] = column.load() if column is not None else ()
        if not lengths:
            return default
        byte = lengths[docnum]
        # as Whoosh's reader: a length byte of 0 gives None (no length)
        return byte_to_length(byte) if byte else None


class PageSegmentWriter(SegmentWriter):
    """A SegmentWriter whose commit looks lengths up in memory."""

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        reader = self.per_document_reader() if self.codec.length_stats else None
        lengths = _LoadedLengths(reader) if reader is not None else None
        self.fieldwriter.add_postings(self.schema, lengths, self.pool.iter_postings())
        self.fieldwriter.close()
        if reader is not None:
            reader.close()
