"""Shared fixtures: where the shared corpora lie and how tests skip without them, a
home directory of the test's own, and the run's Redis database."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import redis_db
from tests.paths import PRODUCERS, REALWORLD, SCANS

if TYPE_CHECKING:
    import redis

# Our own bugs fail tests instead of becoming page problems (pipeline/errors.py triage);
# set before anything imports pipeline, whose DEFAULT_PARAMS reads it.
os.environ.setdefault("PDFINDEX_STRICT", "1")


def _corpus(folder: Path, name: str) -> Path:
    """A shared corpus, else a skip with the reason; under CI (which has ../shared) a
    failure, so that a green run cannot hide skipped tests."""
    if not (folder / "MANIFEST.tsv").exists():
        message = f"{name} corpus not found at {folder} (set PDFINDEX_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return folder


@pytest.fixture(scope="session")
def realworld() -> Path:
    return _corpus(REALWORLD, "real-world")


@pytest.fixture(scope="session")
def producers() -> Path:
    return _corpus(PRODUCERS, "producers")


@pytest.fixture(scope="session")
def scans() -> Path:
    """The scanned corpus (issue 22): image-only PDFs with their text."""
    return _corpus(SCANS, "scans")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home directory of its own, so no test of the CLI can touch the real user data dir."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def broker() -> Iterator[redis.Redis]:
    """A client of the run's own Redis database (tests/redis_db.py), emptied before and
    after the test; the test skips (fails under CI) when no Redis answers."""
    with redis_db.flushed_redis(redis_db.url()) as client:
        yield client
