"""OCR quality and cost: pdfindex against ocrmypdf and the tesseract CLI on the same
scans, in one run (issue 22).

The scans are ``../shared/corpus/scans``: image-only PDFs rendered from the producers
corpus and degraded as scanners, fax machines and phones degrade them, each with its
truth text beside it and a row in ``MANIFEST.tsv`` (variant, language, pages). Every
system reads every selected file in a child process of its own, one after another:

* **pdfindex**: ``pdfindex extract --ocr force FILE`` (``--pdfindex-cmd`` replaces it,
  as ``PROJECT_EXTRACT`` does for the producers scorer), the text on stdout. Until
  ``extract`` has ``--ocr``, each file is a clear per-file error.
* **ocrmypdf**: ``ocrmypdf --sidecar OUT.txt --rotate-pages --deskew -l LANGS IN OUT``,
  the sidecar's text; **ocrmypdf-plain** the same without ``--rotate-pages --deskew``.
  Both also get ``--output-type pdf`` (only the sidecar is read: no PDF/A conversion to
  pay for, no Ghostscript needed) and, on files whose manifest lists ``text_pages``,
  ``--force-ocr`` (it refuses a page with text otherwise; the other systems OCR every
  page too).
* **tesseract**: ``pdftoppm -r 300 -png`` per file, then ``tesseract PAGE.png - -l LANGS``
  per page, the pages joined by form feeds.

LANGS is what a user would pass, from the manifest: ``eng+deu+fra`` for the Latin files,
``kor``, ``jpn`` (``jpn_vert`` for vertical files), ``chi_sim``. pdfindex must find
the language itself, so the others are favoured; the report says so.

Measures, per file and system:

* word F1 from the producers scorer (``../shared/corpus/producers/score.py``, loaded by
  path: the same words and CJK bigrams as every extraction figure of the project);
* CER: Levenshtein distance between the truth and the output, both NFKC with runs of
  whitespace made one space, over the truth's length (a bit-parallel Myers/Hyyrö
  distance on Python integers: exact, and fast enough for pages of text);
* CPU seconds per page: the user+sys time of the children (``RUSAGE_CHILDREN``
  deltas around each child, which include their own children: ocrmypdf's tesseract
  runs), so a system that spreads over processes pays for all of them. Every child
  gets ``OMP_THREAD_LIMIT=1`` (``--omp-threads``): Tesseract's OpenMP threads spin
  while they wait, and on a busy machine that spinning counts as CPU time (one page:
  4 s with one thread, 17 s with two). ocrmypdf honours the variable as given.

A crash, an error or a timeout scores F1 0 and CER 1 and is listed; CPU per page
counts the files that succeeded. The figures are means over files, overall, per
variant and per language (the LANGS above, so vertical Japanese is its own row).

``--known-item`` adds known-item search (bench/ocr_known_item.py): queries of three
words from each file's truth, pdfindex ingest + search (when pdfindex is among
``--systems``) against each other system's text in SQLite FTS5.

ocrmypdf is no dependency of the project: ``.venv/bin/pip install ocrmypdf`` (17.x
rasterises with pypdfium2 and runs here without Ghostscript); without it its columns
are per-file errors. The tesseract CLI and pdftoppm come from the system
(``tesseract-ocr`` with its language packages, ``poppler-utils``).

Usage, from the project root::

    .venv/bin/python -m bench.ocr [--corpus DIR] [--files GLOB ...] [--systems a,b]
        [--known-item] [--json PATH] [--per-file] [--dump DIR] [--timeout S]
"""
from __future__ import annotations

import argparse
import csv
import fnmatch
import importlib.metadata
import importlib.util
import json
import os
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType

from bench import ocr_known_item

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PDFINDEX_SHARED", ROOT.parent / "shared"))
DEFAULT_CORPUS = SHARED / "corpus" / "scans"
DEFAULT_SCORER = SHARED / "corpus" / "producers" / "score.py"
SYSTEMS = ("pdfindex", "ocrmypdf", "ocrmypdf-plain", "tesseract")
FILE = "{file}"  # the scan's path in --pdfindex-cmd
DEFAULT_TIMEOUT = 900.0
LATIN_LANGS = "eng+deu+fra"


# ------------------------------------------------------------------ the scans

@dataclass(frozen=True, slots=True)
class Scan:
    """One scan file and what its manifest row says about it."""

    path: Path
    variant: str
    langs: str  # what ocrmypdf and the tesseract CLI are given: the per-language row
    pages: int
    text_pages: str  # pages that keep a text layer ("" for none)

    @property
    def stem(self) -> str:
        return self.path.stem


def tesseract_langs(lang: str, tags: Iterable[str]) -> str:
    """The ``-l`` a user would pass for a manifest row: the Latin files hold English
    with German and French words, vertical Japanese needs Tesseract's ``jpn_vert``."""
    if lang.partition("+")[0] == "eng":
        return LATIN_LANGS
    if lang == "jpn" and "vertical" in tags:
        return "jpn_vert"
    return lang


def read_manifest(corpus: Path) -> list[Scan]:
    """The scans listed in ``corpus/MANIFEST.tsv`` whose PDF and truth exist, in its order."""
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    scans = []
    for row in rows:
        path = corpus / f"{row['file']}.pdf"
        if path.exists() and path.with_suffix(".txt").exists():
            tags = [t for t in row.get("tags", "").split(",") if t]
            scans.append(Scan(path, row["variant"], tesseract_langs(row["lang"], tags), int(row["pages"]),
                              row.get("text_pages", "")))
    return scans


def select(scans: Sequence[Scan], globs: Sequence[str]) -> list[Scan]:
    """The scans whose file name matches one of ``globs`` (all when none is given)."""
    if not globs:
        return list(scans)
    return [s for s in scans if any(fnmatch.fnmatch(s.path.name, g) or fnmatch.fnmatch(s.stem, g) for g in globs)]


def load_scorer(path: Path) -> ModuleType:
    """The producers scorer as a module, loaded from its file: it lives in shared/,
    outside the project, and is not installed. Registered in ``sys.modules`` first, as
    its dataclasses need to find their module."""
    spec = importlib.util.spec_from_file_location("producers_score", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load the producers scorer from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------ character error rate

def normalise(text: str) -> str:
    """NFKC with every run of whitespace (line and page breaks too) one space: layout
    is not what CER judges, the characters are."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one code point each).

    Myers' bit-vector algorithm in Hyyrö's form for global distance: one column of the
    DP table is two bit vectors (vertical +1 and -1 deltas) as Python integers, so a
    column costs a dozen big-integer operations instead of len(a) Python steps; a page
    against a page (5,000 x 5,000) takes milliseconds where the plain DP takes seconds.
    """
    if len(a) < len(b):
        a, b = b, a  # the longer string as the bit vector: fewer Python-level steps
    if not b:
        return len(a)
    peq: dict[str, int] = {}
    for i, ch in enumerate(a):
        peq[ch] = peq.get(ch, 0) | (1 << i)
    mask, top = (1 << len(a)) - 1, 1 << (len(a) - 1)
    pv, mv, distance = mask, 0, len(a)
    for ch in b:
        eq = peq.get(ch, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | ~(xh | pv)
        mh = pv & xh
        if ph & top:
            distance += 1
        elif mh & top:
            distance -= 1
        ph = (ph << 1) | 1  # row 0 of the table grows by one per column: global, not search
        mh <<= 1
        pv = (mh | ~(xv | ph)) & mask
        mv = ph & xv
    return distance


def cer(truth: str, output: str) -> float:
    """Character error rate: edits from the truth to the output over the truth's length
    (can exceed 1 when the output is longer and wrong; an empty output scores 1)."""
    t, o = normalise(truth), normalise(output)
    return levenshtein(t, o) / len(t) if t else float(bool(o))


# ------------------------------------------------------------------ running a system

@dataclass(slots=True)
class Run:
    """What one system made of one file: its text, or why there is none, and its cost."""

    text: str | None = None
    error: str | None = None
    cpu: float = 0.0  # user+sys seconds of the children
    wall: float = 0.0


@dataclass(frozen=True, slots=True)
class Context:
    """What every system needs besides the scan: limits, environment, executables."""

    work: Path  # a scratch folder for images, PDFs and sidecars
    timeout: float
    env: Mapping[str, str]
    pdfindex_cmd: tuple[str, ...]
    pdfindex_note: str | None  # set: pdfindex cannot OCR, every file is this error
    ocrmypdf: str | None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _last_line(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else ""


def run_child(argv: Sequence[str], ctx: Context, run: Run) -> bytes | None:
    """Run one child, add its CPU and wall time to ``run``; its stdout, or None with
    ``run.error`` set. A timeout kills the child's whole process group, so ocrmypdf's
    tesseract processes do not outlive it."""
    cpu, start = _children_cpu(), time.perf_counter()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(ctx.env), start_new_session=True)
    except OSError as exc:
        run.error = f"cannot run {argv[0]}: {exc.strerror}"
        return None
    try:
        out, err = proc.communicate(timeout=ctx.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        out, err = None, b""
        run.error = f"{Path(argv[0]).name}: timeout after {ctx.timeout:g} s"
    finally:
        run.cpu += _children_cpu() - cpu
        run.wall += time.perf_counter() - start
    if out is not None and proc.returncode:
        run.error = f"{Path(argv[0]).name}: exit {proc.returncode}: {_last_line(err)}"
        return None
    return out


def run_pdfindex(scan: Scan, ctx: Context) -> Run:
    """``pdfindex extract --ocr force FILE`` (or --pdfindex-cmd): its stdout is the text."""
    run = Run()
    if ctx.pdfindex_note:
        run.error = ctx.pdfindex_note
        return run
    argv = [str(scan.path) if arg == FILE else arg.replace(FILE, str(scan.path)) for arg in ctx.pdfindex_cmd]
    out = run_child(argv, ctx, run)
    if out is not None:
        run.text = out.decode("utf-8", "replace")
    return run


def ocrmypdf_argv(exe: str, scan: Scan, sidecar: Path, pdf: Path, rotate_deskew: bool) -> list[str]:
    """The ocrmypdf command line a user would type for this scan."""
    argv = [exe, "--sidecar", str(sidecar), "--output-type", "pdf"]
    if rotate_deskew:
        argv += ["--rotate-pages", "--deskew"]
    if scan.text_pages:
        argv.append("--force-ocr")  # else it refuses a file with a text layer on some page
    return [*argv, "-l", scan.langs, str(scan.path), str(pdf)]


def run_ocrmypdf(scan: Scan, ctx: Context, rotate_deskew: bool) -> Run:
    """ocrmypdf on one file; the text is its sidecar (pages separated by form feeds)."""
    run = Run()
    if ctx.ocrmypdf is None:
        run.error = "ocrmypdf not installed (.venv/bin/pip install ocrmypdf)"
        return run
    name = f"{scan.stem}.{'rd' if rotate_deskew else 'plain'}"
    sidecar, pdf = ctx.work / f"{name}.txt", ctx.work / f"{name}.pdf"
    if run_child(ocrmypdf_argv(ctx.ocrmypdf, scan, sidecar, pdf, rotate_deskew), ctx, run) is not None:
        run.text = sidecar.read_text(encoding="utf-8", errors="replace")
    return run


def _page_number(png: Path) -> int:
    return int(png.stem.rsplit("-", 1)[1])


def run_tesseract(scan: Scan, ctx: Context) -> Run:
    """pdftoppm at 300 dpi, then the tesseract CLI on each page image; pages joined
    by form feeds as the other systems join them."""
    run = Run()
    folder = ctx.work / f"{scan.stem}.pages"
    folder.mkdir()
    if run_child(["pdftoppm", "-r", "300", "-png", str(scan.path), str(folder / "page")], ctx, run) is None:
        return run
    texts = []
    for png in sorted(folder.glob("page-*.png"), key=_page_number):
        out = run_child(["tesseract", str(png), "-", "-l", scan.langs], ctx, run)
        if out is None:
            return run
        texts.append(out.decode("utf-8", "replace"))
    run.text = "\f".join(texts)
    return run


RUNNERS: dict[str, Callable[[Scan, Context], Run]] = {
    "pdfindex": run_pdfindex,
    "ocrmypdf": lambda scan, ctx: run_ocrmypdf(scan, ctx, rotate_deskew=True),
    "ocrmypdf-plain": lambda scan, ctx: run_ocrmypdf(scan, ctx, rotate_deskew=False),
    "tesseract": run_tesseract,
}


# ------------------------------------------------------------------ set-up checks

def default_pdfindex_cmd() -> tuple[str, ...]:
    """pdfindex as installed beside this interpreter (``python -m pdfindex``)."""
    return (sys.executable, "-m", "pdfindex", "extract", "--ocr", "force", FILE)


def template_cmd(template: str) -> tuple[str, ...]:
    """A ``--pdfindex-cmd`` template split as a shell would, ``{file}`` appended when absent."""
    argv = shlex.split(template)
    if not any(FILE in arg for arg in argv):
        argv.append(FILE)
    return tuple(argv)


def help_text(argv: Sequence[str]) -> str:
    """A command's ``--help`` output ("" when it cannot run): how the bench learns
    which options the pdfindex under test has while issue 22 is being built."""
    try:
        done = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr


def pdfindex_note(custom: bool) -> str | None:
    """Why the default pdfindex command cannot OCR (no ``extract --ocr`` yet), or None."""
    if custom or "--ocr" in help_text([sys.executable, "-m", "pdfindex", "extract"]):
        return None
    return "pdfindex extract has no --ocr option yet (issue 22): no OCR to measure"


def ocrmypdf_exe() -> str | None:
    """ocrmypdf beside this interpreter (the venv's), else on PATH."""
    beside = Path(sys.executable).with_name("ocrmypdf")
    return str(beside) if beside.exists() else shutil.which("ocrmypdf")


def child_env(omp_threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env["OMP_THREAD_LIMIT"] = str(omp_threads)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def versions() -> dict[str, str]:
    """The versions measured, for the report and the JSON."""
    found = {"tesseract": _first_line(["tesseract", "--version"]), "pdftoppm": _first_line(["pdftoppm", "-v"])}
    for dist in ("pdfindex", "ocrmypdf"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = "not installed"
    return found


def _first_line(argv: Sequence[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return "not found"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return lines[0] if lines else "?"


# ------------------------------------------------------------------ scores and summaries

@dataclass(frozen=True, slots=True)
class Result:
    """One file read by one system, scored."""

    stem: str
    system: str
    variant: str
    langs: str
    pages: int
    f1: float
    cer: float
    cpu: float
    wall: float
    error: str | None


@dataclass(frozen=True, slots=True)
class Summary:
    files: int
    f1: float  # mean over files, failures as 0
    cer: float  # mean over files, failures as 1
    cpu_per_page: float | None  # over the files that succeeded; None when none did
    failures: int


def score_run(scorer: ModuleType, scan: Scan, system: str, truth: str, run: Run) -> Result:
    """F1 from the producers scorer and CER; a failed run scores F1 0 and CER 1."""
    text = run.text if run.error is None and run.text is not None else ""
    f1 = scorer.score(truth, text).f1 if text else 0.0
    return Result(scan.stem, system, scan.variant, scan.langs, scan.pages, f1, cer(truth, text) if text else 1.0,
                  run.cpu, run.wall, run.error)


def summarise_group(results: Sequence[Result]) -> Summary:
    ok = [r for r in results if r.error is None]
    pages = sum(r.pages for r in ok)
    return Summary(files=len(results), f1=sum(r.f1 for r in results) / len(results),
                   cer=sum(r.cer for r in results) / len(results),
                   cpu_per_page=sum(r.cpu for r in ok) / pages if pages else None,
                   failures=len(results) - len(ok))


def group_keys(result: Result) -> list[str]:
    return ["overall", f"variant {result.variant}", f"lang {result.langs}"]


def summarise(results: Sequence[Result]) -> dict[str, dict[str, Summary]]:
    """Row label ("overall", "variant fax", "lang kor") -> system -> Summary; rows in
    the order their files first appear, overall first, then variants, then languages."""
    groups: dict[str, dict[str, list[Result]]] = {}
    for result in results:
        for key in group_keys(result):
            groups.setdefault(key, {}).setdefault(result.system, []).append(result)
    order = sorted(groups, key=lambda k: ("overall", "variant", "lang").index(k.split()[0]))
    return {key: {system: summarise_group(rs) for system, rs in groups[key].items()} for key in order}


# ------------------------------------------------------------------ report

@dataclass(frozen=True, slots=True)
class RunInfo:
    """What was measured with what, printed above the tables and kept in the JSON."""

    corpus: str
    files: int
    pages: int
    systems: list[str]
    omp_threads: int
    versions: dict[str, str]
    langs: dict[str, str]  # stem -> the -l given to ocrmypdf and tesseract


def print_table(title: str, summary: dict[str, dict[str, Summary]], systems: Sequence[str],
                cell: Callable[[Summary], str]) -> None:
    labels = {key: f"{key} ({next(iter(per.values())).files})" for key, per in summary.items()}
    width = 2 + max(len(s) for s in systems)
    label_width = 2 + max(len(v) for v in labels.values())
    print(f"\n{title}\n{'':{label_width}s}" + "".join(f"{s:>{width}s}" for s in systems))
    for key, per in summary.items():
        cells = [cell(per[s]) if s in per else "-" for s in systems]
        print(f"{labels[key]:{label_width}s}" + "".join(f"{c:>{width}s}" for c in cells))


def _f1_cell(s: Summary) -> str:
    return "failed" if s.failures == s.files else f"{s.f1:.3f}" + ("*" if s.failures else "")


def _cer_cell(s: Summary) -> str:
    return "failed" if s.failures == s.files else f"{s.cer:.3f}" + ("*" if s.failures else "")


def _cpu_cell(s: Summary) -> str:
    return "-" if s.cpu_per_page is None else f"{s.cpu_per_page:.2f}"


def print_failures(results: Sequence[Result]) -> None:
    """Each system's errors, identical messages counted once (a missing option fails
    every file the same way)."""
    seen: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if r.error:
            seen.setdefault((r.system, r.error), []).append(r.stem)
    print(f"\nFailures (scored F1 0, CER 1): {sum(len(v) for v in seen.values()) or 'none'}")
    for (system, error), stems in seen.items():
        where = stems[0] if len(stems) == 1 else f"{len(stems)} files, e.g. {stems[0]}"
        print(f"  {system:15s} {where}: {error}")


def print_report(results: Sequence[Result], systems: Sequence[str], info: RunInfo) -> None:
    summary = summarise(results)
    print(f"corpus {info.corpus}: {info.files} files, {info.pages} pages")
    print("versions: " + "; ".join(f"{k} {v}" for k, v in info.versions.items()))
    print(f"ocrmypdf and the tesseract CLI are given each file's language (-l {LATIN_LANGS}, kor, jpn, jpn_vert,"
          " chi_sim): that favours them; pdfindex finds the language itself."
          f" Children run with OMP_THREAD_LIMIT={info.omp_threads}.")
    print_table("Word F1, mean over files (* = some files failed, scored 0)", summary, systems, _f1_cell)
    print_table("CER (edits / truth characters), mean over files (* = some failed, scored 1)", summary, systems,
                _cer_cell)
    print_table("CPU seconds per page (children's user+sys, files that succeeded)", summary, systems, _cpu_cell)
    print_failures(results)


def print_per_file(results: Sequence[Result], systems: Sequence[str]) -> None:
    by_file: dict[str, dict[str, Result]] = {}
    for r in results:
        by_file.setdefault(r.stem, {})[r.system] = r
    label = 2 + max(len(stem) for stem in by_file)
    width = 2 + max(15, *(len(s) for s in systems))
    print(f"\n{'Per file: F1 / CER':{label}s}" + "".join(f"{s:>{width}s}" for s in systems))
    for stem, per in by_file.items():
        cells = ["-" if s not in per else "FAILED" if per[s].error else f"{per[s].f1:.3f} / {per[s].cer:.3f}"
                 for s in systems]
        print(f"{stem:{label}s}" + "".join(f"{c:>{width}s}" for c in cells))


# ------------------------------------------------------------------ the run

@dataclass
class Outcome:
    """Everything one run measured: scores per file and system, and each system's text."""

    results: list[Result] = field(default_factory=list)
    texts: dict[str, dict[str, str]] = field(default_factory=dict)  # system -> stem -> text


def measure(scans: Sequence[Scan], systems: Sequence[str], ctx: Context, scorer: ModuleType,
            dump: Path | None) -> Outcome:
    """Every system on every scan, one child at a time (so the CPU deltas are theirs)."""
    outcome = Outcome()
    for system in systems:
        started = time.perf_counter()
        for scan in scans:
            run = RUNNERS[system](scan, ctx)
            truth = scan.path.with_suffix(".txt").read_text(encoding="utf-8")
            outcome.results.append(score_run(scorer, scan, system, truth, run))
            if run.text is not None and run.error is None:
                outcome.texts.setdefault(system, {})[scan.stem] = run.text
                if dump:
                    (dump / system).mkdir(parents=True, exist_ok=True)
                    (dump / system / f"{scan.stem}.txt").write_text(run.text, encoding="utf-8")
        print(f"{system}: {len(scans)} files in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return outcome


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the scans (default %(default)s)")
    parser.add_argument("--files", nargs="+", default=[], metavar="GLOB",
                        help="only these scans (file name globs, e.g. 'chromium__ko__*')")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated, from: " + ", ".join(SYSTEMS))
    parser.add_argument("--pdfindex-cmd", metavar="TEMPLATE",
                        help="pdfindex's command, {file} for the scan (default: python -m pdfindex extract "
                             "--ocr force {file})")
    parser.add_argument("--scorer", type=Path, default=DEFAULT_SCORER, help="the producers scorer's score.py")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per child process")
    parser.add_argument("--omp-threads", type=int, default=1, help="OMP_THREAD_LIMIT of every child (default 1)")
    parser.add_argument("--known-item", action="store_true", help="also measure known-item search")
    parser.add_argument("--queries-per-file", type=int, default=ocr_known_item.QUERIES_PER_FILE)
    parser.add_argument("--seed", type=int, default=ocr_known_item.SEED, help="seed of the query words")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument("--per-file", action="store_true", help="also print each file's F1 and CER")
    parser.add_argument("--dump", type=Path, help="write each system's text to DIR/SYSTEM/FILE.txt")
    args = parser.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in args.systems if s not in SYSTEMS]
    if unknown or not args.systems:
        parser.error(f"unknown system(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(SYSTEMS)}")
    return args


def make_context(args: argparse.Namespace, work: Path) -> Context:
    custom = args.pdfindex_cmd is not None
    return Context(work=work, timeout=args.timeout, env=child_env(args.omp_threads),
                   pdfindex_cmd=template_cmd(args.pdfindex_cmd) if custom else default_pdfindex_cmd(),
                   pdfindex_note=pdfindex_note(custom) if "pdfindex" in args.systems else None,
                   ocrmypdf=ocrmypdf_exe())


def write_json(path: Path, info: RunInfo, outcome: Outcome, known: ocr_known_item.Report | None) -> None:
    summary = summarise(outcome.results)
    data = {**asdict(info), "summary": {k: {s: asdict(v) for s, v in per.items()} for k, per in summary.items()},
            "files": [asdict(r) for r in outcome.results],
            "known_item": None if known is None else known.as_json()}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def run(args: argparse.Namespace, work: Path) -> int:
    if not (args.corpus / "MANIFEST.tsv").exists():
        print(f"ocr: no MANIFEST.tsv in {args.corpus} (the scans corpus; set PDFINDEX_SHARED)", file=sys.stderr)
        return 1
    scans = select(read_manifest(args.corpus), args.files)
    if not scans:
        print(f"ocr: no scan in {args.corpus} matches {' '.join(args.files)}", file=sys.stderr)
        return 1
    scorer = load_scorer(args.scorer)
    ctx = make_context(args, work)
    info = RunInfo(str(args.corpus), len(scans), sum(s.pages for s in scans), args.systems, args.omp_threads,
                   versions(), {s.stem: s.langs for s in scans})
    outcome = measure(scans, args.systems, ctx, scorer, args.dump)
    print_report(outcome.results, args.systems, info)
    if args.per_file:
        print_per_file(outcome.results, args.systems)
    known = None
    if args.known_item:
        known = ocr_known_item.measure(scans, outcome.texts, scorer, ocr_known_item.Settings(
            work=work / "known-item", per_file=args.queries_per_file, seed=args.seed, timeout=args.timeout,
            env=ctx.env, with_pdfindex="pdfindex" in args.systems))
        known.print()
    if args.json:
        write_json(args.json, info, outcome, known)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pdfindex-ocr-bench-") as tmp:
        return run(args, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
