"""Shared fixtures: where the shared corpora lie and how tests skip without them, a
home directory of the test's own, the run's Redis database, and the index engine a
module's indexes are created on."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pdfindex.config import ENGINES
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


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each engine in turn (issue 24: the same tests on both), as PDFINDEX_ENGINE for
    the whole module, so that a module-scoped index is built once per engine and the
    index a test creates is on it. A fixture that builds an index names ``engine``, so
    that it is built again for the next one; a test that builds its own asks for it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PDFINDEX_ENGINE", request.param)
        yield request.param


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``whoosh_only(reason)``: the test runs with ``engine`` on Whoosh alone, and is
    skipped on the others with its reason, so the run says what is not tested there."""
    for item in items:
        marker = item.get_closest_marker("whoosh_only")
        params = getattr(item, "callspec", None)
        if marker is not None and params is not None and params.params.get("engine", "whoosh") != "whoosh":
            item.add_marker(pytest.mark.skip(reason=f"Whoosh only: {marker.args[0]}"))
