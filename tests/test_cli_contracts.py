"""Issue 8 items 6, 8 and 9: the CLI's contracts. ``--version`` and ``python -m
pdfindex``; the JSON keys of each command exactly as docs/json.md lists them;
NO_COLOR on a real terminal (a pty); start-up importing only what a command uses;
the index's language stored, used and kept, and unknown languages refused."""
from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pdfindex.indexer import PageIndex, Status
from tests.index_helpers import page, record

ROOT = Path(__file__).resolve().parents[1]
DOC = "/docs/report.pdf"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PDFINDEX_", "XDG_", "NO_COLOR"))}
    env.update(HOME=str(home), PYTHONIOENCODING="utf-8", PYTHONPATH=str(ROOT), **extra)
    return env


def run(home: Path, *args: str | Path, module: str = "pdfindex.cli.main", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT, env=_env(home, **env),
                          capture_output=True, text=True, encoding="utf-8", timeout=60)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("contracts") / "index"
    ix = PageIndex(root)
    with ix.writer() as writer:
        pages = [page(1, "revenue grew strongly"), page(2, "revenue table", coverage=0.3, needs_ocr=True)]
        writer.add(record("report", DOC, pages, title="Annual Report"), pages)
        writer.add(record("broken", "/docs/bad.pdf", [], status=Status.FAILED, error="no startxref",
                          page_count=0), [])
    return root


# ---- version ----------------------------------------------------------------------------------

def test_version_and_python_dash_m(home: Path, index: Path) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for module in ("pdfindex.cli.main", "pdfindex"):
        proc = run(home, "--version", module=module)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"pdfindex {declared}\n"
    via_m = run(home, "search", "revenue", "--json", "--index", index, module="pdfindex")
    assert via_m.returncode == 0, via_m.stderr
    assert {(h["path"], h["page"]) for h in json.loads(via_m.stdout)["hits"]} == {(DOC, 1), (DOC, 2)}
    assert run(home, module="pdfindex").returncode == 2  # no command: argparse's usage, as `pdfindex`


# ---- JSON keys as documented --------------------------------------------------------------------

def _documented() -> dict[str, list[str]]:
    """Heading → the keys listed under it in docs/json.md (first `code` of each item)."""
    sections: dict[str, list[str]] = {}
    heading = ""
    for line in (ROOT / "docs" / "json.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            sections.setdefault(heading, [])
        elif m := re.match(r"- `([a-z_]+)`", line):
            sections[heading].append(m.group(1))
    return sections


def _json(home: Path, *args: str | Path) -> dict:  # type: ignore[type-arg]
    proc = run(home, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _keys_match(out: dict, documented: list[str]) -> None:  # type: ignore[type-arg]
    """Every documented key is there; another key (a newer part's) must at least be
    documented somewhere in docs/json.md."""
    text = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    assert set(documented) <= set(out), set(documented) - set(out)
    for key in set(out) - set(documented):
        assert f"`{key}`" in text, f"{key} is not in docs/json.md"


def test_json_keys_as_documented(home: Path, index: Path) -> None:
    doc = _documented()
    search = _json(home, "search", "revenue", "--index", index)
    _keys_match(search, doc["search"])
    assert search["version"] == 1
    for hit in search["hits"]:
        _keys_match(hit, doc["hit"])
    grouped = _json(home, "search", "revenue", "--by-document", "--index", index)
    _keys_match(grouped, doc["search"])
    assert set(grouped["hits"][0]) == set(search["hits"][0])  # one hit shape, grouped or not
    (group,) = grouped["documents"]
    _keys_match(group, doc["document group"])
    assert group["pages"] == [h["page"] for h in grouped["hits"]]
    listed = _json(home, "list", "--index", index)
    _keys_match(listed, [k for k in doc["list"] if k != "hits"])
    for d in listed["documents"]:
        _keys_match(d, doc["document"])
    pages = _json(home, "list", "--pages", "--index", index)
    assert set(pages["hits"][0]) == set(search["hits"][0])
    status, stats = _json(home, "status", "--index", index), _json(home, "stats", "--index", index)
    assert set(status) == set(stats)  # the same keys
    _keys_match(status, doc["status and stats"])
    assert status["language"] == "en" and status["by_status"] == {"indexed": 1, "failed": 1}
    assert status["failures"] == [{"path": "/docs/bad.pdf", "status": "failed", "error": "no startxref",
                                   "attempts": 1}]


def test_highlight_offsets_are_code_points(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    text = "𝔘nicode ünïcödé — café 中文 revenue here"
    with ix.writer() as writer:
        pages = [page(1, text)]
        writer.add(record("u", "/u.pdf", pages), pages)
    (hit,) = _json(home, "search", "revenue", "--index", root)["hits"]
    ((start, end),) = hit["highlights"]
    assert hit["snippet"][start:end] == "revenue"


# ---- NO_COLOR --------------------------------------------------------------------------------------

def _on_a_terminal(home: Path, *args: str | Path, **env: str) -> str:
    """stdout of the command when it is a terminal (a pty)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "pdfindex.cli.main", *map(str, args)], cwd=ROOT,
                              env=_env(home, **env), stdout=follower, stderr=subprocess.PIPE, timeout=60)
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.returncode == 0, proc.stderr
        return b"".join(chunks).decode("utf-8")
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)


def test_no_color(home: Path, index: Path) -> None:
    bold = _on_a_terminal(home, "search", "revenue", "--index", index)
    assert "\x1b[1mrevenue\x1b[0m" in bold
    plain = _on_a_terminal(home, "search", "revenue", "--index", index, NO_COLOR="1")
    assert "\x1b" not in plain and "revenue" in plain
    assert "\x1b[1m" in _on_a_terminal(home, "search", "revenue", "--index", index, NO_COLOR="")  # empty: unset


# ---- start-up --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("search", "revenue"), ("list", "--needs-ocr"), ("status",), ("stats",)])
def test_index_commands_do_not_import_extraction(home: Path, index: Path, args: tuple[str, ...]) -> None:
    code = ("import sys; from pdfindex.cli.main import main; status = main(sys.argv[1:]); "
            "print(sorted({m.removeprefix('pdfindex.').split('.')[0] for m in sys.modules} & {'pipeline', 'pdfminer', 'celery', 'tqdm', "
            "'billiard', 'redis'}), file=sys.stderr); sys.exit(status)")
    proc = subprocess.run([sys.executable, "-c", code, *args, "--index", str(index)], cwd=ROOT, env=_env(home),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def test_extract_does_not_import_whoosh(home: Path, tmp_path: Path) -> None:
    code = ("import sys; from pdfindex.cli.main import main; main(['--version'])")
    code = ("import sys\nfrom pdfindex.cli.main import build_parser\nbuild_parser()\n"
            "print(sorted({m.removeprefix('pdfindex.').split('.')[0] for m in sys.modules} & {'whoosh', 'pipeline', 'pdfminer', 'indexer'}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(home), capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "[]", proc.stderr


# ---- language ------------------------------------------------------------------------------------

def test_language_round_trip(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    ix = PageIndex(root)
    with ix.writer() as writer:
        pages = [page(1, "les chevaux mangent")]
        writer.add(record("fr", "/fr.pdf", pages), pages)
    # English stemming leaves "cheval" and "chevaux" apart
    assert _json(home, "search", "cheval", "--index", root)["total"] == 0
    proc = run(home, "reindex", "--language", "french", "--index", root)
    assert proc.returncode == 0, proc.stderr
    assert _json(home, "search", "cheval", "--index", root)["total"] == 1  # a plain search, in French
    assert _json(home, "status", "--index", root)["language"] == "french"
    proc = run(home, "reindex", "--index", root)  # what the old advice said: keeps French
    assert proc.returncode == 0, proc.stderr
    assert _json(home, "stats", "--index", root)["language"] == "french"
    assert _json(home, "search", "cheval", "--index", root)["total"] == 1
    assert PageIndex(root).language == "french"
    # an explicit other language is told what to do, not silently switched
    proc = run(home, "search", "cheval", "--index", root, PDFINDEX_LANGUAGE="de")
    assert proc.returncode == 0, proc.stderr  # searches use the index's own language


@pytest.mark.parametrize("how", ["option", "env"])
def test_unknown_language_lists_the_supported_ones(home: Path, index: Path, how: str) -> None:
    if how == "option":
        proc = run(home, "reindex", "--language", "xx", "--index", index)
        assert proc.returncode == 2
    else:
        proc = run(home, "status", "--index", index, PDFINDEX_LANGUAGE="xx")
        assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert "unknown language 'xx'" in line
    assert all(code in line for code in ("en", "fr", "de", "none"))
    assert _json(home, "status", "--index", index)["language"] == "en"  # nothing was changed


def test_the_index_imports_whoosh_without_urllib_or_asyncio_and_leaves_them_real() -> None:
    """indexer/lean_import.py: three of Whoosh's imports no search uses are stood in for
    while Whoosh imports, then removed, so a later import gets the real modules. (The
    face ``pdfindex.indexer`` loads Whoosh with ``PageIndex``, on first use.)"""
    code = (
        "import sys\nfrom pdfindex.indexer import PageIndex\n"
        "assert not {'urllib.request', 'asyncio', 'http.client', 'cached_property', 'whoosh.lang.morph_en'} "
        "& set(sys.modules), "
        "sorted(m for m in sys.modules if m.startswith(('urllib', 'asyncio', 'http', 'cached')))\n"
        "import urllib.request, cached_property\n"
        "assert callable(urllib.request.urlopen) and cached_property.cached_property.__module__ == 'cached_property'\n"
        "from whoosh.reading import SegmentReader\n"
        "assert SegmentReader.deleted_docs_set.__class__.__name__ == 'cached_property'\n"
        "from whoosh.query import terms\n"
        "assert 'rendering' in terms.variations('render')\n"  # the stand-in calls the real one
        "from whoosh.lang.morph_en import variations\n"
        "assert variations.__module__ == 'whoosh.lang.morph_en'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


# ---- help and exit statuses (issue 20) -------------------------------------------------------------

def _commands() -> dict[str, argparse.ArgumentParser]:
    from pdfindex.cli.main import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_command_and_option_has_a_help_line() -> None:
    """Walks the real parsers: a command without a description or an argument without
    help shows nothing but its name in ``--help``."""
    from pdfindex.cli.main import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {choice.dest: choice.help for choice in sub._choices_actions}
    missing = [f"pdfindex {a.option_strings or a.dest}" for a in parser._actions if not a.help]
    for name, command in sub.choices.items():
        if not listed.get(name):
            missing.append(f"pdfindex --help: {name}")
        if not command.description:
            missing.append(f"pdfindex {name}: description")
        missing += [f"pdfindex {name} {'/'.join(a.option_strings) or a.dest}" for a in command._actions if not a.help]
        assert all("\n" not in (a.help or "") for a in command._actions), name  # one line each
    assert missing == [], missing


def test_pdfindex_help_lists_each_command_with_a_line(home: Path) -> None:
    proc = run(home, "--help")
    assert proc.returncode == 0, proc.stderr
    for name in _commands():
        assert re.search(rf"^    {re.escape(name)}\s+\S", proc.stdout, re.M), (name, proc.stdout)


def test_an_unreachable_broker_is_one_status_for_ingest_and_worker(home: Path, tmp_path: Path) -> None:
    """Both stop before doing anything, with one line naming the broker: exit 1 (an
    error, README's table), not 2 (a bad command line) for one and 1 for the other."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.pdf").write_bytes(b"%PDF-1.4\n")
    env = {"PDFINDEX_BROKER_URL": "redis://127.0.0.1:1/0", "PDFINDEX_ROOTS": str(tmp_path),
           "PDFINDEX_INDEX_DIR": str(tmp_path / "index")}
    expected = "pdfindex: cannot reach the broker at redis://127.0.0.1:1/0: connection refused"
    for args in (("ingest", docs), ("worker", "--queues", "extract"), ("worker", "--queues", "index")):
        proc = run(home, *args, **env)
        assert (proc.returncode, proc.stderr.strip().splitlines()[-1:]) == (1, [expected]), (args, proc.stderr)
        assert "Traceback" not in proc.stderr
