"""Issue 9 item 8: pdfindex installs under one import name, so it sits beside a
project that owns a top-level ``config`` (or ``cli``) without either shadowing the
other; the wheel holds real files where the repository has symlinks."""
from __future__ import annotations

import subprocess
import sys
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
