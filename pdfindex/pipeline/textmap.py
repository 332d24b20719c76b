"""Text with provenance: a page's text and, for each of its characters, what drew it.

pdfplumber's ``TextMap`` (utils/text.py) is the model: each character of the text is
paired with the char object that drew it, or with nothing for white space the layout
implied. Here the text is the page text exactly as the index holds it
(``assemble.assemble`` makes both), and each character names its glyph by index, or
None for a space or line break that assembly inserted (word spaces, line breaks,
collapsed space runs). One map serves every reader of the text, so none re-derives
the assembly's rules: the marked page image (server/marks.py) turns a token's
character span into glyph boxes, ``pdfindex explain`` (explain.py) reads which line
each glyph is on.

What drew a character is anything with a box (``Drawn``): the glyph records of R1, or
a word box recognised by OCR, all of whose characters lead to that word.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from .geometry import Point

#: A box on the page in PDF user space: four corners (x, y) in drawing order.
Quad = tuple[float, float, float, float, float, float, float, float]


class Drawn(Protocol):
    """What drew characters of a page's text, as far as boxing them goes."""

    @property
    def quad(self) -> Quad:
        """The corners: along the writing direction on the descent side, then back on
        the ascent side (``Glyph.quad``)."""

    @property
    def direction(self) -> Point:
        """The unit vector of the writing direction, which a box of several runs along."""


D = TypeVar("D", bound=Drawn)


@dataclass(frozen=True, slots=True)
class TextMap(Generic[D]):
    """A page's text and the glyph of each character. Indices, not the glyphs
    themselves, so that the characters of one glyph (a ligature's letters, an
    ActualText's words) are seen to share it."""

    text: str
    #: For each character of ``text``: the index in ``glyphs`` of what drew it, or
    #: None for a space or line break that assembly inserted.
    owners: tuple[int | None, ...]
    #: What drew the text, in text order.
    glyphs: tuple[D, ...]
    #: For each of ``glyphs``: the number of its line (0 first), a box never spans two.
    lines: tuple[int, ...]

    def glyphs_of(self, start: int, end: int) -> list[int]:
        """The glyphs of ``text[start:end]``, each once, in text order."""
        seen: dict[int, None] = {}
        for owner in self.owners[max(start, 0):max(end, 0)]:
            if owner is not None:
                seen.setdefault(owner, None)
        return list(seen)

    def line_texts(self) -> dict[int, str]:
        """Each line's part of the text, from its first character to its last, by line
        number; a line of white space alone has none (the text holds none of it)."""
        spans: dict[int, list[int]] = {}
        for k, owner in enumerate(self.owners):
            if owner is not None:
                spans.setdefault(self.lines[owner], [k, k])[1] = k
        return {line: self.text[first:last + 1] for line, (first, last) in spans.items()}
