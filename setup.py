"""The opt-in compiled build (issue 24): ``PDFINDEX_MYPYC=1 pip install .`` compiles
extraction's per-glyph modules with mypyc, as PLAYA ships; without it, and always for
``pip install -e .``, pdfindex stays pure Python and needs no compiler. The same text
either way (checked on gen150, the real-world files and the producers corpus); the
compiled build runs 1.25-1.58x fewer instructions per file. Everything else about the
package is in pyproject.toml."""
from __future__ import annotations

import os
import sys

from setuptools import Extension, setup

#: The mypy that compiles, asked for only when compiling: setuptools turns
#: ``setup_requires`` into a requirement of the isolated build environment.
MYPYC = "mypy==2.4.1"

#: Where extraction spends its CPU per glyph, and the modules those call per glyph.
#: Left out: content.py and errors.py (classes deriving from list and str, which mypyc
#: refuses), streams.py (it patches pdfminer's methods with plain functions, which
#: compiled are no descriptors), textmap.py (a Generic class fails to import compiled),
#: cmaps.py (surrogates in string literals).
COMPILED = ["assemble", "interpreter", "glyph", "geometry", "fonts", "params", "values", "encodings",
            "layout", "quality", "plausibility", "extract", "images"]


def _compiled(wanted: bool) -> list[Extension]:
    if not wanted:
        return []
    try:
        from mypyc.build import mypycify  # noqa: PLC0415 (only present when compiling)
    except ImportError:  # the first pass of an isolated build, which asks for MYPYC
        return []
    return mypycify([f"pdfindex/pipeline/{name}.py" for name in COMPILED], group_name="pdfindex")


# Never editable: modules compiled into the source tree would shadow the files being edited.
wanted = os.environ.get("PDFINDEX_MYPYC") == "1" and "editable_wheel" not in sys.argv
setup(ext_modules=_compiled(wanted), setup_requires=[MYPYC] if wanted else [])
