"""Document-level errors, and the error policy of the extraction layer.

Policy: raise (one of these) only when the whole document cannot be read, so the
caller must decide what to do: not a PDF, no usable page tree, missing or wrong
password. Anything narrower (a bad operator, an unknown font, a corrupt stream, a
page that will not parse) is handled where it happens and recorded as a problem on
the page it damaged; the rest of the document is still extracted.
"""
from __future__ import annotations

import struct
import zlib

from pdfminer.psexceptions import PSException

#: What parsing damaged data raises. Handlers that keep going after damage catch
#: these, not Exception, so that what is not damage (a worker's time limit, a
#: MemoryError, KeyboardInterrupt) still stops the extraction.
DAMAGE: tuple[type[Exception], ...] = (
    PSException, ArithmeticError, LookupError, ValueError, TypeError, AttributeError, AssertionError,
    NotImplementedError, RecursionError, EOFError, struct.error, zlib.error,
)


class ExtractionError(Exception):
    """A document that cannot be extracted at all; the message names the file."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class NotAPdfError(ExtractionError):
    """The bytes are not a PDF file, or so damaged that no page can be found."""


class PasswordError(ExtractionError):
    """The file is encrypted and the password is missing or wrong."""

    def __init__(self, source: str, problem: str, *, missing: bool) -> None:
        self.missing = missing
        super().__init__(source, problem)
