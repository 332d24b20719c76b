"""Affine matrices and points in PDF's row-vector convention (ISO 32000-1 §8.3.3).

A matrix ``(a, b, c, d, e, f)`` maps ``(x, y)`` to ``(a·x + c·y + e, b·x + d·y + f)``;
``mult(m1, m2)`` is "first m1, then m2", the order in which the spec writes
``Tm × CTM`` and ``Matrix × CTM``.
"""
from __future__ import annotations

import math

Matrix = tuple[float, float, float, float, float, float]
Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 with x0 <= x1, y0 <= y1

IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def mult(m1: Matrix, m2: Matrix) -> Matrix:
    """Concatenate: apply ``m1`` first, then ``m2``."""
    a1, b1, c1, d1, e1, f1 = m1
    a2, b2, c2, d2, e2, f2 = m2
    return (
        a1 * a2 + b1 * c2,
        a1 * b2 + b1 * d2,
        c1 * a2 + d1 * c2,
        c1 * b2 + d1 * d2,
        e1 * a2 + f1 * c2 + e2,
        e1 * b2 + f1 * d2 + f2,
    )


def apply(m: Matrix, x: float, y: float) -> Point:
    return (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])


def unit(dx: float, dy: float) -> Point:
    """Direction of a vector; a degenerate vector reads as left-to-right."""
    n = math.hypot(dx, dy)
    if n == 0.0:
        return (1.0, 0.0)
    return (dx / n, dy / n)


def normalize_rect(r: Rect) -> Rect:
    x0, y0, x1, y1 = r
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def intersect(r1: Rect, r2: Rect) -> Rect | None:
    x0, y0 = max(r1[0], r2[0]), max(r1[1], r2[1])
    x1, y1 = min(r1[2], r2[2]), min(r1[3], r2[3])
    if x0 >= x1 or y0 >= y1:
        return None
    return (x0, y0, x1, y1)
