"""Whole-process text-extraction speed: pdfindex against other extractors, one run.

Each tool extracts the same files in a fresh child process started the same way
(``sys.executable`` for the Python tools), stdout to ``/dev/null``, and the wall
time from spawning to exit is measured.

Why whole-process timing rather than timing a function in this process:

* It is what a user and our workers pay: ``pdfindex extract FILE`` starts an
  interpreter, imports its modules, parses the file and writes text.  Import time
  is part of the product (a worker that shells out, a CLI in a loop).
* It is the only measure that is the same for every tool: a C program
  (``pdftotext``), a C library behind a Python binding (PyMuPDF) and pure-Python
  libraries (pdfminer.six, pypdf) cannot be timed fairly in-process, and timing
  in one process lets caches, JIT-free warm-up order and garbage from earlier
  tools leak into later ones.
* A fresh process per run makes the runs independent; the best of N runs is
  reported because noise (other processes, CPU frequency) only ever adds time.

The fixed cost of starting Python is printed as a floor, so small files, where
start-up dominates, can be read correctly.  One untimed warm-up run per tool and
file (skipped with ``--quick``) fills the OS file cache and the ``.pyc`` caches;
its captured output gives the "chars" column and, for the generated document, the
share of the expected words each tool recovers (speed of a tool that loses words
is not comparable).

The default document is generated with ``tests/pdfwriter.py``: 150 pages of
English-like text set the way TeX and office exports do it (standard-14
Helvetica/Times, a subset-style TrueType font with /Widths and a ToUnicode map,
word gaps as space characters or TJ numbers, kerning, Flate streams).  The issue's
target is pdfindex >= 3x the pages/second of pdfminer.six ``extract_text`` on it.

Usage::

    .venv/bin/python bench/extract_speed.py [--runs 3] [--quick] [--out DOC.pdf] [FILE.pdf ...]
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # for tests.pdfwriter when run as a script
    sys.path.insert(0, str(ROOT))

from pdfminer.fontmetrics import FONT_METRICS  # noqa: E402

from tests.pdfwriter import Name, PdfWriter, Ref, tounicode_cmap  # noqa: E402

TARGET_RATIO = 3.0
TARGET_TOOL = "pdfminer.six"
DEFAULT_PAGES = 150
DEFAULT_RUNS = 3
DEFAULT_TIMEOUT = 900.0
SEED = 20240611

# ------------------------------------------------------------------ generator

#: The generator's word list: every body word of the generated document is one
#: of these (a sentence start is capitalised, some words carry "," or ".").
VOCABULARY: tuple[str, ...] = (
    "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be",
    "by", "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have",
    "an", "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has",
    "there", "been", "if", "more", "when", "will", "would", "who", "so", "no", "time", "about",
    "many", "then", "them", "some", "these", "two", "may", "first", "water", "people", "over",
    "after", "years", "work", "system", "between", "number", "through", "world", "general",
    "however", "because", "government", "public", "against", "under", "without", "example",
    "within", "problem", "should", "during", "develop", "information", "second", "large",
    "process", "several", "important", "political", "although", "different", "following",
    "economic", "national", "evidence", "therefore", "research", "analysis", "particular",
    "structure", "condition", "effective", "knowledge", "relation", "available", "position",
    "document", "surface", "pressure", "argument", "distance", "temperature", "function",
    "measure", "morning", "village", "journey", "harbour", "window", "garden", "river",
    "mountain", "weather", "letter", "question", "answer", "history", "method", "theory",
    "value", "result", "figure", "table", "section", "chapter", "volume", "index", "search",
    "reader", "writer", "printer", "library", "archive", "record", "market", "company",
    "payment", "invoice", "account", "balance", "quarter", "annual", "report", "summary",
    "review", "approach", "quality", "average", "variation", "sample", "survey", "model",
    "proof", "lemma", "equation", "matrix", "vector", "element", "boundary", "kernel",
    "affine", "flow", "offer", "office", "efficient", "difficult", "waffle", "fjord", "avoid",
    "toward", "every", "away", "yellow", "wave", "very", "fever", "eye", "key", "yet",
    "quickly", "brown", "fox", "jumps", "lazy", "dog", "zeal", "jazz", "quiz", "oxygen",
)

#: Pair kerns in thousandths of an em, as a TJ number between the two letters
#: (positive moves the second letter left).
KERNING: Mapping[str, float] = MappingProxyType({
    "av": 20, "va": 25, "wa": 15, "ye": 15, "yo": 15, "ro": 10, "ke": 10, "fo": 10,
    "ov": 15, "ow": 10, "vo": 15, "we": 20, "ty": 10, "To": 80, "Wa": 80, "Av": 74, "Yo": 100,
    "y.": 55, "y,": 55, "r.": 40, "r,": 40, "f.": 28, "w.": 65, "v.": 65,
})

#: Word-gap TJ numbers seen in TeX output (interword glue after justification).
GAPS: tuple[float, ...] = (-333, -333, -327.8, -349.5, -305.2, -361, -290.7)

FONT_SIZE = 10.0
LEADING = 13.2
LEFT, TOP = 72.0, 712.0
PARAGRAPH_INDENT = 18.0
SPACE_SHARE = 0.45  # share of word gaps drawn as a space character
EMPHASIS_SHARE = 0.04  # share of words set in the other body font mid-line


@dataclass(frozen=True, slots=True)
class GeneratedPage:
    """What one generated page shows, top to bottom."""

    header: str
    lines: tuple[str, ...]  # body lines as drawn (capitals, punctuation)
    footer: str
    words: tuple[str, ...]  # body words as drawn from VOCABULARY, in order

    @property
    def text_lines(self) -> tuple[str, ...]:
        return (self.header, *self.lines, self.footer)


@dataclass(frozen=True, slots=True)
class GeneratedDocument:
    path: Path
    pages: tuple[GeneratedPage, ...]

    @property
    def page_count(self) -> int:
        return len(self.pages)


@dataclass(frozen=True, slots=True)
class Face:
    """A font resource and how a character becomes a byte in its strings."""

    resource: str
    codes: Mapping[str, int]
    hex_strings: bool

    def string(self, text: str) -> bytes:
        data = bytes(self.codes[c] for c in text)
        if self.hex_strings:
            return b"<" + data.hex().upper().encode() + b">"
        esc = data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
        return b"(" + esc + b")"


def _charset() -> str:
    letters = sorted(set("".join(VOCABULARY)) | set("".join(VOCABULARY).upper()))
    return " .,:" + "0123456789" + "".join(letters)


def _add_fonts(w: PdfWriter) -> tuple[dict[str, Ref], dict[str, Face]]:
    """F1 Helvetica and F2 Times-Roman (standard 14, WinAnsi) and F3 a subset-style
    TrueType font: codes 3.. in charset order (as office exports number subset
    glyphs), /Widths from Times metrics, symbolic, text only through ToUnicode."""
    ascii_codes = {c: ord(c) for c in _charset()}
    fonts = {
        "F1": w.standard_font("Helvetica", encoding="WinAnsiEncoding"),
        "F2": w.standard_font("Times-Roman", encoding="WinAnsiEncoding"),
    }
    subset_codes = {c: 3 + i for i, c in enumerate(_charset())}
    times_widths = FONT_METRICS["Times-Roman"][1]
    widths = [float(times_widths[c]) for c in _charset()]
    cmap = tounicode_cmap([(bytes([code]), c) for c, code in subset_codes.items()])
    fonts["F3"] = w.simple_font(
        "TrueType", base_font="QKBNCH+BenchSerif", first_char=3, widths=widths,
        to_unicode=cmap, to_unicode_filter="FlateDecode",
        descriptor={"Flags": 4, "FontBBox": [-568, -216, 2046, 891], "Ascent": 891,
                    "Descent": -216, "CapHeight": 662, "StemV": 84, "XHeight": 448})
    faces = {
        "F1": Face("F1", ascii_codes, hex_strings=False),
        "F2": Face("F2", ascii_codes, hex_strings=False),
        "F3": Face("F3", subset_codes, hex_strings=True),
    }
    return fonts, faces


def tj(face: Face, items: Sequence[str | float]) -> bytes:
    """A TJ array from characters and numbers (adjacent characters form one string)."""
    out: list[bytes] = []
    run = ""
    for item in items:
        if isinstance(item, str):
            run += item
            continue
        if run:
            out.append(face.string(run))
            run = ""
        out.append(b"%g" % item)
    if run:
        out.append(face.string(run))
    return b"[" + b"".join(out) + b"] TJ"


def _line_ops(words: Sequence[str], fonts: Sequence[Face], rng: random.Random) -> bytes:
    """One body line: TJ arrays with space characters, gap numbers and kerns; a
    word in the other body font switches font mid-line and back, as TeX does."""
    base, other = fonts
    ops: list[bytes] = []
    current = base
    items: list[str | float] = []
    for i, word in enumerate(words):
        face = other if rng.random() < EMPHASIS_SHARE else base
        if face is not current:
            if items:
                ops.append(tj(current, items))
            ops.append(b"/%s %g Tf" % (face.resource.encode(), FONT_SIZE))
            current, items = face, []
        if i:
            if rng.random() < SPACE_SHARE:
                items.append(" ")
            else:
                items.append(rng.choice(GAPS))
        for j, ch in enumerate(word):
            if j and word[j - 1:j + 1] in KERNING:
                items.append(KERNING[word[j - 1:j + 1]])
            items.append(ch)
    if items:
        ops.append(tj(current, items))
    if current is not base:
        ops.append(b"/%s %g Tf" % (base.resource.encode(), FONT_SIZE))
    return b" ".join(ops)


class _Sentences:
    """English-like running text: sentences of 6-22 words, capitalised, with commas."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.left = 0

    def word(self, force_end: bool = False) -> tuple[str, str]:
        """(vocabulary word, word as drawn)."""
        rng = self.rng
        start = self.left == 0
        if start:
            self.left = rng.randint(6, 22)
        self.left -= 1
        vocab = rng.choice(VOCABULARY)
        drawn = vocab.capitalize() if start else vocab
        if force_end or self.left == 0:
            self.left = 0
            drawn += "."
        elif rng.random() < 0.07:
            drawn += ","
        return vocab, drawn


def _page(number: int, lines_per_page: int, words_per_line: int, faces: Mapping[str, Face],
          sentences: _Sentences, rng: random.Random, seed: int) -> tuple[bytes, GeneratedPage]:
    chapter = 1 + (number - 1) // 10
    chapter_rng = random.Random(seed * 1000 + chapter)  # same title on every page of a chapter
    title = " ".join(w.capitalize() for w in chapter_rng.sample(VOCABULARY, 3))
    header = f"Chapter {chapter}: {title}"
    footer = str(number)
    ops: list[bytes] = [
        b"BT /F1 9 Tf %g 750 Td %s Tj ET" % (LEFT, faces["F1"].string(header)),
        b"q 0.5 w %g 742 m %g 742 l S Q" % (LEFT, 612 - LEFT),
    ]
    lines: list[str] = []
    words: list[str] = []
    body = (faces["F2"], faces["F3"])
    ops.append(b"BT /F2 %g Tf %g %g Td" % (FONT_SIZE, LEFT, TOP))
    para_left, x = 0, 0.0  # x: this line's start, from the left margin
    for n in range(lines_per_page):
        if para_left == 0:  # new paragraph: its length, body font, indented first line
            para_left = rng.randint(4, 9)
            body = (faces["F2"], faces["F3"]) if rng.random() < 0.6 else (faces["F3"], faces["F2"])
            ops.append(b"/%s %g Tf" % (body[0].resource.encode(), FONT_SIZE))
            target = PARAGRAPH_INDENT
        else:
            target = 0.0
        dx, x = target - x, target
        para_left -= 1
        last = para_left == 0 or n == lines_per_page - 1
        count = (rng.randint(3, words_per_line - 2) if last
                 else rng.randint(words_per_line - 2, words_per_line + 2))
        drawn: list[str] = []
        for k in range(count):
            vocab, shown = sentences.word(force_end=last and k == count - 1)
            words.append(vocab)
            drawn.append(shown)
        if n:
            ops.append(b"%g %g Td" % (dx, -LEADING))
        elif dx:
            ops.append(b"%g 0 Td" % dx)
        ops.append(_line_ops(drawn, body, rng))
        lines.append(" ".join(drawn))
    ops.append(b"ET")
    ops.append(b"BT /F2 9 Tf %g 40 Td %s Tj ET" % (306 - 2.5 * len(footer), faces["F2"].string(footer)))
    return b"\n".join(ops) + b"\n", GeneratedPage(header, tuple(lines), footer, tuple(words))


def build_document(path: Path, pages: int = DEFAULT_PAGES, *, lines_per_page: int = 45,
                   words_per_line: int = 12, seed: int = SEED) -> GeneratedDocument:
    """Write the benchmark document to ``path`` (deterministic for a given seed)."""
    if pages < 1 or lines_per_page < 1 or words_per_line < 5:
        raise ValueError("need pages >= 1, lines_per_page >= 1 and words_per_line >= 5")
    rng = random.Random(seed)
    w = PdfWriter(file_id=b"pdfindex-bench-0")
    w.set_info({"Title": b"pdfindex extraction benchmark", "Producer": b"tests/pdfwriter.py"})
    fonts, faces = _add_fonts(w)
    resources = w.add({"Font": fonts, "ProcSet": [Name("PDF"), Name("Text")]})
    sentences = _Sentences(rng)
    made: list[GeneratedPage] = []
    for number in range(1, pages + 1):
        content, page = _page(number, lines_per_page, words_per_line, faces, sentences, rng, seed)
        w.add_page(content, resources=resources, filter="FlateDecode")
        made.append(page)
    w.save(path)
    return GeneratedDocument(path, tuple(made))


# ------------------------------------------------------------------ tools

FILE = "{file}"  # placeholder for the PDF's path in a tool's command line
_PDFMINER = ("import sys\nfrom pdfminer.high_level import extract_text\n"
             "sys.stdout.write(extract_text(sys.argv[1]))\n")
_PYPDF = ("import sys\nfrom pypdf import PdfReader\n"
          "sys.stdout.write(''.join(p.extract_text() for p in PdfReader(sys.argv[1]).pages))\n")
_PYMUPDF = ("import sys\nimport pymupdf\n"
            "with pymupdf.open(sys.argv[1]) as doc:\n"
            "    sys.stdout.write('\\f'.join(page.get_text() for page in doc))\n")


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    argv: tuple[str, ...]  # FILE stands for the PDF's path
    version: str
    quick: bool  # part of --quick

    def command(self, path: Path) -> list[str]:
        return [str(path) if arg == FILE else arg for arg in self.argv]


def _dist_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _pdftotext_version(exe: str) -> str:
    try:
        done = subprocess.run([exe, "-v"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "?"
    found = re.search(r"version\s+(\S+)", done.stderr + done.stdout)
    return found.group(1) if found else "?"


def available_tools() -> tuple[list[Tool], list[str]]:
    """The tools this interpreter can run, and a note for each one that is absent."""
    py = sys.executable
    tools = [Tool("pdfindex", (py, "-m", "pdfindex.cli.main", "extract", FILE),
                  _dist_version("pdfindex") or "?", quick=True)]
    notes: list[str] = []
    candidates = (("pdfminer.six", "pdfminer", "pdfminer.six", _PDFMINER, True),
                  ("pypdf", "pypdf", "pypdf", _PYPDF, False),
                  ("pymupdf", "pymupdf", "pymupdf", _PYMUPDF, False))
    for name, module, dist, code, quick in candidates:
        if importlib.util.find_spec(module) is None:
            notes.append(f"{name}: not installed in {py}, skipped")
            continue
        tools.append(Tool(name, (py, "-c", code, FILE), _dist_version(dist) or "?", quick))
    exe = shutil.which("pdftotext")
    if exe is None:
        notes.append("pdftotext: not on PATH, skipped")
    else:
        # "-" as output file: text to stdout, never a FILE.txt beside the input
        tools.append(Tool("pdftotext", (exe, "-q", "-enc", "UTF-8", FILE, "-"), _pdftotext_version(exe),
                          quick=False))
    return tools, notes


# ------------------------------------------------------------------ measuring

@dataclass(frozen=True, slots=True)
class Outcome:
    tool: str
    seconds: float | None  # best wall time so far; None when the tool failed
    error: str | None = None
    chars: int | None = None  # output size in the warm-up run
    recall: float | None = None  # share of the expected words found (generated document)


@dataclass(frozen=True, slots=True)
class Target:
    label: str
    path: Path
    pages: int
    expected: Counter[str] | None  # word counts, for the generated document


_WORD = re.compile(r"[a-z]+")


def _tokens(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text.lower()))


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"  # same, lossless output encoding for every Python tool
    return env


def _failure(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"exit {done.returncode}" + (f": {lines[-1][:100]}" if lines else "")


def _run(cmd: list[str], capture: bool, timeout: float,
         env: Mapping[str, str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, cwd=ROOT, env=env, timeout=timeout, check=False)
    return time.perf_counter() - start, done


def _warm_up(tool: Tool, target: Target, timeout: float, env: Mapping[str, str]) -> Outcome:
    """One untimed run with stdout captured: fills file and .pyc caches, checks the exit
    status and measures the output (chars; for the generated document, word recall)."""
    try:
        _, done = _run(tool.command(target.path), True, timeout, env)
    except subprocess.TimeoutExpired:
        return Outcome(tool.name, None, f"timed out after {timeout:g} s")
    if done.returncode != 0:
        return Outcome(tool.name, None, _failure(done))
    text = done.stdout.decode("utf-8", "replace")
    recall = None
    if target.expected:
        found = _tokens(text) & target.expected
        recall = sum(found.values()) / sum(target.expected.values())
    return Outcome(tool.name, float("inf"), None, len(text), recall)


def measure(tools: Sequence[Tool], target: Target, runs: int, warmup: bool, timeout: float,
            env: Mapping[str, str]) -> list[Outcome]:
    """Best wall time of ``runs`` fresh processes per tool, after an optional warm-up.

    Runs go round-robin (each tool once, then again), so a drift in machine load
    touches every tool alike instead of whichever happened to run last.
    """
    state = {t.name: _warm_up(t, target, timeout, env) if warmup
             else Outcome(t.name, float("inf")) for t in tools}
    for _ in range(runs):
        for tool in tools:
            prev = state[tool.name]
            if prev.seconds is None:  # failed already: not run again
                continue
            try:
                seconds, done = _run(tool.command(target.path), False, timeout, env)
            except subprocess.TimeoutExpired:
                state[tool.name] = replace(prev, seconds=None, error=f"timed out after {timeout:g} s")
                continue
            if done.returncode != 0:
                state[tool.name] = replace(prev, seconds=None, error=_failure(done))
            else:
                state[tool.name] = replace(prev, seconds=min(prev.seconds, seconds))
    return [state[t.name] for t in tools]


def startup_floor(runs: int, env: Mapping[str, str]) -> float:
    """Best wall time of ``python -c pass``: what every Python tool pays before importing."""
    return min(_run([sys.executable, "-c", "pass"], False, 60.0, env)[0] for _ in range(max(runs, 3)))


# ------------------------------------------------------------------ report

def _pps(target: Target, outcome: Outcome) -> float | None:
    return None if outcome.seconds is None else target.pages / outcome.seconds


def format_table(target: Target, outcomes: Sequence[Outcome], runs: int) -> str:
    size = target.path.stat().st_size
    head = f"{target.label}  ({target.pages} pages, {size / 1024:.0f} KiB)"
    cols = f"  {'tool':<14}{f'wall s (best of {runs})':>20}{'pages/s':>10}{'pdfindex / tool':>18}" \
           f"{'chars':>10}{'words':>8}"
    rows = [head, cols]
    ours = next((_pps(target, o) for o in outcomes if o.tool == "pdfindex"), None)
    for o in outcomes:
        pps = _pps(target, o)
        chars = "-" if o.chars is None else str(o.chars)
        recall = "-" if o.recall is None else f"{100 * o.recall:.1f}%"
        if o.seconds is None or pps is None:
            rows.append(f"  {o.tool:<14}{'FAILED':>20}  {o.error}")
            continue
        if o.tool == "pdfindex":
            ratio = "-"
        elif ours is None:
            ratio = "n/a"
        else:
            ratio = f"{ours / pps:.2f}x"
        rows.append(f"  {o.tool:<14}{o.seconds:>20.3f}{pps:>10.1f}{ratio:>18}{chars:>10}{recall:>8}")
    if ours is not None:
        ratios = [f"pdfindex / {o.tool} = {ours / p:.2f}x" for o in outcomes
                  if o.tool != "pdfindex" and (p := _pps(target, o)) is not None]
        if ratios:
            rows.append("  " + "; ".join(ratios))
    return "\n".join(rows)


def verdict(target: Target, outcomes: Sequence[Outcome]) -> str:
    by_tool = {o.tool: o for o in outcomes}
    ours, theirs = by_tool.get("pdfindex"), by_tool.get(TARGET_TOOL)
    if ours is None or theirs is None or ours.seconds is None or theirs.seconds is None:
        return (f"TARGET not measured: need pdfindex and {TARGET_TOOL} results on the "
                f"generated document")
    ratio = theirs.seconds / ours.seconds  # = pdfindex pages/s / pdfminer pages/s
    state = "met" if ratio >= TARGET_RATIO else "missed"
    note = "" if target.pages == DEFAULT_PAGES else \
        f" (note: the target is defined on {DEFAULT_PAGES} pages)"
    if ours.recall is not None and ours.recall < 0.99:
        note += f"; WARNING: pdfindex output holds only {100 * ours.recall:.1f}% of the words"
    return (f"TARGET {state}: pdfindex / {TARGET_TOOL} extract_text = {ratio:.2f}x pages/s on the "
            f"generated {target.pages}-page document (target >= {TARGET_RATIO:g}x){note}")


# ------------------------------------------------------------------ main

def _page_count(path: Path) -> int:
    from pdfindex.pipeline import PdfFile  # noqa: PLC0415 - after sys.path is set up; the page count pdfindex sees; the same for every tool

    return PdfFile(path).page_count


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Whole-process extraction speed of pdfindex against other extractors.")
    p.add_argument("files", nargs="*", type=Path, help="extra PDF files to time (read only)")
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                   help=f"timed runs per tool and file, best kept (default {DEFAULT_RUNS})")
    p.add_argument("--quick", action="store_true",
                   help="smoke check: 1 run, no warm-up, pdfindex and pdfminer.six only")
    p.add_argument("--tools", help="comma-separated subset of tools (pdfindex is always run)")
    p.add_argument("--pages", type=int, default=DEFAULT_PAGES,
                   help=f"pages of the generated document (default {DEFAULT_PAGES})")
    p.add_argument("--out", type=Path, help="write the generated document here (kept)")
    p.add_argument("--no-generated", action="store_true", help="time only the given files")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds allowed per run (default {DEFAULT_TIMEOUT:g})")
    args = p.parse_args(argv)
    if args.runs < 1 or args.pages < 1:
        p.error("--runs and --pages must be at least 1")
    if args.no_generated and not args.files:
        p.error("--no-generated needs at least one file")
    return args


def _select(tools: list[Tool], args: argparse.Namespace) -> tuple[list[Tool], list[str]]:
    notes: list[str] = []
    if args.tools:
        wanted = {t.strip() for t in args.tools.split(",") if t.strip()} | {"pdfindex"}
        unknown = wanted - {t.name for t in tools}
        if unknown:
            notes.append(f"unknown or unavailable tools ignored: {', '.join(sorted(unknown))}")
        tools = [t for t in tools if t.name in wanted]
    if args.quick:
        tools = [t for t in tools if t.quick]
    return tools, notes


def _targets(args: argparse.Namespace, workdir: Path) -> tuple[list[Target], list[str]]:
    targets: list[Target] = []
    notes: list[str] = []
    if not args.no_generated:
        out = args.out or workdir / f"generated-{args.pages}p.pdf"
        doc = build_document(out, args.pages)
        expected: Counter[str] = Counter()
        for page in doc.pages:
            expected += _tokens("\n".join(page.text_lines))
        targets.append(Target(f"generated {doc.page_count}-page document: {out}", out,
                              doc.page_count, expected))
    for path in args.files:
        try:
            pages = _page_count(path)
        except Exception as exc:  # noqa: BLE001 - a file we cannot count is skipped, not fatal
            notes.append(f"{path}: skipped, cannot count pages: {exc}")
            continue
        if pages == 0:
            notes.append(f"{path}: skipped, no pages")
            continue
        targets.append(Target(str(path), path, pages, None))
    return targets, notes


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    runs = 1 if args.quick else args.runs
    warmup = not args.quick
    tools, notes = available_tools()
    tools, more = _select(tools, args)
    notes += more
    env = _child_env()
    with tempfile.TemporaryDirectory(prefix="pdfindex-bench-") as tmp:
        targets, more = _targets(args, Path(tmp))
        notes += more
        print(f"python {platform.python_version()} ({sys.executable}), {platform.machine()}, "
              f"{os.cpu_count()} CPUs; runs={runs}, warm-up={'yes' if warmup else 'no'}")
        print("tools: " + ", ".join(f"{t.name} {t.version}" for t in tools))
        for note in notes:
            print(f"note: {note}")
        print(f"python start-up floor (python -c pass): {startup_floor(runs, env):.3f} s")
        verdict_line: str | None = None
        for target in targets:
            outcomes = measure(tools, target, runs, warmup, args.timeout, env)
            print()
            print(format_table(target, outcomes, runs))
            if target.expected is not None:
                verdict_line = verdict(target, outcomes)
        print()
        print(verdict_line or "TARGET not measured: the generated document was not timed")
        print("chars: output size in the warm-up run; words: share of the generated text's "
              "words found in it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
