"""Image steps before recognition, each kept because it measured better on the
scanned corpus (docs/ocr.md), and each keeping the ``PixelMap`` true.

- Square pixels: a fax is 200 × 100 dpi; Tesseract assumes square pixels and reads
  letters twice as wide as tall as other letters.
- Upscaling: below ``LOW_DPI`` (phone shots at 150 dpi), small type has too few
  pixels per stroke; Tesseract reads best with capitals ~30 pixels tall.
- Quarter turns, exact (no resampling), for the orientation choose.py settles on.
"""
from __future__ import annotations

from PIL import Image as PILImage
from PIL.Image import Image

from .acquire import PageImage

#: Below this resolution an image is scaled up to TARGET_DPI.
LOW_DPI = 180.0
TARGET_DPI = 300.0
#: Pixels an upscaled image may have (the page cap of acquire.py still bounds the rest).
MAX_UPSCALED_PIXELS = 60_000_000


def square(page: PageImage) -> PageImage:
    """Pixels made square, and lifted to TARGET_DPI when either side is below LOW_DPI."""
    dpi_x, dpi_y = page.dpi
    if dpi_x <= 0 or dpi_y <= 0:
        return page
    target = max(dpi_x, dpi_y)
    if target < LOW_DPI:
        target = TARGET_DPI
    fx, fy = target / dpi_x, target / dpi_y
    width, height = page.image.size
    if abs(fx - 1) < 0.02 and abs(fy - 1) < 0.02:
        return page
    new_w, new_h = max(1, round(width * fx)), max(1, round(height * fy))
    if new_w * new_h > MAX_UPSCALED_PIXELS:
        return page
    image = page.image.resize((new_w, new_h), PILImage.Resampling.LANCZOS)
    mapped = page.map.then((width / new_w, 0.0, 0.0, height / new_h, 0.0, 0.0))
    return PageImage(image, (target, target), mapped, page.origin)


def turned(page: PageImage, turns: int) -> PageImage:
    """The image turned ``turns`` quarter turns counter-clockwise."""
    turns %= 4
    if not turns:
        return page
    width, height = page.image.size
    method = (PILImage.Transpose.ROTATE_90, PILImage.Transpose.ROTATE_180, PILImage.Transpose.ROTATE_270)[turns - 1]
    image: Image = page.image.transpose(method)
    # new pixel (u, v) → old pixel, for a counter-clockwise turn of the picture
    back = {1: (0.0, 1.0, -1.0, 0.0, width, 0.0),
            2: (-1.0, 0.0, 0.0, -1.0, width, height),
            3: (0.0, -1.0, 1.0, 0.0, 0.0, height)}[turns]
    dpi = page.dpi if turns == 2 else (page.dpi[1], page.dpi[0])
    return PageImage(image, dpi, page.map.then(back), page.origin)
