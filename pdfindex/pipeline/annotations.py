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
        if not (isinstance(annot, dict) and _shown(annot)):
            continue
        normal_ref = _normal_appearance(annot)
        normal = resolve1(normal_ref)
        if not isinstance(normal, PDFStream):
            continue
        matrix = _onto_rect(annot, normal)
        if matrix is not None:
            key = normal_ref.objid if isinstance(normal_ref, PDFObjRef) else id(normal)
            yield normal, key, matrix


def _shown(annot: dict[str, object]) -> bool:
    """Not hidden, not left out of views, and not a popup or link (they draw no text)."""
    flags = resolve1(annot.get("F"))
    if isinstance(flags, int) and flags & (_HIDDEN | _NO_VIEW):
        return False
    subtype = resolve1(annot.get("Subtype"))
    return not (isinstance(subtype, PSLiteral) and subtype.name in _SKIPPED)


def _normal_appearance(annot: dict[str, object]) -> object:
    """The normal appearance (/AP /N), or with appearance states the one named by
    /AS; a reference is kept as one (it keys the form cycle check)."""
    ap = resolve1(annot.get("AP"))
    normal_ref = ap.get("N") if isinstance(ap, dict) else None
    normal = resolve1(normal_ref)
    if isinstance(normal, dict):
        state = resolve1(annot.get("AS"))
        normal_ref = normal.get(state.name) if isinstance(state, PSLiteral) else None
    return normal_ref


def _onto_rect(annot: dict[str, object], normal: PDFStream) -> Matrix | None:
    """The matrix that maps the form's /BBox, transformed by its /Matrix, onto the
    annotation's /Rect (§12.5.5); None when either box is missing
    or empty."""
    rect, bbox = values.rect(annot.get("Rect")), values.rect(normal.get("BBox"))
    if rect is None or bbox is None:
        return None
    form_matrix: Matrix = values.matrix(normal.get("Matrix")) or IDENTITY
    corners = [apply(form_matrix, x, y) for x in (bbox[0], bbox[2]) for y in (bbox[1], bbox[3])]
    bx0, by0 = min(p[0] for p in corners), min(p[1] for p in corners)
    bw, bh = max(p[0] for p in corners) - bx0, max(p[1] for p in corners) - by0
    if bw <= 0 or bh <= 0:
        return None
    sx, sy = (rect[2] - rect[0]) / bw, (rect[3] - rect[1]) / bh
    return (sx, 0.0, 0.0, sy, rect[0] - sx * bx0, rect[1] - sy * by0)
