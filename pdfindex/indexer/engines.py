"""Which engine an index is on, and the one door to the Tantivy side.

An index is created on Whoosh or Tantivy (PDFINDEX_ENGINE, ``reindex --engine``)
and says which in its settings (``store``). Whoosh's modules are imported as they
always were; Tantivy's side (``tantivy_index`` and the modules under it) is
imported only here, on the first use of an index on Tantivy, so that a Whoosh
index's search never loads it (docs/engines.md).
"""
from __future__ import annotations

from types import ModuleType


def tantivy_engine() -> ModuleType:
    """``tantivy_index``: the Tantivy side of the facade."""
    from . import tantivy_index  # noqa: PLC0415 - Tantivy and its modules, only for an index on Tantivy

    return tantivy_index
