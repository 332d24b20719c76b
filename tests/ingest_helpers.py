"""Helpers for the end-to-end ingest tests (tests/test_ingest_*.py): folders of PDFs
built with our own writer plus real-world corpus files, the `pdfindex` command run
for real in a subprocess, and checks that read the resulting index back.

Each file the tests put in a folder comes with an ``Expected``: the status the
index must record for it, and for every page with text a word that must find that
page (unique words for generated PDFs, a word of the extracted page text for
real-world files).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pdfindex import pipeline
from pdfindex.indexer import PageIndex, SearchOptions
from tests.builders import font_resources, mono_font, text_line
from tests.pdfwriter import Name, PdfWriter

ROOT = Path(__file__).resolve().parents[1]

#: Real-world corpus files with text on their pages, small and quick to extract.
REALWORLD_GOOD = [
    "pdfbox__eu-001.pdf",
    "pysamples__multicolumn.pdf",
    "pdfminer__issue-1062-filters.pdf",
    "pymupdf__test-2812.pdf",
    "pdfbox__rotation.pdf",
]
#: A real broken file (its structure cannot be parsed).
REALWORLD_BROKEN = "pdfjs__bug1020226.pdf"
#: A real encrypted file and its user password (REFERENCE_NOTES.md of the corpus).
REALWORLD_LOCKED = ("pdfplumber__password-example.pdf", "test")

USER_PASSWORD = "userpw"


# ---- PDFs ------------------------------------------------------------------------

def page_word(tag: str, page: int) -> str:
    """A word found on exactly one page of one generated file."""
    return f"{tag}zq{page}w"


def text_pdf(tag: str, pages: int, *, writer: PdfWriter | None = None, title: str | None = None) -> bytes:
    """``pages`` pages of text; page N carries ``page_word(tag, N)`` and some
    common words."""
    w = writer if writer is not None else PdfWriter()
    res = font_resources(mono_font(w))
    for n in range(1, pages + 1):
        content = (text_line(72, 700, b"(Quarterly report %s) Tj" % tag.encode())
                   + text_line(72, 680, b"(page %d says %s) Tj" % (n, page_word(tag, n).encode()))
                   + text_line(72, 660, b"(common filler words for every page) Tj"))
        w.add_page(content, resources=res)
    if title:
        w.set_info({"Title": title.encode()})
    return w.to_bytes()


def encrypted_pdf(tag: str, pages: int, user: str = USER_PASSWORD, owner: str = "ownerpw") -> bytes:
    w = PdfWriter()
    w.encrypt(user, owner, method="RC4-128")
    return text_pdf(tag, pages, writer=w)


def _image(w: PdfWriter) -> Any:
    pixels = bytes((x * 7 + y * 13) % 256 for y in range(16) for x in range(16))
    return w.add_stream(pixels, {"Type": Name("XObject"), "Subtype": Name("Image"), "Width": 16, "Height": 16,
                                 "ColorSpace": Name("DeviceGray"), "BitsPerComponent": 8})


def image_only_pdf() -> bytes:
    """One page that only paints an image: a scan without a text layer."""
    w = PdfWriter()
    w.add_page(b"q 468 0 0 648 72 72 cm /Im1 Do Q", resources={"XObject": {"Im1": _image(w)}})
    return w.to_bytes()


def text_then_scan_pdf(tag: str) -> bytes:
    """Page 1 has text, page 2 is an image only (needs OCR)."""
    w = PdfWriter()
    res = font_resources(mono_font(w))
    res["XObject"] = {"Im1": _image(w)}
    w.add_page(text_line(72, 700, b"(cover letter %s) Tj" % page_word(tag, 1).encode()), resources=res)
    w.add_page(b"q 468 0 0 648 72 72 cm /Im1 Do Q", resources=res)
    return w.to_bytes()


def corrupt_pdf() -> bytes:
    """A PDF header followed by garbage: no catalog, no page tree."""
    return b"%PDF-1.4\n" + b"".join(hashlib.sha256(b"%d" % i).digest() for i in range(64))


def slow_pdf(tag: str, pages: int, lines: int) -> bytes:
    """Every page draws one shared content stream of ``lines`` text lines (small
    on disk, deflated; slow to interpret: about 10 000 lines a second here) plus a
    stream of its own with ``page_word(tag, N)`` and ``f"{tag}all"``."""
    w = PdfWriter()
    res = font_resources(mono_font(w))
    body = b"".join(b"(filler line %d of a heavy page) Tj 0 -0.02 Td\n" % i for i in range(lines))
    heavy = w.add_stream(b"BT /F1 10 Tf 72 740 Td\n" + body + b"ET\n", filter="FlateDecode")
    for n in range(1, pages + 1):
        own = text_line(72, 60, b"(%s %sall) Tj" % (page_word(tag, n).encode(), tag.encode()))
        w.add_page([own, heavy], resources=res)
    return w.to_bytes()


# ---- expectations ------------------------------------------------------------------

@dataclass
class Expected:
    path: Path
    status: str  # indexed, empty, failed, encrypted
    page_count: int = 0
    #: page number -> a word that must find that page
    words: dict[int, str] = field(default_factory=dict)
    #: page number -> the extracted text (real-world files: checked against the index)
    texts: dict[int, str] = field(default_factory=dict)
    #: lower-case fragments the recorded error must contain (failures)
    reason: tuple[str, ...] = ()
    #: words are unique to this file: each must find exactly its page
    unique: bool = True
    needs_ocr_pages: tuple[int, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status in ("failed", "encrypted")


_WORD = re.compile(r"(?<![\w'’.-])[A-Za-z]{3,}(?![\w'’.-])")
_OPERATORS = {"AND", "OR", "NOT", "TO", "ANDNOT", "ANDMAYBE"}


def distinctive_word(text: str) -> str | None:
    """The longest plain ASCII word of a page text (query syntax words excluded)."""
    words = [w for w in _WORD.findall(text) if w not in _OPERATORS]
    return max(words, key=lambda w: (len(w), w)) if words else None


def expect_realworld(path: Path, password: str | None = None) -> Expected:
    """What indexing a real file must give: the pipeline's own page texts."""
    doc = pipeline.extract(path, password=password)
    texts = {p.number: p.text for p in doc.pages}
    words = {n: w for n, t in texts.items() if (w := distinctive_word(t))}
    return Expected(path, "indexed", len(doc.pages), words, texts, unique=False,
                    needs_ocr_pages=tuple(p.number for p in doc.pages if p.quality.needs_ocr))


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def build_mixed_folder(root: Path, realworld: Path | None) -> dict[str, Expected]:
    """The folder of issue 4: multi-page text PDFs, an encrypted one (no password
    given), a corrupt one, a text file named .pdf, a PDF without the .pdf name, an
    image-only scan, a PDF with a scanned page, a file that is no PDF at all (to be
    ignored), and real-world files in a subfolder (``--recursive``)."""
    exp: dict[str, Expected] = {}

    def text_file(name: str, tag: str, pages: int) -> None:
        path = write(root / name, text_pdf(tag, pages))
        exp[name] = Expected(path, "indexed", pages, {n: page_word(tag, n) for n in range(1, pages + 1)})

    text_file("annual report.pdf", "alpha", 3)
    text_file("minutes-2024.pdf", "bravo", 4)
    text_file("invoice.PDF", "charlie", 2)
    text_file("scan0042", "delta", 2)  # no extension: a PDF by its content
    exp["letter-with-scan.pdf"] = Expected(write(root / "letter-with-scan.pdf", text_then_scan_pdf("echo")),
                                           "indexed", 2, {1: page_word("echo", 1)}, needs_ocr_pages=(2,))
    exp["scan-only.pdf"] = Expected(write(root / "scan-only.pdf", image_only_pdf()), "empty", 1,
                                    needs_ocr_pages=(1,))
    exp["locked.pdf"] = Expected(write(root / "locked.pdf", encrypted_pdf("foxtrot", 2)), "encrypted",
                                 reason=("password",))
    exp["broken.pdf"] = Expected(write(root / "broken.pdf", corrupt_pdf()), "failed", reason=("unreadable",))
    notes = root / "notes.pdf"
    notes.write_text("Shopping list: milk, eggs. Not a PDF at all.\n")
    exp["notes.pdf"] = Expected(notes, "failed", reason=("pdf",))
    (root / "readme.txt").write_text("not a PDF and not named like one: never ingested\n")
    if realworld is not None:
        for name in REALWORLD_GOOD:
            path = root / "realworld" / name
            path.parent.mkdir(exist_ok=True)
            shutil.copyfile(realworld / name, path)
            exp[f"realworld/{name}"] = expect_realworld(path)
        path = root / "realworld" / REALWORLD_BROKEN
        shutil.copyfile(realworld / REALWORLD_BROKEN, path)
        exp[f"realworld/{REALWORLD_BROKEN}"] = Expected(path, "failed", reason=("unreadable",))
    return exp


# ---- running pdfindex ----------------------------------------------------------------

def cli_env(**extra: str) -> dict[str, str]:
    """The environment minus every PDFINDEX_* setting of the caller, in strict mode,
    plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDFINDEX_")}
    env["PYTHONIOENCODING"] = "utf-8"
    env["PDFINDEX_STRICT"] = "1"  # our own bugs fail the commands under test (tests/conftest.py)
    env.update(extra)
    return env


def cli_argv(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "pdfindex.cli.main", *map(str, args)]


def run_cli(*args: str | Path, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_argv(*args), cwd=ROOT, env=env if env is not None else cli_env(),
                          capture_output=True, text=True, encoding="utf-8", timeout=timeout)


def run_in_home(home: Path, *args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`pdfindex` as a user whose home is ``home``: none of the caller's PDFINDEX_* or
    XDG_* settings, so the default index is the one under ``home``; ``env`` added."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PDFINDEX_", "XDG_"))}
    base.update(HOME=str(home), PYTHONIOENCODING="utf-8", **env)
    return subprocess.run(cli_argv(*args), cwd=ROOT, env=base, capture_output=True, text=True, encoding="utf-8",
                          timeout=60)


def ingest(index: Path, *paths: str | Path, env: dict[str, str] | None = None, timeout: float = 120,
           check: bool = True) -> subprocess.CompletedProcess[str]:
    r = run_cli("ingest", *paths, "--index", index, env=env, timeout=timeout)
    if check:
        # 0 when every file is indexed or unchanged, 5 (cli/errors.py EXIT_INCOMPLETE)
        # exactly when the summary names failures or paths not found or not pruned.
        incomplete = re.search(r"^  (FAILED|NOT FOUND|NOT A PDF|NOT PRUNED) ", r.stdout, re.M) is not None
        assert r.returncode == (5 if incomplete else 0), f"ingest failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        assert "Traceback" not in r.stderr, r.stderr
    return r


def status_json(index: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    r = run_cli("status", "--json", "--index", index, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@dataclass
class Summary:
    done: bool
    interrupted: bool
    indexed: int
    empty: int
    unchanged: int
    failed: int
    pages: int
    pruned: int
    failures: dict[str, str]  # path -> reason, from the FAILED lines


def _count(stdout: str, label: str) -> int:
    m = re.search(rf"^  {re.escape(label)}:\s+(\d+)", stdout, re.M)
    assert m, f"no {label!r} line in the summary:\n{stdout}"
    return int(m.group(1))


def parse_summary(stdout: str) -> Summary:
    """The summary `pdfindex ingest` prints at the end (workers/progress.py)."""
    indexed = re.search(r"^  files indexed:\s+(\d+)(?: \(\+(\d+) without text\))?", stdout, re.M)
    assert indexed, stdout
    pruned = re.search(r"^  pruned \(files gone\):\s+(\d+)", stdout, re.M)
    failures = {}
    for line in stdout.splitlines():
        if line.startswith("  FAILED "):
            path, _, reason = line[len("  FAILED "):].partition(": ")
            failures[path] = reason
    return Summary(
        done=stdout.startswith("done"), interrupted=stdout.startswith("interrupted"),
        indexed=int(indexed.group(1)), empty=int(indexed.group(2) or 0), unchanged=_count(stdout, "skipped as unchanged"),
        failed=_count(stdout, "failed"), pages=_count(stdout, "pages"), pruned=int(pruned.group(1)) if pruned else 0,
        failures=failures,
    )


# ---- reading the index back ---------------------------------------------------------

def find(index: PageIndex, query: str) -> list[tuple[str, int]]:
    """(path, page) of every page the query finds."""
    result = index.search(query, SearchOptions(limit=100_000, highlight=False))
    assert not result.partial
    return [(h.path, h.page) for h in result.hits]


def docs_by_path(index: PageIndex) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for doc in index.documents():
        out.setdefault(doc.path, []).append(doc)
    return out


def assert_indexed_as_expected(index: PageIndex, expected: Iterable[Expected]) -> None:
    """Every file has one record of the expected status; every page of every good
    file is stored (with the pipeline's text for real-world files) and found by
    its word, exactly once where the word is unique; failures carry a reason."""
    records = docs_by_path(index)
    for exp in expected:
        key = str(exp.path)
        assert len(records.get(key, [])) == 1, f"{key}: {len(records.get(key, []))} records"
        doc = records[key][0]
        assert str(doc.status) == exp.status, (key, doc.status, doc.error)
        if exp.failed:
            assert doc.error, key
            for fragment in exp.reason:
                assert fragment in doc.error.lower(), (key, doc.error)
            assert index.page_texts(doc.doc_hash) == {}, key
            continue
        assert doc.page_count == exp.page_count, key
        stored = index.page_texts(doc.doc_hash)
        assert sorted(stored) == list(range(1, exp.page_count + 1)), key
        for number, text in exp.texts.items():
            assert stored[number] == text, (key, number)
        for number, word in exp.words.items():
            hits = find(index, word)
            if exp.unique:
                assert hits == [(key, number)], (key, number, word, hits)
            else:
                assert (key, number) in hits, (key, number, word)
        if exp.needs_ocr_pages:
            # The file's pages that need OCR, listed by the filters alone (a search by
            # the file name finds a file once, not each of its pages).
            ocr = index.search("", SearchOptions(limit=1000, needs_ocr=True, path_glob=key, highlight=False))
            assert {h.page for h in ocr.hits} >= set(exp.needs_ocr_pages), (key, exp.needs_ocr_pages)


def snapshot(index_root: Path) -> dict[str, tuple[int, int]]:
    """Every file under the index directory with its size and mtime: a run that
    commits nothing leaves it equal."""
    return {str(p.relative_to(index_root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(index_root.rglob("*")) if p.is_file() and not p.is_symlink()}


def records(index_root: Path) -> list[tuple[str, str, str, float, int]]:
    index = PageIndex(index_root)
    return sorted((d.path, d.doc_hash, str(d.status), d.ingested, d.page_count) for d in index.documents())


# ---- processes ----------------------------------------------------------------------------

def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Poll ``condition`` until it returns something true; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat.read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def reap(proc: subprocess.Popen[Any]) -> None:
    """After a test: kill ``proc``'s process group if it still runs (SIGCONT first, in
    case it was stopped) and close its pipes."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGCONT)
        kill_group(proc, grace=2)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()
    proc.wait()


def kill_group(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """SIGTERM to the process group of ``proc`` (started with
    ``start_new_session=True``), SIGKILL to whatever is left after ``grace``."""
    pgid = proc.pid
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    deadline = time.monotonic() + grace
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if group_alive(pgid) or proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(10)
    wait_for(lambda: not group_alive(pgid), 30, f"process group {pgid} to end")


def children_of(pid: int) -> list[int]:
    """Child processes of ``pid``: psutil when installed, else /proc."""
    try:
        import psutil
    except ImportError:
        pids: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                pids += [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                continue
        return pids
    try:
        return [c.pid for c in psutil.Process(pid).children()]
    except psutil.NoSuchProcess:
        return []


def book_pdf(tag: str, pages: int, lines: int) -> bytes:
    """A long book: page N has ``page_word(tag, N)``, ``f"{tag}all"`` and ``lines``
    lines of plain words (quick to extract, slow to write to the index)."""
    w = PdfWriter()
    res = font_resources(mono_font(w))
    for n in range(1, pages + 1):
        body = [text_line(72, 760, b"(%s %sall) Tj" % (page_word(tag, n).encode(), tag.encode()))]
        body += [text_line(72, 740 - 12 * i, b"(chapter %d line %d of many plain words) Tj" % (n, i))
                 for i in range(lines)]
        w.add_page(b"".join(body), resources=res)
    return w.to_bytes()


def bomb_pdf(tag: str, megabytes: int = 1024) -> bytes:
    """A page whose content stream inflates to ``megabytes`` MB of
    spaces (a decompression bomb), after a line with ``page_word(tag, 1)``."""
    import zlib

    w = PdfWriter()
    res = font_resources(mono_font(w))
    deflate = zlib.compressobj(1)  # fast; about 4.5 MB on disk for 1 GB
    data = b"".join(deflate.compress(b" " * (1 << 20)) for _ in range(megabytes)) + deflate.flush()
    bomb = w.add_stream(data, {"Filter": Name("FlateDecode")})
    w.add_page([text_line(72, 700, b"(%s) Tj" % page_word(tag, 1).encode()), bomb], resources=res)
    return w.to_bytes()
