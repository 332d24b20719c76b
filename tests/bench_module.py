"""A bench script imported as a module, for the tests that keep the benches from rotting."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_bench(path: Path, name: str) -> ModuleType:
    """``path`` imported under ``name`` (registered first: dataclasses look their
    module up while being defined)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
