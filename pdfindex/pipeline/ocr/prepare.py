"""Image steps before recognition, each kept because it measured better on the
scanned corpus (docs/ocr.md has the figures), and each keeping the ``PixelMap`` true.

- Square pixels: a fax is 200 × 100 dpi; Tesseract assumes square pixels and reads
  letters twice as wide as tall as other letters.
- Bilevel images (fax) are scaled to BILEVEL_DPI and smoothed: Tesseract reads the
  staircase edges of a thresholded 200 dpi letter worse than a soft one (Korean fax:
  word F1 0.962 → 0.998; German and English: 0.59 → 0.66).
- Grey images are not scaled up: a 150 dpi phone shot read at 300 lost a third of its
  Japanese (0.93 → 0.68).
- Uneven light (a phone shot's dark corner) is divided out: the background, a blur of
  the page far wider than a letter, is subtracted (Japanese phone shot 0.93 → 1.00,
  an English table 0.90 → 0.96). Only where the background varies: an even page is
  left as scanned.
- Quarter turns, exact (no resampling), for the orientation choose.py settles on.
"""
from __future__ import annotations

from PIL import Image as PILImage
from PIL import ImageChops, ImageFilter, ImageOps
from PIL.Image import Image

from .acquire import PageImage

#: Resolution a bilevel image is scaled to before smoothing, and the smoothing.
BILEVEL_DPI = 300.0
SMOOTHING = 1.0
#: A background whose lightest and darkest parts differ by more than this (0-255) is uneven.
UNEVEN = 24
#: Pixels an upscaled image may have (the page cap of acquire.py still bounds the rest).
MAX_UPSCALED_PIXELS = 60_000_000


def prepared(page: PageImage) -> PageImage:
    """The image as Tesseract reads it best (the steps above)."""
    bilevel = _bilevel(page.image)
    page = square(page, BILEVEL_DPI if bilevel else 0.0)
    if bilevel:
        return PageImage(page.image.filter(ImageFilter.GaussianBlur(SMOOTHING)), page.dpi, page.map, page.origin)
    return PageImage(even(page.image), page.dpi, page.map, page.origin)


def _bilevel(image: Image) -> bool:
    colours = image.getcolors(2)
    return colours is not None


def square(page: PageImage, at_least: float = 0.0) -> PageImage:
    """Pixels made square at the finer of the two resolutions (or ``at_least``)."""
    dpi_x, dpi_y = page.dpi
    if dpi_x <= 0 or dpi_y <= 0:
        return page
    target = max(dpi_x, dpi_y, at_least)
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


def even(image: Image) -> Image:
    """Uneven light divided out, where the background is uneven; else ``image``."""
    width, height = image.size
    small = image.resize((max(1, width // 16), max(1, height // 16)), PILImage.Resampling.BOX)
    background = small.filter(ImageFilter.MaxFilter(5)).filter(ImageFilter.GaussianBlur(4))
    low, high = background.getextrema()  # one band: (low, high)
    if int(high) - int(low) <= UNEVEN:  # type: ignore[arg-type]
        return image
    background = background.resize((width, height), PILImage.Resampling.BILINEAR)
    return ImageOps.autocontrast(ImageOps.invert(ImageChops.subtract(background, image)), cutoff=1)
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
