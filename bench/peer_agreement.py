"""Peer agreement: where pdfindex's text differs from what the other extractors agree
on, file by file, over the real-world corpus (issue 23, item 7).

The real-world files (``../shared/corpus/realworld``, the files of its ``MANIFEST.tsv``)
have no truth text; what they have is five extractors that were written apart. When
pdfindex agrees with pdfminer.six, pypdf, PyMuPDF and pdftotext about as well as they
agree with one another, its text is in the mainstream; when it agrees with most of them
clearly less than they agree among themselves, the file is worth a look: either
pdfindex lost or invented something, or it got right what the majority gets wrong (the
report cannot tell which; a reader of the texts can, and docs/corpus.md records it).

Systems, each on every selected file with a time limit (``--timeout``), a crash or a
timeout recorded for that file and the run going on:

* **pdfindex**: ``python -m pdfindex extract --ocr off [--password P] FILE`` in a child
  process of its own per file (the text layer only: the peers do no OCR);
* **pdfminer.six** (``pdfminer.high_level.extract_text``), **pypdf**
  (``page.extract_text()``) and **pymupdf** (``page.get_text()``): one long-lived child
  per library (importing PyMuPDF alone takes 2 s), sent one file at a time over a pipe,
  killed and started again after a timeout or a crash;
* **pdftotext** (poppler-utils): ``pdftotext -enc UTF-8 [-upw P] FILE -`` per file;
  "pdftotext not found, skipped" without it.

Encrypted files get the user password from the corpus's ``REFERENCE_NOTES.md`` table
(all systems alike; ``--no-passwords`` leaves them locked).

Agreement is word F1 with the producers scorer's tokens
(``../shared/corpus/producers/score.py``, loaded by path as bench/ocr.py does: NFKC
words, punctuation stripped at the ends, CJK as character bigrams, a line break between
CJK characters joined), the multiset F1 its ``score`` computes, taken between every two
systems that produced text. Both sides are extractor output, so both are tokenised as
such, and F1(a, b) = F1(b, a).

A file is LISTED when, for more than half of the peers P that produced text,
F1(pdfindex, P) is more than ``--margin`` (0.05) below the median of F1(Q, P) over the
other peers Q that produced text; at least two peers must have text for a file to be
judged. Files where no system has text are reported as encrypted, broken or empty,
not listed. For a listed file the report shows the numbers per peer and a diff hint:
the first words pdfindex has more often than a majority of the peers, and the first
words a majority of the peers has more often than pdfindex.

Usage, from the project root::

    .venv/bin/python -m bench.peer_agreement [--corpus DIR] [--files GLOB ...] [--peers a,b]
        [--margin 0.05] [--timeout S] [--json PATH] [--per-file] [--dump DIR] [--no-passwords]
"""
from __future__ import annotations

import argparse
import csv
import datetime
import fnmatch
import importlib.metadata
import importlib.util
import json
import os
import re
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from bench.ocr import load_scorer

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PDFINDEX_SHARED", ROOT.parent / "shared"))
DEFAULT_CORPUS = SHARED / "corpus" / "realworld"
DEFAULT_SCORER = SHARED / "corpus" / "producers" / "score.py"
OURS = "pdfindex"
LIBRARIES = ("pdfminer.six", "pypdf", "pymupdf")  # run in a long-lived child each
PEERS = (*LIBRARIES, "pdftotext")
DEFAULT_MARGIN = 0.05
DEFAULT_TIMEOUT = 300.0
START_TIMEOUT = 120.0  # a library child's import
HINT_WORDS = 8  # words shown each way in a diff hint


# ------------------------------------------------------------------ the files

def read_manifest(corpus: Path) -> list[Path]:
    """The PDFs ``corpus/MANIFEST.tsv`` lists that exist, in its order; without a
    manifest every ``*.pdf`` of the folder, by name."""
    manifest = corpus / "MANIFEST.tsv"
    if not manifest.exists():
        return sorted(corpus.glob("*.pdf"))
    with manifest.open(encoding="utf-8", newline="") as handle:
        names = [row["file"] for row in csv.DictReader(handle, delimiter="\t")]
    return [corpus / name for name in names if (corpus / name).is_file()]


def select_files(files: Sequence[Path], globs: Sequence[str]) -> list[Path]:
    """The files whose name (or stem) matches one of ``globs``; all when none is given."""
    if not globs:
        return list(files)
    return [f for f in files if any(fnmatch.fnmatch(f.name, g) or fnmatch.fnmatch(f.stem, g) for g in globs)]


_PASSWORD = re.compile(r"password=(.+?)(?=,| \(|$)")


def read_passwords(notes: Path) -> dict[str, str]:
    """File name -> user password, from the table of REFERENCE_NOTES.md's section
    "Passwords for encrypted files in this folder" ({} without the notes). The empty
    password counts: a file that opens without a prompt is given ""."""
    if not notes.exists():
        return {}
    text = notes.read_text(encoding="utf-8")
    start = text.find("## Passwords")
    if start < 0:
        return {}
    found: dict[str, str] = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        row = re.match(r"\|\s*`([^`]+)`\s*\|\s*(.*?)\s*\|\s*$", line)
        if row is None:
            continue
        name, how = row.groups()
        if "empty user password" in how:
            found[name] = ""
        elif (given := _PASSWORD.search(how)) is not None:
            found[name] = given.group(1)
    return found


# ------------------------------------------------------------------ running the systems

@dataclass(slots=True)
class Extraction:
    """What one system made of one file: its text, or why there is none."""

    text: str | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def failure(self) -> str | None:
        """"timeout", "crash", "password" or "error" when there is no text."""
        if self.error is None:
            return None
        if self.error.startswith("timeout"):
            return "timeout"
        if self.error.startswith("crashed"):
            return "crash"
        if re.search(r"password|encrypt|decrypt", self.error, re.I):
            return "password"
        return "error"


def _clean(data: bytes | str) -> str:
    """Text as UTF-8 can hold it: undecodable bytes and lone surrogates (a broken
    ToUnicode map gives them) become U+FFFD, so the JSON and the dumps can be written."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "replace")


def _last_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else ""


def _died(code: int) -> str:
    if code < 0:
        try:
            return f"crashed: signal {signal.Signals(-code).name}"
        except ValueError:
            return f"crashed: signal {-code}"
    return f"crashed: exit {code}"


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_command(argv: Sequence[str], timeout: float) -> Extraction:
    """One child for one file: its stdout is the text. A timeout kills the child's
    whole process group; a death by signal is a crash, any other non-zero exit an
    error with the last line of its stderr."""
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=child_env(), start_new_session=True)
    except OSError as exc:
        return Extraction(error=f"cannot run {argv[0]}: {exc.strerror}")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Extraction(error=f"timeout after {timeout:g} s", seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if proc.returncode < 0:
        return Extraction(error=_died(proc.returncode), seconds=seconds)
    if proc.returncode:
        return Extraction(error=f"exit {proc.returncode}: {_last_line(err)}", seconds=seconds)
    return Extraction(text=_clean(out), seconds=seconds)


def pdfindex_argv(path: Path, password: str | None) -> list[str]:
    """``pdfindex extract`` as installed beside this interpreter, OCR off."""
    argv = [sys.executable, "-m", "pdfindex", "extract", "--ocr", "off"]
    if password is not None:
        argv += ["--password", password]
    return [*argv, str(path)]


def pdftotext_argv(exe: str, path: Path, password: str | None) -> list[str]:
    """poppler's plain mode, as the producers scorer runs it; "-" writes to stdout."""
    argv = [exe, "-enc", "UTF-8"]
    if password is not None:
        argv += ["-upw", password]
    return [*argv, str(path), "-"]


# The library child: imports its library once, then reads one JSON request a line
# ({"path", "password"}) and answers one JSON line ({"text"} or {"error"}). Its own
# stdout is moved to stderr first, so a library that prints cannot garble a reply.
_WORKER = r'''
import json, logging, os, sys, warnings
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
replies = os.fdopen(os.dup(1), "w", encoding="ascii")
os.dup2(2, 1)
name = sys.argv[1]

class Locked(Exception):
    pass

if name == "pdfminer.six":
    from pdfminer.high_level import extract_text

    def extract(path, password):
        return extract_text(path, password=password or "")  # every page ends in a form feed
elif name == "pypdf":
    from pypdf import PdfReader

    def extract(path, password):
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(password or ""):
            raise Locked("encrypted: the password given does not open it")
        return "\f".join(page.extract_text() or "" for page in reader.pages)
elif name == "pymupdf":
    import pymupdf
    pymupdf.TOOLS.mupdf_display_errors(False)

    def extract(path, password):
        with pymupdf.open(path) as doc:
            if doc.needs_pass and not doc.authenticate(password or ""):
                raise Locked("encrypted: the password given does not open it")
            return "\f".join(page.get_text() for page in doc)
else:
    raise SystemExit(f"unknown library {name}")

replies.write('{"ready": true}\n')
replies.flush()
for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = {"text": extract(request["path"], request["password"])}
    except Exception as exc:  # a library's failure on one file is that file's result
        reply = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    replies.write(json.dumps(reply) + "\n")
    replies.flush()
'''


class LibraryChild:
    """One library in a child process of its own, sent one file at a time; after a
    timeout or a crash the next file starts a fresh child."""

    def __init__(self, name: str, timeout: float, work: Path) -> None:
        self.name, self.timeout, self.work = name, timeout, work
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr: IO[bytes] | None = None
        self.pending = b""

    def _start(self) -> str | None:
        """Start the child and wait for its "ready"; why not, or None."""
        self.stderr = (self.work / f"{self.name}.stderr").open("w+b")
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, self.name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, env=child_env(),
                                     start_new_session=True, bufsize=0)
        self.pending = b""
        reply = self._reply(START_TIMEOUT)
        if isinstance(reply, dict) and reply.get("ready"):
            return None
        self.stop()
        return f"{self.name} did not start: {reply if isinstance(reply, str) else 'no ready line'}"

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    pipe.close()
        if self.stderr is not None:
            self.stderr.close()
        self.proc, self.stderr = None, None

    def close(self) -> None:
        """End the child politely (end of input), then for sure."""
        if self.proc is not None and self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.stop()

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0)
        return _last_line(self.stderr.read()[-4000:])

    def _reply(self, timeout: float) -> dict[str, Any] | str:
        """The child's next JSON line, or why there is none ("timeout ...", "crashed ...")."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while (end := self.pending.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return f"timeout after {timeout:g} s"
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self.proc.wait()
                tail = self._stderr_tail()
                return _died(code) + (f": {tail}" if tail else "")
            self.pending += chunk
        line, self.pending = self.pending[:end], self.pending[end + 1:]
        data: dict[str, Any] = json.loads(line)
        return data

    def extract(self, path: Path, password: str | None) -> Extraction:
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            why = self._start()
            if why is not None:
                return Extraction(error=why)
        assert self.proc is not None and self.proc.stdin is not None
        start = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps({"path": str(path), "password": password}).encode() + b"\n")
        except BrokenPipeError:
            self.stop()
            return Extraction(error="crashed before reading the file")
        reply = self._reply(self.timeout)
        seconds = time.perf_counter() - start
        if isinstance(reply, str):
            self.stop()
            return Extraction(error=reply, seconds=seconds)
        if "error" in reply:
            return Extraction(error=str(reply["error"]), seconds=seconds)
        return Extraction(text=_clean(str(reply["text"])), seconds=seconds)


@dataclass
class Systems:
    """The systems available here, how to run each, and a note per absent peer."""

    names: list[str]
    notes: list[str]
    timeout: float
    pdftotext: str | None
    children: dict[str, LibraryChild] = field(default_factory=dict)

    def extract(self, system: str, path: Path, password: str | None) -> Extraction:
        if system == OURS:
            return run_command(pdfindex_argv(path, password), self.timeout)
        if system == "pdftotext":
            assert self.pdftotext is not None
            return run_command(pdftotext_argv(self.pdftotext, path, password), self.timeout)
        return self.children[system].extract(path, password)

    def close(self) -> None:
        for child in self.children.values():
            child.close()


_MODULES = {"pdfminer.six": "pdfminer", "pypdf": "pypdf", "pymupdf": "pymupdf"}


def find_systems(peers: Sequence[str], timeout: float, work: Path) -> Systems:
    """pdfindex and the wanted peers that can run here; an absent one is a note."""
    names, notes = [OURS], []
    exe = None
    for peer in peers:
        if peer == "pdftotext":
            exe = shutil.which("pdftotext")
            if exe is None:
                notes.append("pdftotext not found, skipped (apt-get install poppler-utils)")
                continue
        elif importlib.util.find_spec(_MODULES[peer]) is None:
            notes.append(f"{peer} not installed, skipped (.venv/bin/pip install -e '.[dev]')")
            continue
        names.append(peer)
    systems = Systems(names, notes, timeout, exe)
    systems.children = {name: LibraryChild(name, timeout, work) for name in names if name in LIBRARIES}
    return systems


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def pdfindex_source() -> str:
    """Which pdfindex the children run: the commit of the tree it is imported from
    (``PYTHONPATH`` may point at a clean clone while others edit this one), and
    whether its package has uncommitted changes, which the commit alone would hide."""
    spec = importlib.util.find_spec("pdfindex")
    if spec is None or spec.origin is None:
        return "not importable"
    package = Path(spec.origin).resolve().parent
    head = _git(package, "rev-parse", "--short", "HEAD")
    if head is None:
        return f"from {package}"
    dirty = _git(package, "status", "--porcelain", "--", ".")
    return f"{head}{', uncommitted changes' if dirty else ''}, from {package}"


def versions(systems: Sequence[str]) -> dict[str, str]:
    """The versions compared, for the report and the JSON (pdfindex with its commit)."""
    found: dict[str, str] = {}
    for name in systems:
        if name == "pdftotext":
            try:
                done = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True, timeout=30, check=False)
                given = re.search(r"version\s+(\S+)", done.stderr + done.stdout)
                found[name] = given.group(1) if given else "?"
            except (OSError, subprocess.SubprocessError):
                found[name] = "?"
            continue
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "?"
    if OURS in found:
        found[OURS] += f" ({pdfindex_source()})"
    return found


# ------------------------------------------------------------------ agreement

def token_list(scorer: ModuleType, text: str) -> list[str]:
    """The producers scorer's scoring tokens of an extractor's text."""
    tokens: list[str] = scorer.tokens(scorer.words(text, extractor_output=True))
    return tokens


def word_f1(a: Counter[str], b: Counter[str]) -> float:
    """Multiset word F1, as the producers scorer's ``score`` takes it (0 when either
    side is empty or nothing is shared); symmetric."""
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(b.values()), common / sum(a.values())
    return 2 * precision * recall / (precision + recall)


def pair(a: str, b: str) -> str:
    """The key of a pair of systems in the F1 table: the two names sorted, "a|b"."""
    return "|".join(sorted((a, b)))


def f1_table(counts: Mapping[str, Counter[str]]) -> dict[str, float]:
    """F1 between every two systems of ``counts`` (those that produced text)."""
    names = list(counts)
    return {pair(a, b): word_f1(counts[a], counts[b]) for i, a in enumerate(names) for b in names[i + 1:]}


@dataclass(frozen=True, slots=True)
class PeerCheck:
    """How pdfindex agrees with one peer, against how the other peers agree with it."""

    peer: str
    ours: float  # F1(pdfindex, peer)
    others: float  # median of F1(Q, peer) over the other peers Q with text
    below: bool  # ours < others - margin


def peer_checks(f1: Mapping[str, float], peers: Sequence[str], margin: float) -> list[PeerCheck]:
    """For each peer with text (``peers``, at least two), pdfindex's F1 with it against
    the median of the other peers' F1 with it. ``f1`` holds every pair among pdfindex
    and ``peers``; pdfindex without text agrees 0 with everyone."""
    if len(peers) < 2:
        raise ValueError("the median of the other peers needs two peers with text")
    checks = []
    for p in peers:
        ours = f1.get(pair(OURS, p), 0.0)
        others = statistics.median(f1[pair(q, p)] for q in peers if q != p)
        checks.append(PeerCheck(p, ours, others, others - ours > margin))
    return checks


def is_listed(checks: Sequence[PeerCheck]) -> bool:
    """Listed: pdfindex is more than the margin below the others for more than half of the peers."""
    return sum(c.below for c in checks) * 2 > len(checks)


def majority(counts: Sequence[Counter[str]]) -> Counter[str]:
    """Each word as many times as more than half of ``counts`` have it at least."""
    need = len(counts) // 2 + 1
    out: Counter[str] = Counter()
    for word in set().union(*counts):
        have = sorted((c[word] for c in counts), reverse=True)
        if have[need - 1]:
            out[word] = have[need - 1]
    return out


@dataclass(frozen=True, slots=True)
class Hint:
    """Words pdfindex has beyond the peers' majority, and the majority's words it lacks."""

    extra: tuple[str, ...]  # the first few, in pdfindex's order
    extra_count: int
    missing: tuple[str, ...]  # the first few, in the order of the peer closest to the others
    missing_count: int


def _first(sequence: Iterable[str], wanted: Counter[str], limit: int) -> tuple[str, ...]:
    left, out = Counter(wanted), []
    for word in sequence:
        if left[word] > 0:
            left[word] -= 1
            out.append(word)
            if len(out) == limit:
                break
    return tuple(out)


def diff_hint(ours: Sequence[str], peers: Mapping[str, Sequence[str]], f1: Mapping[str, float],
              limit: int = HINT_WORDS) -> Hint:
    """What a reader should look at first: pdfindex's tokens the peers' majority lacks
    and the majority's tokens pdfindex lacks. The missing ones are shown in the order
    of the peer that agrees best with the other peers (its reading order is the one
    most of them share)."""
    counts = {name: Counter(tokens) for name, tokens in peers.items()}
    agreed = majority(list(counts.values()))
    mine = Counter(ours)
    extra, missing = mine - agreed, agreed - mine
    central = max(peers, key=lambda p: (statistics.median(f1[pair(p, q)] for q in peers if q != p)
                                        if len(peers) > 1 else 0.0))
    return Hint(_first(ours, extra, limit), sum(extra.values()), _first(peers[central], missing, limit),
                sum(missing.values()))


# ------------------------------------------------------------------ one file

@dataclass
class FileResult:
    """Everything measured on one file."""

    file: str
    verdict: str  # listed, agrees, not judged (fewer than two peers with text), encrypted, broken, empty
    systems: dict[str, dict[str, Any]]  # name -> status, error, seconds, chars, tokens
    f1: dict[str, float] = field(default_factory=dict)
    checks: list[PeerCheck] = field(default_factory=list)
    hint: Hint | None = None
    password: bool = False  # a password from the notes was given


def status(run: Extraction, tokens: int) -> str:
    """ok (text with words), empty (no words), or why there is no text."""
    return run.failure or ("ok" if tokens else "empty")


def no_text_verdict(statuses: Mapping[str, str]) -> str:
    """Why no system has text: encrypted (some system was refused for a password and
    none did better), empty (every system read the file and found no words), else
    broken (some system failed on it, the others found nothing)."""
    values = set(statuses.values())
    if "password" in values:
        return "encrypted"
    if values == {"empty"}:
        return "empty"
    return "broken"


def judge(name: str, runs: Mapping[str, Extraction], scorer: ModuleType, margin: float,
          password: bool = False) -> FileResult:
    """One file's verdict from the systems' extractions (pdfindex's under ``OURS``)."""
    tokens = {s: token_list(scorer, r.text) if r.text is not None else [] for s, r in runs.items()}
    statuses = {s: status(r, len(tokens[s])) for s, r in runs.items()}
    systems = {s: {"status": statuses[s], "error": r.error, "seconds": round(r.seconds, 3),
                   "chars": None if r.text is None else len(r.text), "tokens": len(tokens[s])}
               for s, r in runs.items()}
    result = FileResult(name, "", systems, password=password)
    with_text = [s for s in runs if statuses[s] == "ok"]
    peers = [s for s in with_text if s != OURS]
    if not with_text:
        result.verdict = no_text_verdict(statuses)
        return result
    counts = {s: Counter(tokens[s]) for s in with_text}
    result.f1 = f1_table(counts)
    if len(peers) < 2:
        result.verdict = "not judged"
        return result
    result.checks = peer_checks(result.f1, peers, margin)
    listed = is_listed(result.checks)
    result.verdict = "listed" if listed else "agrees"
    result.hint = diff_hint(tokens[OURS], {p: tokens[p] for p in peers}, result.f1)
    return result


# ------------------------------------------------------------------ report

def shown(word: str, width: int = 24) -> str:
    """A token for a terminal: control characters escaped, long ones cut."""
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in word)
    return text if len(text) <= width else text[:width - 1] + "…"


def hint_lines(hint: Hint) -> list[str]:
    return [f"    + pdfindex has, most peers lack ({hint.extra_count} words): "
            + (" ".join(map(shown, hint.extra)) or "-"),
            f"    - most peers have, pdfindex lacks ({hint.missing_count} words): "
            + (" ".join(map(shown, hint.missing)) or "-")]


def file_block(result: FileResult) -> list[str]:
    """A listed file: its numbers per peer (the others' F1 one by one) and the hint."""
    ours = result.systems[OURS]
    head = result.file
    if ours["status"] != "ok":
        head += f"  (pdfindex: {ours['status']}{': ' + str(ours['error']) if ours['error'] else ''})"
    lines = [head]
    peers = [c.peer for c in result.checks]
    lines.append(f"    {'peer':<14}{'pdfindex':>9}{'others':>9}   each other peer's F1 with it")
    for c in result.checks:
        each = ", ".join(f"{q} {result.f1[pair(q, c.peer)]:.3f}" for q in peers if q != c.peer)
        lines.append(f"    {c.peer:<14}{c.ours:>9.3f}{c.others:>9.3f}{' *' if c.below else '  '} {each}")
    if result.hint is not None:
        lines += hint_lines(result.hint)
    return lines


def summary(results: Sequence[FileResult], peers: Sequence[str]) -> dict[str, Any]:
    """Counts per verdict, and per peer the mean over judged files of pdfindex's F1
    with it and of the other peers' median F1 with it."""
    verdicts = Counter(r.verdict for r in results)
    per_peer: dict[str, dict[str, float | int]] = {}
    for peer in peers:
        checks = [c for r in results for c in r.checks if c.peer == peer]
        if checks:
            per_peer[peer] = {"files": len(checks), "pdfindex": statistics.fmean(c.ours for c in checks),
                              "others": statistics.fmean(c.others for c in checks)}
    return {"files": len(results), "verdicts": dict(verdicts), "per_peer": per_peer}


VERDICT_ORDER = ("listed", "agrees", "not judged", "encrypted", "broken", "empty")


def summary_line(data: Mapping[str, Any]) -> str:
    verdicts = data["verdicts"]
    parts = [f"{verdicts[v]} {'agree' if v == 'agrees' else v}" for v in VERDICT_ORDER if verdicts.get(v)]
    line = f"{data['files']} files: " + ", ".join(parts)
    if data["per_peer"]:
        line += "; mean F1 with each peer, pdfindex / the other peers' median: " + ", ".join(
            f"{p} {n['pdfindex']:.3f} / {n['others']:.3f}" for p, n in data["per_peer"].items())
    return line


def print_report(results: Sequence[FileResult], systems: Sequence[str], info: Mapping[str, Any],
                 per_file: bool) -> None:
    peers = [s for s in systems if s != OURS]
    print(f"Peer agreement: {', '.join(f'{s} {v}' for s, v in info['versions'].items())}")
    print(f"corpus {info['corpus']}: {len(results)} files; margin {info['margin']:g}; "
          f"timeout {info['timeout']:g} s; passwords from REFERENCE_NOTES.md: {'yes' if info['passwords'] else 'no'}")
    for note in info["notes"]:
        print(f"  {note}")
    listed = [r for r in results if r.verdict == "listed"]
    print(f"\nListed: {len(listed) or 'none'}"
          + (f" (pdfindex's F1 with a peer more than {info['margin']:g} below the other peers' median F1 with it,"
             " for most peers; * marks those peers)" if listed else ""))
    for result in listed:
        print("\n".join(file_block(result)))
    near = [r for r in results if r.verdict == "agrees" and any(c.below for c in r.checks)]
    if near:
        print("\nBelow the margin for some peers, not for most (not listed):")
        for result in near:
            print(f"  {result.file}: " + ", ".join(f"{c.peer} {c.ours:.3f} / {c.others:.3f}"
                                                   for c in result.checks if c.below))
    if per_file:
        print("\nEvery file: verdict, then pdfindex / others per peer")
        for result in results:
            cells = "  ".join(f"{c.peer} {c.ours:.3f}/{c.others:.3f}" for c in result.checks)
            print(f"  {result.file:<50} {result.verdict:<11} {cells}")
    unjudged = [r for r in results if r.verdict not in ("listed", "agrees")]
    if unjudged:
        print("\nNot judged (no text from anyone, or from fewer than two peers):")
        for result in unjudged:
            states = ", ".join(f"{s} {result.systems[s]['status']}" for s in systems)
            print(f"  {result.file:<50} {result.verdict:<11} {states}")
    failures = [(s, r.file, r.systems[s]["error"]) for s in systems for r in results if r.systems[s]["error"]]
    print(f"\nFailures (timeouts, crashes, errors): {len(failures) or 'none'}")
    for system, name, error in failures:
        print(f"  {system:<13} {name}: {error}")
    print(f"\nSummary: {summary_line(summary(results, peers))}")


def result_json(result: FileResult) -> dict[str, Any]:
    data = asdict(result)
    data["f1"] = {k: round(v, 4) for k, v in result.f1.items()}
    data["checks"] = [{**asdict(c), "ours": round(c.ours, 4), "others": round(c.others, 4)} for c in result.checks]
    return data


# ------------------------------------------------------------------ the run

def measure(files: Sequence[Path], systems: Systems, scorer: ModuleType, margin: float,
            passwords: Mapping[str, str], dump: Path | None) -> list[FileResult]:
    """Every system on every file, one child at a time, a file's systems together."""
    results = []
    for n, path in enumerate(files, 1):
        password = passwords.get(path.name)
        runs = {s: systems.extract(s, path, password) for s in systems.names}
        result = judge(path.name, runs, scorer, margin, password is not None)
        results.append(result)
        if dump is not None:
            dump_texts(dump, path.name, runs)
        took = sum(r.seconds for r in runs.values())
        print(f"[{n}/{len(files)}] {path.name}: {result.verdict} ({took:.1f} s)", file=sys.stderr, flush=True)
    return results


def dump_texts(dump: Path, name: str, runs: Mapping[str, Extraction]) -> None:
    """Each system's text of file ``name`` as DUMP/SYSTEM/NAME.txt, to read the
    disagreements behind the numbers."""
    for system, run in runs.items():
        if run.text is not None:
            (dump / system).mkdir(parents=True, exist_ok=True)
            (dump / system / f"{name}.txt").write_text(run.text, encoding="utf-8")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="a folder of PDFs, the files of its MANIFEST.tsv (default %(default)s)")
    parser.add_argument("--files", nargs="+", default=[], metavar="GLOB",
                        help="only these files (name globs, e.g. 'pdfjs__*')")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated, from: " + ", ".join(PEERS))
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                        help="word F1 below the other peers' median that counts (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="seconds per system and file (default %(default)s)")
    parser.add_argument("--scorer", type=Path, default=DEFAULT_SCORER, help="the producers scorer's score.py")
    parser.add_argument("--no-passwords", action="store_true",
                        help="do not give encrypted files the passwords of the corpus's REFERENCE_NOTES.md")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument("--per-file", action="store_true", help="also print every file's numbers")
    parser.add_argument("--dump", type=Path, help="write each system's text to DIR/SYSTEM/FILE.txt")
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown or not args.peers:
        parser.error(f"unknown peer(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(PEERS)}")
    if not 0 <= args.margin < 1:
        parser.error("--margin must be in [0, 1)")
    return args


def run(args: argparse.Namespace, work: Path, argv: Sequence[str]) -> int:
    files = select_files(read_manifest(args.corpus), args.files)
    if not files:
        print(f"peer_agreement: no PDF in {args.corpus} matches {' '.join(args.files) or '*'}", file=sys.stderr)
        return 1
    scorer = load_scorer(args.scorer)
    passwords = {} if args.no_passwords else read_passwords(args.corpus / "REFERENCE_NOTES.md")
    systems = find_systems(args.peers, args.timeout, work)
    try:
        results = measure(files, systems, scorer, args.margin, passwords, args.dump)
    finally:
        systems.close()
    info = {"date": datetime.date.today().isoformat(),
            "command": shlex.join(["python", "-m", "bench.peer_agreement", *argv]),
            "corpus": str(args.corpus), "margin": args.margin, "timeout": args.timeout,
            "passwords": bool(passwords), "versions": versions(systems.names), "notes": systems.notes}
    print_report(results, systems.names, info, args.per_file)
    if args.json:
        data = {**info, "systems": systems.names,
                "summary": summary(results, [s for s in systems.names if s != OURS]),
                "files": [result_json(r) for r in results]}
        args.json.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(given)
    with tempfile.TemporaryDirectory(prefix="pdfindex-peer-bench-") as tmp:
        return run(args, Path(tmp), given)


if __name__ == "__main__":
    sys.exit(main())
