"""Extraction CPU per page, in process: this tree against another checkout of pdfindex
(the code before a change), alternated in one run.

``bench/extract_speed.py`` times whole processes against other tools; this one
answers the question a change to the extraction pipeline asks: how much CPU does a
page cost now, against before, with interpreter start-up and imports left out.

* Each tree runs in a child process of its own (``PYTHONPATH`` and working
  directory at that tree), which calls ``pdfindex.pipeline.extract`` on each file
  ``--runs`` times and reports the least ``time.process_time`` per file: CPU, not
  wall time, since the machine may be shared, and the least because noise only adds.
* Trees alternate, ``--rounds`` times, and the least of all rounds is kept, so a
  burst of load on the machine hits both trees alike rather than one.
* Files under a ``producers`` folder are also summed into one line.

Make the other tree with ``git worktree add /tmp/extract_base <commit>``. Usage, from
the project root::

    .venv/bin/python -m bench.extract_profile --base /tmp/extract_base [--rounds 5] [--runs 2] FILE.pdf ...
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Run with the tree's own pdfindex: a string, since the other tree may not have this file.
_CHILD = """\
import gc, json, sys, time
from pdfindex.pipeline.extract import extract
runs, out = int(sys.argv[1]), {}
for path in sys.argv[2:]:
    best, pages = None, 0
    for _ in range(runs):
        gc.collect()
        start = time.process_time()
        pages = len(extract(path).pages)
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    out[path] = [best, pages]
print(json.dumps(out))
"""

Best = dict[str, tuple[float, int]]  # file -> (CPU seconds, pages)


def measure(tree: Path, files: list[str], runs: int) -> Best:
    """One child's least CPU seconds per file, and its page count."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(runs), *files], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    return {path: (seconds, pages) for path, (seconds, pages) in json.loads(done.stdout).items()}


def alternate(trees: dict[str, Path], files: list[str], rounds: int, runs: int) -> dict[str, Best]:
    best: dict[str, Best] = {name: {} for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            for path, (seconds, pages) in measure(tree, files, runs).items():
                known = best[name].get(path)
                best[name][path] = (seconds if known is None else min(seconds, known[0]), pages)
    return best


def _line(label: str, old: float, new: float, pages: int) -> str:
    per = (f"{old / pages * 1000:8.2f} -> {new / pages * 1000:8.2f} ms/page" if pages
           else f"{old * 1000:8.2f} -> {new * 1000:8.2f} ms (no pages)")
    return f"{label:48s} {pages:5d} pages  {per}  new/old {new / old:.3f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="PDF files to extract")
    p.add_argument("--base", type=Path, required=True, help="the other checkout (the code before)")
    p.add_argument("--rounds", type=int, default=5, help="alternations of the two trees (default 5)")
    p.add_argument("--runs", type=int, default=2, help="extractions of each file per child (default 2)")
    args = p.parse_args(argv)
    files = [str(Path(f).resolve()) for f in args.files]
    best = alternate({"old": args.base.resolve(), "new": ROOT}, files, args.rounds, args.runs)
    old, new = best["old"], best["new"]
    print(f"CPU per page, least of {args.rounds} rounds x {args.runs} runs; old: {args.base}, new: {ROOT}")
    for path in files:
        print(_line(Path(path).name, old[path][0], new[path][0], old[path][1]))
    producers = [f for f in files if Path(f).parent.name == "producers"]
    if producers:
        print(_line(f"producers ({len(producers)} files, summed)", sum(old[f][0] for f in producers),
                    sum(new[f][0] for f in producers), sum(old[f][1] for f in producers)))
    print(_line("all files, summed", sum(old[f][0] for f in files), sum(new[f][0] for f in files),
                sum(old[f][1] for f in files)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
