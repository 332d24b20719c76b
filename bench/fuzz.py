"""Fuzzing extraction with mutants of the real-world corpus, against PyMuPDF in the same run.

Each mutant is one corpus file (``../shared/corpus/realworld/*.pdf``, read in place,
never copied into the repository) with one damage applied: a truncation at a random
offset, byte flips, a deleted, duplicated or zeroed range, a broken ``startxref`` or
xref entry, a /Prev loop, a lying /Length, /N or /First. Mutant ``i`` of seed ``S``
depends on nothing else (``random.Random(f"{S}:{i}")``), so any one can be rebuilt
alone (``--only I --keep DIR``).

For each mutant, our extraction (``pipeline.extract``) and PyMuPDF run in fresh child
processes under the same time limit and address-space cap. Ours is classified as:

* ``text``: some page text came out; ``empty``: it opened, no text;
* ``error``: it exited with our one-line error (an ``ExtractionError``);
* ``traceback``: any other exception escaped ``pipeline.extract`` (or the child died
  without our one-line error);
* ``hang``: the time limit was hit.

Peak RSS is the child's own (``wait4``). Files with text are counted for both tools;
the target is 0 tracebacks, 0 hangs and at least PyMuPDF's count of files with text.

Usage, from the project root, through the installed package (or as ``python -m
bench.fuzz``)::

    .venv/bin/python bench/fuzz.py [--count 1000] [--seed 1] [--timeout 30] [--jobs 1]
    .venv/bin/python bench/fuzz.py --quick          # a few mutants, for a smoke test
    .venv/bin/python bench/fuzz.py --only 17 --keep /tmp/mutants   # rebuild one mutant
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PDFINDEX_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "realworld"
DEFAULT_COUNT = 1000
DEFAULT_SEED = 1
DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 2048
QUICK_COUNT = 6
#: Our child's exit status for a document-level ExtractionError (its one line on stderr).
EXIT_EXTRACTION_ERROR = 2
#: The child's exit status for a MemoryError under the address-space cap.
EXIT_MEMORY = 3

Mutator = Callable[[bytes, random.Random], bytes]


# ------------------------------------------------------------------ mutations

def _span(rng: random.Random, size: int, longest: int) -> tuple[int, int]:
    length = rng.randint(1, max(1, min(longest, size // 4)))
    start = rng.randrange(0, max(1, size - length))
    return start, length


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(1, len(data))]


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def delete_range(data: bytes, rng: random.Random) -> bytes:
    start, length = _span(rng, len(data), 4096)
    return data[:start] + data[start + length:]


def duplicate_range(data: bytes, rng: random.Random) -> bytes:
    start, length = _span(rng, len(data), 4096)
    at = rng.randrange(start, len(data) + 1)
    return data[:at] + data[start:start + length] + data[at:]


def zero_range(data: bytes, rng: random.Random) -> bytes:
    start, length = _span(rng, len(data), 4096)
    return data[:start] + b"\0" * length + data[start + length:]


def _replace_number(data: bytes, rng: random.Random, pattern: bytes, lie: Callable[[int], int]) -> bytes:
    """One match of ``pattern`` (its group 1 a number) given a lying value; a flip
    when the file has no match (its dictionaries are all compressed, say)."""
    matches = list(re.finditer(pattern, data))
    if not matches:
        return flip_bytes(data, rng)
    m = rng.choice(matches)
    value = int(m.group(1))
    return data[:m.start(1)] + str(max(0, lie(value))).encode() + data[m.end(1):]


def _lie(rng: random.Random) -> Callable[[int], int]:
    return rng.choice([
        lambda v: v + rng.randint(1, 10), lambda v: v - rng.randint(1, 10), lambda v: 0,
        lambda v: v * 1000 + 7, lambda v: rng.randrange(0, 1 << 31),
    ])


def bad_startxref(data: bytes, rng: random.Random) -> bytes:
    return _replace_number(data, rng, rb"startxref\s+(\d+)", _lie(rng))


def bad_xref_entry(data: bytes, rng: random.Random) -> bytes:
    return _replace_number(data, rng, rb"(?m)^(\d{10}) \d{5} n", _lie(rng))


def prev_loop(data: bytes, rng: random.Random) -> bytes:
    """An appended xref section whose /Prev points back to itself or to a section
    pointing back to it."""
    root = re.findall(rb"/Root\s+(\d+\s+\d+\s+R)", data)
    start = len(data) + 1
    two = rng.random() < 0.5
    second = start + 80
    section = b"\nxref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Root %s /Prev %d >>\n" % (
        root[-1] if root else b"1 0 R", second if two else start)
    section = section.ljust(80, b" ")
    if two:
        section += b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Prev %d >>\n" % start
    return data + section + b"startxref\n%d\n%%%%EOF\n" % start


def lying_length(data: bytes, rng: random.Random) -> bytes:
    return _replace_number(data, rng, rb"/Length\s+(\d+)(?!\s+\d+\s+R)", _lie(rng))


def lying_n(data: bytes, rng: random.Random) -> bytes:
    return _replace_number(data, rng, rb"/N\s+(\d+)", _lie(rng))


def lying_first(data: bytes, rng: random.Random) -> bytes:
    return _replace_number(data, rng, rb"/First\s+(\d+)", _lie(rng))


def no_trailer(data: bytes, rng: random.Random) -> bytes:
    """Everything after the last ``endobj``: the xref and trailer gone."""
    end = data.rfind(b"endobj")
    return data[:end + 6] if end > 0 else truncate(data, rng)


MUTATORS: dict[str, Mutator] = {
    "truncate": truncate, "flip": flip_bytes, "delete": delete_range, "duplicate": duplicate_range,
    "zero": zero_range, "startxref": bad_startxref, "xref-entry": bad_xref_entry, "prev-loop": prev_loop,
    "length": lying_length, "objstm-N": lying_n, "objstm-First": lying_first, "no-trailer": no_trailer,
}
#: Truncation is the damage seen most in the wild (interrupted downloads): it gets
#: a larger share.
WEIGHTS: dict[str, int] = {name: 1 for name in MUTATORS} | {"truncate": 4, "flip": 2}


@dataclass(frozen=True)
class Mutant:
    index: int
    source: str
    kind: str
    data: bytes


def corpus_files(corpus: Path) -> list[Path]:
    files = sorted(p for p in corpus.glob("*.pdf") if p.is_file() and p.stat().st_size > 0)
    if not files:
        raise SystemExit(f"fuzz: no PDF files in {corpus} (set PDFINDEX_SHARED)")
    return files


def make_mutant(files: Sequence[Path], seed: int, index: int) -> Mutant:
    rng = random.Random(f"{seed}:{index}")
    path = rng.choice(list(files))
    kinds = sorted(MUTATORS)
    kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
    data = path.read_bytes()
    return Mutant(index, path.name, kind, MUTATORS[kind](data, rng) if len(data) > 1 else data)


# ------------------------------------------------------------------ children

def child_ours(path: str) -> int:
    """Our extraction of one file: JSON on stdout, our one line on stderr for an
    ExtractionError; anything else escapes (a traceback, which the parent counts)."""
    from pdfindex import pipeline  # noqa: PLC0415 - only the child pays for it

    try:
        doc = pipeline.extract(path)
    except pipeline.ExtractionError as exc:
        print(f"pdfindex: {exc}", file=sys.stderr)
        return EXIT_EXTRACTION_ERROR
    except MemoryError:
        print("pdfindex: memory cap hit", file=sys.stderr)
        return EXIT_MEMORY
    chars = sum(len(p.text.strip()) for p in doc.pages)
    print(json.dumps({"pages": len(doc.pages), "chars": chars}))
    return 0


def child_mupdf(path: str) -> int:
    import pymupdf  # noqa: PLC0415 - only the child pays for it

    pymupdf.TOOLS.mupdf_display_errors(False)
    chars = pages = 0
    try:
        with pymupdf.open(path, filetype="pdf") as doc:
            for page in doc:
                pages += 1
                chars += len(page.get_text().strip())
    except Exception as exc:  # noqa: BLE001 - a failed open is PyMuPDF's "error"
        print(f"mupdf: {type(exc).__name__}: {exc}"[:200], file=sys.stderr)
        return EXIT_EXTRACTION_ERROR
    print(json.dumps({"pages": pages, "chars": chars}))
    return 0


@dataclass
class Run:
    outcome: str  # text, empty, error, traceback, hang, memory
    seconds: float
    rss_mb: float
    detail: str = ""


def limit_self(memory_mb: int) -> None:
    """In the child: below the parent in priority, and capped, so a mutant that
    explodes fails alone instead of taking the machine."""
    os.nice(5)
    if memory_mb:
        cap = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def run_child(tool: str, path: Path, timeout: float, memory_mb: int) -> Run:
    """One tool on one file in a fresh child process of this script (run as a module
    from the project root: it extracts with the checkout's own pdfindex)."""
    return run_command([sys.executable, "-m", "bench.fuzz", "--child", tool, str(path),
                        "--memory-mb", str(memory_mb)], timeout)


def run_command(cmd: Sequence[str], timeout: float) -> Run:
    """Run a child and classify it; wait4 gives its own peak RSS (not the sum of
    every child's, as RUSAGE_CHILDREN would)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ROOT)
        hang = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                hang = True
                break
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        seconds = time.monotonic() - start
        rss = usage.ru_maxrss / 1024
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if hang:
        return Run("hang", seconds, rss, f"time limit {timeout:g} s")
    code = proc.returncode
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if code == 0:
        try:
            chars = int(json.loads(stdout.strip().splitlines()[-1])["chars"])
        except (ValueError, KeyError, IndexError, TypeError):
            return Run("traceback", seconds, rss, "no result on stdout")
        return Run("text" if chars else "empty", seconds, rss)
    if code == EXIT_MEMORY:
        return Run("memory", seconds, rss, lines[-1] if lines else "")
    if code == EXIT_EXTRACTION_ERROR and len(lines) == 1:
        return Run("error", seconds, rss, lines[0][:300])
    return Run("traceback", seconds, rss, (lines[-1] if lines else f"exit status {code}")[:300])


# ------------------------------------------------------------------ the run

@dataclass
class Result:
    index: int
    source: str
    kind: str
    size: int
    ours: Run
    mupdf: Run


def fuzz_one(files: Sequence[Path], seed: int, index: int, timeout: float, memory_mb: int,
             keep: Path | None, keep_always: bool = False) -> Result:
    """One mutant through both tools; kept on disk when it failed us (or always)."""
    mutant = make_mutant(files, seed, index)
    with tempfile.TemporaryDirectory(prefix="pdfindex-fuzz-") as tmp:
        path = Path(tmp) / f"mutant-{index}.pdf"
        path.write_bytes(mutant.data)
        ours = run_child("ours", path, timeout, memory_mb)
        mupdf = run_child("mupdf", path, timeout, memory_mb)
        if keep is not None and (ours.outcome in ("traceback", "hang", "memory") or keep_always):
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"seed{seed}-{index}-{mutant.kind}-{mutant.source}").write_bytes(mutant.data)
    return Result(index, mutant.source, mutant.kind, len(mutant.data), ours, mupdf)


def table(results: Sequence[Result]) -> str:
    """Per mutation kind: mutants, files with text for both tools, our outcomes."""
    by_kind: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_kind[r.kind].append(r)
    head = ("| mutation | mutants | text: pdfindex | text: PyMuPDF | tracebacks | hangs | memory "
            "| one-line errors | peak RSS (MB) |")
    lines = [head, "|" + "---|" * 9]

    def row(name: str, rs: Sequence[Result]) -> str:
        c = Counter(r.ours.outcome for r in rs)
        mu = sum(r.mupdf.outcome == "text" for r in rs)
        rss = max((r.ours.rss_mb for r in rs), default=0.0)
        return (f"| {name} | {len(rs)} | {c['text']} | {mu} | {c['traceback']} | {c['hang']} | {c['memory']} "
                f"| {c['error']} | {rss:.0f} |")

    for kind in sorted(by_kind):
        lines.append(row(kind, by_kind[kind]))
    lines.append(row("**all**", results))
    return "\n".join(lines)


def summary(results: Sequence[Result]) -> dict[str, object]:
    ours = sum(r.ours.outcome == "text" for r in results)
    mupdf = sum(r.mupdf.outcome == "text" for r in results)
    c = Counter(r.ours.outcome for r in results)
    return {
        "mutants": len(results), "text_pdfindex": ours, "text_pymupdf": mupdf,
        "ratio": round(ours / mupdf, 3) if mupdf else None,
        "tracebacks": c["traceback"], "hangs": c["hang"], "memory": c["memory"],
        "errors": c["error"], "empty": c["empty"],
        "only_pymupdf_text": sum(r.mupdf.outcome == "text" and r.ours.outcome != "text" for r in results),
        "only_pdfindex_text": sum(r.ours.outcome == "text" and r.mupdf.outcome != "text" for r in results),
        "peak_rss_mb": round(max((r.ours.rss_mb for r in results), default=0.0), 1),
        "slowest_s": round(max((r.ours.seconds for r in results), default=0.0), 2),
        "mupdf_hangs_or_crashes": sum(r.mupdf.outcome in ("hang", "traceback", "memory") for r in results),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=DEFAULT_COUNT, help="mutants to run (default %(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed (default %(default)s)")
    p.add_argument("--only", type=int, action="append", help="run only mutant I (repeatable)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per child (default %(default)s)")
    p.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB,
                   help="address-space cap per child, 0 for none (default %(default)s)")
    p.add_argument("--jobs", type=int, default=1, help="mutants in parallel (default %(default)s)")
    p.add_argument("--corpus", type=Path, default=CORPUS, help="folder of PDFs to mutate (read only)")
    p.add_argument("--keep", type=Path, help="write mutants that gave a traceback, hang or memory hit here")
    p.add_argument("--json", type=Path, help="write every result here")
    p.add_argument("--quick", action="store_true", help=f"{QUICK_COUNT} mutants, 20 s limit (a smoke test)")
    p.add_argument("--child", nargs=2, metavar=("TOOL", "FILE"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.count < 0 or args.jobs < 1 or args.timeout <= 0:
        p.error("--count must be >= 0, --jobs >= 1 and --timeout > 0")
    if args.quick:
        args.count, args.timeout = QUICK_COUNT, min(args.timeout, 20.0)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        tool, path = args.child
        limit_self(args.memory_mb)
        return child_ours(path) if tool == "ours" else child_mupdf(path)
    files = corpus_files(args.corpus)
    indices = args.only if args.only else list(range(args.count))
    print(f"fuzz: {len(indices)} mutants of {len(files)} files in {args.corpus}, seed {args.seed}, "
          f"{args.timeout:g} s and {args.memory_mb} MB per child, {args.jobs} job(s)", flush=True)
    started = time.monotonic()
    results: list[Result] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(fuzz_one, files, args.seed, i, args.timeout, args.memory_mb, args.keep,
                               bool(args.only)) for i in indices]
        for done, future in enumerate(futures, 1):
            r = future.result()
            results.append(r)
            if r.ours.outcome in ("traceback", "hang", "memory"):
                print(f"  #{r.index} {r.kind} {r.source}: {r.ours.outcome}: {r.ours.detail}", flush=True)
            if done % 50 == 0:
                print(f"  {done}/{len(indices)} mutants, {time.monotonic() - started:.0f} s", flush=True)
    print()
    print(table(results))
    print()
    facts = summary(results)
    print(json.dumps(facts))
    if args.json:
        args.json.write_text(json.dumps({"summary": facts, "results": [asdict(r) for r in results]}, indent=1))
    return 1 if facts["tracebacks"] or facts["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
