"""Issue 9 item 8: pdfindex installs under one import name, so it sits beside a
project that owns a top-level ``config`` (or ``cli``) without either shadowing the
other; the wheel holds real files where the repository has symlinks."""
from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_installs_under_pdfindex_beside_another_config(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                           "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = wheels.glob("pdfindex-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist()}
        assert "pdfindex/indexer/search.py" in zf.namelist()
        assert zf.getinfo("pdfindex/indexer/search.py").file_size > 1000  # a file, not a link
        # `pdfindex serve` needs its templates and static files beside its modules
        for name in ("server/app.py", "server/templates/search.html", "server/templates/signin.html",
                     "server/static/style.css"):
            assert f"pdfindex/{name}" in zf.namelist(), name
    assert {t for t in tops if not t.endswith((".dist-info", ".data"))} == {"pdfindex"}

    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    other = tmp_path / "other"
    (other / "config").mkdir(parents=True)
    (other / "config" / "__init__.py").write_text("OWNER = 'another project'\n")
    (other / "cli").mkdir()
    (other / "cli" / "__init__.py").write_text("OWNER = 'another project'\n")
    code = ("import config, cli, pdfindex.config, pdfindex.cli.main, pdfindex.indexer, pdfindex.workers.app\n"
            "assert config.OWNER == cli.OWNER == 'another project'\n"
            "assert pdfindex.config.load and pdfindex.config.__file__.startswith(sys.argv[1])\n"
            "sys.exit(pdfindex.cli.main.main(['--version']))\n")
    env = {"PYTHONPATH": f"{target}:{other}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", "import sys\n" + code, str(target)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith("pdfindex ")


# ---- one name per module (issue 21, item 1) -----------------------------------------------

LAYERS = ("cli", "config", "contract", "indexer", "pipeline", "server", "workers")


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_has_one_importable_name(layer: str) -> None:
    """The files live in pdfindex/<layer>; the top-level <layer> is a link for people.
    Imported by the link's name, with the repository root on sys.path (as pytest and
    `python -m` put it), a layer refuses instead of loading as a second copy whose
    classes compare unequal to the first's."""
    assert (ROOT / layer).is_symlink() and (ROOT / layer).resolve() == ROOT / "pdfindex" / layer
    proc = subprocess.run([sys.executable, "-c", f"import pdfindex.{layer}\nimport {layer}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert f"ImportError: import pdfindex.{layer}, not {layer} (README, Layout)" in proc.stderr


@pytest.mark.slow
def test_a_clone_without_symlinks_runs(tmp_path: Path) -> None:
    """On a file system without symlinks git writes each link as a small file: the
    package is whole all the same (its files are real), only the pointers are text."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(clone)], check=True,
                   timeout=120)
    assert (clone / "pipeline").is_file() and not (clone / "pipeline").is_symlink()
    proc = subprocess.run([sys.executable, "-m", "pdfindex", "--version"], cwd=clone, capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 0 and proc.stdout.startswith("pdfindex "), proc.stderr
    check = subprocess.run([sys.executable, "-c", "import pdfindex.workers.api, pdfindex.pipeline, pdfindex.server"],
                           cwd=clone, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr


@pytest.mark.slow
def test_the_sdist_carries_and_runs_its_tests(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    (sdist,) = tmp_path.glob("pdfindex-*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
        tf.extractall(tmp_path, filter="data")
    for needed in ("tests/conftest.py", "tests/pdfwriter.py", "tests/builders.py", "tests/ingest_helpers.py",
                   "tests/redis_db.py", "bench/extract_speed.py", "docs/json.md", "pdfindex/pipeline/extract.py"):
        assert needed in names, needed
    unpacked = next(p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("pdfindex-"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_pdfwriter.py",
                          "tests/test_cli_contracts.py", "-k", "not broker"], cwd=unpacked, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
