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

The stand-ins must be in place whichever module of the index imports Whoosh first
(the face ``pdfindex.indexer`` loads its modules on first use, and a module such as
``indexer.store`` may be imported directly): importing this module installs a
finder that, on the first import of the ``whoosh`` package, imports Whoosh's
start-up modules with the stand-ins in place, then steps aside.
"""
from __future__ import annotations

import functools
import importlib
import importlib.machinery
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.abc import Loader

#: Every Whoosh module the index imports at start-up (the rest load on first use).
_WHOOSH_MODULES = ("whoosh.index", "whoosh.query", "whoosh.searching", "whoosh.reading", "whoosh.fields",
                   "whoosh.analysis", "whoosh.collectors", "whoosh.writing", "whoosh.filedb.filestore",
                   "whoosh.util.filelock", "whoosh.support.levenshtein", "whoosh.lang")


def _calling(module: str, name: str) -> Callable[..., Any]:
    """A stand-in for ``module.name`` that imports the real one only if ever called."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return call


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


@contextmanager
def _stand_ins() -> Iterator[None]:
    """The three stand-ins, in place for the time of Whoosh's start-up imports."""
    with ExitStack() as stack:
        stack.enter_context(_standing_in("urllib.request", urlretrieve=_calling("urllib.request", "urlretrieve")))
        stack.enter_context(_standing_in("cached_property", cached_property=functools.cached_property))
        stack.enter_context(_standing_in("whoosh.lang.morph_en",
                                         variations=_calling("whoosh.lang.morph_en", "variations")))
        yield


class _LeanLoader:
    """Whoosh's own loader for its package, which then imports the start-up
    modules with the stand-ins in place (the package is in ``sys.modules`` by then,
    so its submodules import as usual)."""

    def __init__(self, real: Loader) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        with _stand_ins():
            self.real.exec_module(module)
            for name in _WHOOSH_MODULES:
                importlib.import_module(name)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, ...: the real loader's
        return getattr(self.real, name)


class _FirstWhooshImport:
    """Finds the ``whoosh`` package where the path finder would, once, and hands it
    to ``_LeanLoader``; then steps aside (later imports are ordinary). (A finder and
    a loader by protocol: ``importlib.abc`` would cost a search 2 ms to import.)"""

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name != "whoosh":
            return None
        with suppress(ValueError):  # another thread stepped it aside already
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _LeanLoader(spec.loader)  # type: ignore[assignment]
        return spec


if "whoosh" not in sys.modules:  # else too late to save anything
    sys.meta_path.insert(0, _FirstWhooshImport())
