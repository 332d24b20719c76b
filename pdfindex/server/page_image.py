"""A page rendered to PNG with the query's words marked (issue 10), in-process.

pdfium (pypdfium2) draws the page; the boxes come from our own glyph quads
(server/marks.py), never from pdfium's text layer, so what is marked is what the
index matched. Quads are in PDF user space; ``to_pixels`` maps them onto the
bitmap with the page's visible box (crop box within media box) and /Rotate, as
pdfium laid the page out.

Bounded in pixels: the width is clamped to MIN_WIDTH..MAX_WIDTH and the height to
MAX_HEIGHT (a 1 x 100000 pt page would otherwise ask for a 2000 x 200 million
pixel bitmap). Time and memory are bounded by the caller's process (server/render.py
runs this in a pool of capped processes); extraction is bounded as the pipeline is.

pdfium is not thread-safe: call these from one thread per process.

Errors are ``RenderError`` subclasses with one line naming the file and the
problem, and ``status``, the HTTP status they suggest.
"""
from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageDraw

from pdfindex.indexer.marks import matching_spans
from pdfindex.pipeline import DEFAULT_PARAMS, ExtractionError, Page, Params, PasswordError, PdfFile, iter_pages
from pdfindex.pipeline.document import visible_box
from pdfindex.pipeline.geometry import Rect
from pdfindex.pipeline.ocr.decide import decide
from pdfindex.pipeline.ocr.options import OcrSettings
from pdfindex.pipeline.ocr.words import OcrWord
from pdfindex.pipeline.textmap import TextMap
from pdfindex.workers.files import read_pdf

from .marks import MAX_BOXES, Quad, mark_quads, span_quads
from .page_glyphs import page_text_glyphs

DEFAULT_WIDTH = 1000
MIN_WIDTH = 100
MAX_WIDTH = 2000
#: Pixels of height at most; with MAX_WIDTH this caps a bitmap at 8 million pixels
#: (24 MB of RGB).
MAX_HEIGHT = 4000
#: The marks: yellow, 90/255 opaque (text under them stays readable).
MARK_RGB = (255, 214, 0)
MARK_ALPHA = 90
#: zlib level of the PNG. Measured on a page of text at 1000 px: level 1 encodes in
#: 41 ms to 339 KB, Pillow's default 6 in 86 ms to 410 KB (9: 261 ms, 400 KB); the
#: encoding is most of a render.
PNG_COMPRESS_LEVEL = 1

_ROTATIONS = (0, 90, 180, 270)


class RenderError(Exception):
    """A page image that cannot be made. ``status``: the HTTP status it suggests
    (those of server/images.py and docs/serve.md)."""

    status: ClassVar[int] = 500


class PageOutOfRange(RenderError):
    status = 404


class DocumentGone(RenderError):
    """The indexed file is no longer where the index says (moved or deleted)."""

    status = 404


class DocumentChanged(RenderError):
    """The file on disk is not the content that was indexed."""

    status = 409


class DocumentEncrypted(RenderError):
    """Encrypted, and no known password opens it."""

    status = 409


class DocumentUnreadable(RenderError):
    """The PDF (or the page) cannot be read by the extractor or the renderer."""

    status = 422


class RenderTimeout(RenderError):
    status = 503


class RenderFailed(RenderError):
    """The render process crashed, ran out of memory, or met an unexpected error."""

    status = 500


class RendererBusy(RenderError):
    """Every render process stayed busy for longer than a request may wait."""

    status = 503


class RendererClosed(RenderError):
    status = 503


def clamp_width(width: int) -> int:
    """The width the image is drawn at: ``width`` within MIN_WIDTH..MAX_WIDTH."""
    return max(MIN_WIDTH, min(MAX_WIDTH, int(width)))


def image_size(page_width: float, page_height: float, width: int) -> tuple[int, int]:
    """Pixels (width, height) of a page of this displayed size in points: ``width``
    wide (clamped), unless that would be taller than MAX_HEIGHT; never under 1."""
    scale = clamp_width(width) / page_width
    if page_height * scale > MAX_HEIGHT:
        scale = MAX_HEIGHT / page_height
    return max(1, min(MAX_WIDTH, round(page_width * scale))), max(1, min(MAX_HEIGHT, round(page_height * scale)))


def to_pixels(quad: Sequence[float], box: Rect, rotation: int, size: tuple[int, int]) -> list[tuple[float, float]]:
    """User-space corners to bitmap pixels (origin top left, y down) for a page whose
    visible box is ``box`` (x0, y0, x1, y1), turned ``rotation`` degrees clockwise
    (/Rotate) and drawn ``size`` pixels large. pdfium lays a page out the same way
    (FPDF_PageToDevice; the tests compare the two)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    width, height = size
    turned = rotation in (90, 270)
    sx = width / (h if turned else w)
    sy = height / (w if turned else h)
    out = []
    for k in range(0, len(quad) - 1, 2):
        u, v = quad[k] - x0, y1 - quad[k + 1]  # from the top left corner, y down
        if rotation == 90:
            u, v = h - v, u
        elif rotation == 180:
            u, v = w - u, h - v
        elif rotation == 270:
            u, v = v, w - u
        out.append((u * sx, v * sy))
    return out


def open_pdf(data: bytes, passwords: Sequence[str] = (), name: str = "<bytes>") -> tuple[PdfFile, str | None]:
    """The document and the password that opened it (None: none was needed)."""
    for password in (None, *passwords):
        try:
            return PdfFile(data, password), password
        except PasswordError:
            continue
        except ExtractionError as exc:
            raise DocumentUnreadable(f"{name}: {exc.problem}") from None
    more = "; no known password opens it" if passwords else "; a password is required"
    raise DocumentEncrypted(f"{name}: encrypted{more}")


def page_marks(pdf: PdfFile, page: int, terms: Iterable[str], language: str,
               params: Params = DEFAULT_PARAMS) -> list[Quad]:
    """The boxes of ``terms`` (index terms, ``PageIndex.terms_to_mark``) on page
    ``page`` (1-based), from that page interpreted again with the glyphs its text
    was assembled from (server/page_glyphs.py)."""
    wanted = frozenset(terms)
    if not wanted or not 1 <= page <= pdf.page_count:
        return []
    glyphs, extracted = page_text_glyphs(pdf, page, params)
    read = ocr_words(pdf, extracted, params)
    if read is not None:
        return span_quads(read, matching_spans(language, read.text, wanted))
    return mark_quads(glyphs, extracted.box, lambda text: matching_spans(language, text, wanted), params)


def ocr_words(pdf: PdfFile, extracted: Page, params: Params = DEFAULT_PARAMS) -> TextMap[OcrWord] | None:
    """The text map of the ``extracted`` page as OCR read it when it was indexed (a
    page OCR reads whole: a scan, or a suspect text layer OCR beat), else None. Read
    again: Tesseract reads the same pixels the same way, and the index keeps no
    word boxes (they would double its size for the pages few people look at)."""
    if decide("auto", extracted.quality, extracted.images, extracted.box).action != "page":
        return None
    page = next(iter_pages(pdf, [extracted.number], params=params, ocr=OcrSettings("auto")))
    return page.text_map if page.source == "ocr" else None


def render_png(data: bytes, page: int, quads: Iterable[Quad], width: int = DEFAULT_WIDTH, *,
               password: str | None = None, box: Rect | None = None, name: str = "<bytes>") -> bytes:
    """Page ``page`` (1-based) of ``data`` drawn by pdfium ``width`` pixels wide (see
    ``image_size``) with ``quads`` (user space) as translucent boxes, as PNG.
    ``box``: the visible box our extractor found, used where pdfium finds none
    (a crop box outside the media box)."""
    try:
        document = pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise DocumentEncrypted(f"{name}: encrypted; the renderer was not given a password that opens it") from None
        raise DocumentUnreadable(f"{name}: the renderer cannot read this PDF ({exc})") from None
    try:
        if not 1 <= page <= len(document):
            raise DocumentUnreadable(f"{name}: page {page} cannot be drawn: the renderer finds "
                                     f"{len(document)} pages in this file (it is damaged)")
        pdf_page = document[page - 1]
        try:
            return _draw(pdf_page, quads, width, box, name, page)
        finally:
            pdf_page.close()
    finally:
        document.close()


def _draw(pdf_page: pdfium.PdfPage, quads: Iterable[Quad], width: int, box: Rect | None, name: str,
          page: int) -> bytes:
    page_width, page_height = pdf_page.get_size()
    if not (page_width >= 1e-3 and page_height >= 1e-3) and box is not None:
        pdf_page.set_cropbox(*box)  # pdfium found no visible area; ours is the media box
        page_width, page_height = pdf_page.get_size()
    if not (page_width >= 1e-3 and page_height >= 1e-3):
        raise DocumentUnreadable(f"{name}: page {page} has no visible area to draw")
    rotation = pdf_page.get_rotation()
    if rotation not in _ROTATIONS:
        rotation = 0
    size = image_size(page_width, page_height, width)
    bitmap = pdfium.PdfBitmap.new_native(size[0], size[1], pdfium_c.FPDFBitmap_BGR, rev_byteorder=True)
    try:
        bitmap.fill_rect((255, 255, 255, 255), 0, 0, size[0], size[1])
        pdfium_c.FPDF_RenderPageBitmap(bitmap, pdf_page, 0, 0, size[0], size[1], 0,
                                       pdfium_c.FPDF_ANNOT | pdfium_c.FPDF_REVERSE_BYTE_ORDER)
        image = bitmap.to_pil().copy()  # detached from pdfium's buffer
    finally:
        bitmap.close()
    visible = pdf_page.get_bbox()
    draw_marks(image, [to_pixels(q, visible, rotation, size) for q in quads])
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return out.getvalue()


def draw_marks(image: Image.Image, polygons: Iterable[Sequence[tuple[float, float]]]) -> None:
    """Translucent boxes over ``image`` (RGB), drawn on one mask first so that
    overlapping boxes are no darker than one. At most MAX_BOXES."""
    mask = Image.new("L", image.size, 0)
    draw = ImageDraw.Draw(mask)
    drawn = 0
    for corners in polygons:
        # fill and outline: a box thinner than a pixel still shows
        draw.polygon(list(corners), fill=MARK_ALPHA, outline=MARK_ALPHA)
        drawn += 1
        if drawn >= MAX_BOXES:
            break
    if drawn:
        image.paste(MARK_RGB, (0, 0, *image.size), mask)


def marked_png(data: bytes, page: int, terms: Iterable[str], language: str, width: int = DEFAULT_WIDTH, *,
               passwords: Sequence[str] = (), name: str = "<bytes>", params: Params = DEFAULT_PARAMS) -> bytes:
    """Page ``page`` (1-based) of the PDF ``data`` as PNG with the words of
    ``terms`` marked (``language``: the index's, for its tokenization)."""
    pdf, password = open_pdf(data, passwords, name)
    if not 1 <= page <= pdf.page_count:
        raise PageOutOfRange(f"{name}: no page {page}; the document has {pdf.page_count} "
                             f"page{'s' if pdf.page_count != 1 else ''}")
    quads = page_marks(pdf, page, terms, language, params)
    box = visible_box(pdf.pages[page - 1], [])
    return render_png(data, page, quads, width, password=password, box=box, name=name)


def file_png(path: Path | str, doc_hash: str, page: int, terms: Iterable[str], language: str,
             width: int = DEFAULT_WIDTH, *, passwords: Sequence[str] = ()) -> bytes:
    """``marked_png`` of the file at ``path``, which must still hold the indexed
    content ``doc_hash`` (SHA-256): the bytes are read once, hashed, extracted and
    drawn, so what is shown is exactly what was indexed."""
    try:
        read = read_pdf(Path(path))
    except FileNotFoundError:
        raise DocumentGone(f"{path}: the file is gone (moved or deleted since it was indexed)") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise DocumentGone(f"{path}: cannot read the file: {getattr(exc, 'strerror', None) or exc}") from None
    if read.doc_hash != doc_hash:
        raise DocumentChanged(f"{path}: the file has changed since it was indexed; ingest it again")
    return marked_png(read.data, page, terms, language, width, passwords=passwords, name=str(path))
