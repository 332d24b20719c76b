"""Page problems: one type from the extractor to the index and back.

Extraction records what it handled on a page (pipeline/errors.py's policy): a font
that is not there, a stream that does not decode, a cap that cut something. The
message is for people and may change wording; the code is for machines: it is
indexed (``problem:font_missing``), counted per document and listed (``pdfindex list
--problems``). The same ``Problem`` value is what the pipeline records, what an
outcome carries between processes, what the index stores (as ``(code, message)``)
and reads back, and what a hit holds; its JSON is ``{code, message}``
(``shapes.problems_json``). It is a ``str``, so code that printed, joined or
compared problems as text goes on working.
"""
from __future__ import annotations

from enum import StrEnum
from typing import Any

#: Longest problem or error line we keep (the issue asks for ~200 characters).
MAX_LINE = 200


def brief(text: str, limit: int = MAX_LINE) -> str:
    """One short line: control characters and newlines become spaces, and a long
    text keeps its head and tail with the count of what was left out."""
    if len(text) > 4 * limit:  # do not scan megabytes to shorten them
        text = text[:2 * limit] + text[-limit:]
        cut_hint = True
    else:
        cut_hint = False
    line = " ".join(text.split())
    if len(line) <= limit and not cut_hint:
        return line
    head, tail = limit * 3 // 4, limit // 8
    return f"{line[:head]} …[cut]… {line[-tail:]}"


class ProblemCode(StrEnum):
    """What kind of thing a page lost: the stable, searchable part of a problem
    (``problem:font_missing``), while its text may change wording between versions.
    The set is what the extractor records; docs/extraction.md lists each with the
    messages it covers."""

    #: A font the text uses is not in the page's resources, no Tf came first, or a
    #: predefined CMap is not available: glyphs are unresolved or decoded as Identity.
    FONT_MISSING = "font_missing"
    #: A font dictionary or its programs could not be read.
    FONT_DAMAGED = "font_damaged"
    #: A content, font, CMap or XMP stream did not decode (bad filter, corrupt data).
    STREAM_DAMAGED = "stream_damaged"
    #: A bound of ``Params`` (or the problem cap itself) cut something; the text before
    #: the cut is kept.
    CAP_HIT = "cap_hit"
    #: Content-stream syntax or operator errors: stray bytes, unbalanced arrays,
    #: unknown operators, missing or bad operands.
    CONTENT_SYNTAX = "content_syntax"
    #: A Do names an XObject the page's resources do not have.
    XOBJECT_MISSING = "xobject_missing"
    #: A form draws itself; the repeat is not entered.
    FORM_CYCLE = "form_cycle"
    #: The file's structure (xref, trailer, object streams, /Length) was damaged and
    #: repaired by scanning: every page of the file carries it.
    STRUCTURE_DAMAGED = "structure_damaged"
    #: Missing or invalid MediaBox, or a CropBox outside it.
    BOX_INVALID = "box_invalid"
    #: Info or XMP metadata ignored (not XML, declares a DTD, unreadable date).
    METADATA_DAMAGED = "metadata_damaged"
    #: The page's interpretation stopped early on damage; its text is truncated.
    PAGE_STOPPED = "page_stopped"
    #: The decoded text is implausible (plausibility.py): unreadable characters, words
    #: mixing scripts, Latin words without vowels. The text is kept; the page needs OCR.
    TEXT_SUSPECT = "text_suspect"
    #: A page chosen for OCR was not OCR'd: no engine or language data, an image over
    #: the caps or undecodable, the engine's deadline. The page keeps ``needs_ocr``.
    OCR_FAILED = "ocr_failed"
    #: Our own bug, caught so one file does not stop an ingest (never in strict mode).
    INTERNAL_ERROR = "internal_error"
    #: Text appended by code that gave no code (compatibility with callers that add
    #: plain strings); the extractor itself never records it.
    OTHER = "other"


#: The codes, in the order ``list --help`` and docs/extraction.md give them.
PROBLEM_CODES: tuple[str, ...] = tuple(code.value for code in ProblemCode)


class Problem(str):
    """One page problem: its text (this string, shortened by ``brief``) and its
    ``code``. A ``str`` so that everything that printed, joined or compared
    problems as text goes on working; hashing is the text's, and two problems are
    equal when their texts and codes are.
    Where it leaves the process (the index, JSON) the code is written as its plain
    text, so nothing stored depends on this class."""

    code: ProblemCode

    def __new__(cls, code: ProblemCode | str, message: str) -> Problem:
        self = super().__new__(cls, brief(message))
        self.code = code if type(code) is ProblemCode else ProblemCode(code)  # the lookup costs ~1 µs
        return self

    def __eq__(self, other: object) -> bool:
        # two problems are equal when code and text are; a problem and a plain
        # string when the text is
        if isinstance(other, Problem):
            return str.__eq__(self, other) and self.code == other.code
        return str.__eq__(self, other)

    __hash__ = str.__hash__

    @property
    def message(self) -> str:
        """The text alone, as a plain ``str`` (what the index stores)."""
        return str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # pages are pickled between pool processes; str's own reduction would
        # call __new__ with the text alone
        return (Problem, (self.code, str(self)))

    def __repr__(self) -> str:
        return f"Problem({str(self.code)!r}, {str(self)!r})"


def code_of(problem: str) -> ProblemCode:
    """The code of a problem, ``other`` for a plain string."""
    return problem.code if isinstance(problem, Problem) else ProblemCode.OTHER


def as_problem(problem: str) -> Problem:
    """A problem as is, or a plain string as a problem of code ``other``."""
    return problem if isinstance(problem, Problem) else Problem(ProblemCode.OTHER, problem)


