"""The OCR engine: Tesseract 5 through tesserocr, its C API in this process.

Why tesserocr and not the ``tesseract`` command: a page is recognised several times
over while its orientation and language are chosen (choose.py), and a process per
pass, with the image written out as a file each time, cost more than the passes
(docs/ocr.md has the figures). Its wheels carry Tesseract itself; the language data
comes from the system (Debian's ``tesseract-ocr-*`` packages) or PDFINDEX_TESSDATA.

One ``Engine`` per process: the API objects load a language's model once (hundreds
of milliseconds) and are kept for every later page. Recognition has a deadline
inside Tesseract (``timeout``), so a page cannot hang the process.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL.Image import Image

#: Where the data of the six languages is looked for, after PDFINDEX_TESSDATA and
#: TESSDATA_PREFIX: Debian and Ubuntu (Tesseract 5, then 4), Fedora, Homebrew, a
#: source build.
TESSDATA_PLACES = ("/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
                   "/usr/share/tessdata", "/opt/homebrew/share/tessdata", "/usr/local/share/tessdata")
#: What a new user installs to get working OCR (README, and the one line the
#: pipeline says when the engine or its languages are missing). Short: a page
#: problem is one line of at most contract.problems.MAX_LINE characters, cut in
#: the middle beyond, and the reason comes before it.
INSTALL_HINT = "apt-get install tesseract-ocr-{eng,deu,fra,kor,jpn,jpn-vert,chi-sim,osd}, or set PDFINDEX_TESSDATA"


#: Languages read as one block of lines (``Engine.read``).
_BLOCK_LANGUAGES = frozenset({"kor", "jpn", "chi_sim", "chi_tra"})


class EngineMissing(RuntimeError):
    """No OCR engine or no language data: pages stay ``needs_ocr``, with this reason."""


@dataclass(frozen=True, slots=True)
class Word:
    """One recognised word in the pixels of the image it was read from."""

    text: str
    #: Left, top, right, bottom in pixels (top-left origin, rows downwards).
    box: tuple[int, int, int, int]
    #: Tesseract's confidence, 0-100.
    confidence: float
    #: Block, paragraph and line numbers in Tesseract's reading order: the text's
    #: line breaks and paragraph gaps come from them.
    block: int
    line: int
    #: Tesseract put a space before it in its line's text. Not every word has one:
    #: it splits Hangul and Han into several "words" of one line that it writes
    #: without a space between.
    spaced: bool = True


@dataclass(frozen=True, slots=True)
class Reading:
    words: tuple[Word, ...]
    language: str
    vertical: bool

    @property
    def confidence(self) -> float:
        """Mean word confidence weighted by characters, 0 for no words: a page of
        one sure word and fifty doubtful ones is doubtful."""
        chars = sum(len(w.text) for w in self.words)
        return sum(w.confidence * len(w.text) for w in self.words) / chars if chars else 0.0


@dataclass(frozen=True, slots=True)
class Orientation:
    #: Counter-clockwise quarter turns that make the page upright.
    turns: int
    #: Tesseract's script name ("Latin", "Han", "Hangul", "Japanese", …).
    script: str
    confidence: float


def tessdata_dir() -> Path:
    """The folder of language data, or EngineMissing saying what to install."""
    for name in ("PDFINDEX_TESSDATA", "TESSDATA_PREFIX"):
        value = os.environ.get(name, "").strip()
        if value:
            path = Path(value)
            if (path / "tessdata").is_dir() and not any(path.glob("*.traineddata")):
                path = path / "tessdata"
            if not path.is_dir():
                raise EngineMissing(f"{name} is not a folder; {INSTALL_HINT}")
            if not any(path.glob("*.traineddata")):
                raise EngineMissing(f"no Tesseract language data in the {name} folder; {INSTALL_HINT}")
            return path
    for place in TESSDATA_PLACES:
        if any(Path(place).glob("*.traineddata")):
            return Path(place)
    raise EngineMissing(f"no Tesseract language data found; {INSTALL_HINT}")


class Engine:
    """Tesseract with its models loaded once per language and page mode."""

    def __init__(self, timeout: float = 120.0) -> None:
        try:
            import tesserocr  # noqa: PLC0415 - Tesseract: EngineMissing, not an ImportError, where it lacks
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EngineMissing(f"the OCR engine is not installed (pip install tesserocr): {exc}") from exc
        self._tesserocr = tesserocr
        self.tessdata = tessdata_dir()
        self.languages = frozenset(p.stem for p in self.tessdata.glob("*.traineddata"))
        self.timeout_ms = int(timeout * 1000)
        self._apis: dict[tuple[str, int], Any] = {}
        self.version = str(tesserocr.tesseract_version().split()[1])

    def _api(self, language: str, psm: int) -> Any:
        api = self._apis.get((language, psm))
        if api is None:
            missing = [part for part in language.split("+") if part not in self.languages]
            if missing:
                raise EngineMissing(f"no Tesseract data for {'+'.join(missing)} in {self.tessdata}; {INSTALL_HINT}")
            api = self._tesserocr.PyTessBaseAPI(path=f"{self.tessdata}/", lang=language, psm=psm)
            self._apis[(language, psm)] = api
        return api

    def orientation(self, image: Image) -> Orientation | None:
        """Tesseract's orientation and script detection (OSD), or None when it finds
        too little text to say or has no ``osd`` data."""
        if "osd" not in self.languages:
            return None
        api = self._api("osd", self._tesserocr.PSM.OSD_ONLY)
        api.SetImage(image)
        found = api.DetectOrientationScript()
        if not found:
            return None
        # orient_deg: how far the page is turned clockwise, undone counter-clockwise
        return Orientation(int(found["orient_deg"]) // 90 % 4, str(found["script_name"]),
                           float(found["orient_conf"]))

    def read(self, image: Image, language: str, vertical: bool = False, dpi: int = 300) -> Reading:
        """Recognise ``image`` in ``language``; ``vertical``: one block of
        top-to-bottom columns (jpn_vert). Chinese, Japanese and Korean across are read
        as one block of lines: Tesseract's page layout analysis cut Hangul lines into
        fragments (Korean word F1 0.72 against 0.995 as a block; Chinese 0.98 against
        1.00, Japanese 0.992 against 0.998: docs/ocr.md)."""
        psm_names = self._tesserocr.PSM
        block = any(part in _BLOCK_LANGUAGES for part in language.split("+"))
        psm = psm_names.SINGLE_BLOCK_VERT_TEXT if vertical else (psm_names.SINGLE_BLOCK if block else psm_names.AUTO)
        api = self._api(language, psm)
        api.SetImage(image)
        api.SetSourceResolution(max(70, min(dpi, 1200)))
        if not api.Recognize(timeout=self.timeout_ms):
            raise TimeoutError(f"OCR did not finish within {self.timeout_ms / 1000:g} s")
        return Reading(tuple(self._words(api)), language, vertical)

    def _words(self, api: Any) -> list[Word]:
        level = self._tesserocr.RIL
        iterator = api.GetIterator()
        words: list[Word] = []
        block = line = -1
        # Whether a word has a space before it: as the page's text has it (the
        # iterator's line text spaces every Hangul syllable; the page's does not).
        page_text, at = api.GetUTF8Text() or "", 0
        if iterator is None:
            return words
        for item in self._tesserocr.iterate_level(iterator, level.WORD):
            if item.IsAtBeginningOf(level.BLOCK):
                block += 1
            if item.IsAtBeginningOf(level.TEXTLINE):
                line += 1
            try:
                text = (item.GetUTF8Text(level.WORD) or "").strip()
            except RuntimeError:  # "No text returned": a word box without a reading
                continue
            box = item.BoundingBox(level.WORD)
            if not text or box is None:
                continue
            found = page_text.find(text, at)
            spaced = found <= 0 or page_text[found - 1].isspace()
            at = found + len(text) if found >= 0 else at
            words.append(Word(text, tuple(box), float(item.Confidence(level.WORD)), block, line, spaced))
        return words

    def close(self) -> None:
        for api in self._apis.values():
            api.End()
        self._apis.clear()


_ENGINE: Engine | None = None


def engine(timeout: float = 120.0) -> Engine:
    """This process's engine, made on first use (EngineMissing when there is none)."""
    global _ENGINE  # noqa: PLW0603 - one engine a process: its models load once
    if _ENGINE is None:
        _ENGINE = Engine(timeout)
    _ENGINE.timeout_ms = int(timeout * 1000)
    return _ENGINE
