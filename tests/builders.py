"""Small shared helpers for extraction tests: one-page PDFs built with our own writer
(tests/pdfwriter.py), and the pages (or raw glyph records) the pipeline makes of them.

Keep this module small and stable: several test modules import it.

The mono font: every code advances 0.5 em, and its font descriptor (Ascent 800,
Descent -200) makes the glyph box height equal to the font size. A glyph at origin
(x, y), size s, spans x .. x + 0.5·s and y - 0.2·s .. y + 0.8·s. Without an
/Encoding it decodes through the WinAnsi fallback (R4 step 4).
"""
from __future__ import annotations

from typing import Any

from pdfindex import pipeline
from pdfindex.pipeline.document import PdfFile, page_content, page_resources
from pdfindex.pipeline.geometry import IDENTITY
from pdfindex.pipeline.interpreter import Interpreter
from tests.pdfwriter import PdfWriter, Ref

MONO_WIDTH = 0.5  # em
MONO_ASCENT = 0.8  # em
MONO_DESCENT = -0.2  # em


def mono_font(w: PdfWriter, width: float = 500, base_font: str = "Mono", **kw: Any) -> Ref:
    """The mono font (see the module docstring); ``kw`` goes to ``simple_font``
    (encoding, to_unicode, descriptor overrides...)."""
    kw.setdefault("descriptor", {})
    return w.simple_font("TrueType", base_font=base_font, first_char=0, widths=[width] * 256, **kw)


def font_resources(font: Ref | None = None, xobjects: dict[str, Ref] | None = None,
                   **fonts: Ref) -> dict[str, Any]:
    """A resource dictionary: ``font`` as /F1, more fonts by keyword (F2=...),
    XObjects by name."""
    res: dict[str, Any] = {}
    all_fonts = ({"F1": font} if font is not None else {}) | fonts
    if all_fonts:
        res["Font"] = all_fonts
    if xobjects:
        res["XObject"] = dict(xobjects)
    return res


def text_line(x: float, y: float, show: bytes, size: float = 10, font: bytes = b"F1") -> bytes:
    """``BT /F1 size Tf x y Td <show> ET`` and a newline."""
    return b"BT /%s %g Tf %g %g Td %s ET\n" % (font, size, x, y, show)


def one_font_pdf(content: bytes | list[bytes], writer: PdfWriter | None = None, **page_kw: Any) -> bytes:
    """A one-page PDF drawing ``content`` with the mono font as /F1; ``page_kw``
    goes to :meth:`PdfWriter.add_page` (crop_box, media_box, ...)."""
    w = writer if writer is not None else PdfWriter()
    w.add_page(content, resources=font_resources(mono_font(w)), **page_kw)
    return w.to_bytes()


def one_page_pdf(content: bytes | list[bytes], fonts: dict[str, Ref] | None = None,
                 xobjects: dict[str, Ref] | None = None, w: PdfWriter | None = None,
                 **page_kw: Any) -> bytes:
    """A one-page PDF drawing ``content`` with these font and XObject resources."""
    w = w if w is not None else PdfWriter()
    w.add_page(content, resources=font_resources(xobjects=xobjects, **(fonts or {})), **page_kw)
    return w.to_bytes()


def first_page(data: bytes, keep_glyphs: bool = True) -> pipeline.Page:
    return pipeline.extract(data, keep_glyphs=keep_glyphs).pages[0]


def page_of(content: bytes | list[bytes], fonts: dict[str, Ref] | None = None,
            xobjects: dict[str, Ref] | None = None, w: PdfWriter | None = None,
            **page_kw: Any) -> pipeline.Page:
    """Build a one-page PDF and extract its page, page glyphs kept."""
    return first_page(one_page_pdf(content, fonts, xobjects, w, **page_kw))


def all_glyphs(data: bytes, number: int = 1) -> tuple[list[pipeline.Glyph], list[str]]:
    """Every glyph the interpreter draws on a page, forms included and nothing
    filtered (``Page.glyphs`` holds only the page stream's own, R2), and the
    problems it reported."""
    pdf = PdfFile(data)
    page = pdf.pages[number - 1]
    problems: list[str] = []
    interpreter = Interpreter(pipeline.DEFAULT_PARAMS, {}, problems)
    glyphs = interpreter.run_page(page_content(page, problems), page_resources(page), IDENTITY)
    return list(glyphs), problems
