"""The house's layering, read from the source (issue 21): the import graph of
pdfindex built from its files with ``ast`` (each import resolved to a module by its
path, as a path-based tool sees it), then checked against the layers' rules.

    contract  <-  config  <-  pipeline, indexer  <-  workers  <-  cli
                                       ^                ^
                                       server ----------' (files, errors, limits, status only)

The contract imports nothing of the other layers and none of their engines; only the
indexer imports Whoosh; the server stands on the contract, the indexer and the
pipeline (the marks on page images need glyph positions), never on the CLI, and of
the workers only on what it truly needs: the roots check and reading a PDF under
them (``files``, ``errors``), the render processes' memory cap (``limits``) and what
the broker adds to ``/api/status`` (``status``). The CLI may import every layer.
Imports inside functions are allowed only where a heavy dependency is deliberately
deferred, at most 15 of them, each saying which.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pdfindex"

#: What each layer may import ("base": the package itself and its faces helper).
ALLOWED = {
    "base": set(),
    "contract": {"base"},
    "config": {"base", "contract"},
    "pipeline": {"base", "contract", "config"},
    "indexer": {"base", "contract", "config"},
    "workers": {"base", "contract", "config", "pipeline", "indexer"},
    "server": {"base", "contract", "config", "pipeline", "indexer", "workers"},
    "cli": {"base", "contract", "config", "pipeline", "indexer", "workers", "server"},
}
#: The worker modules the server may import (module docstring).
SERVER_WORKERS = {"pdfindex.workers.files", "pdfindex.workers.errors", "pdfindex.workers.limits",
                  "pdfindex.workers.status"}
#: Engines and frameworks the contract must not load, nor make its importers load.
HEAVY = ("whoosh", "pdfminer", "celery", "kombu", "redis", "billiard", "fastapi", "starlette", "pypdfium2", "PIL",
         "uvicorn", "jinja2", "tqdm", "watchfiles")
MAX_DEFERRED = 15


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the module imported (a pdfindex module resolved by path, else as written)
    line: int
    deferred: bool  # inside a function
    typing_only: bool  # under ``if TYPE_CHECKING:``


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(source: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from`` import names."""
    if not node.level:
        return node.module or ""
    package = source if MODULES[source].name == "__init__.py" else source.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _walk(node: ast.AST, deferred: bool, typing_only: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, deferred, typing_only
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, True, typing_only)
        elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            yield from _walk(child, deferred, True)
        else:
            yield from _walk(child, deferred, typing_only)


def imports_of(source: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[source].read_text(encoding="utf-8"))
    for node, deferred, typing_only in _walk(tree, False, False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(source, alias.name, node.lineno, deferred, typing_only)
            continue
        base = _resolve(source, node)
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            yield Import(source, submodule if submodule in MODULES else base, node.lineno, deferred, typing_only)


IMPORTS = [imp for source in MODULES for imp in imports_of(source)]
OURS = [imp for imp in IMPORTS if imp.target == "pdfindex" or imp.target.startswith("pdfindex.")]


def layer(module: str) -> str:
    """The layer of a pdfindex module: ``pdfindex.<layer>...``; ``python -m pdfindex``
    is the CLI's; the package itself and ``pdfindex.faces`` are the base."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ALLOWED:
        return parts[1]
    return "cli" if module == "pdfindex.__main__" else "base"


def test_the_graph_sees_every_layer() -> None:
    """A graph drawn by path, not the five arrows the links used to leave."""
    edges = {(layer(imp.source), layer(imp.target)) for imp in OURS if layer(imp.source) != layer(imp.target)}
    assert len(MODULES) > 100 and len(edges) >= 15, sorted(edges)
    assert {layer(m) for m in MODULES} == set(ALLOWED)


def test_each_layer_imports_only_the_layers_below_it() -> None:
    wrong = [f"{imp.source}:{imp.line} imports {imp.target}" for imp in OURS
             if layer(imp.target) != layer(imp.source) and layer(imp.target) not in ALLOWED[layer(imp.source)]]
    assert wrong == []


def test_the_server_imports_only_what_it_needs_of_the_workers_and_nothing_of_the_cli() -> None:
    wrong = [f"{imp.source}:{imp.line} imports {imp.target}" for imp in OURS if layer(imp.source) == "server"
             and (layer(imp.target) == "cli" or (layer(imp.target) == "workers" and imp.target not in SERVER_WORKERS))]
    assert wrong == []


def test_no_cycle_between_layers() -> None:
    graph: dict[str, set[str]] = {name: set() for name in ALLOWED}
    for imp in OURS:
        if layer(imp.source) != layer(imp.target):
            graph[layer(imp.source)].add(layer(imp.target))
    assert _cycle(graph) is None


def test_no_cycle_between_modules() -> None:
    """Module-level imports (those that run when a module is imported) form no
    cycle: every module can be read, and imported, after what it imports."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for imp in OURS:
        if not imp.deferred and not imp.typing_only and imp.target in MODULES and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    # a submodule imports its package first: that is no cycle of ours
    for name, targets in graph.items():
        targets -= {package for package in targets if name.startswith(package + ".")}
    assert _cycle(graph) is None


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_only_the_indexer_imports_whoosh() -> None:
    wrong = [f"{imp.source}:{imp.line}" for imp in IMPORTS
             if imp.target.split(".")[0] == "whoosh" and layer(imp.source) != "indexer"]
    assert wrong == []


def test_the_contract_imports_only_the_standard_library() -> None:
    wrong = [f"{imp.source}:{imp.line} imports {imp.target}" for imp in IMPORTS if layer(imp.source) == "contract"
             and not imp.target.startswith("pdfindex.contract")
             and imp.target.split(".")[0] not in sys.stdlib_module_names | {"__future__"}]
    assert wrong == []


@pytest.mark.parametrize("code", [
    "import pdfindex.contract, pdfindex.contract.shapes, pdfindex.contract.options, pdfindex.contract.display",
    "from pdfindex.indexer import DocumentRecord, ListFilters, Status",
    "from pdfindex.cli.main import build_parser; build_parser()",
])
def test_light_modules_load_no_engine(code: str) -> None:
    """Checked in a fresh interpreter: importing the contract (or the records
    through the index's face, or building the command line's parser) loads none of
    the engines behind the other layers."""
    probe = f"{code}\nimport sys\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["pdfindex.indexer.page_index", "pdfindex.indexer.store", "pdfindex.indexer.marks"])
def test_whoosh_comes_lean_whichever_index_module_loads_it(module: str) -> None:
    """The face loads nothing of Whoosh itself, so ``lean_import`` stands in for
    Whoosh's three unused imports whichever of the index's modules imports it first."""
    probe = (f"import {module}, sys\n"
             "print(sorted(m for m in sys.modules if m.startswith(('urllib.request', 'asyncio', 'http.client', "
             "'cached_property', 'whoosh.lang.morph_en'))), 'whoosh.reading' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[] True"


def test_the_shared_constants_are_defined_once_in_the_contract() -> None:
    """COUNT_CAP, MAX_SHARDS, the problem codes, the statuses and the sort orders were
    copied so that the CLI would not load the engines; now each has one definition,
    in the contract, and every other module imports it."""
    names = {"COUNT_CAP", "MAX_SHARDS", "PROBLEM_CODES", "STATUSES", "SORT_ORDERS", "SORTS"}
    orders = ("score", "date", "path")
    wrong = []
    for source, path in MODULES.items():
        if layer(source) == "contract":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            wrong += [f"{source}:{node.lineno} defines {t.id}" for t in targets
                      if isinstance(t, ast.Name) and t.id in names]
            if isinstance(node, ast.Tuple | ast.List) and all(isinstance(e, ast.Constant) for e in node.elts) \
                    and tuple(e.value for e in node.elts) == orders:  # type: ignore[attr-defined]
                wrong.append(f"{source}:{node.lineno} spells the sort orders")
    assert wrong == []


def test_no_module_of_the_cli_or_server_imports_another_modules_private_names() -> None:
    """``cli/list_cmd`` and ``cli/search_cmd`` used to import each other's helpers;
    what two commands share lives in a module of its own."""
    wrong = []
    for source, path in MODULES.items():
        if layer(source) not in {"cli", "server", "contract", "config"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                wrong += [f"{source}:{node.lineno} imports {alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert wrong == []


# ---- imports inside functions ----------------------------------------------------------------------

def _deferred() -> list[Import]:
    return [imp for imp in IMPORTS if imp.deferred]


def test_few_imports_are_deferred() -> None:
    """An import inside a function hides a dependency from the reader and from every
    tool; it is worth it only where a heavy dependency must stay out of a command's
    start-up (or out of a process that never uses it)."""
    lines = sorted({(imp.source, imp.line) for imp in _deferred()})
    assert len(lines) <= MAX_DEFERRED, "\n".join(f"{source}:{line}" for source, line in lines)


def test_each_deferred_import_says_what_it_defers() -> None:
    """On its line after ``noqa: PLC0415 -``, or in a comment line just above."""
    wrong = []
    for source, number in sorted({(imp.source, imp.line) for imp in _deferred()}):
        lines = MODULES[source].read_text(encoding="utf-8").splitlines()
        line, above = lines[number - 1], lines[number - 2].strip()
        reason = line.partition("#")[2].replace("noqa: PLC0415", "").strip(" -")
        if not reason and not above.startswith("#"):
            wrong.append(f"{source}:{number}: {line.strip()}")
    assert wrong == []


# ---- the tests and the benches (issue 21, item 7) ---------------------------------------------------
# Fixtures are defined once, in tests/conftest.py; what test modules share lives in
# helper modules, so no test module's private rename can break another; the benches
# stand on the installed package and the test helpers, never the other way round,
# and find them without editing sys.path (python -m bench.NAME from the project root).

TESTS = ROOT / "tests"
TEST_MODULES = sorted(TESTS.glob("test_*.py"))
TEST_HELPERS = sorted(p for p in TESTS.glob("*.py") if not p.name.startswith("test_"))
BENCHES = sorted((ROOT / "bench").glob("*.py"))


def _imported_by(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) of each import in the file, at any depth; ``from tests import x``
    also names ``tests.x``."""
    for node, _deferred, _typing in _walk(ast.parse(path.read_text(encoding="utf-8")), False, False):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif node.module:
            yield node.lineno, node.module
            yield from ((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)


def _fixtures(path: Path) -> set[str]:
    """The functions the file decorates with ``pytest.fixture`` (called or not)."""
    return {node.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef)
            and any(ast.unparse(d.func if isinstance(d, ast.Call) else d) == "pytest.fixture"
                    for d in node.decorator_list)}


def test_the_tests_and_benches_are_where_these_checks_look() -> None:
    assert len(TEST_MODULES) > 50 and TESTS / "conftest.py" in TEST_HELPERS and len(BENCHES) >= 7


@pytest.mark.parametrize("path", TEST_MODULES + TEST_HELPERS, ids=lambda p: p.name)
def test_no_test_file_imports_a_test_module_or_the_conftest(path: Path) -> None:
    """A test module's names are its own: what two modules share goes to a helper
    module, and fixtures reach tests through pytest, not through an import."""
    assert [f"{path.name}:{line} imports {module}" for line, module in _imported_by(path)
            if module == "tests.conftest" or module.startswith("tests.test_")] == []


@pytest.mark.parametrize("path", TEST_HELPERS, ids=lambda p: p.name)
def test_no_test_helper_imports_a_bench(path: Path) -> None:
    assert [f"{path.name}:{line} imports {module}" for line, module in _imported_by(path)
            if module == "bench" or module.startswith("bench.")] == []


def test_the_conftest_fixtures_are_not_written_again() -> None:
    shared = _fixtures(TESTS / "conftest.py")
    assert {"broker", "home", "realworld", "producers"} <= shared
    again = {path.name: sorted(_fixtures(path) & shared) for path in TEST_MODULES}
    assert {name: names for name, names in again.items() if names} == {}


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.name)
def test_no_bench_edits_sys_path(path: Path) -> None:
    lines = [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Attribute) and node.attr == "path"
             and isinstance(node.value, ast.Name) and node.value.id == "sys"]
    assert lines == [], f"{path.name}: sys.path at lines {lines}"
