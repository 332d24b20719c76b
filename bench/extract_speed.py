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

The default document is bench/corpus.py's ``build_document`` (written with
``tests/pdfwriter.py``): 150 pages of English-like text set the way TeX and office
exports do it (standard-14 Helvetica/Times, a subset-style TrueType font with /Widths
and a ToUnicode map, word gaps as space characters or TJ numbers, kerning, Flate
streams).  The issue's target is pdfindex >= 3x the pages/second of pdfminer.six
``extract_text`` on it.

Usage, from the project root (``-m``: the bench imports bench/corpus.py and the test
helpers beside the installed package)::

    .venv/bin/python -m bench.extract_speed [--runs 3] [--quick] [--out DOC.pdf] [FILE.pdf ...]
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import platform
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

from bench.corpus import build_document
from pdfindex.pipeline import PdfFile

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 3.0
TARGET_TOOL = "pdfminer.six"
DEFAULT_PAGES = 150
DEFAULT_RUNS = 3
DEFAULT_TIMEOUT = 900.0

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
    """The page count pdfindex sees: the same for every tool."""
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
