"""Storage faults made real for the tests (tests/test_storage_faults.py,
tests/test_cli_faults.py): a small tmpfs to fill, a read-only bind mount, and work
done in a forked child that dropped to the nobody user (root bypasses permissions,
so a permission test must not run as root). Mounting and dropping users need root:
without it the test skips, except under CI=1, where it fails.
"""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NOBODY = 65534


def unavailable(reason: str) -> None:
    """Skip for ``reason``; under CI a failure, so that a green run cannot hide a
    fault test that never ran."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI=1: this test must run)")
    pytest.skip(reason)


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=30)


def _unmount(where: Path) -> None:
    if _run("umount", str(where)).returncode != 0:
        _run("umount", "-l", str(where))


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` for the block: a disk that fills up."""
    where.mkdir()
    if os.geteuid() != 0:
        unavailable("mounting a tmpfs needs root")
    proc = _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where))
    if proc.returncode != 0:
        unavailable(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        _unmount(where)


@contextmanager
def read_only_view(source: Path, where: Path) -> Iterator[Path]:
    """``source`` bind-mounted read-only at ``where`` for the block: a read-only file
    system, which no permission bit imitates for root."""
    where.mkdir()
    if os.geteuid() != 0:
        unavailable("bind mounts need root")
    proc = _run("mount", "--bind", str(source), str(where))
    if proc.returncode != 0:
        unavailable(f"cannot bind-mount: {proc.stderr.strip()}")
    try:
        proc = _run("mount", "-o", "remount,bind,ro", str(where))
        if proc.returncode != 0:
            unavailable(f"cannot remount read-only: {proc.stderr.strip()}")
        yield where
    finally:
        _unmount(where)


def _free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(mount: Path, leave: int) -> Path:
    """A file taking all the free space but ``leave`` bytes."""
    filler = mount / "filler"
    with open(filler, "wb") as f:
        chunk = b"\xa5" * 65536
        while _free(mount) - leave >= len(chunk):
            f.write(chunk)
            f.flush()
        rest = _free(mount) - leave
        if rest > 0:
            f.write(b"\xa5" * rest)
    return filler


def as_nobody(work: object) -> dict[str, str]:
    """Run ``work()`` (returning a dict of strings) in a forked child that dropped
    to uid/gid nobody; its result, or its error, comes back through a pipe."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            result = work()  # type: ignore[operator]
            code = 0
        except BaseException as exc:
            result = {"child error": f"{type(exc).__name__}: {exc}"}
        finally:
            with os.fdopen(write_end, "w") as out:
                out.write(json.dumps(result))
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end) as inp:
        data = inp.read()
    os.waitpid(pid, 0)
    return json.loads(data)  # type: ignore[no-any-return]
