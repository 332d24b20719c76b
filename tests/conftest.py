"""Shared fixtures: where the shared corpora lie, and how tests skip without them."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

# Our own bugs fail tests instead of becoming page problems (pipeline/errors.py triage);
# set before anything imports pipeline, whose DEFAULT_PARAMS reads it.
os.environ.setdefault("PDFINDEX_STRICT", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PDFINDEX_SHARED", ROOT.parent / "shared"))
REALWORLD = SHARED / "corpus" / "realworld"
PRODUCERS = SHARED / "corpus" / "producers"


@pytest.fixture(scope="session")
def realworld() -> Path:
    if not (REALWORLD / "MANIFEST.tsv").exists():
        pytest.skip(f"real-world corpus not found at {REALWORLD} (set PDFINDEX_SHARED)")
    return REALWORLD


@pytest.fixture(scope="session")
def producers() -> Path:
    if not (PRODUCERS / "MANIFEST.tsv").exists():
        pytest.skip(f"producers corpus not found at {PRODUCERS} (set PDFINDEX_SHARED)")
    return PRODUCERS


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home directory of its own, so no test of the CLI can touch the real user data dir."""
    path = tmp_path / "home"
    path.mkdir()
    return path


_LAYERS = ("cli", "config", "indexer", "pipeline", "server", "workers")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Our layers are imported as ``pdfindex.<layer>`` only: the repository root is on
    sys.path in tests, so a stray ``import indexer`` would load a second copy of the
    layer, with classes that compare unequal to the first's."""
    import sys

    stray = sorted(name for name in _LAYERS if name in sys.modules
                   and str(getattr(sys.modules[name], "__file__", "")).startswith(str(ROOT)))
    if stray:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nlayers imported by their top-level names (use pdfindex.<name>): {', '.join(stray)}")
