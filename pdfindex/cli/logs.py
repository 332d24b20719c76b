"""What the command line shows of the ``logging`` records: set up by ``main`` only,
never at import (a program that imports pdfindex keeps its own logging).

Levels: ``-q`` errors only, the default warnings, ``-v`` one line per file, ``-vv``
debug. The level is set on our own ``pdfindex`` logger, not on the root, so ``-vv``
does not turn on the debug output of every library (pdfminer.six logs each token
and operator at debug). Other libraries' records reach the handler at their own
levels and are filtered: pdfminer.six's below ERROR are dropped, since the extractor
records what it recovered as page problems (``pdfindex list --problems``), and the
host-set level of the ``pdfminer`` logger is left alone.

Every line is escaped for the terminal (``terminal.shown``): the paths in it are
attacker-chosen. A line written while the progress bar is on screen goes through
``tqdm.write`` so the bar is redrawn below it instead of being torn.
"""
from __future__ import annotations

import logging
import sys
from typing import TextIO

from pdfindex.contract.display import shown

#: The logger whose level -q/-v set: every module logs under it (``logging.getLogger(__name__)``).
OURS = "pdfindex"


def level_for(verbose: int, quiet: bool) -> int:
    """The level of our logger for ``-v`` given ``verbose`` times and ``-q``."""
    if quiet:
        return logging.ERROR
    return {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)


class ShownRecords(logging.Filter):
    """Ours at the level set on our logger (it filtered already); another
    library's from WARNING, ``quiet``: from ERROR; pdfminer.six's from ERROR (its
    warnings are recoverable damage, reported per page by the extractor)."""

    def __init__(self, quiet: bool = False) -> None:
        super().__init__()
        self.floor = logging.ERROR if quiet else logging.WARNING

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        if name == OURS or name.startswith(OURS + "."):
            return True
        if name == "pdfminer" or name.startswith("pdfminer."):
            return record.levelno >= logging.ERROR
        return record.levelno >= self.floor


class _Shown(logging.Formatter):
    """``pdfindex: <message>``, the message escaped for the terminal; a traceback
    (debug only) after it unescaped, since its line breaks are meant."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"pdfindex: {shown(record.getMessage())}"
        if record.exc_info and record.levelno <= logging.DEBUG:
            text += "\n" + self.formatException(record.exc_info)
        return text


class _Handler(logging.StreamHandler):
    """Writes to the current ``sys.stderr`` (a test's capture, a redirected
    stream), around the progress bar when one is live."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass  # always the current sys.stderr

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
            progress = sys.modules.get("tqdm")  # loaded by the progress bar, which may be on screen
            if progress is not None:  # print above it
                progress.tqdm.write(line, file=sys.stderr)
            else:
                sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - logging's own policy: never raise from emit
            self.handleError(record)


def configure(verbose: int = 0, quiet: bool = False) -> None:
    """Show our records at the level of ``-v``/``-q`` on stderr. Called again (the
    tests run ``main`` many times in one process), it replaces its handler rather
    than adding a second one."""
    hand_over()
    handler = _Handler()
    handler.setFormatter(_Shown())
    handler.addFilter(ShownRecords(quiet))
    logging.getLogger().addHandler(handler)
    logging.getLogger(OURS).setLevel(level_for(verbose, quiet))


def hand_over() -> None:
    """Take our handler off the root logger, for a Celery worker to log its own way
    (a line per task, its start-up banner's "ready"): Celery leaves a root logger
    that has a handler as it is, and ours shows only pdfindex's records."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
