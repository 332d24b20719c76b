"""The opt-in compiled build (issue 24): ``PDFINDEX_MYPYC=1 pip install .`` compiles
extraction's per-glyph modules with mypyc, as PLAYA ships; without it, and always for
``pip install -e .``, pdfindex stays pure Python and needs no compiler. The same text
either way (checked on gen150, the real-world files and the producers corpus); the
compiled build runs 1.25-1.55x fewer instructions per file (cachegrind). Everything else about the
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
#: cmaps.py (surrogates in string literals), and the modules with frozen dataclasses,
#: params, quality, images and plausibility: compiled, a page holding them no longer
#: unpickles (the pool sends pages between processes), and Params took True as an int.
COMPILED = ["assemble", "interpreter", "glyph", "geometry", "fonts", "values", "encodings", "layout", "extract"]


def _compiled() -> list[Extension]:
    from mypyc.build import mypycify  # noqa: PLC0415 (present only in a compiling build)
    # Silent on the modules compiled ones import: an isolated build checks types
    # without pdfindex's dependencies, where their ignores and inferences differ.
    return mypycify(["--follow-imports=silent", "--no-warn-unused-ignores",
                     *(f"pdfindex/pipeline/{name}.py" for name in COMPILED)], group_name="pdfindex")


wanted = os.environ.get("PDFINDEX_MYPYC") == "1"
# Compiled only when a wheel is built: not for metadata (an isolated build's first
# passes, before MYPYC is there), never editable (modules compiled into the source
# tree would shadow the files being edited).
setup(ext_modules=_compiled() if wanted and "bdist_wheel" in sys.argv else [],
      setup_requires=[MYPYC] if wanted else [])
