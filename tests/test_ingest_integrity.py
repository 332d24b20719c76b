"""What an ingest reads is what it records (issue 7, items 3 and 8): the hash of a
document is that of the bytes extracted, files are read only under the configured
roots and only when they are regular files, outcomes from other processes are
checked, and every file name shown on a terminal is escaped.

Real files on disk, the real `pdfindex` command in a subprocess, a real index."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from pdfindex.indexer import DocumentRecord, PageIndex, PageRecord, Status
from tests.ingest_helpers import (
    ROOT,
    children_of,
    cli_argv,
    cli_env,
    corrupt_pdf,
    find,
    ingest,
    page_word,
    reap,
    run_cli,
    slow_pdf,
    text_pdf,
    wait_for,
    write,
)
from pdfindex.workers.errors import OutsideRoots
from pdfindex.workers.files import check_under_roots, read_pdf
from pdfindex.workers.outcome import Outcome, extract_outcome


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- hash what you read ------------------------------------------------------------

def test_outcome_is_recorded_under_the_hash_of_what_was_extracted(tmp_path: Path) -> None:
    old, new = text_pdf("oldtext", 1), text_pdf("newtext", 2)
    path = write(tmp_path / "doc.pdf", old)
    planned = _sha(old)
    path.write_bytes(new)  # rewritten between planning and extraction
    outcome = extract_outcome(path, planned, [])
    assert outcome.doc.doc_hash == _sha(new)
    assert outcome.job_hash == planned
    assert outcome.doc.size == len(new) and outcome.doc.mtime == path.stat().st_mtime
    assert page_word("newtext", 2) in outcome.pages[1].text


def test_file_rewritten_during_an_ingest_is_indexed_as_what_it_now_holds(tmp_path: Path) -> None:
    """The issue's case: recorded under the old hash with the new text, a later
    copy of the old content was skipped as a copy and never became searchable."""
    folder = tmp_path / "in"
    write(folder / "a_slow.pdf", slow_pdf("slowpoke", 2, 15_000))  # seconds of work for the one process
    old, new = text_pdf("before", 1), text_pdf("after", 1)
    target = write(folder / "b.pdf", old)
    index = tmp_path / "index"
    proc = subprocess.Popen(cli_argv("ingest", folder, "--index", index, "--workers", "1"), cwd=ROOT,
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: children_of(proc.pid), 30, "the extraction pool to start (the plan is made)")
        target.write_bytes(new)  # while the slow file holds the only extraction process
        out, err = proc.communicate(timeout=120)
    finally:
        reap(proc)
    assert proc.returncode == 0, out + err
    ix = PageIndex(index)
    record = next(d for d in ix.documents() if d.path == str(target))
    assert record.doc_hash == _sha(new)
    assert find(ix, page_word("after", 1)) == [(str(target), 1)]
    assert find(ix, page_word("before", 1)) == []

    copy = write(folder / "c.pdf", old)  # the old content, under another name
    ingest(index, folder)
    assert find(PageIndex(index), page_word("before", 1)) == [(str(copy), 1)]
    assert PageIndex(index).check() == []


# ---- reading only what may be read ---------------------------------------------------------

def test_reads_are_confined_to_the_roots_whatever_the_name_says(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "secret"
    inside = write(root / "ok.pdf", text_pdf("inside", 1))
    private = write(outside / "private.pdf", text_pdf("private", 1))
    private.chmod(0o600)
    (root / "link.pdf").symlink_to(private)
    (root / "dirlink").symlink_to(outside)

    assert read_pdf(inside, [root]).doc_hash == _sha(inside.read_bytes())
    for name in (private, root / "link.pdf", root / "dirlink" / "private.pdf", root / ".." / "secret" / "private.pdf"):
        with pytest.raises(OutsideRoots, match="outside the configured roots"):
            check_under_roots(name, [root])
        with pytest.raises(OutsideRoots):
            read_pdf(name, [root])
        with pytest.raises(OutsideRoots):
            extract_outcome(name, "0" * 64, [], roots=[root])
    # A root given through a symlink is the folder it names.
    (tmp_path / "alias").symlink_to(root)
    assert read_pdf(inside, [tmp_path / "alias"]).size == inside.stat().st_size


def test_embedded_ingest_with_roots_refuses_paths_and_links_outside_them(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(root / "inside.pdf", text_pdf("within", 1))
    secret = write(outside / "secret.pdf", text_pdf("secret", 1))
    (root / "link.pdf").symlink_to(secret)
    index = tmp_path / "index"
    env = cli_env(PDFINDEX_ROOTS=str(root))
    refused = run_cli("ingest", outside, "--index", index, env=env)
    assert refused.returncode == 1 and "outside PDFINDEX_ROOTS" in refused.stderr
    assert "Traceback" not in refused.stderr and not index.exists()

    r = ingest(index, root, env=env)
    ix = PageIndex(index)
    assert find(ix, page_word("within", 1)) == [(str(root / "inside.pdf"), 1)]
    assert find(ix, page_word("secret", 1)) == []
    link = next(d for d in ix.documents() if d.path == str(root / "link.pdf"))
    assert link.status == Status.FAILED and "outside the configured roots" in link.error
    assert "link.pdf" in r.stdout


def test_a_fifo_named_pdf_fails_at_once_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.pdf"
    os.mkfifo(fifo)
    started = time.monotonic()
    outcome = extract_outcome(fifo, "0" * 64, [])
    assert time.monotonic() - started < 5
    assert outcome.doc.status == Status.FAILED and "not a regular file" in outcome.doc.error


# ---- outcomes from other processes -------------------------------------------------

def test_outcome_json_round_trips_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9 \xff.pdf")
    doc = DocumentRecord(doc_hash="a" * 64, path=f"/x/{name}", status=Status.INDEXED, page_count=1)
    outcome = Outcome(doc, [PageRecord(1, "text", 1.0, 4, 0, False)], "b" * 64)
    data = outcome.to_json()
    data.encode("utf-8")  # what Redis and pipes need: no lone surrogates in the JSON text
    assert Outcome.from_json(data) == outcome


@pytest.mark.parametrize("forged", [
    "not json", "[]", '{"doc": {}, "pages": [], "job_hash": ""}',
    json.dumps({"doc": {"doc_hash": "a", "path": 5}, "pages": [], "job_hash": "x"}),
    # every field present, one of the wrong type / an extra field / an unknown status
    json.dumps({"doc": {**json.loads(Outcome(DocumentRecord("a", "/p", Status.FAILED), []).to_json())["doc"],
                        "attempts": "3"}, "pages": [], "job_hash": "a"}),
    json.dumps({"doc": {**json.loads(Outcome(DocumentRecord("a", "/p", Status.FAILED), []).to_json())["doc"],
                        "evil": 1}, "pages": [], "job_hash": "a"}),
    json.dumps({"doc": {**json.loads(Outcome(DocumentRecord("a", "/p", Status.FAILED), []).to_json())["doc"],
                        "status": "pwned"}, "pages": [], "job_hash": "a"}),
    json.dumps({"doc": json.loads(Outcome(DocumentRecord("a", "/p", Status.FAILED), []).to_json())["doc"],
                "pages": [{"number": True, "text": "", "coverage": None, "glyphs": 0, "unresolved": 0,
                           "needs_ocr": False, "problems": []}], "job_hash": "a"}),
    "[" * 100_000,
])
def test_malformed_outcomes_are_refused_with_a_reason(forged: str) -> None:
    with pytest.raises(ValueError, match="outcome"):
        Outcome.from_json(forged)


# ---- names shown on a terminal ---------------------------------------------------------

def test_hostile_file_names_are_shown_escaped_and_kept_exactly(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    evil = b"evil\x1b]0;pwned\x07\x1b[2J\nFAILED forged.pdf: ok \xff.pdf"
    good = folder / os.fsdecode(evil)
    good.write_bytes(text_pdf("escapee", 1))
    broken = folder / os.fsdecode(b"broken\x1b[31m\xfe.pdf")
    broken.write_bytes(corrupt_pdf())
    index = tmp_path / "index"
    r = run_cli("ingest", folder, "--index", index)
    assert r.returncode == 5, r.stdout + r.stderr  # finished, with the broken file failed
    assert "Traceback" not in r.stderr
    for out in (r.stdout, r.stderr):
        assert "\x1b" not in out and "\x07" not in out
    assert "broken\\x1b[31m\\xfe.pdf" in r.stdout  # the FAILED line names the file, escaped
    assert "\nFAILED forged.pdf" not in r.stdout  # a newline in a name cannot forge a line

    search = run_cli("search", page_word("escapee", 1), "--index", index)
    assert search.returncode == 0, search.stderr
    assert "\x1b" not in search.stdout and "evil\\x1b]0;pwned\\x07\\x1b[2J\\x0aFAILED" in search.stdout
    as_json = run_cli("search", page_word("escapee", 1), "--index", index, "--json")
    assert json.loads(as_json.stdout)["hits"][0]["path"] == str(good)  # lossless, bytes included

    status = run_cli("status", "--index", index)
    assert status.returncode == 0 and "\x1b" not in status.stdout and "\\xfe.pdf" in status.stdout
    records = {d.path for d in PageIndex(index).documents()}
    assert records == {str(good), str(broken)}


def test_extract_errors_name_the_file_escaped(tmp_path: Path) -> None:
    name = tmp_path / "x\x1b[8mhidden.pdf"
    name.write_bytes(b"not a pdf at all")
    r = run_cli("extract", name)
    assert r.returncode == 1
    assert "\x1b" not in r.stderr and "x\\x1b[8mhidden.pdf" in r.stderr and "not a PDF" in r.stderr


def test_prune_keeps_records_of_files_that_cannot_be_looked_at_now() -> None:
    """A file that exists but cannot be stat'ed (permission denied, a share down) is
    not gone: --prune must not delete its record. As a plain user, since root's
    permission bypass would hide the case."""
    from tests.fault_helpers import as_nobody, unavailable
    from pdfindex.workers.plan import _gone

    if os.geteuid() != 0:
        unavailable("needs root to drop to the nobody user")
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        base.chmod(0o755)
        private = base / "private"
        private.mkdir(mode=0o700)
        hidden = write(private / "hidden.pdf", text_pdf("hidden", 1))
        missing = base / "missing.pdf"
        seen = as_nobody(lambda: {"hidden": str(_gone(str(hidden))), "missing": str(_gone(str(missing)))})
    finally:
        shutil.rmtree(base)
    assert seen == {"hidden": "False", "missing": "True"}
