"""Extraction: PDF bytes to per-page text, glyph records and quality.

Our own content-stream interpreter on pdfminer.six's low-level parser; the rules
are those of SPEC.md (R1-R14, R16, R17), each implemented in the module named for it.
"""
if __name__ != "pdfindex.pipeline":  # the top-level pipeline/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.pipeline, not {__name__} (README, Layout)")
from .errors import ExtractionError, InternalError, NotAPdfError, PasswordError
from .extract import Document, Page, extract, extract_page, iter_pages, parse_page_ranges
from .document import PdfFile
from .export import export_text
from .glyph import Glyph
from .params import DEFAULT_PARAMS, Params
from .quality import Quality

__all__ = [
    "DEFAULT_PARAMS", "Document", "ExtractionError", "Glyph", "InternalError", "NotAPdfError", "Page", "Params",
    "PasswordError", "PdfFile", "Quality", "export_text", "extract", "extract_page", "iter_pages",
    "parse_page_ranges",
]
