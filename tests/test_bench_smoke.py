"""Keeps bench/extract_speed.py, its document (bench/corpus.py) and bench/ingest_throughput.py
from rotting: the generator must still build a PDF that pipeline.extract reads back
word for word, and the benches must still run. No figure is judged."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tests import redis_db
from tests.paths import ROOT
from tests.redis_db import redis_or_skip

from bench import ingest_throughput
from bench.corpus import VOCABULARY, build_document
from pdfindex import pipeline

_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def test_generated_document_extracts_to_its_own_words(tmp_path: Path) -> None:
    doc = build_document(tmp_path / "bench.pdf", pages=3)
    assert doc.page_count == 3 and doc.path.stat().st_size > 0

    extracted = pipeline.extract(doc.path)

    assert extracted.page_count == 3
    assert len(extracted.pages) == 3
    for made, page in zip(doc.pages, extracted.pages, strict=True):
        assert len(made.lines) == 45
        assert set(made.words) <= set(VOCABULARY)
        assert _words(" ".join(made.lines)) == list(made.words)
        assert page.problems == []
        # header, every body word in order (capitals and punctuation aside), page number
        assert _words(page.text) == _words("\n".join(made.text_lines))
        assert page.text.rstrip().splitlines()[-1].strip() == made.footer


def test_generated_document_is_deterministic(tmp_path: Path) -> None:
    a = build_document(tmp_path / "a.pdf", pages=3)
    b = build_document(tmp_path / "b.pdf", pages=3)
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.pages == b.pages


def test_extract_speed_times_pdfindex_on_a_small_document(tmp_path: Path) -> None:
    """The bench itself, as README runs it (``python -m bench.extract_speed``), its
    quickest form on three pages and pdfindex alone."""
    done = subprocess.run([sys.executable, "-m", "bench.extract_speed", "--quick", "--tools", "pdfindex", "--pages", "3",
                           "--out", str(tmp_path / "doc.pdf")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert re.search(r"^generated 3-page document: ", done.stdout, re.M), done.stdout
    assert re.search(r"^  pdfindex\s+[\d.]+\s+[\d.]+", done.stdout, re.M), done.stdout
    assert (tmp_path / "doc.pdf").read_bytes() == build_document(tmp_path / "again.pdf", pages=3).path.read_bytes()


# ---- bench/ingest_throughput.py, Celery mode ------------------------------------------

def test_other_clients_names_a_connection_to_the_bench_database() -> None:
    """Workers answer no ping any more: the benchmark finds someone else's worker on
    its database by that worker's connection, and not its own check connection."""
    url = redis_db.bench_url()  # this test process's bench database: no other client of it
    other = redis_or_skip(url)
    elsewhere = redis.Redis.from_url(url.rsplit("/", 1)[0] + "/0", socket_timeout=10)
    try:
        other.client_setname("someone-elses-worker")
        elsewhere.client_setname("other-database")
        elsewhere.ping()
        found = ingest_throughput.other_clients(url)
    finally:
        other.close()
        elsewhere.close()
    assert len(found) == 1 and found[0].endswith("name=someone-elses-worker"), found


def test_other_clients_of_an_unreachable_server_is_one_clear_error() -> None:
    with pytest.raises(RuntimeError, match=r"^cannot list the clients of Redis database \d+: "):
        ingest_throughput.other_clients("redis://127.0.0.1:1")


@pytest.mark.slow
def test_celery_mode_ingests_everything_with_one_and_two_processes(tmp_path: Path) -> None:
    """A tiny run of the Celery mode end to end: real Redis, real workers (which need
    PDFINDEX_ROOTS and write their own PDFINDEX_INDEX_DIR, and answer no ping). A run
    counts only when its index holds every page and file, which the bench checks."""
    url = redis_db.bench_url()
    redis_or_skip(url).close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDFINDEX_")}
    env["PYTHONPATH"] = str(ROOT)  # `python -m bench.ingest_throughput` as from the project root, in another cwd
    done = subprocess.run(
        [sys.executable, "-m", "bench.ingest_throughput", "--files", "2", "--pages-per-file", "2", "--modes", "celery",
         "--runs", "1", "--quiet-wait", "0", "--no-split", "--keep", "pdfs", "--redis", url],  # relative to cwd, not to ROOT
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    rows = {int(m.group(1)): float(m.group(2))
            for m in re.finditer(r"^  celery\s+(\d+)\s+([\d.]+)\s+[\d.]+\s", done.stdout, re.M)}
    assert sorted(rows) == [1, 2] and all(seconds > 0 for seconds in rows.values()), done.stdout
    assert "FAILED" not in done.stdout, done.stdout
