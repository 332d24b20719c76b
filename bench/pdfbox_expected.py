"""PDFBox's expected texts: every extractor scored against the text Apache PDFBox's own
text-stripper tests expect of their input PDFs (issue 23's target).

PDFBox keeps, beside each ``X.pdf`` of ``pdfbox/src/test/resources/input/``, the text
its ``PDFTextStripper`` must produce: ``X.pdf.txt`` in content order (its default) and
``X.pdf-sorted.txt`` with ``setSortByPosition(true)``. TestTextStripper takes every
``*.pdf`` directly in that folder (not its sub-folders; the name's case as given) and
reads both files as UTF-8 (they begin with a byte order mark). Those texts are a mature
extractor's considered output, checked by people when a bug was fixed, not a truth
from the sources; where every extractor differs from them, PDFBox may be the odd one.
The files are Apache-2.0 and are not part of this project or of ``../shared``: get
them from a PDFBox checkout (docs/corpus.md gives the ``git archive`` line).

Systems, each on every file under a time limit (``--timeout``), a crash or a timeout
recorded for that file and scoring 0, the run going on (bench/peer_agreement.py's
runners, imported): **pdfindex** (``python -m pdfindex extract --ocr off FILE`` in a
child per file, from the tree this interpreter imports it from, printed with its
commit), **pdfminer.six**, **pypdf**, **pymupdf** (one long-lived child per library)
and **pdftotext** (poppler, plain mode).

Score: the producers scorer's word F1 (``../shared/corpus/producers/score.py``,
``score(expected, output)``: NFKC words, punctuation stripped at the ends, CJK as
character bigrams), with the unsorted ``.pdf.txt`` as the reference (every system here
writes content order, more or less); F1 against ``-sorted.txt`` is reported beside it.
Per system: the mean over files, and the mean weighted by the reference's word count
(a one-word file weighs one word).

A file is LISTED when pdfindex's F1 is more than ``--margin`` (0.02) below the best
other system's, unless every system, pdfindex included, is more than ``--all-wrong``
(0.1) below 1.0 there (all disagree with the reference: then PDFBox is as likely wrong
as everyone else). A listed file shows the first words pdfindex has beyond the
reference and the reference's words it lacks. The target (issue 23): pdfindex's mean
F1 at least the best other system's, and no file listed.

Usage, from the project root::

    .venv/bin/python -m bench.pdfbox_expected --input DIR [--files GLOB ...] [--peers a,b]
        [--margin 0.02] [--all-wrong 0.1] [--timeout S] [--json PATH] [--dump DIR]
"""
from __future__ import annotations

import argparse
import datetime
import json
import shlex
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.ocr import load_scorer
from bench.peer_agreement import (DEFAULT_SCORER, OURS, PEERS, Extraction, Hint, diff_hint, dump_texts, find_systems,
                                  Systems, select_files, shown, token_list, versions)

DEFAULT_MARGIN = 0.02
DEFAULT_ALL_WRONG = 0.1
DEFAULT_TIMEOUT = 300.0
EXPECTED_SUFFIX = ".txt"  # X.pdf -> X.pdf.txt: content order (TestTextStripper, bSort false)
SORTED_SUFFIX = "-sorted.txt"  # X.pdf -> X.pdf-sorted.txt: setSortByPosition(true)


# ------------------------------------------------------------------ the files

@dataclass(frozen=True, slots=True)
class Case:
    """One input PDF and the texts PDFBox expects of it (None where it keeps none)."""

    pdf: Path
    expected: Path | None
    sorted: Path | None


@dataclass
class Folder:
    """What an input folder holds: the cases, and the files TestTextStripper's own
    rule does not pair (said in the report so that a renamed file is not silently lost)."""

    cases: list[Case]
    without_expected: list[str] = field(default_factory=list)  # PDFs without X.pdf.txt
    unpaired: list[str] = field(default_factory=list)  # text files naming no PDF here


def pair_files(folder: Path) -> Folder:
    """TestTextStripper's pairing: every ``*.pdf`` directly in ``folder`` (a
    case-sensitive suffix, as Java's ``endsWith``), with ``X.pdf.txt`` and
    ``X.pdf-sorted.txt`` beside it. PDFs with no unsorted text are set aside (the
    reference is the unsorted one); a text file that pairs with no PDF (PDFBox's
    ``eu-001.pdf-tabula.txt`` belongs to another test) is named, not used."""
    pdfs = sorted(p for p in folder.iterdir() if p.name.endswith(".pdf") and p.is_file())
    found = Folder([])
    used: set[str] = set()
    for pdf in pdfs:
        expected, by_position = folder / (pdf.name + EXPECTED_SUFFIX), folder / (pdf.name + SORTED_SUFFIX)
        expected_path = expected if expected.is_file() else None
        sorted_path = by_position if by_position.is_file() else None
        used.update(p.name for p in (expected_path, sorted_path) if p is not None)
        if expected_path is None:
            found.without_expected.append(pdf.name)
            continue
        found.cases.append(Case(pdf, expected_path, sorted_path))
    found.unpaired = sorted(p.name for p in folder.iterdir()
                            if p.is_file() and p.name.endswith(".txt") and p.name not in used)
    return found


def read_expected(path: Path) -> str:
    """PDFBox's expected text: UTF-8 behind a byte order mark (TestTextStripper writes
    one and reads past it); a stray undecodable byte becomes U+FFFD, not an error."""
    return path.read_bytes().decode("utf-8-sig", "replace")


# ------------------------------------------------------------------ scoring

def is_listed(f1: Mapping[str, float], margin: float = DEFAULT_MARGIN, all_wrong: float = DEFAULT_ALL_WRONG) -> bool:
    """pdfindex more than ``margin`` below the best other system, unless every system
    (pdfindex too) is more than ``all_wrong`` below 1.0: where all disagree with the
    reference, the reference is the suspect. ``f1`` maps every system to its F1
    (0 for one that failed); without another system nothing is listed."""
    others = [v for name, v in f1.items() if name != OURS]
    if not others:
        return False
    if all(v < 1.0 - all_wrong for v in f1.values()):
        return False
    return max(others) - f1[OURS] > margin


def all_disagree(f1: Mapping[str, float], all_wrong: float = DEFAULT_ALL_WRONG) -> bool:
    return bool(f1) and all(v < 1.0 - all_wrong for v in f1.values())


@dataclass
class FileResult:
    """One file: the reference's size, each system's run and scores, the verdict."""

    file: str
    reference_tokens: int
    sorted_tokens: int | None  # None: PDFBox keeps no sorted text for it
    # system -> status, error, seconds, tokens, f1, precision, recall, order, f1_sorted, order_sorted
    systems: dict[str, dict[str, Any]]
    verdict: str  # listed, ok, all disagree, empty reference
    hint: Hint | None = None

    def f1(self, sorted_reference: bool = False) -> dict[str, float]:
        key = "f1_sorted" if sorted_reference else "f1"
        return {s: v[key] for s, v in self.systems.items() if v.get(key) is not None}


def judge(case: Case, runs: Mapping[str, Extraction], scorer: ModuleType, margin: float = DEFAULT_MARGIN,
          all_wrong: float = DEFAULT_ALL_WRONG) -> FileResult:
    """One file's scores against its expected texts, and its verdict. A system without
    text scores 0 (a crash is a miss, as in the producers scorer); a reference without
    words cannot score anyone and is reported as such."""
    assert case.expected is not None
    reference = read_expected(case.expected)
    by_position = read_expected(case.sorted) if case.sorted is not None else None
    ref_tokens = token_list(scorer, reference)
    systems: dict[str, dict[str, Any]] = {}
    for name, run in runs.items():
        text = run.text or ""
        out = scorer.score(reference, text)
        against_sorted = None if by_position is None else scorer.score(by_position, text)
        status = run.failure or ("ok" if out.output_tokens else "empty")
        systems[name] = {"status": status, "error": run.error, "seconds": round(run.seconds, 3),
                         "tokens": out.output_tokens, "f1": out.f1, "precision": out.precision,
                         "recall": out.recall, "order": out.order,
                         "f1_sorted": None if against_sorted is None else against_sorted.f1,
                         "order_sorted": None if against_sorted is None else against_sorted.order}
    sorted_tokens = None if by_position is None else len(token_list(scorer, by_position))
    result = FileResult(case.pdf.name, len(ref_tokens), sorted_tokens, systems, "ok")
    if not ref_tokens:
        result.verdict = "empty reference"
        return result
    f1 = result.f1()
    if OURS in f1 and is_listed(f1, margin, all_wrong):
        result.verdict = "listed"
    elif all_disagree(f1, all_wrong):
        result.verdict = "all disagree"
    if OURS in runs:
        ours = token_list(scorer, runs[OURS].text or "")
        result.hint = diff_hint(ours, {"PDFBox": ref_tokens}, {})
    return result


@dataclass(frozen=True, slots=True)
class Means:
    """One system over the scored files: F1's plain mean, its mean weighted by the
    reference's words, F1 against the sorted texts, and the scorer's order (the
    sequence-match ratio of the tokens, which F1 as a bag of words cannot see) against
    either. Files without a sorted text are left out of the sorted means."""

    mean: float
    weighted: float
    mean_sorted: float | None
    order: float
    order_sorted: float | None
    files: int


def means(results: Sequence[FileResult], systems: Sequence[str]) -> dict[str, Means]:
    scored = [r for r in results if r.verdict != "empty reference"]
    out: dict[str, Means] = {}
    if not scored:
        return out
    words = sum(r.reference_tokens for r in scored)
    def mean_of(system: str, key: str) -> float | None:
        values = [r.systems[system][key] for r in scored if r.systems[system][key] is not None]
        return statistics.fmean(values) if values else None

    for s in systems:
        f1 = [r.systems[s]["f1"] for r in scored]
        weighted = sum(v * r.reference_tokens for v, r in zip(f1, scored, strict=True)) / words
        out[s] = Means(statistics.fmean(f1), weighted, mean_of(s, "f1_sorted"),
                       statistics.fmean(r.systems[s]["order"] for r in scored), mean_of(s, "order_sorted"),
                       len(scored))
    return out


def target(summary: Mapping[str, Means], results: Sequence[FileResult]) -> tuple[bool, str]:
    """Issue 23's target: pdfindex's mean at least the best other's, and no file listed."""
    others = {s: m for s, m in summary.items() if s != OURS}
    if OURS not in summary or not others:
        return False, "target not judged (pdfindex and at least one other system are needed)"
    best = max(others, key=lambda s: others[s].mean)
    listed = sum(r.verdict == "listed" for r in results)
    met = summary[OURS].mean >= others[best].mean and not listed
    return met, (f"target {'met' if met else 'NOT met'}: pdfindex mean {summary[OURS].mean:.3f}, best other "
                 f"{best} {others[best].mean:.3f}; {listed} file(s) listed")


# ------------------------------------------------------------------ report

def _cell(value: float | None) -> str:
    return "    -" if value is None else f"{value:.3f}"


def _col(system: str) -> int:
    return max(9, len(system))


def _width(results: Sequence[FileResult]) -> int:
    return max([len(r.file) for r in results] + [17])


def table(results: Sequence[FileResult], systems: Sequence[str], sorted_reference: bool) -> list[str]:
    """One row a file: the reference's words, then each system's F1."""
    width = _width(results)
    mark = {"listed": " <", "all disagree": " (all disagree)", "empty reference": " (empty reference)"}
    lines = [f"  {'file':<{width}} {'words':>6} " + " ".join(f"{s:>{_col(s)}}" for s in systems)]
    for r in results:
        f1 = r.f1(sorted_reference)
        words = r.sorted_tokens if sorted_reference else r.reference_tokens
        lines.append(f"  {r.file:<{width}} {words if words is not None else '-':>6} "
                     + " ".join(f"{_cell(f1.get(s)):>{_col(s)}}" for s in systems) + mark.get(r.verdict, ""))
    return lines


def summary_lines(results: Sequence[FileResult], systems: Sequence[str]) -> list[str]:
    """The means under the table: plain, words-weighted, and against the sorted texts."""
    summary, width = means(results, systems), _width(results) + 7
    rows = (("mean", "mean"), ("words-weighted", "weighted"), ("mean, sorted ref.", "mean_sorted"),
            ("mean order", "order"), ("mean order, sorted ref.", "order_sorted"))
    return [f"  {label:<{width}} " + " ".join(f"{_cell(getattr(summary[s], key)) if s in summary else '-':>{_col(s)}}"
                                            for s in systems) for label, key in rows]


def sorted_differs(result: FileResult) -> bool:
    """Some system's F1 against the sorted text is not its F1 against the unsorted one."""
    unsorted, by_position = result.f1(), result.f1(True)
    return any(abs(by_position[s] - unsorted[s]) >= 0.0005 for s in by_position)


def hint_lines(hint: Hint) -> list[str]:
    return [f"    + pdfindex has, the reference lacks ({hint.extra_count} words): "
            + (" ".join(map(shown, hint.extra)) or "-"),
            f"    - the reference has, pdfindex lacks ({hint.missing_count} words): "
            + (" ".join(map(shown, hint.missing)) or "-")]


def print_report(results: Sequence[FileResult], systems: Sequence[str], folder: Folder,
                 info: Mapping[str, Any]) -> None:
    print(f"PDFBox's expected texts: {', '.join(f'{s} {v}' for s, v in info['versions'].items())}")
    print(f"input {info['input']}: {len(results)} PDFs with expected text; margin {info['margin']:g}, "
          f"all-disagree below {1 - info['all_wrong']:g}; timeout {info['timeout']:g} s")
    for note in info["notes"]:
        print(f"  {note}")
    if folder.without_expected:
        print(f"  PDFs without X.pdf.txt, not scored: {', '.join(folder.without_expected)}")
    if folder.unpaired:
        print(f"  text files pairing with no PDF, not used: {', '.join(folder.unpaired)}")
    print("\nWord F1 against X.pdf.txt (content order; < listed):")
    print("\n".join(table(results, systems, False)))
    print("\n".join(summary_lines(results, systems)))
    with_sorted = [r for r in results if r.sorted_tokens is not None]
    moved = [r for r in with_sorted if sorted_differs(r)]
    if with_sorted:
        print(f"\nWord F1 against X.pdf-sorted.txt (setSortByPosition): {len(with_sorted) - len(moved)} of "
              f"{len(with_sorted)} files as against X.pdf.txt (within 0.0005: the same words, in another order)"
              + (", the others:" if moved else ""))
        if moved:
            print("\n".join(table(moved, systems, True)))
    listed = [r for r in results if r.verdict == "listed"]
    print(f"\nListed (pdfindex more than {info['margin']:g} below the best other): {len(listed) or 'none'}")
    for r in listed:
        f1 = r.f1()
        best = max((s for s in f1 if s != OURS), key=lambda s: f1[s])
        print(f"  {r.file}: pdfindex {f1[OURS]:.3f}, best other {best} {f1[best]:.3f}"
              + (f" ({r.systems[OURS]['status']}: {r.systems[OURS]['error']})" if r.systems[OURS]["error"] else ""))
        if r.hint is not None:
            print("\n".join(hint_lines(r.hint)))
    apart = [r for r in results if r.verdict == "all disagree"]
    if apart:
        print(f"\nEvery system more than {info['all_wrong']:g} below 1.0 (not listed): "
              + ", ".join(r.file for r in apart))
    failures = [(s, r.file, r.systems[s]["error"]) for s in systems for r in results if r.systems[s]["error"]]
    print(f"\nFailures (timeouts, crashes, errors; scored 0): {len(failures) or 'none'}")
    for system, name, error in failures:
        print(f"  {system:<13} {name}: {error}")
    print(f"\n{target(means(results, systems), results)[1]}")


def result_json(result: FileResult) -> dict[str, Any]:
    data = asdict(result)
    for values in data["systems"].values():
        for key in ("f1", "precision", "recall", "order", "f1_sorted", "order_sorted"):
            if values[key] is not None:
                values[key] = round(values[key], 4)
    return data


# ------------------------------------------------------------------ the run

def measure(cases: Sequence[Case], systems: Systems, scorer: ModuleType, margin: float, all_wrong: float,
            dump: Path | None) -> list[FileResult]:
    """Every system on every file, one child at a time."""
    results = []
    for n, case in enumerate(cases, 1):
        runs = {s: systems.extract(s, case.pdf, None) for s in systems.names}
        result = judge(case, runs, scorer, margin, all_wrong)
        results.append(result)
        if dump is not None:
            dump_texts(dump, case.pdf.name, runs)
        took = sum(r.seconds for r in runs.values())
        print(f"[{n}/{len(cases)}] {case.pdf.name}: {result.verdict} ({took:.1f} s)", file=sys.stderr, flush=True)
    return results


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", type=Path, required=True,
                        help="PDFBox's pdfbox/src/test/resources/input (X.pdf beside X.pdf.txt, X.pdf-sorted.txt)")
    parser.add_argument("--files", nargs="+", default=[], metavar="GLOB", help="only these PDFs (name globs)")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated, from: " + ", ".join(PEERS))
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                        help="F1 below the best other system that lists a file (default %(default)s)")
    parser.add_argument("--all-wrong", type=float, default=DEFAULT_ALL_WRONG,
                        help="a file where every system is more than this below 1.0 is not listed "
                             "(default %(default)s)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="seconds per system and file (default %(default)s)")
    parser.add_argument("--scorer", type=Path, default=DEFAULT_SCORER, help="the producers scorer's score.py")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument("--dump", type=Path, help="write each system's text to DIR/SYSTEM/FILE.txt")
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        parser.error(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}")
    if not args.input.is_dir():
        parser.error(f"--input {args.input} is not a folder")
    if not 0 <= args.margin < 1 or not 0 <= args.all_wrong < 1:
        parser.error("--margin and --all-wrong must be in [0, 1)")
    return args


def run(args: argparse.Namespace, work: Path, argv: Sequence[str]) -> int:
    folder = pair_files(args.input)
    chosen = {p.name for p in select_files([c.pdf for c in folder.cases], args.files)}
    cases = [c for c in folder.cases if c.pdf.name in chosen]
    if not cases:
        print(f"pdfbox_expected: no PDF with an X.pdf.txt in {args.input} matches {' '.join(args.files) or '*'}",
              file=sys.stderr)
        return 1
    scorer = load_scorer(args.scorer)
    systems = find_systems(args.peers, args.timeout, work)
    try:
        results = measure(cases, systems, scorer, args.margin, args.all_wrong, args.dump)
    finally:
        systems.close()
    info = {"date": datetime.date.today().isoformat(),
            "command": shlex.join(["python", "-m", "bench.pdfbox_expected", *argv]),
            "input": str(args.input), "margin": args.margin, "all_wrong": args.all_wrong, "timeout": args.timeout,
            "versions": versions(systems.names), "notes": systems.notes}
    print_report(results, systems.names, folder, info)
    if args.json:
        summary = means(results, systems.names)
        data = {**info, "systems": systems.names, "without_expected": folder.without_expected,
                "unpaired": folder.unpaired,
                "summary": {s: asdict(m) for s, m in summary.items()},
                "target_met": target(summary, results)[0],
                "listed": [r.file for r in results if r.verdict == "listed"],
                "files": [result_json(r) for r in results]}
        args.json.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(given)
    with tempfile.TemporaryDirectory(prefix="pdfindex-pdfbox-bench-") as tmp:
        return run(args, Path(tmp), given)


if __name__ == "__main__":
    sys.exit(main())
