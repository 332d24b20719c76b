"""Sweep over every PDF of the shared real-world corpus (../shared/corpus/realworld).

Every file must extract without an uncaught exception and within a per-file time
budget; only the files MANIFEST.tsv marks as malformed may fail, and then only with
an ``ExtractionError`` naming the file. Encrypted files open with the passwords of
REFERENCE_NOTES.md and fail with a ``PasswordError`` without them.

The sweep records pages, glyphs, mean coverage, errors and time per file; with
``PDFINDEX_WRITE_CORPUS_TABLE=1`` the session writes them to docs/corpus.md:

    PDFINDEX_WRITE_CORPUS_TABLE=1 .venv/bin/python -m pytest tests/test_realworld.py -q
"""
from __future__ import annotations

import csv
import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from pdfindex import pipeline
from tests.paths import REALWORLD, ROOT
from tests.time_limits import ExtractionTimeout, time_limit

#: Per-file wall-clock budget. The whole corpus extracts in about 10 s and the
#: slowest file (a 352-page book) in about 5 s, so this only catches hangs.
PER_FILE_SECONDS = 60.0
WRITE_TABLE_ENV = "PDFINDEX_WRITE_CORPUS_TABLE"
TABLE_PATH = ROOT / "docs" / "corpus.md"

# REFERENCE_NOTES.md, "Passwords for encrypted files in this folder": file →
# (user password, owner password or None). test_password_table_matches_reference_notes
# keeps this in step with the notes.
PASSWORDS: dict[str, tuple[str, str | None]] = {
    "pdfbox__PasswordSample-256bit.pdf": ("user", "owner"),
    "pdfjs__issue21579.pdf": ("pässwört", None),
    "pdfjs__issue6010_1.pdf": ("abc", None),
    "pdfjs__issue6010_2.pdf": ("æøå", None),
    "pdfjs__pr6531_2.pdf": ("asdfasdf", None),
    "pdfjs__secHandler.pdf": ("", None),
    "pdfminer__aes-256-r6.pdf": ("usersecret", "ownersecret"),
    "pdfminer__issue-625-identity-cmap.pdf": ("", None),
    "pdfplumber__password-example.pdf": ("test", None),
    "pysamples__libreoffice-writer-password.pdf": ("openpassword", "permissionpassword"),
    "qpdf__enc-R3,V2,U=view,O=master.pdf": ("view", "master"),
}
#: pr6531_2's user password is "asdfasdf", but its *owner* password is empty, so
#: the empty string authenticates as owner: MuPDF (35 chars in MANIFEST without a
#: password), pypdf and qpdf all open it without asking. pdf.js alone refuses to try
#: the empty string as an owner password and asks for one (REFERENCE_NOTES §6); for
#: an indexer, opening what the file itself leaves open is the useful behaviour.
EMPTY_OWNER_PASSWORD = {"pdfjs__pr6531_2.pdf"}
#: Files that need a password to open at all.
NEEDS_PASSWORD = sorted(n for n, (user, _) in PASSWORDS.items() if user and n not in EMPTY_OWNER_PASSWORD)

LIGATURES = re.compile("[\ufb00-\ufb06]")


# ---- the manifest --------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    name: str
    features: str

    def number(self, key: str) -> int | None:
        m = re.search(rf"(?:^|; ){re.escape(key)}=(\d+)", self.features)
        return int(m.group(1)) if m else None

    @property
    def malformed(self) -> bool:
        return "note=MALFORMED" in self.features

    @property
    def encrypted(self) -> bool:
        return "encrypted:" in self.features


def _manifest() -> dict[str, Entry]:
    path = REALWORLD / "MANIFEST.tsv"
    if not path.exists():
        return {}
    with open(path, encoding="utf-8", newline="") as fh:
        return {row["file"]: Entry(row["file"], row["features"]) for row in csv.DictReader(fh, delimiter="\t")}


MANIFEST = _manifest()
# Parametrized by file name at collection time; when the corpus is absent a single
# placeholder case asks for the ``realworld`` fixture, which skips with the reason.
CORPUS_FILES = sorted(p.name for p in REALWORLD.glob("*.pdf")) if REALWORLD.is_dir() else []
MALFORMED = sorted(n for n, e in MANIFEST.items() if e.malformed)


def _or_placeholder(names: list[str]) -> list[str]:
    return names or ["(corpus absent)"]


# ---- one file ------------------------------------------------------------------------------

@dataclass
class Row:
    name: str
    pages: int | None
    glyphs: int | None
    coverage: float | None  # mean over pages that have glyphs
    problems: int | None
    error: str
    seconds: float


def sweep_one(path: Path) -> tuple[pipeline.Document | None, BaseException | None, Row]:
    """Extract one corpus file (with its known user password) under the time budget.
    Returns the document or the exception, never raises."""
    password = PASSWORDS.get(path.name, (None, None))[0]
    doc: pipeline.Document | None = None
    error: BaseException | None = None
    start = time.perf_counter()
    try:
        with time_limit(PER_FILE_SECONDS, path.name):
            doc = pipeline.extract(path, password=password)
    except (Exception, ExtractionTimeout) as exc:
        error = exc
    seconds = time.perf_counter() - start
    if doc is None:
        problem = error.problem if isinstance(error, pipeline.ExtractionError) else str(error)
        return None, error, Row(path.name, None, None, None, None, f"{type(error).__name__}: {problem}", seconds)
    covered = [p.quality.coverage for p in doc.pages if p.quality.coverage is not None]
    return doc, None, Row(
        path.name,
        doc.page_count,
        sum(p.quality.glyphs for p in doc.pages),
        sum(covered) / len(covered) if covered else None,
        sum(len(p.problems) for p in doc.pages),
        "",
        seconds,
    )


def check_page_conventions(name: str, page: pipeline.Page) -> None:
    """The page text convention and the R7 quality bookkeeping."""
    where = f"{name} page {page.number}"
    text, q = page.text, page.quality
    assert isinstance(text, str), where
    assert 0 <= q.unresolved <= q.glyphs, where
    if q.glyphs == 0:
        assert q.coverage is None and q.needs_ocr, f"{where}: a page without glyphs needs OCR (R7)"
    else:
        assert q.coverage == pytest.approx((q.glyphs - q.unresolved) / q.glyphs), where
    assert not LIGATURES.search(text), f"{where}: ligature U+FB00-FB06 not expanded"
    assert "\xad" not in text, f"{where}: soft hyphen kept"
    for bad in ("\r", "\t", "\x0c", "\x00", "\ufffd", "(cid:"):
        assert bad not in text, f"{where}: {bad!r} in page text (R6: no placeholders)"
    assert "  " not in text, f"{where}: words must be separated by single spaces"
    for line in text.split("\n"):
        assert line == line.strip(" "), f"{where}: line with leading/trailing space: {line!r}"


# ---- the sweep --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def corpus_rows(request: pytest.FixtureRequest) -> Iterator[dict[str, Row]]:
    """Rows recorded by the sweep; written to docs/corpus.md at the end of the session
    when PDFINDEX_WRITE_CORPUS_TABLE=1 and every corpus file was swept."""
    rows: dict[str, Row] = {}
    yield rows
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get(WRITE_TABLE_ENV) != "1" or not rows:
        return
    if set(rows) != set(CORPUS_FILES):
        if reporter is not None:
            reporter.write_line(f"{WRITE_TABLE_ENV}=1: only {len(rows)} of {len(CORPUS_FILES)} corpus files "
                                f"were swept; {TABLE_PATH} left unchanged")
        return
    TABLE_PATH.parent.mkdir(parents=True, exist_ok=True)
    TABLE_PATH.write_text(render_table(rows), encoding="utf-8")
    if reporter is not None:
        reporter.write_line(f"corpus table written to {TABLE_PATH}")


@pytest.mark.parametrize("name", _or_placeholder(CORPUS_FILES))
def test_corpus_file_extracts_cleanly(name: str, realworld: Path, corpus_rows: dict[str, Row]) -> None:
    doc, error, row = sweep_one(realworld / name)
    corpus_rows[name] = row
    if isinstance(error, ExtractionTimeout):
        pytest.fail(str(error))
    assert row.seconds < PER_FILE_SECONDS, f"{name}: took {row.seconds:.1f} s"
    if error is not None:
        # Only ExtractionError subclasses, and only for genuinely unreadable files.
        if not isinstance(error, pipeline.ExtractionError):
            raise error
        assert name in MALFORMED, f"{name} is not malformed but failed: {error}"
        assert name in str(error), f"error message does not name the file: {error}"
        return
    assert doc is not None
    assert doc.page_count == len(doc.pages) >= 1
    assert [p.number for p in doc.pages] == list(range(1, doc.page_count + 1))
    assert doc.encrypted == (name in PASSWORDS)
    for page in doc.pages:
        check_page_conventions(name, page)
    entry = MANIFEST.get(name)
    if entry is None or entry.malformed:
        return
    expected_pages = entry.number("pages")
    if expected_pages is not None:
        assert doc.page_count == expected_pages, f"{name}: MANIFEST says pages={expected_pages}"
    mupdf_chars = entry.number("mupdf_chars_first8p")
    if mupdf_chars:
        # MuPDF found text on the first 8 pages: we must at least see the glyphs
        # (decoded or counted as unresolved), never a silently empty document.
        assert sum(p.quality.glyphs for p in doc.pages[:8]) > 0, f"{name}: MuPDF found {mupdf_chars} chars, we none"


def test_time_limit_interrupts_through_a_catch_all() -> None:
    # The pipeline's per-page safety net is ``except Exception``: the timeout must
    # still get through it, or a hanging page would just become a page problem.
    start = time.perf_counter()
    with pytest.raises(ExtractionTimeout, match=r"slow\.pdf"), time_limit(0.05, "slow.pdf"):
        while True:
            with suppress(Exception):
                time.sleep(0.01)
    assert time.perf_counter() - start < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_corpus_table_renders(realworld: Path, corpus_rows: dict[str, Row]) -> None:
    rows = dict(corpus_rows)
    if not rows:  # the sweep was deselected: render a table for two files
        for name in ("pdfminer__simple4.pdf", "pdfplumber__empty.pdf"):
            rows[name] = sweep_one(realworld / name)[2]
    table = render_table(rows)
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| file |"))
    assert set(lines[header + 1]) <= set("|-: ")
    body = lines[header + 2:header + 2 + len(rows)]
    assert [line.split(" | ")[0].strip("| `") for line in body] == sorted(rows)
    width = lines[header].count("|")
    assert all(line.count("|") - line.count("\\|") == width for line in body)
    for line, name in zip(body, sorted(rows), strict=False):
        row = rows[name]
        if row.error:
            assert type_name(row.error) in line
        else:
            assert f"| {row.pages} |" in line and f"| {row.glyphs} |" in line
    assert WRITE_TABLE_ENV in table  # the header says how to regenerate it


def type_name(error: str) -> str:
    return error.split(":", 1)[0]


def render_table(rows: dict[str, Row]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    ok = [r for r in rows.values() if not r.error]
    low = [r for r in ok if r.coverage is not None and r.coverage < 0.9]
    total_time = sum(r.seconds for r in rows.values())
    out = [
        "# Real-world corpus sweep",
        "",
        "Generated by `tests/test_realworld.py` over every PDF in `../shared/corpus/realworld/`"
        " (the files' sources and features are in its `MANIFEST.tsv`). Regenerate with:",
        "",
        "```sh",
        f"{WRITE_TABLE_ENV}=1 .venv/bin/python -m pytest tests/test_realworld.py -q",
        "```",
        "",
        "Encrypted files are opened with the user passwords listed in the corpus's"
        " `REFERENCE_NOTES.md`. *Coverage* is the mean over pages with glyphs of resolved / total"
        " glyphs (SPEC R7; empty for a document without glyphs); *problems* counts the damage"
        " recorded in `page.problems`; times are wall-clock on the machine that generated the table.",
        "",
        f"{len(rows)} files: {len(ok)} extracted, {len(rows) - len(ok)} raised,"
        f" {len(low)} with mean coverage below 0.9; {total_time:.1f} s in total.",
        "",
        "| file | pages | glyphs | coverage | problems | time (s) | error |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name in sorted(rows):
        r = rows[name]
        out.append(
            f"| `{cell(name)}` | {'' if r.pages is None else r.pages} | {'' if r.glyphs is None else r.glyphs}"
            f" | {'' if r.coverage is None else f'{r.coverage:.3f}'} | {'' if r.problems is None else r.problems}"
            f" | {r.seconds:.2f} | {cell(r.error)} |"
        )
    return "\n".join(out) + "\n"


# ---- malformed files ---------------------------------------------------------------------

#: Malformed files that legitimately yield a document without text: the page has
#: no /Contents at all (the catalog only lacks /Type; MuPDF also finds 0 chars).
NO_CONTENT = {"pdfbox__MissingCatalog.pdf"}
#: Malformed files whose text must be found despite the damage (MuPDF finds it too).
RECOVERABLE_TEXT = {
    "pdfjs__helloworld-bad.pdf": "Hello, world!",
    "pdfjs__issue6069.pdf": "Missing value for startxref and junk before magic header",
    "pdfjs__Pages-tree-refs.pdf": "Testcase: ’Pages loop’",
    "pdfjs__poppler-91414-0-53.pdf": "foobar",
    "pdfjs__scan-bad.pdf": "pdf.js",
    "pdfminer__zen_of_python_corrupted.pdf": "Beautiful is better than ugly.",
    "pdfplumber__malformed-from-issue-932.pdf": "2021",
}


@pytest.mark.parametrize("name", _or_placeholder(MALFORMED))
def test_malformed_file_fails_clearly_or_yields_partial_text(name: str, realworld: Path) -> None:
    path = realworld / name
    try:
        with time_limit(PER_FILE_SECONDS, name):
            doc = pipeline.extract(path)
    except pipeline.ExtractionError as exc:
        assert name in str(exc), f"error message does not name the file: {exc}"
        assert exc.problem.strip(), "the error must say what is wrong"
        assert name not in RECOVERABLE_TEXT, f"{name}: MuPDF recovers this file's text; we raised {exc}"
        return
    text = "\n".join(p.text for p in doc.pages)
    if name in NO_CONTENT:
        assert doc.page_count == 1 and text == "" and doc.pages[0].quality.needs_ocr
        return
    # Partial text, or at least a recorded reason why a page came out empty (R17):
    # poppler-395's only content stream is Flate data with a fuzzed zlib header.
    assert text.strip() or any(p.problems for p in doc.pages), f"{name}: no text and no problem recorded"
    if name in RECOVERABLE_TEXT:
        assert RECOVERABLE_TEXT[name] in text


def test_malformed_files_are_named_in_the_manifest(realworld: Path) -> None:
    assert len(MALFORMED) == 12
    assert set(RECOVERABLE_TEXT) | NO_CONTENT <= set(MALFORMED)
    assert {"pdfplumber__empty.pdf", "pdfjs__bug1020226.pdf"} <= set(MALFORMED)


@pytest.mark.parametrize("name", ["pdfplumber__empty.pdf", "pdfjs__bug1020226.pdf", "pdfjs__GHOSTSCRIPT-698804-1-fuzzed.pdf"])
def test_unreadable_files_raise_not_a_pdf(name: str, realworld: Path) -> None:
    # pdf.js rejects bug1020226 with InvalidPDFException (REFERENCE_NOTES §8); the
    # empty file and the fuzzed Ghostscript file have no page tree at all.
    with pytest.raises(pipeline.NotAPdfError) as info:
        pipeline.extract(realworld / name)
    assert name in str(info.value)


def test_page_tree_loop_keeps_the_reachable_page(realworld: Path) -> None:
    # /Kids loops 3 → 4 → 5 → 3; pdf.js and MuPDF fail on the second page. The one
    # real page is kept and the loop does not hang or repeat it.
    doc = pipeline.extract(realworld / "pdfjs__Pages-tree-refs.pdf")
    assert doc.page_count == 1
    assert doc.pages[0].text == "Testcase: ’Pages loop’"


def test_circular_references_load_one_page(realworld: Path) -> None:
    # REFERENCE_NOTES §8: poppler-91414-0-53.pdf loads with numPages == 1.
    doc = pipeline.extract(realworld / "pdfjs__poppler-91414-0-53.pdf")
    assert doc.page_count == 1
    assert doc.pages[0].quality.glyphs > 0


# ---- encrypted files -------------------------------------------------------------------------

def _password_params() -> list[object]:
    params: list[object] = []
    for name, (user, owner) in sorted(PASSWORDS.items()):
        params.append(pytest.param(name, user, id=f"{name}-user"))
        if owner is not None:
            params.append(pytest.param(name, owner, id=f"{name}-owner"))
    return params


@pytest.mark.parametrize(("name", "password"), _password_params())
def test_encrypted_file_opens_with_known_password(name: str, password: str, realworld: Path) -> None:
    doc = pipeline.extract(realworld / name, password=password)
    assert doc.encrypted
    text = "\n".join(p.text for p in doc.pages)
    assert len(text.split()) >= 1, f"{name}: decrypted but no text"
    user = PASSWORDS[name][0]
    if password != user:  # the owner password decrypts the same document
        assert text == "\n".join(p.text for p in pipeline.extract(realworld / name, password=user).pages)


@pytest.mark.parametrize("name", _or_placeholder(NEEDS_PASSWORD))
def test_encrypted_file_without_password_raises_missing(name: str, realworld: Path) -> None:
    with pytest.raises(pipeline.PasswordError) as info:
        pipeline.extract(realworld / name)
    assert info.value.missing is True
    assert name in str(info.value)


@pytest.mark.parametrize("name", _or_placeholder(sorted(PASSWORDS)))
def test_encrypted_file_with_wrong_password_raises_not_missing(name: str, realworld: Path) -> None:
    # pdf.js uses "qwerty" as the wrong password for pr6531_2 (REFERENCE_NOTES §6).
    with pytest.raises(pipeline.PasswordError) as info:
        pipeline.extract(realworld / name, password="qwerty")
    assert info.value.missing is False
    assert name in str(info.value)


@pytest.mark.parametrize("name", ["pdfjs__secHandler.pdf", "pdfminer__issue-625-identity-cmap.pdf"])
def test_empty_user_password_opens_without_asking(name: str, realworld: Path) -> None:
    doc = pipeline.extract(realworld / name)
    assert doc.encrypted
    assert any(p.text for p in doc.pages)


def test_empty_owner_password_opens_without_asking(realworld: Path) -> None:
    # See EMPTY_OWNER_PASSWORD: pdf.js would ask for a password here; we, like MuPDF,
    # pypdf and qpdf, accept the empty owner password, which decrypts the same text.
    name = "pdfjs__pr6531_2.pdf"
    without = pipeline.extract(realworld / name)
    with_user = pipeline.extract(realworld / name, password="asdfasdf")
    assert without.encrypted
    assert [p.text for p in without.pages] == [p.text for p in with_user.pages]
    assert with_user.pages[0].text == "Bluebeam should be encrypting this."


def test_non_ascii_passwords_are_utf8(realworld: Path) -> None:
    # pdf.js's manifest gives these as UTF-8; the R5 file needs SASLprep'd UTF-8,
    # the RC4/AES-128 one a byte-for-byte UTF-8 password.
    assert "passwoert" in pipeline.extract(realworld / "pdfjs__issue21579.pdf", password="pässwört").pages[0].text
    assert pipeline.extract(realworld / "pdfjs__issue6010_2.pdf", password="æøå").pages[0].text == "Issue 6010"


def test_password_table_matches_reference_notes(realworld: Path) -> None:
    notes = (realworld / "REFERENCE_NOTES.md").read_text(encoding="utf-8")
    section = notes.split("## Passwords for encrypted files in this folder", 1)[1]
    table: dict[str, str] = {}
    for m in re.finditer(r"^\| `([^`]+)` \| (.+?) \|$", section, flags=re.M):
        table[m.group(1)] = m.group(2)
    assert set(table) == set(PASSWORDS)
    assert {n for n, e in MANIFEST.items() if e.encrypted} == set(PASSWORDS)
    for name, (user, owner) in PASSWORDS.items():
        described = table[name]
        if user:
            assert f"password={user}" in described, name
        else:
            assert "empty user password" in described, name
        if owner is not None:
            assert re.search(rf"owner(?:/permission)? password={re.escape(owner)}\b", described), name
