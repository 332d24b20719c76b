"""What OCR is asked to do: the mode, the languages, the bounds. Light on purpose:
extraction imports it for every document, the OCR stage only for pages it reads."""
from __future__ import annotations

from dataclasses import dataclass

from pdfindex.config.settings import OCR_LANGUAGES, Settings


@dataclass(frozen=True, slots=True)
class OcrSettings:
    #: auto, off or force (contract.enums.OCR_MODES; decide.py).
    mode: str = "auto"
    languages: tuple[str, ...] = OCR_LANGUAGES
    #: Declared pixels of one image that may be decoded, and of one page render.
    max_image_pixels: int = 100_000_000
    max_page_pixels: int = 40_000_000
    #: Seconds Tesseract may take to read one page (its own deadline).
    timeout: float = 120.0
    #: Decide only: the pages OCR would read are marked ``ocr_pending`` and left for
    #: a later pass (ingestion indexes the text pages first: issue 22).
    defer: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, *, defer: bool = False) -> OcrSettings:
        return cls(settings.ocr, settings.ocr_languages, timeout=settings.ocr_page_timeout, defer=defer)

    @classmethod
    def text_pass(cls, settings: Settings) -> OcrSettings:
        """Ingestion's first pass: OCR decided, not done (none at all when it is off)."""
        return cls.from_settings(settings, defer=settings.ocr != "off")
