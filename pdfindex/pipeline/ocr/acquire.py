"""The pixels OCR reads, and where each pixel lies on the page.

A page that is one full-page image (a scanner's, a fax's) is read from that image at
its own resolution: nothing resampled, a 200 × 100 dpi fax kept as sent until
``prepare.py`` squares it. Any other page (text and images, images in strips, a
skewed placement) is drawn by pdfium at a resolution chosen from its images' own.
pdfium decodes every image filter (JBIG2, JPX, CCITT included), so there is one
decoder for all; what it is given is bounded first from our own parse of the page:
no image whose declared pixels pass ``max_image_pixels`` is decoded, and a render's
size is capped at ``max_page_pixels``.

``PixelMap`` carries the affine map from the OCR image's pixels (top-left origin)
to PDF user space through every turn and scaling, so a recognised word's box lands
where it is on the page (marks, explain).
"""
from __future__ import annotations

from dataclasses import dataclass

import pypdfium2 as pdfium
from PIL.Image import Image

from ..geometry import Matrix, Rect, mult
from ..images import PlacedImage, full_page_image

#: A render's resolution: at least this (OCR reads 10 pt type badly below ~200 dpi)
#: and at most that (more pixels cost time and read no better).
MIN_DPI = 300
MAX_DPI = 400


class ImageRefused(ValueError):
    """A page image too large or undecodable: a page problem, never a crash."""


@dataclass(frozen=True, slots=True)
class PixelMap:
    """Image pixel (u, v) → page point, as a PDF matrix over (u, v)."""

    matrix: Matrix

    def point(self, u: float, v: float) -> tuple[float, float]:
        a, b, c, d, e, f = self.matrix
        return (a * u + c * v + e, b * u + d * v + f)

    def then(self, pixels_to_pixels: Matrix) -> PixelMap:
        """The map of an image made from this one by ``new (u, v) → old (u, v)``."""
        return PixelMap(mult(pixels_to_pixels, self.matrix))


@dataclass(slots=True)
class PageImage:
    image: Image
    #: Pixels per inch across and down (unequal for a fax).
    dpi: tuple[float, float]
    map: PixelMap
    #: "image" (the page's own scan, native pixels) or "render".
    origin: str
    #: Degrees the pixels were turned to straighten a page fed askew (prepare.py).
    straightened: float = 0.0


def native(pdf_page: pdfium.PdfPage, placed: PlacedImage, max_pixels: int) -> PageImage:
    """The full-page image's own pixels, turned so its rows run as on the page."""
    if placed.pixels > max_pixels:
        raise ImageRefused(f"page image of {placed.width} × {placed.height} pixels is over the OCR cap "
                           f"of {max_pixels:,}")
    candidates = list(pdf_page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE], max_depth=3))
    sized = [obj for obj in candidates if tuple(obj.get_px_size()) == (placed.width, placed.height)]
    if not sized:
        raise ImageRefused("the renderer does not find the page image")
    image = _pixels(sized[0].get_bitmap(render=False))
    if image.size != (placed.width, placed.height):
        raise ImageRefused(f"page image decodes to {image.size[0]} × {image.size[1]} pixels, "
                           f"not the {placed.width} × {placed.height} it declares")
    a, b, c, d, e, f = placed.matrix
    w, h = placed.width, placed.height
    # pixel (u, v), row 0 at the top, is the unit square's (u / w, 1 - v / h)
    pixel_map = PixelMap((a / w, b / w, -c / h, -d / h, c + e, d + f))
    return PageImage(image, placed.dpi, pixel_map, "image")


def render(pdf_page: pdfium.PdfPage, box: Rect, rotation: int, images: list[PlacedImage],
           max_image_pixels: int, max_page_pixels: int) -> PageImage:
    """The page drawn by pdfium, unturned (its /Rotate, ``rotation``, undone so pixels
    run as user space does; choose.py finds which way up the text reads), at its
    images' resolution within MIN_DPI..MAX_DPI and the cap."""
    for placed in images:
        if placed.pixels > max_image_pixels:
            raise ImageRefused(f"image {placed.name} of {placed.width} × {placed.height} pixels is over the "
                               f"OCR cap of {max_image_pixels:,}")
    x0, y0, x1, y1 = box
    width_in, height_in = (x1 - x0) / 72.0, (y1 - y0) / 72.0
    if width_in <= 0 or height_in <= 0:
        raise ImageRefused("the page has no area to draw")
    dpi = max([MIN_DPI, *(min(max(p.dpi), MAX_DPI) for p in images)])
    dpi = min(dpi, (max_page_pixels / (width_in * height_in)) ** 0.5)
    if rotation:
        pdf_page.set_rotation(0)  # this document copy is ours alone; pixels then run as user space does
    image = _pixels(pdf_page.render(scale=dpi / 72.0, grayscale=True))
    scale_x, scale_y = image.size[0] / (x1 - x0), image.size[1] / (y1 - y0)
    return PageImage(image, (dpi, dpi), PixelMap((1 / scale_x, 0.0, 0.0, -1 / scale_y, x0, y1)), "render")


def _pixels(bitmap: pdfium.PdfBitmap) -> Image:
    """The bitmap's pixels in one 8-bit channel (what Tesseract binarises from: colour
    costs it time and reads no better), copied, and the bitmap closed at once. Left to the
    garbage collector, its finalizer ran at a random moment, and a time limit's
    exception raised inside it was printed and lost (a traceback on the user's
    terminal, the job running on to its hard limit)."""
    try:
        image = bitmap.to_pil()  # shares pdfium's buffer
        return image.copy() if image.mode == "L" else image.convert("L")
    finally:
        # an image object's bitmap is pdfium's own buffer, and pypdfium2 warns (on the
        # user's terminal) when it is freed by hand: safe here, the pixels are copied
        bitmap.warn_on_close = False
        bitmap.close()


def page_image(pdf_page: pdfium.PdfPage, box: Rect, rotation: int, images: list[PlacedImage],
               max_image_pixels: int, max_page_pixels: int) -> PageImage:
    """The page's own scan when it is one, else its render."""
    scan = full_page_image(images, box)
    if scan is not None:
        return native(pdf_page, scan, max_image_pixels)
    return render(pdf_page, box, rotation, images, max_image_pixels, max_page_pixels)
