"""Which pages are OCR'd, from what extraction already measured (issue 22).

The modes are OCRmyPDF's, which users know: ``auto`` OCRs what needs it, ``off``
nothing, ``force`` every page. In ``auto``:

- a page without a text layer (or one too poorly decoded to search) that shows a
  large image is OCR'd whole: a scan;
- a page whose text layer is suspect (plausibility.py: the garbage a wrong ToUnicode
  makes, which no OCR tool can tell from good text by looking at it) is OCR'd, and
  the better of the two texts is indexed (``better``);
- a page with a good text layer is never OCR'd whole; an image on it as large as
  ``REGION_SHARE`` of the page with no text drawn over it (a scan pasted into a
  typed letter) is OCR'd alone and its words added after the page's.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..geometry import Rect
from ..images import PlacedImage, area_share
from ..quality import Quality

#: A page without text showing images over this share of it is a scan.
SCAN_SHARE = 0.2
#: An image without text over it, this share of a page with text, is read alone.
REGION_SHARE = 0.3


@dataclass(frozen=True, slots=True)
class Decision:
    #: "page" (OCR the page), "regions" (only its images without text), "none".
    action: str
    #: Why, in words, for ``explain`` and ``extract --json``.
    why: str
    #: The images to read alone, for "regions".
    regions: tuple[PlacedImage, ...] = ()


def decide(mode: str, quality: Quality, images: list[PlacedImage], box: Rect,
           texted: list[Rect] | None = None) -> Decision:
    """What to OCR on a page. ``texted``: the boxes of its visible glyphs, needed only
    to find images without text on a page that has a text layer."""
    if mode == "off":
        return Decision("none", "OCR is off")
    if mode == "force":
        return Decision("page", "OCR forced")
    if quality.suspect:
        return Decision("page", f"its text layer is suspect ({quality.suspect})")
    if quality.needs_ocr:
        share = area_share(images, box)
        if share >= SCAN_SHARE:
            what = "no text layer" if quality.glyphs == 0 else "a text layer too poorly decoded to search"
            return Decision("page", f"{what} and images over {share:.0%} of the page")
        return Decision("none", "no text and no large image: nothing to read")
    if texted is None:  # a good page without a large image (needs_regions_check)
        return Decision("none", "the text layer is good")
    regions = tuple(image for image in images if _page_share(image.bbox, box) >= REGION_SHARE
                    and not any(_inside(glyph, image.bbox) for glyph in texted))
    if regions:
        return Decision("regions", f"{len(regions)} image{'s' if len(regions) > 1 else ''} without text "
                                   "on a page with a good text layer", regions)
    return Decision("none", "the text layer is good")


def _page_share(rect: Rect, box: Rect) -> float:
    x0, y0, x1, y1 = max(rect[0], box[0]), max(rect[1], box[1]), min(rect[2], box[2]), min(rect[3], box[3])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return max(0.0, x1 - x0) * max(0.0, y1 - y0) / area if area > 0 else 0.0


def _inside(glyph: Rect, rect: Rect) -> bool:
    cx, cy = (glyph[0] + glyph[2]) / 2, (glyph[1] + glyph[3]) / 2
    return rect[0] <= cx <= rect[2] and rect[1] <= cy <= rect[3]


def needs_regions_check(mode: str, quality: Quality, images: list[PlacedImage], box: Rect) -> bool:
    """Whether ``decide`` needs the glyph boxes: a good page with a large image."""
    return (mode == "auto" and not quality.needs_ocr and not quality.suspect
            and any(_page_share(image.bbox, box) >= REGION_SHARE for image in images))


def better(ocr_confidence: float, quality: Quality) -> bool:
    """On a suspect page: whether the OCR text measures better than the text layer.
    OCR confidence (0-100) against the text layer's coverage after its plausibility
    discount (0-1): each the share of the page its source vouches for."""
    layer = quality.coverage if quality.coverage is not None else 0.0
    return ocr_confidence / 100.0 > layer
