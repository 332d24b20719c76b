"""Document-level errors, and the error policy of the extraction layer.

Policy: raise (one of these) only when the whole document cannot be read, so the
caller must decide what to do: not a PDF, no usable page tree, missing or wrong
password. Anything narrower (a bad operator, an unknown font, a corrupt stream, a
page that will not parse) is handled where it happens and recorded as a problem on
the page it damaged; the rest of the document is still extracted.

Damage or bug: handlers catch ``DAMAGE`` and pass what they caught to ``triage``.
A TypeError raised inside pdfminer.six means the file fed it something odd (it
asserts and compares without checking types); the same TypeError raised in our own
code is a bug, and turning it into a page problem would hide it from every test.
``triage`` tells them apart by where the exception was raised; in strict mode
(``Params.strict``, ``PDFINDEX_STRICT=1``, which the test suite sets) it re-raises
bugs, otherwise it records them as "internal error" and extraction goes on.

Problem and error lines are kept short (``brief``): they go to terminals, logs and
the index, and an exception that dumps a PDF dictionary can run to thousands of
characters.
"""
from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterable
from typing import SupportsIndex

import pdfminer
from pdfminer.psexceptions import PSException

from pdfindex.contract.problems import MAX_LINE, Problem, ProblemCode, as_problem, brief, code_of

__all__ = [
    "DAMAGE", "MAX_LINE", "Damaged", "ExtractionError", "InternalError", "NotAPdfError", "PasswordError", "Problem",
    "ProblemCode", "ProblemList", "as_problem", "brief", "caught", "code_of", "describe", "is_damage", "triage",
]

#: What handlers that keep going after damage catch: everything parsing damaged
#: data can raise, not Exception, so that what is not damage (a worker's time
#: limit, a MemoryError, KeyboardInterrupt) still stops the extraction. The generic
#: types among these (TypeError, ValueError, ...) are damage only when pdfminer.six
#: raised them: ``triage`` decides.
DAMAGE: tuple[type[Exception], ...] = (
    PSException, ArithmeticError, LookupError, ValueError, TypeError, AttributeError, AssertionError,
    NotImplementedError, RecursionError, EOFError, struct.error, zlib.error,
)

#: Exceptions that only data can cause, wherever they are raised.
_DATA_ONLY: tuple[type[BaseException], ...] = (PSException, zlib.error, struct.error, EOFError, RecursionError)


_PDFMINER_DIR = os.path.dirname(os.path.abspath(pdfminer.__file__)) + os.sep


class Damaged(ValueError):
    """Raised by our own code for input it recognises as damaged (an operand of
    the wrong type, a matrix with a NaN): damage by construction, never a bug."""


class InternalError(Exception):
    """Our own bug, re-raised in strict mode with the original as its cause."""


def describe(exc: BaseException) -> str:
    """``TypeError: message``, shortened."""
    return brief(f"{type(exc).__name__}: {exc}")


def _raised_in_pdfminer(exc: BaseException) -> bool:
    """Whether the innermost frame that is not the standard library's belongs to
    pdfminer.six (a ValueError from ``int()`` called by pdfminer counts as its)."""
    found = False
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(_PDFMINER_DIR):
            found = True
        elif not (filename.startswith(_STDLIB_DIR) and "site-packages" not in filename):
            found = False  # ours, or a caller's (a test's font class): not damage
        tb = tb.tb_next
    return found


_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def is_damage(exc: BaseException) -> bool:
    """Damage of the input (as opposed to a bug of ours): a data-only exception,
    our own ``Damaged``, or a generic one raised inside pdfminer.six."""
    if isinstance(exc, (_DATA_ONLY, Damaged)):
        return True
    return _raised_in_pdfminer(exc)


def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return "?"
    code = last.tb_frame.f_code
    return f"{os.path.basename(code.co_filename)}:{last.tb_lineno}"


def triage(exc: BaseException, strict: bool) -> str:
    """The problem text for an exception a handler caught: its description when it
    is damage; for our own bug, "internal error ..." or, in strict mode, the bug
    itself re-raised (as ``InternalError`` from it, so the traceback shows where)."""
    if is_damage(exc):
        return describe(exc)
    if strict:
        raise InternalError(f"our bug, not damage: {describe(exc)} at {_where(exc)}") from exc
    return brief(f"internal error: {type(exc).__name__}: {exc} ({_where(exc)})")


def caught(code: ProblemCode, what: str, exc: BaseException, strict: bool) -> Problem:
    """``what: <triage>`` as a problem of ``code``, or of ``internal_error`` when
    the exception was our own bug (``triage`` raises it in strict mode)."""
    text = triage(exc, strict)
    internal = not is_damage(exc)
    return Problem(ProblemCode.INTERNAL_ERROR if internal else code, f"{what}{text}")


class ProblemList(list[str]):
    """A page's problems: every line a ``Problem`` (shortened; a plain string gets
    code ``other``), at most ``limit`` of them kept (a hostile stream can cause
    millions), with one final ``cap_hit`` line saying how many more."""

    def __init__(self, limit: int = 200, items: Iterable[str] = ()) -> None:
        super().__init__()
        self.limit = limit
        self.dropped = 0
        for item in items:
            self.append(item)

    def append(self, problem: str) -> None:
        if len(self) < self.limit:
            super().append(as_problem(problem))
            return
        self.dropped += 1
        note = Problem(ProblemCode.CAP_HIT, f"{self.dropped} more problems on this page not listed")
        if self.dropped == 1:
            super().append(note)
        else:
            self[-1] = note

    def extend(self, problems: Iterable[str]) -> None:
        for problem in problems:
            self.append(problem)

    def insert(self, index: SupportsIndex, problem: str) -> None:
        super().insert(index, as_problem(problem))

    @property
    def full(self) -> bool:
        return len(self) >= self.limit


class ExtractionError(Exception):
    """A document that cannot be extracted at all; the message names the file."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = brief(problem)
        super().__init__(f"{source}: {self.problem}")


class NotAPdfError(ExtractionError):
    """The bytes are not a PDF file, or so damaged that no page can be found."""


class PasswordError(ExtractionError):
    """The file is encrypted and the password is missing or wrong."""

    def __init__(self, source: str, problem: str, *, missing: bool) -> None:
        self.missing = missing
        super().__init__(source, problem)
