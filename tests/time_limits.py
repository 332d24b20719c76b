"""A wall-clock limit around an extraction in this process, for the tests that read
real or damaged files (tests/test_realworld.py, tests/test_recovery.py): a hang
fails the test with the file's name instead of stopping the run."""
from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ExtractionTimeout(BaseException):
    """Raised by SIGALRM inside the extraction. A BaseException, so that the
    pipeline's per-page ``except Exception`` safety net cannot swallow it."""


@contextmanager
def time_limit(seconds: float, name: str) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread, POSIX); elsewhere the
    caller's elapsed-time assertion still catches a slow file, just later."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def _expired(signum: int, frame: object) -> None:
        raise ExtractionTimeout(f"{name}: extraction exceeded {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
