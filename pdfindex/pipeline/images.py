"""Page images (issue 22): the images a page draws, where and how large, read by the
same interpreter that reads its text.

The source documents name this stage for image-only scans: before OCR, take the
page images out of the PDF. What OCR needs of each is its placement (the CTM maps
the unit square onto the page, so it gives the image's box, its rotation and a
mirror), its pixel size as the dictionary declares it (so a hostile size is refused
before anything is decoded) and from both its native resolution (pixels per inch
along each side: a fax is 200 × 100). Nothing here decodes pixels; ``ocr/`` asks the
renderer for them once a page is chosen.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .geometry import Matrix, Rect

#: An image narrower than this share of the visible box on either side is not a
#: scan of the page (a logo, a rule, a bullet).
FULL_PAGE_SHARE = 0.85


@dataclass(frozen=True, slots=True)
class PlacedImage:
    #: Resource name (``/Im0``), or ``inline`` for an inline image (BI … EI).
    name: str
    #: Object number of the image XObject, 0 for an inline image.
    objid: int
    #: Declared pixel size (/Width, /Height).
    width: int
    height: int
    #: The CTM when it was drawn: the unit square → page space (§8.9.4).
    matrix: Matrix
    #: Drawn inside a form XObject (pdfium lists it under that form).
    in_form: bool = False

    @property
    def bbox(self) -> Rect:
        a, b, c, d, e, f = self.matrix
        xs = (e, a + e, c + e, a + c + e)
        ys = (f, b + f, d + f, b + d + f)
        return (min(xs), min(ys), max(xs), max(ys))

    @property
    def quarter_turns(self) -> int | None:
        """How the image's rows run on the page, in quarter turns clockwise (0: drawn
        upright, as a scanner's image is), or None when the placement is skewed or
        sheared, which OCR cannot undo exactly; the renderer draws those."""
        a, b, c, d, _, _ = self.matrix
        if abs(b) < 1e-6 * max(abs(a), 1e-9) and abs(c) < 1e-6 * max(abs(d), 1e-9):
            return 0 if a > 0 and d > 0 else (2 if a < 0 and d < 0 else None)
        if abs(a) < 1e-6 * max(abs(b), 1e-9) and abs(d) < 1e-6 * max(abs(c), 1e-9):
            return 1 if b < 0 < c else (3 if c < 0 < b else None)
        return None

    @property
    def dpi(self) -> tuple[float, float]:
        """Pixels per inch along the image's own width and height: a page image's
        native resolution, from which a render's resolution is chosen."""
        a, b, c, d, _, _ = self.matrix
        along_width = math.hypot(a, b) / 72.0
        along_height = math.hypot(c, d) / 72.0
        return (self.width / along_width if along_width else 0.0,
                self.height / along_height if along_height else 0.0)

    @property
    def pixels(self) -> int:
        return self.width * self.height


def area_share(images: list[PlacedImage], box: Rect) -> float:
    """The share of the visible box that images cover (their boxes clipped to it;
    overlaps counted once on a coarse grid, since a page may tile a scan in strips)."""
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0 or not images:
        return 0.0
    steps = 64
    dx, dy = (x1 - x0) / steps, (y1 - y0) / steps
    covered = 0
    boxes = [image.bbox for image in images[:256]]
    for i in range(steps):
        x = x0 + (i + 0.5) * dx
        for j in range(steps):
            y = y0 + (j + 0.5) * dy
            if any(bx0 <= x <= bx1 and by0 <= y <= by1 for bx0, by0, bx1, by1 in boxes):
                covered += 1
    return covered / (steps * steps)


def full_page_image(images: list[PlacedImage], box: Rect) -> PlacedImage | None:
    """The one image that is the page, as a scanner or fax makes it: it spans the
    visible box on both sides, drawn upright or turned by quarter turns. None when
    the page has none, or several large ones (a page composed of images is rendered)."""
    x0, y0, x1, y1 = box
    width, height = x1 - x0, y1 - y0
    if width <= 0 or height <= 0:
        return None
    large = [image for image in images
             if (image.bbox[2] - image.bbox[0]) >= FULL_PAGE_SHARE * width
             and (image.bbox[3] - image.bbox[1]) >= FULL_PAGE_SHARE * height]
    if len(large) != 1 or large[0].quarter_turns is None:
        return None
    return large[0]
