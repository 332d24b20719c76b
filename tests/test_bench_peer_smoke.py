"""Keeps bench/peer_agreement.py from rotting and its listing rule honest: the bench on
a folder of PDFs built here (prose, the same prose encrypted, a blank page, a broken
file), the listing rule on the numbers of real extractions of those PDFs (pdfindex's
own text agrees; the same text with its word spaces lost is listed, and the hint names
the words), and the child processes' time limit and crash records. No figure of any
extractor is judged beyond "they read the prose"."""
from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from tests.pdfwriter import PdfWriter

from bench import ocr, peer_agreement
from bench.peer_agreement import OURS, Extraction, PeerCheck

PROSE = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Every morning the baker opens his shop before the sun rises.",
    "A careful reader notices small changes in the printed text.",
    "Search engines index words, numbers and names from documents.",
    "Nobody expected the winter to last until the middle of May.",
]
PASSWORD = "peer-secret"


def prose_pdf(path: Path, lines: list[str], password: str | None = None) -> Path:
    """One page of Helvetica lines; encrypted (RC4-128) when a password is given."""
    w = PdfWriter(file_id=path.stem.encode().ljust(16, b"-")[:16])
    font = w.standard_font("Helvetica", encoding="WinAnsiEncoding")
    shows = b" T* ".join(b"(%s) Tj" % line.encode("latin-1") for line in lines)
    w.add_page(b"BT /F1 11 Tf 14 TL 72 720 Td " + shows + b" ET\n", resources={"Font": {"F1": font}})
    if password is not None:
        w.encrypt(password, "owner-" + password, method="RC4-128")
    return w.save(path)


@pytest.fixture(scope="module")
def scorer_path(producers: Path) -> Path:
    """The producers scorer (conftest's ``producers``: a skip where the corpora are
    absent, a failure under CI), given to the bench by path wherever the checkout lies."""
    return producers / "score.py"


@pytest.fixture(scope="module")
def scorer(scorer_path: Path) -> ModuleType:
    return ocr.load_scorer(scorer_path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("peer-corpus")
    prose_pdf(folder / "prose.pdf", PROSE)
    prose_pdf(folder / "locked.pdf", PROSE[:3], password=PASSWORD)
    w = PdfWriter()
    w.add_page(b"0 0 1 rg 72 72 200 200 re f\n")  # a drawing, no text
    w.save(folder / "blank.pdf")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\ngarbage\n")
    (folder / "MANIFEST.tsv").write_text("file\tnote\n" + "".join(
        f"{n}\t-\n" for n in ("prose.pdf", "locked.pdf", "blank.pdf", "broken.pdf")), encoding="utf-8")
    (folder / "REFERENCE_NOTES.md").write_text(
        "# notes\n\n## Passwords for encrypted files in this folder\n\n| file | password(s) and source |\n"
        f"|---|---|\n| `locked.pdf` | user password={PASSWORD}, owner password=owner-{PASSWORD} (built here) |\n",
        encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def bench_run(corpus: Path, scorer_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The bench as a user runs it (in this process: ``main``), every number in its JSON."""
    out = tmp_path_factory.mktemp("peer-out") / "peer.json"
    dump = out.parent / "dump"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert peer_agreement.main(["--corpus", str(corpus), "--scorer", str(scorer_path), "--json", str(out),
                                    "--dump", str(dump)]) == 0
    data: dict = json.loads(out.read_text(encoding="utf-8"))
    data["dump"], data["printed"] = dump, printed.getvalue()
    return data


def _file(data: dict, name: str) -> dict:
    [found] = [f for f in data["files"] if f["file"] == name]
    return found


def test_the_bench_judges_a_built_folder(bench_run: dict) -> None:
    systems = bench_run["systems"]
    assert systems[0] == OURS and len(systems) >= 3, bench_run["notes"]  # pdfindex and two peers at least
    prose = _file(bench_run, "prose.pdf")
    assert prose["verdict"] == "agrees"
    assert {s["status"] for s in prose["systems"].values()} == {"ok"}
    assert [c["peer"] for c in prose["checks"]] == systems[1:]
    assert all(c["ours"] > 0.9 and not c["below"] for c in prose["checks"]), prose["checks"]
    # every pair of systems has its F1, and pdfindex's text was dumped
    assert len(prose["f1"]) == len(systems) * (len(systems) - 1) // 2
    assert "quick brown fox" in (bench_run["dump"] / OURS / "prose.pdf.txt").read_text(encoding="utf-8")
    locked = _file(bench_run, "locked.pdf")
    assert locked["password"] and locked["verdict"] == "agrees", locked
    assert _file(bench_run, "blank.pdf")["verdict"] == "empty"
    broken = _file(bench_run, "broken.pdf")
    assert broken["verdict"] == "broken" and broken["systems"][OURS]["status"] == "error", broken
    assert bench_run["summary"]["verdicts"] == {"agrees": 2, "empty": 1, "broken": 1}
    out = bench_run["printed"]
    assert "Listed: none" in out and "Summary: 4 files: 2 agree, 1 broken, 1 empty" in out, out


def test_without_the_password_the_locked_file_is_encrypted(corpus: Path, scorer_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "peer.json"
    assert peer_agreement.main(["--corpus", str(corpus), "--scorer", str(scorer_path), "--files", "locked*",
                                "--peers", "pypdf,pdfminer.six", "--no-passwords", "--json", str(out)]) == 0
    [locked] = json.loads(out.read_text(encoding="utf-8"))["files"]
    assert locked["verdict"] == "encrypted" and not locked["password"], locked
    assert locked["systems"][OURS]["status"] == "password", locked


# ---- the listing rule on real extractions ------------------------------------------------

@pytest.fixture(scope="module")
def prose_runs(bench_run: dict) -> dict[str, Extraction]:
    """Every system's text of prose.pdf, as the bench's run above extracted it (its --dump)."""
    return {s: Extraction(text=(bench_run["dump"] / s / "prose.pdf.txt").read_text(encoding="utf-8"))
            for s in bench_run["systems"]}


def test_pdfindex_real_text_is_not_listed(prose_runs: dict[str, Extraction], scorer: ModuleType) -> None:
    result = peer_agreement.judge("prose.pdf", prose_runs, scorer, 0.05)
    assert result.verdict == "agrees"
    assert not peer_agreement.is_listed(result.checks)
    assert result.hint is not None and result.hint.missing_count == 0


def test_a_text_with_its_word_spaces_lost_is_listed(prose_runs: dict[str, Extraction], scorer: ModuleType) -> None:
    """The failure the bench is for: pdfindex running the words of three lines together
    (a missed word-space rule) while the peers agree. Listed, every peer starred, and
    the hint shows the merged words against the words they swallowed."""
    real = prose_runs[OURS].text
    assert real is not None
    lines = real.splitlines()
    merged = [line.replace(" ", "") if i < 3 else line for i, line in enumerate(lines)]
    runs = {**prose_runs, OURS: Extraction(text="\n".join(merged))}

    result = peer_agreement.judge("prose.pdf", runs, scorer, 0.05)

    assert result.verdict == "listed"
    assert all(c.below and c.ours < 0.7 < c.others for c in result.checks), result.checks
    assert result.hint is not None
    assert result.hint.extra[0] == "Thequickbrownfoxjumpsoverthelazydogneartheriverbank"
    assert result.hint.missing[:3] == ("The", "quick", "brown")
    assert result.hint.missing_count == sum(len(line.split()) for line in PROSE[:3])
    block = "\n".join(peer_agreement.file_block(result))
    assert block.count(" *") == len(result.checks) and "+ pdfindex has, most peers lack (3 words)" in block


def test_pdfindex_with_no_text_is_listed_when_the_peers_agree(prose_runs: dict[str, Extraction],
                                                               scorer: ModuleType) -> None:
    runs = {**prose_runs, OURS: Extraction(error="exit 1: pdfindex: broken")}
    result = peer_agreement.judge("prose.pdf", runs, scorer, 0.05)
    assert result.verdict == "listed" and all(c.ours == 0.0 for c in result.checks)


def test_one_peer_with_text_is_not_enough_to_judge(prose_runs: dict[str, Extraction], scorer: ModuleType) -> None:
    peers = [s for s in prose_runs if s != OURS]
    runs = {**prose_runs, **{p: Extraction(text="") for p in peers[1:]}}
    result = peer_agreement.judge("prose.pdf", runs, scorer, 0.05)
    assert result.verdict == "not judged" and result.checks == []


# ---- the rule with numbers worked out by hand ----------------------------------------------

def test_listing_needs_more_than_half_the_peers_below_by_more_than_the_margin() -> None:
    f1 = {"a|b": 0.9, "a|c": 0.9, "b|c": 0.9, "a|pdfindex": 0.8, "b|pdfindex": 0.8, "c|pdfindex": 0.95}
    checks = peer_agreement.peer_checks(f1, ["a", "b", "c"], 0.05)
    assert checks == [PeerCheck("a", 0.8, 0.9, True), PeerCheck("b", 0.8, 0.9, True),
                      PeerCheck("c", 0.95, 0.9, False)]
    assert peer_agreement.is_listed(checks)  # two of three
    assert not peer_agreement.is_listed(checks[1:])  # one of two is not more than half
    # exactly the margin below is not below; the median ignores one outlier peer
    # (binary fractions, so that "exactly" is exact)
    f1 = {"a|b": 0.25, "a|c": 0.75, "a|d": 0.75, "a|pdfindex": 0.5, "b|c": 0.75, "b|d": 0.75, "c|d": 0.75}
    assert peer_agreement.peer_checks(f1, ["a", "b", "c", "d"], 0.25)[0] == PeerCheck("a", 0.5, 0.75, False)
    assert peer_agreement.peer_checks(f1, ["a", "b", "c", "d"], 0.125)[0] == PeerCheck("a", 0.5, 0.75, True)
    with pytest.raises(ValueError, match="two peers"):
        peer_agreement.peer_checks({}, ["a"], 0.05)


def test_the_majority_is_what_more_than_half_the_peers_have() -> None:
    counts = [Counter(x=2, y=1), Counter(x=1, y=1), Counter(x=3, z=1), Counter(z=4)]
    assert peer_agreement.majority(counts) == Counter(x=1)  # y and z: two of four is no majority
    assert peer_agreement.majority(counts[:3]) == Counter(x=2, y=1)


def test_word_f1_is_the_producers_scorers(scorer: ModuleType) -> None:
    a, b = "The office flow, the office.", "the office  flow\ntheoffice extra"
    ours = peer_agreement.word_f1(Counter(peer_agreement.token_list(scorer, a)),
                                  Counter(peer_agreement.token_list(scorer, b)))
    assert ours == pytest.approx(scorer.score(a, b).f1)
    assert peer_agreement.word_f1(Counter(), Counter(a=1)) == 0.0


def test_passwords_come_from_the_notes_table(tmp_path: Path) -> None:
    notes = tmp_path / "REFERENCE_NOTES.md"
    notes.write_text("# x\n\n| `other.pdf` | password=no |\n\n## Passwords for encrypted files in this folder\n\n"
                     "| file | password(s) and source |\n|---|---|\n"
                     "| `a.pdf` | user password=user, owner password=owner (PDFBox) |\n"
                     "| `b.pdf` | password=æøå (UTF-8; pdf.js test_manifest.json) |\n"
                     "| `c.pdf` | empty user password (opens without prompt) |\n"
                     "| `d.pdf` | user password=asdfasdf (pdf.js api_spec.js) |\n\n## Next\n| `e.pdf` | password=x |\n",
                     encoding="utf-8")
    assert peer_agreement.read_passwords(notes) == {"a.pdf": "user", "b.pdf": "æøå", "c.pdf": "", "d.pdf": "asdfasdf"}
    assert peer_agreement.read_passwords(tmp_path / "missing.md") == {}


# ---- children that hang or crash ------------------------------------------------------------

def test_a_crash_and_a_timeout_are_recorded_not_raised() -> None:
    crash = peer_agreement.run_command([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"],
                                       30.0)
    assert crash.text is None and crash.error == "crashed: signal SIGSEGV" and crash.failure == "crash"
    hang = peer_agreement.run_command([sys.executable, "-c", "import time; time.sleep(60)"], 0.5)
    assert hang.error == "timeout after 0.5 s" and hang.failure == "timeout" and hang.seconds < 30


def test_a_library_child_that_hangs_is_replaced_for_the_next_file(corpus: Path, tmp_path: Path) -> None:
    """A hung library costs one file: the child is killed at the time limit and the
    next file gets a fresh one. (A stopped child stands in for one that loops.)"""
    if "pypdf" not in peer_agreement.find_systems(["pypdf"], 10.0, tmp_path).names:
        pytest.skip("pypdf not installed")
    child = peer_agreement.LibraryChild("pypdf", 2.0, tmp_path)
    try:
        first = child.extract(corpus / "prose.pdf", None)
        assert first.text is not None and "quick brown fox" in first.text
        assert child.proc is not None
        os.kill(child.proc.pid, signal.SIGSTOP)
        hung = child.extract(corpus / "prose.pdf", None)
        assert hung.error == "timeout after 2 s" and child.proc is None
        again = child.extract(corpus / "prose.pdf", None)
        assert again.text == first.text
        assert child.proc is not None
        child.proc.kill()  # dies between two files: restarted as well
        child.proc.wait()
        assert child.extract(corpus / "broken.pdf", None).failure == "error"
    finally:
        child.close()
