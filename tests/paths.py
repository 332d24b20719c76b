"""Where the project and the shared corpora lie, for the tests and their helpers
(tests/conftest.py's corpus fixtures skip, or fail under CI, where they are absent)."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PDFINDEX_SHARED", ROOT.parent / "shared"))
REALWORLD = SHARED / "corpus" / "realworld"
PRODUCERS = SHARED / "corpus" / "producers"
SCANS = SHARED / "corpus" / "scans"
