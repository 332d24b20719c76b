"""Importing Whoosh without three imports of its own that no search uses.

``whoosh.compat`` imports ``urllib.request`` (for ``urlretrieve``, which pdfindex
never calls: it pulls in http.client and email), and ``whoosh.reading`` takes
``cached_property`` from the PyPI package of that name, which imports asyncio. The
two cost about 100 ms of every `pdfindex search`'s start-up (bench/startup.py),
more than the rest of Whoosh. While Whoosh's modules are imported, light stand-ins
take their place: ``urlretrieve`` imports the real one when called, and
``functools.cached_property`` does the one job Whoosh gives ``cached_property`` (a
per-reader cache on ``SegmentReader``, a class with a ``__dict__``). The stand-ins are
removed afterwards, so any later import of either module gets the real one.
Likewise ``whoosh.query.terms`` takes ``variations`` from ``whoosh.lang.morph_en``,
whose rule table takes 12 ms to compile, for the Variations query pdfindex never
builds: the stand-in imports the real function when called.
"""
from __future__ import annotations

import functools
import importlib
import sys
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

#: Every Whoosh module the index imports at start-up (the rest load on first use).
_WHOOSH_MODULES = ("whoosh.index", "whoosh.query", "whoosh.searching", "whoosh.reading", "whoosh.fields",
                   "whoosh.analysis", "whoosh.collectors", "whoosh.writing", "whoosh.filedb.filestore",
                   "whoosh.util.filelock", "whoosh.support.levenshtein", "whoosh.lang")


def _urlretrieve(*args: Any, **kwargs: Any) -> Any:
    from urllib.request import urlretrieve  # noqa: PLC0415 - the real one, only if ever called

    return urlretrieve(*args, **kwargs)


def _variations(*args: Any, **kwargs: Any) -> Any:
    from whoosh.lang.morph_en import variations  # noqa: PLC0415 - the real one, only if ever called

    return variations(*args, **kwargs)


@contextmanager
def _standing_in(name: str, **attributes: Any) -> Iterator[None]:
    if name in sys.modules:  # already imported by someone: nothing to save
        yield
        return
    stub = types.ModuleType(name)
    stub.__dict__.update(attributes)
    sys.modules[name] = stub
    try:
        yield
    finally:
        if sys.modules.get(name) is stub:
            del sys.modules[name]


def import_whoosh() -> None:
    """Import Whoosh's start-up modules with the stand-ins in place (this module
    does so when imported: ``indexer`` imports it before anything of Whoosh)."""
    if "whoosh.reading" in sys.modules:
        return
    with ExitStack() as stack:
        stack.enter_context(_standing_in("urllib.request", urlretrieve=_urlretrieve))
        stack.enter_context(_standing_in("cached_property", cached_property=functools.cached_property))
        stack.enter_context(_standing_in("whoosh.lang.morph_en", variations=_variations))
        for module in _WHOOSH_MODULES:
            importlib.import_module(module)


import_whoosh()
