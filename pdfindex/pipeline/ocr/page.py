"""OCR of one extracted page: decide, get its pixels, choose how to read them, read,
and put the words on the page as text with its provenance.

What it changes on the ``Page``: its text and text map (when OCR's text is the one
indexed), ``source`` ("text", "ocr" or "text+ocr"), ``ocr`` (engine, languages,
confidence), ``ocr_decision`` (why it was or was not OCR'd) and its problems (a
refused image, a missing engine: the page keeps its text layer and ``needs_ocr``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pypdfium2 as pdfium

from ..errors import Problem, ProblemCode
from ..images import PlacedImage
from ..textmap import TextMap
from .acquire import ImageRefused, PageImage, page_image, render
from .choose import choose
from .decide import Decision, better
from .engine import EngineMissing, engine
from .options import OcrSettings
from .prepare import prepared
from .words import OcrWord, placed_words, text_map

if TYPE_CHECKING:
    from ..extract import Page

#: Words Tesseract is less sure of than this count as doubtful ("low" share).
LOW_CONFIDENCE = 60.0
#: A page or image read less confidently than this holds no text: noise, a photograph
#: or a pattern reads as one-letter "words" at 5-25 % (a truncated JPEG's noise: 9 %, a
#: grey gradient: 23 %), while the least confident page of the scans corpus (a Chinese
#: fax) reads at 71 % and the others at 74 % or more. Its "words" would only be noise
#: in the index, and the page would no longer be listed as needing OCR.
TEXT_FLOOR = 30.0


@dataclass(frozen=True, slots=True)
class OcrInfo:
    engine: str
    languages: str
    #: Mean word confidence (by characters), 0-100.
    confidence: float
    #: Share of words under LOW_CONFIDENCE.
    low_share: float
    words: int
    #: How orientation and language were settled (choose.py).
    how: str
    #: The recognised words on the page, in text order.
    boxes: tuple[OcrWord, ...] = field(default=(), repr=False)


class Renderer:
    """A document's pdfium copy, opened on the first page that needs pixels (most
    documents never do) and closed with the document."""

    def __init__(self, data: bytes, password: str | None) -> None:
        self.data, self.password = data, password
        self._document: Any = None

    def __call__(self) -> pdfium.PdfDocument:
        if self._document is None:
            try:
                self._document = pdfium.PdfDocument(self.data, password=self.password)
            except pdfium.PdfiumError as exc:
                raise ImageRefused(f"the renderer cannot open the file: {exc}") from exc
        return self._document

    def close(self) -> None:
        if self._document is not None:
            self._document.close()
            self._document = None


def ocr_page(document: Renderer, page: Page, settings: OcrSettings, decision: Decision) -> None:
    """OCR ``page`` as ``decision`` says (decide.py), in place."""
    try:
        pdf_page = document()[page.number - 1]
        try:
            if decision.action == "page":
                _whole(pdf_page, page, settings)
            else:
                _regions(pdf_page, page, settings, decision)
        finally:
            pdf_page.close()  # now, not in a finalizer a time limit may interrupt (acquire._pixels)
    except EngineMissing as exc:
        page.problems.append(Problem(ProblemCode.OCR_FAILED, f"not OCR'd: {exc}"))
    except (ImageRefused, TimeoutError, ValueError, OSError, MemoryError, RuntimeError) as exc:
        page.problems.append(Problem(ProblemCode.OCR_FAILED, f"OCR failed: {exc}"))


def _read(image: PageImage, settings: OcrSettings) -> tuple[TextMap[OcrWord], OcrInfo]:
    ocr = engine(settings.timeout)
    choice = choose(ocr, prepared(image), list(settings.languages))
    words = placed_words(choice.reading, choice.page.map)
    low = sum(1 for w in choice.reading.words if w.confidence < LOW_CONFIDENCE)
    info = OcrInfo(f"tesseract {ocr.version}", choice.reading.language, round(choice.reading.confidence, 1),
                   round(low / len(words), 3) if words else 0.0, len(words), choice.why, tuple(words))
    return text_map(choice.reading, words), info


def _whole(pdf_page: pdfium.PdfPage, page: Page, settings: OcrSettings) -> None:
    image = page_image(pdf_page, page.box, page.rotation, page.images, settings.max_image_pixels,
                       settings.max_page_pixels)
    mapped, info = _read(image, settings)
    trusted = info.confidence >= TEXT_FLOOR
    if page.quality.glyphs:  # both measured, both recorded; the better one indexed
        page.ocr = info
        # force is OCRmyPDF's --force-ocr: what OCR reads replaces the text layer,
        # unless it reads nothing (a layer drawn invisibly, over a blank page)
        if trusted and settings.mode == "force" and info.words:
            page.ocr_decision += f"; OCR's text indexed in place of the text layer (confidence {info.confidence:.0f} %)"
        elif trusted and settings.mode != "force" and better(info.confidence, page.quality):
            page.ocr_decision += f"; OCR's text indexed (confidence {info.confidence:.0f} %)"
        else:
            page.ocr_decision += (f"; the text layer kept (coverage {page.quality.coverage or 0:.0%} against "
                                  f"OCR confidence {info.confidence:.0f} %)")
            return
    elif not trusted:  # specks, a photo, noise: no text to index
        untrusted = f"OCR read no text it trusts (confidence {info.confidence:.0f} %)"
        page.ocr_decision += f"; {untrusted}"
        page.problems.append(Problem(ProblemCode.OCR_FAILED, untrusted))
        return
    else:
        page.ocr = info
    page.text, page.text_map, page.source = mapped.text, mapped, "ocr"


def _regions(pdf_page: pdfium.PdfPage, page: Page, settings: OcrSettings, decision: Decision) -> None:
    image = render(pdf_page, page.box, page.rotation, page.images, settings.max_image_pixels,
                   settings.max_page_pixels)
    texts = []
    for region in decision.regions:
        mapped, info = _read(_crop(image, region), settings)
        if mapped.text.strip() and info.confidence < TEXT_FLOOR:
            page.ocr_decision += f"; image {region.name} read as no text (confidence {info.confidence:.0f} %)"
        elif mapped.text.strip():
            texts.append(mapped.text)
            page.ocr = info
    if texts:
        page.text = "\n\n".join([page.text, *texts]) if page.text else "\n\n".join(texts)
        page.text_map = None  # the text map covers the text layer alone
        page.source = "text+ocr"


def _crop(image: PageImage, region: PlacedImage) -> PageImage:
    """The part of a page render an image covers."""
    a, _, _, d, e, f = image.map.matrix  # pixels → page, axis-aligned for a render
    x0, y0, x1, y1 = region.bbox
    left, right = sorted(((x0 - e) / a, (x1 - e) / a))
    top, bottom = sorted(((y0 - f) / d, (y1 - f) / d))
    width, height = image.image.size
    box = (max(0, int(left)), max(0, int(top)), min(width, int(right) + 1), min(height, int(bottom) + 1))
    cropped = image.image.crop(box)
    return PageImage(cropped, image.dpi, image.map.then((1.0, 0.0, 0.0, 1.0, box[0], box[1])), image.origin)


__all__ = ["OcrInfo", "Renderer", "ocr_page"]
