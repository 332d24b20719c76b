"""Package faces that import their modules on first use (PEP 562).

A face re-exports its package's public names; a light one lets a caller that
needs only a record or an error import the package without the engine behind the
rest (``pdfindex.indexer`` without Whoosh). Each name is looked up in its module the
first time it is asked for, then kept in the package. A name must not be that of
one of the package's modules: importing the module would bind the module there.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: each name of ``homes`` imported
    from the module it maps to (relative to the package) when first asked for."""
    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value
    return __getattr__
