"""Reading order by article threads (ISO 32000-1 §12.4.3), beyond R14.

R14 keeps content-stream order and guesses no columns. But a document with article
threads says its reading order itself: the catalog's /Threads lists threads, each a
chain of beads (/F the first, /N the next), each bead a rectangle /R on a page /P.
Readers follow them, and so does the page text: on a page with beads, a glyph belongs
to the first bead, in thread order, whose rectangle holds its box centre; each bead's
glyphs are assembled as R11-R13 assemble a page (content order within the bead), in
thread order, then the glyphs outside every bead as before, a line break between
groups. Threads are taken in the order of /Threads, beads in /N order from /F.

Rectangles and glyph positions are both in default user space, so neither the page's
/Rotate nor its crop box moves a bead (PDFBox shifts beads by the crop box only
because its text positions are relative to it).

Bounded: a hostile chain that loops (a circular chain normally comes back to /F;
one that comes back elsewhere stops there) or is huge (``MAX_BEADS`` over the whole
document) ends, and finding a glyph's bead looks only at the beads of the grid cell
its centre falls in.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pdfminer.pdfpage import PDFPage
from pdfminer.pdftypes import PDFObjRef, resolve1

from .assemble import PageText
from .errors import DAMAGE, Problem, ProblemCode, triage
from .geometry import Rect
from .glyph import Glyph
from .params import Params
from .values import rect

#: Beads read over all threads of a document; past it the rest is ignored (and
#: every page says so). Real documents have tens to a few hundred.
MAX_BEADS = 10_000
#: Cells along each side of the grid a page's beads are indexed by.
_GRID = 32
#: Beads a page may have before its glyphs are looked up through the grid.
_LINEAR = 8
#: Beads of a page checked for overlapping an earlier one (``PageBeads.alone``).
_ALONE = 256


@dataclass(frozen=True, slots=True)
class Threads:
    """What a document's article threads say, read once (``PdfFile.threads``)."""

    #: Page number (1-based) -> the rectangles of its beads, in thread order.
    beads: dict[int, tuple[Rect, ...]] = field(default_factory=dict)
    #: What was wrong with the threads, a problem of every page.
    problems: tuple[Problem, ...] = ()

    def page(self, number: int) -> PageBeads | None:
        """The beads of page ``number``, None when it has none."""
        rects = self.beads.get(number)
        return PageBeads(rects) if rects else None


def read_threads(catalog: object, pages: Sequence[PDFPage], strict: bool = False) -> Threads:
    """Every bead of every thread of /Threads with a page of ``pages`` (by object
    number: a bead's /P must be one of them) and a rectangle of some area. A bead
    without them is passed over, its chain followed on. Damage while reading a
    thread ends that thread (a problem); our own bug raises in strict mode."""
    if not isinstance(catalog, dict):
        return Threads()
    try:
        threads = resolve1(catalog.get("Threads"))
    except DAMAGE as exc:
        return Threads(problems=(Problem(ProblemCode.STRUCTURE_DAMAGED,
                                         f"article threads unreadable: {triage(exc, strict)}"),))
    if not isinstance(threads, list) or not threads:
        return Threads()
    numbers: dict[object, list[int]] = {}
    for number, page in enumerate(pages, 1):
        numbers.setdefault(page.pageid, []).append(number)
    beads: dict[int, list[Rect]] = {}
    problems: list[Problem] = []
    read = 0
    for index, thread in enumerate(threads[:MAX_BEADS], 1):
        cut = False
        try:
            read, cut = _read_chain(thread, numbers, beads, read)
        except DAMAGE as exc:
            problems.append(Problem(ProblemCode.STRUCTURE_DAMAGED,
                                    f"article thread {index} unreadable: {triage(exc, strict)}"))
        if cut:
            problems.append(Problem(ProblemCode.CAP_HIT, f"article threads: more than {MAX_BEADS} beads; "
                                                         "the rest ignored"))
            break
    return Threads({number: tuple(rects) for number, rects in beads.items()}, tuple(problems))


def _read_chain(thread: object, numbers: dict[object, list[int]], beads: dict[int, list[Rect]],
                read: int) -> tuple[int, bool]:
    """Add one thread's beads (from /F along /N) to ``beads``; ``read`` beads were
    read before it. The chain ends where it comes back to a bead already seen (the
    first, in a healthy circular chain), where /N is not a reference, or at
    ``MAX_BEADS``. Returns the beads read so far, and whether the cap left one unread."""
    thread = resolve1(thread)
    if not isinstance(thread, dict):
        return read, False
    ref = thread.get("F")
    seen: set[int] = set()
    while isinstance(ref, PDFObjRef) and ref.objid not in seen:
        if read >= MAX_BEADS:
            return read, True
        seen.add(ref.objid)
        read += 1
        bead = resolve1(ref)
        if not isinstance(bead, dict):
            break
        page = bead.get("P")
        box = rect(bead.get("R"))
        if isinstance(page, PDFObjRef) and box is not None and box[0] < box[2] and box[1] < box[3]:
            for number in numbers.get(page.objid, ()):
                beads.setdefault(number, []).append(box)
        ref = bead.get("N")
    return read, False


class PageBeads:
    """A page's bead rectangles in thread order, and the bead of a point: the first
    whose rectangle holds it. With many beads, a grid over their extent lists in
    each cell the beads that reach into it, in order, up to the first that covers
    the cell whole (none after it can be the first to hold a point there)."""

    def __init__(self, rects: Sequence[Rect]) -> None:
        # Doubled, as ``assemble.visible`` doubles the centre to save the halving.
        self.rects = [(2 * x0, 2 * y0, 2 * x1, 2 * y1) for x0, y0, x1, y1 in rects]
        self.outside = len(self.rects)
        x0s, y0s, x1s, y1s = zip(*self.rects, strict=True)
        self.x0, self.y0, self.x1, self.y1 = min(x0s), min(y0s), max(x1s), max(y1s)
        # Beads no earlier bead overlaps: a point such a bead holds is its own, and
        # the next glyph, most often in the bead of the one before, is checked there first.
        # (Checked for the first _ALONE beads only: the check is quadratic.)
        self.alone = [k < _ALONE and not any(_overlap(r, q) for q in self.rects[:k]) for k, r in enumerate(self.rects)]
        self.cells: list[list[int]] | None = None
        if len(self.rects) > _LINEAR:
            self._index()

    def _index(self) -> None:
        self.cw = (self.x1 - self.x0) / _GRID
        self.ch = (self.y1 - self.y0) / _GRID
        cells: list[list[int]] = [[] for _ in range(_GRID * _GRID)]
        closed = [False] * (_GRID * _GRID)
        for k, (x0, y0, x1, y1) in enumerate(self.rects):
            i0, i1 = self._column(x0), self._column(x1)
            j0, j1 = self._row(y0), self._row(y1)
            for j in range(j0, j1 + 1):
                cy0 = self.y0 + j * self.ch
                across = y0 <= cy0 and cy0 + self.ch <= y1
                for i in range(i0, i1 + 1):
                    c = j * _GRID + i
                    if closed[c]:
                        continue
                    cells[c].append(k)
                    cx0 = self.x0 + i * self.cw
                    closed[c] = across and x0 <= cx0 and cx0 + self.cw <= x1
        self.cells = cells

    def _column(self, x: float) -> int:
        return min(_GRID - 1, max(0, int((x - self.x0) / self.cw))) if self.cw > 0 else 0

    def _row(self, y: float) -> int:
        return min(_GRID - 1, max(0, int((y - self.y0) / self.ch))) if self.ch > 0 else 0

    def find(self, x: float, y: float, hint: int = -1) -> int:
        """The index of the first bead holding the doubled point (x, y), or
        ``outside``; ``hint``: a bead to try first (the previous glyph's)."""
        if not (self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1):
            return self.outside
        rects = self.rects
        if 0 <= hint < self.outside and self.alone[hint]:
            x0, y0, x1, y1 = rects[hint]
            if x0 <= x <= x1 and y0 <= y <= y1:
                return hint
        candidates = range(len(rects)) if self.cells is None else self.cells[
            self._row(y) * _GRID + self._column(x)]
        for k in candidates:
            x0, y0, x1, y1 = rects[k]
            if x0 <= x <= x1 and y0 <= y <= y1:
                return k
        return self.outside


def _overlap(a: Rect, b: Rect) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


class ThreadText:
    """``PageText`` for a page with beads: one per bead (and one for the glyphs
    outside every bead), each given its glyphs as the page goes, so memory stays
    as flat as without threads. Its text is theirs in thread order, then the
    outside's, a line break between. With ``keep`` each group's glyphs are also
    kept, for the readers that rebuild the text from them (``groups``)."""

    def __init__(self, beads: PageBeads, params: Params, keep: bool = False) -> None:
        self.beads = beads
        self.params = params
        self.texts: dict[int, PageText] = {}
        self.kept: dict[int, list[Glyph]] | None = {} if keep else None

    def add(self, glyphs: Sequence[Glyph]) -> None:
        """Take the next glyphs (visible, in content order): each to its bead's group."""
        parts: dict[int, list[Glyph]] = {}
        find = self.beads.find
        k = -1
        for g in glyphs:
            u0x, u0y, u1x, u1y = g.box
            k = find(g.ox + g.gx + u0x + u1x, g.oy + g.gy + u0y + u1y, k)
            parts.setdefault(k, []).append(g)
        for k, part in parts.items():
            text = self.texts.get(k)
            if text is None:
                text = self.texts[k] = PageText(self.params)
            text.add(part)
            if self.kept is not None:
                self.kept.setdefault(k, []).extend(part)

    @property
    def glyphs(self) -> int:
        return sum(text.glyphs for text in self.texts.values())

    @property
    def unresolved(self) -> int:
        return sum(text.unresolved for text in self.texts.values())

    def text(self) -> str:
        """The page text (call after the last ``add``)."""
        return "\n".join(filter(None, (self.texts[k].text() for k in sorted(self.texts))))

    def groups(self) -> list[list[Glyph]]:
        """The kept glyphs, group by group in the order of the text."""
        kept = self.kept or {}
        return [kept[k] for k in sorted(kept)]
