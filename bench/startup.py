"""Start-up cost of each ``pdfindex`` command: import time measured with
``python -X importtime`` (the sum of top-level imports), and whole-process time
minus ``python -c pass``, best of N runs after one that writes the bytecode (as an
installed package has it), on a tiny index built here. From the project root (or as
``python -m bench.startup``)::

    .venv/bin/python bench/startup.py [--runs N]

Target (issue 8): under 150 ms of import time for ``search``, ``list`` and ``status``.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "search": ["search", "revenue"],
    "list": ["list", "--needs-ocr"],
    "status": ["status"],
    "--version": ["--version"],
}
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def _env(home: str) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE would make every run compile our modules from source;
    # an installed pdfindex has its bytecode (pip compiles it; an editable install
    # writes it on first import), so the first, untimed run writes it here too.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PDFINDEX_", "XDG_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=home, PYTHONPATH=str(ROOT))
    return env


def import_ms(args: list[str], env: dict[str, str]) -> tuple[float, list[tuple[float, str]]]:
    """Total import time of the command (top-level modules' cumulative times) and
    its five most expensive top-level imports."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "pdfindex.cli.main", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    top: list[tuple[float, str]] = []
    for line in proc.stderr.splitlines():
        m = _LINE.match(line)
        if m and not m.group(3):  # not indented: a top-level import
            top.append((int(m.group(2)) / 1000, m.group(4)))
    # site and encodings are imported by every interpreter, `python -c pass` too
    own = [(ms, name) for ms, name in top if name not in {"site", "encodings", "_frozen_importlib_external"}]
    return sum(ms for ms, _ in own), sorted(own, reverse=True)[:5]


def wall_ms(argv: list[str], env: dict[str, str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=False)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from pdfindex.indexer import DocumentRecord, PageIndex, PageRecord, Status  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index"
        ix = PageIndex(index)
        page = PageRecord(number=1, text="revenue grew", coverage=1.0, glyphs=11, unresolved=0, needs_ocr=False)
        ix.add(DocumentRecord(doc_hash="0" * 64, path="/a.pdf", status=Status.INDEXED, page_count=1), [page])
        env = _env(tmp)
        baseline = wall_ms([sys.executable, "-c", "pass"], env, args.runs)
        print(f"python -c pass: {baseline:.0f} ms (best of {args.runs})")
        print("| command | import time (-X importtime) | process time minus `python -c pass` | largest imports |")
        print("|---|---|---|---|")
        for name, argv in COMMANDS.items():
            full = [*argv, "--index", str(index)] if name != "--version" else argv
            import_ms(full, env)  # writes the bytecode
            imports = [import_ms(full, env) for _ in range(args.runs)]
            best, biggest = min(imports)
            wall = wall_ms([sys.executable, "-m", "pdfindex.cli.main", *full], env, args.runs) - baseline
            print(f"| `pdfindex {' '.join(argv)}` | {best:.0f} ms | {wall:.0f} ms | "
                  + ", ".join(f"{n} {ms:.0f}" for ms, n in biggest) + " |")


if __name__ == "__main__":
    main()
