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
- A page fed askew is straightened, by the turn that makes its rows and columns of
  ink sharpest: Tesseract copes with a slope in running text, but took a ruled table
  sloping 2.8° for a picture and read none of it (a table alone on a page: nothing, or
  Chinese).
"""
from __future__ import annotations

import math
from itertools import pairwise

from PIL import Image as PILImage
from PIL import ImageChops, ImageFilter, ImageOps
from PIL.Image import Image

from .acquire import PageImage

#: Resolution a bilevel image is scaled to before smoothing, and the smoothing.
BILEVEL_DPI = 300.0
SMOOTHING = 1.0
#: A background whose lightest and darkest parts differ by more than this (0-255) is uneven.
UNEVEN = 24
#: Slopes looked for, in degrees either way (a feeder skews a sheet by a few), the
#: steps of the search, and the smallest slope worth a resampling.
MAX_SLOPE = 5.0
SLOPE_STEPS = (0.5, 0.1)
MIN_SLOPE = 0.5
#: The turn must sharpen the profiles this much over the page as it lies: on the
#: scans corpus a straight page's sharpest turn is 0 exactly, a skewed one's 3-34 times
#: as sharp; photographs and blank pages are flat at every turn.
SHARPER = 1.5
#: The longer side of the copy the slope is measured on (0.03 s a page).
SLOPE_SIDE = 600
#: Pixels an upscaled image may have (the page cap of acquire.py still bounds the rest).
MAX_UPSCALED_PIXELS = 60_000_000


def prepared(page: PageImage) -> PageImage:
    """The image as Tesseract reads it best (the steps above)."""
    bilevel = _bilevel(page.image)
    page = square(page, BILEVEL_DPI if bilevel else 0.0)
    image = page.image.filter(ImageFilter.GaussianBlur(SMOOTHING)) if bilevel else even(page.image)
    page = PageImage(image, page.dpi, page.map, page.origin)
    angle = slope(image)
    return straightened(page, angle) if abs(angle) >= MIN_SLOPE else page


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


def _sharpness(ink: Image, degrees: float) -> int:
    """How sharply rows and columns of ink stand out when the page is turned by
    ``degrees``: the squared steps between neighbouring rows' (and columns') ink. Lines
    of text straight across make rows of ink and rows of paper; a slope blurs them. Steps,
    not spread: uneven light (a phone shot's dark corner) changes slowly across rows."""
    turned_ink = ink.rotate(degrees, resample=PILImage.Resampling.NEAREST, expand=True, fillcolor=0)
    width, height = turned_ink.size
    rows = turned_ink.resize((1, height), PILImage.Resampling.BOX).tobytes()
    columns = turned_ink.resize((width, 1), PILImage.Resampling.BOX).tobytes()
    return sum((a - b) ** 2 for profile in (rows, columns) for a, b in pairwise(profile))


def slope(image: Image) -> float:
    """The turn, in degrees counter-clockwise, that straightens the page's lines; 0
    when no turn within MAX_SLOPE makes them SHARPER. Rows and columns both count, so
    vertical writing and a page put in sideways are measured alike."""
    ink = ImageOps.invert(image.reduce(max(1, round(max(image.size) / SLOPE_SIDE))))
    flat = _sharpness(ink, 0.0)
    best, angle = flat, 0.0
    centre, reach = 0.0, MAX_SLOPE
    for step in SLOPE_STEPS:
        for k in range(-round(reach / step), round(reach / step) + 1):
            tried = round(centre + k * step, 1)
            if tried != angle and (score := _sharpness(ink, tried)) > best:
                best, angle = score, tried
        centre, reach = angle, step
    return angle if best >= SHARPER * flat else 0.0


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
    return PageImage(image, dpi, page.map.then(back), page.origin, page.straightened)


def straightened(page: PageImage, degrees: float) -> PageImage:
    """The image turned ``degrees`` counter-clockwise about its centre, grown to hold
    all of it, the corners filled with its paper's shade."""
    width, height = page.image.size
    cos, sin = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    new_w = math.ceil(abs(width * cos) + abs(height * sin))
    new_h = math.ceil(abs(width * sin) + abs(height * cos))
    # new pixel (u, v) → old pixel: the turn undone about the two centres
    e = width / 2 - cos * new_w / 2 + sin * new_h / 2
    f = height / 2 - sin * new_w / 2 - cos * new_h / 2
    histogram = page.image.histogram()  # mode L: one band
    paper, seen = 255, 0
    while paper > 0 and seen < 0.05 * width * height:  # the 95th percentile: paper, not a speck
        seen += histogram[paper]
        paper -= 1
    image = page.image.transform((new_w, new_h), PILImage.Transform.AFFINE, (cos, -sin, e, sin, cos, f),
                                 PILImage.Resampling.BICUBIC, fillcolor=paper)
    return PageImage(image, page.dpi, page.map.then((cos, sin, -sin, cos, e, f)), page.origin, degrees)
