"""Recognised words as the rest of the system reads text: word records on the page
(in PDF user space, like glyph records) and the page text assembled from them in a
``TextMap``, so marks and ``explain`` treat an OCR'd page as any other.

The text follows Tesseract's reading order (its blocks and lines: it has seen the
columns in the pixels). Between two words of a line goes a space, except between
Han or kana, which Tesseract splits into one-character "words" though Chinese and
Japanese write no spaces (a space there would break every word bigram the index
makes of them); Hangul keeps its spaces, as Korean writes them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..geometry import Point
from ..textmap import Quad, TextMap
from .acquire import PixelMap
from .engine import Reading

_HAN_KANA = re.compile("[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                       "\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f]")


@dataclass(frozen=True, slots=True)
class OcrWord:
    """A recognised word on the page: a ``textmap.Drawn``."""

    text: str
    quad: Quad
    direction: Point
    confidence: float

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text, "quad": [round(v, 3) for v in self.quad],
                "confidence": round(self.confidence, 1)}


#: Languages that write the dotless ı; read without them, an ı is an i whose dot the
#: scan lost ("affıx" in five of the corpus's Latin scans), and would not be found as i.
_DOTLESS_I = frozenset({"tur", "aze", "kaz", "tat", "crh"})


def _spelled(text: str, language: str) -> str:
    if "ı" in text and not _DOTLESS_I & set(language.split("+")):
        return text.replace("ı", "i")
    return text


def placed_words(reading: Reading, pixel_map: PixelMap) -> list[OcrWord]:
    """Each word's pixel box as a quad on the page: along the writing direction on the
    bottom (or, vertical, the left) side, then back."""
    words = []
    for word in reading.words:
        left, top, right, bottom = word.box
        if reading.vertical:  # columns run down the image
            corners = ((right, top), (right, bottom), (left, bottom), (left, top))
        else:
            corners = ((left, bottom), (right, bottom), (right, top), (left, top))
        points = [pixel_map.point(u, v) for u, v in corners]
        dx, dy = points[1][0] - points[0][0], points[1][1] - points[0][1]
        length = math.hypot(dx, dy) or 1.0
        quad: Quad = tuple(c for point in points for c in point)  # type: ignore[assignment]
        words.append(OcrWord(_spelled(word.text, reading.language), quad, (dx / length, dy / length),
                             word.confidence))
    return words


def _joined(left: str, right: str) -> bool:
    return bool(_HAN_KANA.match(left[-1:])) and bool(_HAN_KANA.match(right[:1]))


def text_map(reading: Reading, words: list[OcrWord]) -> TextMap[OcrWord]:
    """The page text in reading order, each character owned by its word."""
    parts: list[str] = []
    owners: list[int | None] = []
    lines: list[int] = []
    previous = None
    for index, (raw, word) in enumerate(zip(reading.words, words, strict=True)):
        if previous is not None:
            if raw.line != previous.line:
                gap = "\n\n" if raw.block != previous.block else "\n"
            else:
                gap = " " if raw.spaced and not _joined(previous.text, raw.text) else ""
            parts.append(gap)
            owners.extend([None] * len(gap))
        parts.append(word.text)
        owners.extend([index] * len(word.text))
        lines.append(raw.line)
        previous = raw
    return TextMap("".join(parts), tuple(owners), tuple(words), tuple(lines))
