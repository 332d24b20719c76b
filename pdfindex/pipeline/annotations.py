"""Text drawn by annotation appearances (§12.5.5): stamps, FreeText comments and the
values of filled-in form fields. Beyond SPEC.md: users search for what a viewer
shows, and a viewer draws these on the page."""
from __future__ import annotations

from collections.abc import Iterator

from pdfminer.pdfpage import PDFPage
from pdfminer.pdftypes import PDFObjRef, PDFStream, resolve1
from pdfminer.psparser import PSLiteral

from . import values
from .geometry import IDENTITY, Matrix, apply

_HIDDEN, _NO_VIEW = 1 << 1, 1 << 5
_SKIPPED = {"Popup", "Link"}


def appearances(page: PDFPage) -> Iterator[tuple[PDFStream, object, Matrix]]:
    """(appearance form, cycle key, matrix that maps its box onto the annotation's
    /Rect) for each visible annotation with a normal appearance."""
    annots = resolve1(page.attrs.get("Annots"))
    if not isinstance(annots, list):
        return
    for ref in annots:
        annot = resolve1(ref)
        if not isinstance(annot, dict):
            continue
        flags = resolve1(annot.get("F"))
        if isinstance(flags, int) and flags & (_HIDDEN | _NO_VIEW):
            continue
        subtype = resolve1(annot.get("Subtype"))
        if isinstance(subtype, PSLiteral) and subtype.name in _SKIPPED:
            continue
        ap = resolve1(annot.get("AP"))
        normal_ref = ap.get("N") if isinstance(ap, dict) else None
        normal = resolve1(normal_ref)
        if isinstance(normal, dict):  # appearance states: the one named by /AS
            state = resolve1(annot.get("AS"))
            normal_ref = normal.get(state.name) if isinstance(state, PSLiteral) else None
            normal = resolve1(normal_ref)
        if not isinstance(normal, PDFStream):
            continue
        rect, bbox = values.rect(annot.get("Rect")), values.rect(normal.get("BBox"))
        if rect is None or bbox is None:
            continue
        form_matrix: Matrix = values.matrix(normal.get("Matrix")) or IDENTITY
        corners = [apply(form_matrix, x, y) for x in (bbox[0], bbox[2]) for y in (bbox[1], bbox[3])]
        bx0, by0 = min(p[0] for p in corners), min(p[1] for p in corners)
        bw, bh = max(p[0] for p in corners) - bx0, max(p[1] for p in corners) - by0
        if bw <= 0 or bh <= 0:
            continue
        sx, sy = (rect[2] - rect[0]) / bw, (rect[3] - rect[1]) / bh
        key = normal_ref.objid if isinstance(normal_ref, PDFObjRef) else id(normal)
        yield normal, key, (sx, 0.0, 0.0, sy, rect[0] - sx * bx0, rect[1] - sy * by0)
