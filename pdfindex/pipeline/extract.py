"""The extraction API the index and workers call: a document in, per-page text,
quality, visible box and problems out."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .annotations import appearances
from .assemble import PageText, replace_actual_text, visible
from .document import PdfFile, Source, page_content, page_resources, page_rotation, visible_box
from .fonts import Font
from .geometry import IDENTITY, Rect
from .glyph import Glyph
from .layout import layout_text
from .interpreter import Interpreter
from .metadata import Metadata, read_metadata
from .errors import DAMAGE, Problem, ProblemCode, ProblemList, caught
from .params import DEFAULT_PARAMS, Params
from .quality import Quality, from_counts
from .streams import page_budget
from .images import PlacedImage
from .ocr.decide import decide, needs_regions_check
from .ocr.options import OcrSettings
from .textmap import TextMap
from .threads import ThreadText

if TYPE_CHECKING:
    from .ocr.page import OcrInfo, Renderer
    from .ocr.words import OcrWord


#: observe(drawn, shown): see extract_page.
Observer = Callable[[list[Glyph], list[Glyph]], None]


@dataclass(slots=True)
class Page:
    number: int  # 1-based
    text: str
    quality: Quality
    box: Rect
    #: What extraction handled on this page: ``Problem`` values (text with a
    #: ``code``; contract/problems.py), still strings for whoever prints them.
    problems: list[str] = field(default_factory=list)
    #: R2: the page content stream's own glyphs (forms excluded, nothing filtered),
    #: kept only when asked for, since a book has millions.
    glyphs: list[Glyph] = field(default_factory=list)
    #: The images the page draws (images.py), for OCR.
    images: list[PlacedImage] = field(default_factory=list)
    #: /Rotate, in degrees clockwise.
    rotation: int = 0
    #: Where ``text`` comes from: "text" (the text layer), "ocr", "text+ocr" (the
    #: text layer, then what OCR read in its images without text).
    source: str = "text"
    #: What OCR read, when it ran (ocr/page.py), and why it did or did not run.
    ocr: OcrInfo | None = None
    ocr_decision: str = ""
    #: Chosen for OCR, which was deferred (``OcrSettings.defer``).
    ocr_pending: bool = False
    #: The text with what drew each character, for an OCR'd page (its words); a
    #: text-layer page's is made again on demand (explain, marks).
    text_map: TextMap[OcrWord] | None = None


@dataclass(slots=True)
class Document:
    source: str
    page_count: int
    pages: list[Page]
    info: dict[str, str]
    encrypted: bool
    #: Info and XMP merged (pipeline/metadata.py); its problems are also page 1's.
    metadata: Metadata = field(default_factory=Metadata)


def extract_page(pdf: PdfFile, number: int, fonts: dict[object, Font] | None = None, *,
                 params: Params = DEFAULT_PARAMS, keep_glyphs: bool = False, layout: bool = False,
                 observe: Observer | None = None) -> Page:
    """Interpret one page (1-based). Never raises for damage inside the page: what
    could not be read is in ``Page.problems``. Bounded: the page's decoded data,
    strings, arrays and glyphs have the caps of ``params``, and its text is
    assembled as it goes, so the glyph records held stay under max_held_glyphs
    (except with ``keep_glyphs``, which keeps the page stream's records, and
    ``layout``, which keeps the visible ones to lay the text out on a grid: R15;
    the quality is the reading-flow text's, measured on the same glyphs).
    ``observe(drawn, shown)`` sees each chunk the text assembly is given: the
    glyphs drawn (forms and annotations included, ActualText applied) and those of
    them inside the visible box (R10), for tools that mark or explain a page. On a
    page with article beads (``params.threads``, threads.py) the text follows the
    threads, and ``observe`` sees the shown glyphs once the page is drawn, bead by
    bead, in the order of its text (``shown`` empty in the calls before)."""
    problems = ProblemList(params.max_page_problems)
    page = pdf.pages[number - 1]
    threads = pdf.threads(params.strict) if params.threads else None
    beads = threads.page(number) if threads is not None else None
    text = PageText(params) if beads is None else ThreadText(beads, params, keep=observe is not None)
    kept: list[Glyph] = []
    placed: list[Glyph] = []

    def take(glyphs: list[Glyph], spans: list[tuple[int, int, str]]) -> None:
        if keep_glyphs:
            kept.extend(g for g in glyphs if g.token >= 0)
        drawn = replace_actual_text(glyphs, spans)
        shown = visible(drawn, box)
        if observe is not None:
            observe(drawn, shown if beads is None else [])
        if layout:
            placed.extend(shown)
        text.add(shown)

    with page_budget(params, problems):
        box = visible_box(page, problems)
        if threads is not None:
            problems.extend(threads.problems)
        interpreter = Interpreter(params, fonts if fonts is not None else {}, problems, sink=take)
        try:
            interpreter.run_page(page_content(page, problems), page_resources(page), IDENTITY)
            for form, key, matrix in appearances(page):
                interpreter.run_form(form, key, matrix, "annotation appearance")
        except RecursionError:
            problems.append(Problem(ProblemCode.CAP_HIT, "content nested too deeply; page text truncated"))
        except DAMAGE as exc:  # last line of defence: one page, not the document
            problems.append(caught(ProblemCode.PAGE_STOPPED, "page interpretation stopped: ", exc, params.strict))
        interpreter.finish()
    if observe is not None and isinstance(text, ThreadText):
        for group in text.groups():
            observe([], group)
    page_text = text.text()
    quality = from_counts(text.glyphs, text.unresolved, params, page_text)
    if quality.suspect:
        problems.append(Problem(ProblemCode.TEXT_SUSPECT, quality.suspect))
    return Page(
        number=number,
        text=layout_text(placed, params, page_rotation(page)) if layout else page_text,
        quality=quality,
        box=box,
        problems=list(problems),  # a plain list: pages are pickled between processes
        glyphs=kept,
        images=interpreter.images,
        rotation=page_rotation(page),
    )


def parse_page_ranges(spec: str, page_count: int) -> list[int]:
    """``"1-3,7"`` → [1, 2, 3, 7]; open ranges (``"5-"``, ``"-3"``) run to the last
    page or from the first; an empty spec is every page (R16). Raises ValueError
    saying what is wrong with the first bad part: not a number, page 0, a range
    that runs backwards, or a page past the last one (a range of pages the file
    does not have would otherwise extract nothing without a word)."""
    if not spec.strip():
        return list(range(1, page_count + 1))
    numbers: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        lo_s, dash, hi_s = (s.strip() for s in part.partition("-"))
        if not all(s.isascii() and s.isdigit() for s in (lo_s, hi_s) if s) or not (lo_s or hi_s):
            raise ValueError(f"bad page range {part!r}: pages are given as N, N-M, N- or -M (whole numbers)")
        lo = int(lo_s) if lo_s else 1
        hi = (int(hi_s) if hi_s else page_count) if dash else lo
        if lo < 1:
            raise ValueError(f"bad page range {part!r}: pages are numbered from 1")
        if hi < lo:
            raise ValueError(f"bad page range {part!r}: it runs backwards")
        if hi > page_count:
            raise ValueError(f"bad page range {part!r}: the document has {page_count} "
                             f"page{'s' if page_count != 1 else ''}")
        numbers.extend(range(lo, hi + 1))
    return numbers


def iter_pages(pdf: PdfFile, pages: Iterable[int] | None = None, *, params: Params = DEFAULT_PARAMS,
               keep_glyphs: bool = False, layout: bool = False, ocr: OcrSettings | None = None,
               password: str | None = None) -> Iterator[Page]:
    """Pages one at a time, sharing one font cache, so a worker can stream them;
    each OCR'd as ``ocr`` decides (None: not at all)."""
    fonts: dict[object, Font] = {}
    numbers = range(1, pdf.page_count + 1) if pages is None else pages
    renderer: list[Renderer] = []  # made for the first page OCR reads
    try:
        for number in numbers:
            if 1 <= number <= pdf.page_count:
                page = extract_page(pdf, number, fonts, params=params, keep_glyphs=keep_glyphs, layout=layout)
                if ocr is not None:
                    _ocr(pdf, page, ocr, password, renderer, params)
                yield page
    finally:
        for made in renderer:
            made.close()


def _ocr(pdf: PdfFile, page: Page, ocr: OcrSettings, password: str | None, renderer: list[Renderer],
         params: Params) -> None:
    """Decide whether ``page`` is OCR'd (decide.py), and OCR it if so."""
    texted = _texted(pdf, page.number, params) if needs_regions_check(
        ocr.mode, page.quality, page.images, page.box) else None
    decision = decide(ocr.mode, page.quality, page.images, page.box, texted)
    page.ocr_decision = decision.why
    if decision.action == "none":
        return
    if ocr.defer:
        page.ocr_pending = True
        return
    from .ocr import page as ocr_stage  # noqa: PLC0415 - Tesseract, Pillow, pdfium: only where pages are OCR'd
    if not renderer:
        renderer.append(ocr_stage.Renderer(pdf.data, password))
    ocr_stage.ocr_page(renderer[0], page, ocr, decision)


def _texted(pdf: PdfFile, number: int, params: Params) -> list[Rect]:
    """The boxes of a page's visible glyphs (extracted again: this is asked only of a
    page with a large image, about to be OCR'd, where milliseconds do not count)."""
    boxes: list[Rect] = []

    def seen(_drawn: list[Glyph], shown: list[Glyph]) -> None:
        for glyph in shown:
            q = glyph.quad
            boxes.append((min(q[0::2]), min(q[1::2]), max(q[0::2]), max(q[1::2])))

    extract_page(pdf, number, params=params, observe=seen)
    return boxes


def extract(source: Source, password: str | None = None, pages: Iterable[int] | None = None, *,
            params: Params = DEFAULT_PARAMS, keep_glyphs: bool = False, layout: bool = False,
            ocr: OcrSettings | None = None) -> Document:
    """Extract a PDF given as a path or bytes. Raises an ``ExtractionError`` subclass
    only when the document as a whole cannot be read (see errors.py). ``layout``:
    each page's text laid out on a character grid (R15) instead of reading flow;
    ``ocr``: which pages are OCR'd and how (ocr/page.py; None: none)."""
    pdf = PdfFile(source, password)
    info = pdf.info()
    metadata = read_metadata(pdf.doc.catalog, info)
    extracted = list(iter_pages(pdf, pages, params=params, keep_glyphs=keep_glyphs, layout=layout, ocr=ocr,
                                password=password))
    if extracted and extracted[0].number == 1:
        extracted[0].problems.extend(metadata.problems)
    return Document(source=pdf.name, page_count=pdf.page_count, pages=extracted, info=info,
                    encrypted=pdf.encrypted, metadata=metadata)
