"""Index management and an ingest that says what it did (issue 9, items 1, 5, 7):
`pdfindex remove`, `ingest --prune` scoped to the paths given, `--retry-failed`,
`--force`, dry runs, the exit status when files failed, the skipped counts, and
``pdfindex.workers.api`` used from Python without the CLI.

Everything is real: PDFs built byte by byte (tests/pdfwriter.py), the `pdfindex`
command in a subprocess, the embedded billiard pool, a Whoosh index on disk read
back through ``PageIndex``; the Celery run uses real workers and the run's Redis database.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pdfindex import config
from pdfindex.indexer import PageIndex, Status
from pdfindex.workers import api
from tests import redis_db
from tests.celery_helpers import spawn_worker, wait_ready
from tests.ingest_helpers import (
    ROOT,
    USER_PASSWORD,
    cli_env,
    corrupt_pdf,
    docs_by_path,
    encrypted_pdf,
    find,
    ingest,
    page_word,
    parse_summary,
    run_cli,
    snapshot,
    text_pdf,
    write,
)

EXIT_INCOMPLETE = 5  # cli/errors.py
REDIS_URL = redis_db.url()


def _paths(index: Path) -> set[str]:
    return {p for doc in PageIndex(index).documents() for p in doc.all_paths}


def _remove(index: Path, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    r = run_cli("remove", *args, "--index", index, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def _ingest(index: Path, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`pdfindex ingest` with one extraction process (the machine is shared)."""
    return ingest(index, *args, "--workers", "1", env=env)


# ---- remove ------------------------------------------------------------------------

def test_remove_a_file_takes_its_record_and_pages(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    a = write(docs / "a.pdf", text_pdf("anvil", 2))
    b = write(docs / "b.pdf", text_pdf("bucket", 1))
    _ingest(index, docs)
    a_hash = docs_by_path(PageIndex(index))[str(a)][0].doc_hash

    r = _remove(index, a)
    assert r.returncode == 0, r.stderr
    assert f"removed {a}" in r.stdout and "1 document with their pages" in r.stdout, r.stdout
    ix = PageIndex(index)
    assert _paths(index) == {str(b)}
    assert ix.document(a_hash) is None and ix.page_texts(a_hash) == {}
    assert find(ix, page_word("anvil", 1)) == []
    assert find(ix, page_word("bucket", 1)) == [(str(b), 1)]
    assert a.exists()  # the file itself is not touched
    assert ix.check() == []


def test_remove_a_folder_takes_everything_below_it_and_nothing_beside_it(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    inner = [write(docs / "old" / "x.pdf", text_pdf("xray", 1)), write(docs / "old" / "deep" / "y.pdf",
                                                                        text_pdf("yankee", 1))]
    beside = write(docs / "older" / "z.pdf", text_pdf("zulu", 1))  # same prefix, another folder
    top = write(docs / "top.pdf", text_pdf("topaz", 1))
    _ingest(index, docs, "--recursive")
    shutil.rmtree(docs / "old")  # a folder already deleted on disk is removed all the same

    r = _remove(index, docs / "old")
    assert r.returncode == 0, r.stderr
    assert sorted(line.split(" ", 1)[1] for line in r.stdout.splitlines() if line.startswith("removed /")) \
        == sorted(map(str, inner))
    assert _paths(index) == {str(beside), str(top)}
    ix = PageIndex(index)
    assert find(ix, page_word("xray", 1)) == [] and find(ix, page_word("yankee", 1)) == []
    assert find(ix, page_word("zulu", 1)) == [(str(beside), 1)]
    assert ix.check() == []


def test_remove_a_copy_keeps_the_document_under_its_other_path(tmp_path: Path) -> None:
    index = tmp_path / "index"
    original = write(tmp_path / "inbox" / "report.pdf", text_pdf("twin", 2))
    copy = tmp_path / "archive" / "report copy.pdf"
    copy.parent.mkdir()
    shutil.copy2(original, copy)
    _ingest(index, tmp_path / "inbox", tmp_path / "archive")
    (doc,) = PageIndex(index).documents()
    assert doc.all_paths == [str(original), str(copy)]

    r = _remove(index, tmp_path / "inbox")
    assert r.returncode == 0, r.stderr
    assert "0 documents" in r.stdout and "1 of them copies" in r.stdout, r.stdout
    ix = PageIndex(index)
    (kept,) = ix.documents()
    assert (kept.doc_hash, kept.all_paths) == (doc.doc_hash, [str(copy)])
    assert find(ix, page_word("twin", 2)) == [(str(copy), 2)]  # the pages stay, under the copy
    assert sorted(ix.page_texts(doc.doc_hash)) == [1, 2]

    assert _remove(index, copy).returncode == 0  # the last path: the document goes
    ix = PageIndex(index)
    assert list(ix.documents()) == [] and ix.page_texts(doc.doc_hash) == {}
    assert ix.check() == []


def test_remove_dry_run_lists_and_changes_nothing_and_unknown_paths_are_named(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    a = write(docs / "a.pdf", text_pdf("anvil", 1))
    write(docs / "b.pdf", text_pdf("bucket", 1))
    _ingest(index, docs)
    before, paths_before = snapshot(index), _paths(index)

    r = _remove(index, a, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"would remove {a}"
    assert "dry run: nothing was changed" in r.stdout
    assert snapshot(index) == before and _paths(index) == paths_before

    nowhere = tmp_path / "nowhere.pdf"
    r = _remove(index, nowhere)
    assert r.returncode == 1 and r.stderr.strip() == f"pdfindex: {nowhere}: not in the index; nothing removed"
    assert snapshot(index) == before

    r = _remove(index, a, nowhere)  # one known, one not: the known one goes, the other is named
    assert r.returncode == EXIT_INCOMPLETE, r.stderr
    assert f"pdfindex: {nowhere}: not in the index" in r.stderr
    assert str(a) not in _paths(index)

    r = _remove(tmp_path / "no-index", a)
    assert r.returncode == 1 and "no index at" in r.stderr, r.stderr
    assert not (tmp_path / "no-index").exists()  # remove never creates an index


# ---- prune ---------------------------------------------------------------------------

def test_prune_reaches_only_the_paths_given_and_never_a_missing_or_empty_folder(tmp_path: Path) -> None:
    """Two folders indexed; a file of each deleted; then one folder is "unmounted"
    (renamed away), and later the other is emptied as a share's mount point is."""
    local, share, index = tmp_path / "local", tmp_path / "share", tmp_path / "index"
    local_gone = write(local / "gone.pdf", text_pdf("localgone", 1))
    local_kept = write(local / "kept.pdf", text_pdf("localkept", 1))
    share_gone = write(share / "gone.pdf", text_pdf("sharegone", 1))
    share_files = [write(share / f"s{i}.pdf", text_pdf(f"share{i}", 1)) for i in range(2)]
    _ingest(index, local, share)
    local_gone.unlink()
    share_gone.unlink()

    # Only `local` given: the share's deleted file is not this run's business.
    summary = parse_summary(_ingest(index, local, "--prune").stdout)
    assert (summary.pruned, summary.unchanged) == (1, 1)
    assert _paths(index) == {str(local_kept), str(share_gone), *map(str, share_files)}

    # The share unmounted (its folder gone): nothing in it is pruned, and the run says so.
    share.rename(tmp_path / "share-away")
    r = run_cli("ingest", local, share, "--prune", "--workers", "1", "--index", index)
    assert r.returncode == EXIT_INCOMPLETE, r.stdout + r.stderr
    assert re.search(rf"^  NOT PRUNED {re.escape(str(share))}: folder not found \(missing or not mounted\) "
                     r"with 3 indexed file\(s\) in it: nothing in it pruned$", r.stdout, re.M), r.stdout
    assert _paths(index) == {str(local_kept), str(share_gone), *map(str, share_files)}

    # An empty mount point is the same: taken for an unmounted share.
    share.mkdir()
    r = run_cli("ingest", share, "--prune", "--index", index)
    assert r.returncode == EXIT_INCOMPLETE, r.stdout + r.stderr
    assert f"NOT PRUNED {share}: empty folder with 3 indexed file(s) in it" in r.stdout, r.stdout
    assert len(_paths(index)) == 4

    # Mounted again: the one file really gone is pruned, the others stay.
    share.rmdir()
    (tmp_path / "share-away").rename(share)
    summary = parse_summary(_ingest(index, share, "--prune").stdout)
    assert (summary.pruned, summary.unchanged) == (1, 2)
    assert _paths(index) == {str(local_kept), *map(str, share_files)}
    assert PageIndex(index).check() == []


def test_a_file_moved_inside_the_pruned_folder_keeps_its_pages(tmp_path: Path) -> None:
    """A rename inside the folder being pruned: the document loses its old path and
    keeps its pages under the new one (it was deleted, and the moved file found in
    no record, because its only old path was gone)."""
    docs, index = tmp_path / "docs", tmp_path / "index"
    moved = write(docs / "a.pdf", text_pdf("movedaway", 2))
    other = write(docs / "b.pdf", text_pdf("staysput", 1))
    _ingest(index, docs)
    moved = moved.rename(docs / "moved.pdf")
    summary = parse_summary(_ingest(index, docs, "--prune").stdout)
    assert summary.pruned == 0 and summary.indexed == 0
    assert _paths(index) == {str(moved), str(other)}
    assert sorted(find(PageIndex(index), "movedaway")) == [(str(moved), 1), (str(moved), 2)]


def test_prune_without_recursive_stays_in_the_folder_itself(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    top = write(docs / "top.pdf", text_pdf("topgone", 1))
    deep = write(docs / "sub" / "deep.pdf", text_pdf("deepgone", 1))
    _ingest(index, docs, "--recursive")
    top.unlink()
    deep.unlink()
    assert parse_summary(_ingest(index, docs, "--prune").stdout).pruned == 1
    assert _paths(index) == {str(deep)}
    assert parse_summary(_ingest(index, docs, "--prune", "--recursive").stdout).pruned == 1
    assert _paths(index) == set()


def test_prune_dry_run_lists_what_would_go_and_changes_nothing(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    gone = write(docs / "gone.pdf", text_pdf("goner", 1))
    write(docs / "kept.pdf", text_pdf("keeper", 1))
    _ingest(index, docs)
    gone.unlink()
    new = write(docs / "new.pdf", text_pdf("newcomer", 1))
    before = snapshot(index)

    r = run_cli("ingest", docs, "--prune", "--dry-run", "--index", index)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "dry run: nothing was changed"
    assert f"  PRUNE {gone}" in lines and f"  INDEX {new}" in lines, r.stdout
    assert re.search(r"^  would prune:\s+1$", r.stdout, re.M) and re.search(r"^  would index:\s+1$", r.stdout, re.M)
    assert snapshot(index) == before
    assert _paths(index) == {str(gone), str(docs / "kept.pdf")}
    assert find(PageIndex(index), page_word("newcomer", 1)) == []


def test_a_dry_run_before_the_first_ingest_lists_everything_and_creates_no_index(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    files = [write(docs / f"first{n}.pdf", text_pdf(f"first{n}", 1)) for n in range(2)]
    write(docs / "notes.txt", b"not a pdf")
    r = run_cli("ingest", docs, "--dry-run", "--index", index)
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(f"  INDEX {f}" in r.stdout.splitlines() for f in files), r.stdout
    assert re.search(r"^  would index:\s+2$", r.stdout, re.M), r.stdout
    assert not index.exists()


# ---- retry-failed, force -----------------------------------------------------------------

def test_retry_failed_opens_a_file_once_the_password_file_has_its_password(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    locked = write(docs / "locked.pdf", encrypted_pdf("sesame", 2))
    broken = write(docs / "broken.pdf", corrupt_pdf())
    write(docs / "open.pdf", text_pdf("plain", 1))
    passwords = write(tmp_path / "passwords.txt", b"guess\n")
    env = cli_env(PDFINDEX_PASSWORD_FILE=str(passwords))  # the extraction pool's own password file

    first = parse_summary(_ingest(index, docs, env=env).stdout)
    assert (first.indexed, first.failed) == (1, 2)
    assert "no password in the password file" in first.failures[str(locked)]
    write(passwords, f"guess\n{USER_PASSWORD}\n".encode())

    again = parse_summary(_ingest(index, docs, env=env).stdout)  # failed files stay skipped, and named
    assert (again.indexed, again.unchanged, again.failed) == (0, 1, 2)
    assert again.failures == first.failures

    retried = _ingest(index, docs, "--retry-failed", env=env)
    summary = parse_summary(retried.stdout)
    assert (summary.indexed, summary.unchanged, summary.failed) == (1, 1, 1)
    assert set(summary.failures) == {str(broken)}  # extracted again, broken again
    ix = PageIndex(index)
    assert docs_by_path(ix)[str(locked)][0].status == Status.INDEXED
    assert find(ix, page_word("sesame", 2)) == [(str(locked), 2)]
    assert ix.check() == []


def test_force_extracts_unchanged_files_again(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    files = [write(docs / f"f{i}.pdf", text_pdf(f"forced{i}", 2)) for i in range(2)]
    shutil.copy2(files[0], docs / "copy.pdf")
    _ingest(index, docs)
    before = {d.doc_hash: d for d in PageIndex(index).documents()}
    assert parse_summary(_ingest(index, docs).stdout).indexed == 0

    summary = parse_summary(_ingest(index, docs, "--force").stdout)
    assert (summary.indexed, summary.pages) == (2, 4)  # each content once; the copy is a copy
    ix = PageIndex(index)
    after = {d.doc_hash: d for d in ix.documents()}
    assert set(after) == set(before)
    assert all(after[h].ingested > before[h].ingested for h in before)
    (twin,) = [d for d in after.values() if str(files[0]) in d.all_paths]
    assert sorted(twin.all_paths) == sorted([str(files[0]), str(docs / "copy.pdf")])  # both paths kept
    for i, path in enumerate(files):
        (hit,) = find(ix, page_word(f"forced{i}", 2))  # each page once, under one of its paths
        assert hit[0] in docs_by_path(ix) and str(path) in next(d for d in after.values()
                                                                if hit[0] in d.all_paths).all_paths
    assert ix.check() == []


# ---- what an ingest says --------------------------------------------------------------------

def test_exit_status_is_5_when_files_fail_and_0_when_all_are_indexed_or_unchanged(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "good.pdf", text_pdf("good", 1))
    locked = write(docs / "locked.pdf", encrypted_pdf("locked", 1))
    r = run_cli("ingest", docs, "--index", index)
    assert r.returncode == EXIT_INCOMPLETE, r.stdout + r.stderr
    reason = parse_summary(r.stdout).failures[str(locked)]
    assert "a password is required" in reason and "--password-file" in reason, reason

    r = run_cli("ingest", docs, "--index", index)  # the failure is unchanged: still not indexed
    assert r.returncode == EXIT_INCOMPLETE, r.stdout + r.stderr
    assert parse_summary(r.stdout).failures == {str(locked): reason}

    locked.unlink()
    ok = tmp_path / "ok"
    write(ok / "fine.pdf", text_pdf("fine", 1))
    assert run_cli("ingest", ok, "--index", index).returncode == 0

    missing = tmp_path / "missing.pdf"
    r = run_cli("ingest", missing, "--index", index)
    assert r.returncode == 1 and r.stderr.strip() == f"pdfindex: {missing}: no such file or folder", r.stderr
    r = run_cli("ingest", missing, "--index", tmp_path / "new-index")
    assert r.returncode == 1 and "no such file or folder" in r.stderr and not (tmp_path / "new-index").exists()
    r = run_cli("ingest", ok, missing, "--index", index)  # the rest is done, the missing one named
    assert r.returncode == EXIT_INCOMPLETE and f"  NOT FOUND {missing}: no such file or folder" in r.stdout


def test_summary_counts_skipped_files_and_folders(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "report.pdf", text_pdf("skipper", 1))
    for name in ("notes.txt", "photo.jpg", "data.csv"):
        (docs / name).write_text("not a PDF\n")
    write(docs / "2023" / "old.pdf", text_pdf("older", 1))
    (docs / "empty folder").mkdir()
    r = run_cli("ingest", docs, "--index", index)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "  skipped:              3 non-PDF files, 2 folders (use --recursive)" in r.stdout.splitlines(), r.stdout
    r = run_cli("ingest", docs, "--recursive", "--index", index)
    assert "  skipped:              3 non-PDF files" in r.stdout.splitlines(), r.stdout
    assert parse_summary(r.stdout).indexed == 1


def test_a_rerun_still_names_the_files_that_failed_and_exits_5(tmp_path: Path) -> None:
    """Issue 20: failed and encrypted files are skipped until they change, but a
    re-run still names them with their reasons, as the first run did, and exits 5:
    they are still not indexed. Nothing is extracted or written again."""
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "good.pdf", text_pdf("stillgood", 1))
    broken = write(docs / "broken.pdf", corrupt_pdf())
    locked = write(docs / "locked.pdf", encrypted_pdf("stilllocked", 1))
    first = run_cli("ingest", docs, "--workers", "1", "--index", index)
    assert first.returncode == EXIT_INCOMPLETE, first.stdout + first.stderr
    failures = parse_summary(first.stdout).failures
    assert set(failures) == {str(broken), str(locked)}
    before = snapshot(index)

    again = run_cli("ingest", docs, "--workers", "1", "--index", index)
    assert again.returncode == EXIT_INCOMPLETE, again.stdout + again.stderr
    summary = parse_summary(again.stdout)
    assert (summary.indexed, summary.unchanged, summary.failed) == (0, 1, 2)
    assert "  failed:               2 (unchanged since they failed; --retry-failed to try again)" \
        in again.stdout.splitlines(), again.stdout
    assert summary.failures == failures  # the same lines, reasons and password hint included
    assert snapshot(index) == before

    write(docs / "new-broken.pdf", corrupt_pdf() + b"another")  # one new failure beside the old ones
    mixed = run_cli("ingest", docs, "--workers", "1", "--index", index)
    assert mixed.returncode == EXIT_INCOMPLETE
    assert "  failed:               3 (2 unchanged since they failed; --retry-failed to try again)" \
        in mixed.stdout.splitlines(), mixed.stdout
    assert set(parse_summary(mixed.stdout).failures) == {str(broken), str(locked), str(docs / "new-broken.pdf")}

    dry = run_cli("ingest", docs, "--dry-run", "--index", index)  # what a real run would say
    assert dry.returncode == EXIT_INCOMPLETE and f"  FAILED {broken}: {failures[str(broken)]}" in dry.stdout

    summary_api = api.ingest([docs], api.IngestOptions(index_dir=index, workers=1))
    assert not summary_api.complete and (summary_api.failed, summary_api.encrypted) == ([], [])
    assert sorted(path for path, _ in summary_api.still_failed) == sorted(map(str, [broken, locked,
                                                                                  docs / "new-broken.pdf"]))


def test_a_non_pdf_named_on_the_command_line_is_named_and_the_run_is_incomplete(tmp_path: Path) -> None:
    """Issue 20: a file given by name that is no PDF is reported (it was asked for);
    non-PDF files found in a folder stay a count. Given alone, nothing is done: an
    error, as for a missing file, and no index is created."""
    docs, index = tmp_path / "docs", tmp_path / "index"
    write(docs / "report.pdf", text_pdf("namedrun", 1))
    notes = docs / "notes.txt"
    notes.write_text("not a PDF\n")
    (docs / "data.csv").write_text("a,b\n")

    r = run_cli("ingest", docs / "report.pdf", notes, "--index", index)
    assert r.returncode == EXIT_INCOMPLETE, r.stdout + r.stderr
    assert f"  NOT A PDF {notes}: no %PDF- header and not named *.pdf; not ingested" in r.stdout.splitlines(), \
        r.stdout
    assert parse_summary(r.stdout).indexed == 1 and "skipped:" not in r.stdout

    r = run_cli("ingest", docs, "--index", index)  # found in a folder: counted, not an error
    assert r.returncode == 0, r.stdout + r.stderr
    assert "  skipped:              2 non-PDF files" in r.stdout.splitlines() and "NOT A PDF" not in r.stdout

    r = run_cli("ingest", docs, notes, "--index", index)  # in the folder, and named as well
    assert r.returncode == EXIT_INCOMPLETE and f"  NOT A PDF {notes}: " in r.stdout, r.stdout
    assert "  skipped:              1 non-PDF file" in r.stdout.splitlines(), r.stdout

    fresh = tmp_path / "fresh-index"
    r = run_cli("ingest", notes, "--index", fresh)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.splitlines() == [f"pdfindex: {notes}: not a PDF (no %PDF- header and not named *.pdf); "
                                     "nothing ingested"], r.stderr
    assert r.stdout == "" and not fresh.exists()


# ---- the API, without the CLI -------------------------------------------------------------

def _settings(tmp_path: Path, **env: str) -> config.Settings:
    return config.load({"PDFINDEX_INDEX_DIR": str(tmp_path / "index"), "HOME": str(tmp_path), **env})


def test_the_api_ingests_prunes_and_removes_without_the_cli(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    a = write(docs / "a.pdf", text_pdf("apiword", 3))
    b = write(docs / "b.pdf", text_pdf("apibee", 1))
    broken = write(docs / "broken.pdf", corrupt_pdf())
    (docs / "readme.txt").write_text("no PDF\n")
    settings = _settings(tmp_path)
    options = api.IngestOptions(settings=settings, workers=1)
    ticks: list[int] = []

    class Counting(api.NoProgress):
        def advance(self) -> None:
            ticks.append(self.summary.files_done)

    summary = api.ingest([docs], options, progress=Counting)
    assert (summary.indexed, summary.pages, summary.skipped_non_pdf) == (2, 4, 1)
    assert [path for path, _ in summary.failed] == [str(broken)] and not summary.complete
    assert ticks == [1, 2, 3]
    ix = PageIndex(settings.index_dir)
    assert find(ix, page_word("apiword", 3)) == [(str(a), 3)]

    again = api.ingest([docs], options)  # the broken file is unchanged, skipped, and still not indexed
    assert (again.indexed, again.unchanged, again.failed) == (0, 2, [])
    assert [path for path, _ in again.still_failed] == [str(broken)] and not again.complete

    b.unlink()
    dry = api.prune([docs], api.IngestOptions(settings=settings, dry_run=True))
    assert dry.would_prune == [str(b)] and str(b) in _paths(settings.index_dir)
    assert api.prune([docs], api.IngestOptions(settings=settings)).pruned == 1
    assert str(b) not in _paths(settings.index_dir)

    removed = api.remove([docs / "nowhere" / ".." / "a.pdf"], api.RemoveOptions(settings=settings))  # normalized
    assert (removed.paths, removed.documents, removed.unmatched) == ([str(a)], 1, [])
    assert find(PageIndex(settings.index_dir), page_word("apiword", 3)) == []

    assert api.prune([tmp_path / "never"], api.IngestOptions(settings=settings)).not_found == [str(tmp_path / "never")]
    with pytest.raises(api.IngestError, match=r"no such file or folder"):
        api.ingest([tmp_path / "nothing here"], options)
    with pytest.raises(api.IngestError, match=r"passwords\.txt: cannot read password file"):
        api.ingest([docs], api.IngestOptions(settings=settings, password_file=tmp_path / "passwords.txt"))


def test_the_api_runs_through_celery_workers(tmp_path: Path, broker: object) -> None:
    """One ingest through the API in a process of its own (the Celery app reads the
    environment when imported), with real workers on the run's Redis database."""
    docs, index = tmp_path / "docs", tmp_path / "index"
    files = [write(docs / f"c{i}.pdf", text_pdf(f"celery{i}", 2)) for i in range(2)]
    broken = write(docs / "broken.pdf", corrupt_pdf())
    write(docs / "sub" / "later.pdf", text_pdf("later", 1))
    env = cli_env(PDFINDEX_BROKER_URL=REDIS_URL, PDFINDEX_ROOTS=str(tmp_path), PDFINDEX_INDEX_DIR=str(index),
                  PDFINDEX_FILE_TIMEOUT="60", PDFINDEX_FILE_HARD_TIMEOUT="90")
    workers = [spawn_worker("mex", "extract", 1, env, tmp_path), spawn_worker("mwr", "index", 1, env, tmp_path)]
    script = textwrap.dedent(f"""
        import json
        from pdfindex.workers import api
        s = api.ingest([{str(docs)!r}], api.IngestOptions(prune=True))
        print(json.dumps([s.indexed, s.pages, [p for p, _ in s.failed], s.skipped_folders, s.complete]))
    """)
    try:
        wait_ready(workers)
        r = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=180)
    finally:
        for worker in workers:
            worker.stop()
    assert r.returncode == 0, r.stderr + "\n".join(w.log_text()[-2000:] for w in workers)
    assert r.stdout.strip() == f'[2, 4, ["{broken}"], 1, false]', r.stdout + r.stderr
    ix = PageIndex(index)
    for i, path in enumerate(files):
        assert find(ix, page_word(f"celery{i}", 2)) == [(str(path), 2)]
    assert ix.check() == []
