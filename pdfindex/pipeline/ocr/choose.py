"""Which way up a page reads and in which language, settled per page by measuring.

Tesseract's orientation and script detection (OSD) is a guess from letter shapes:
on the scanned corpus it called a Korean fax Japanese turned upside down and a
Japanese phone shot Arabic. So its answer only orders the candidates; a candidate is
taken on the confidence of reading a band of the page with it, which told the right
language and the right way up on every corpus page (docs/ocr.md). The band is a
eighth of the page, so trying several costs less than one full reading; when the
band holds too few words, the whole page is tried instead.

Candidates are the configured languages: the Latin-script ones read together
("fra+deu+eng": a page mixes them), each CJK language alone, and ``jpn_vert`` (or
any ``*_vert``) as top-to-bottom columns.
"""
from __future__ import annotations

from dataclasses import dataclass

from PIL import Image as PILImage
from PIL.Image import Image

from .acquire import PageImage
from .engine import INSTALL_HINT, Engine, EngineMissing, Orientation, Reading
from .prepare import turned

#: A band reading at least this confident ends the search (the right language read
#: 86-96 on the corpus, the wrong ones at most 84, Japanese on Latin text).
SURE = 88.0
#: Fewer words than this in the band say nothing about the language.
MIN_WORDS = 4
#: A candidate reading at least CLEAR_FLOOR and this far ahead of the next ends the
#: search: the wrong languages read the corpus pages at least 30 below the right one
#: (but Japanese read a Chinese page at 66: below the floor, so Chinese is tried).
CLEAR_LEAD = 30.0
CLEAR_FLOOR = 75.0
#: Points by which the page as it lies must read better than turned as OSD says to
#: overrule OSD (a sideways Latin page: 94 as it lies, 92 turned, and as it lies its
#: words come out in the wrong order).
TURN_MARGIN = 5.0
#: The band read to choose is this fraction of the page's height: an eighth chose as a
#: quarter did on every page of the scans corpus, at 0.76 of its CPU (docs/ocr.md).
BAND_SHARE = 8
#: The share of a page's rows with ink below which a band is not worth reading.
MIN_INK = 0.02
#: Scripts OSD names → the language a candidate must have to come first.
_SCRIPT_LANGUAGES = {"Hangul": ("kor",), "Korean": ("kor",), "Japanese": ("jpn", "jpn_vert", "chi_sim"),
                     "Katakana": ("jpn", "jpn_vert"), "Hiragana": ("jpn", "jpn_vert"),
                     "Han": ("chi_sim", "chi_tra", "jpn", "jpn_vert")}
_CJK = ("chi_sim", "chi_tra", "jpn", "kor")


@dataclass(frozen=True, slots=True)
class Candidate:
    language: str  # "fra+deu+eng", "kor", "jpn_vert", …
    vertical: bool


@dataclass(frozen=True, slots=True)
class Choice:
    reading: Reading
    page: PageImage
    #: Quarter turns counter-clockwise that were applied.
    turns: int
    #: What was tried and why this won, for ``explain``.
    why: str


def candidates(languages: list[str], available: frozenset[str]) -> list[Candidate]:
    """The configured languages as reading candidates: Latin-script ones together."""
    usable = [lang for lang in languages if lang in available]
    base = [lang for lang in usable if lang not in _CJK and not lang.endswith("_vert")]
    found = [Candidate("+".join(base), False)] if base else []
    found += [Candidate(lang, False) for lang in usable if lang in _CJK]
    found += [Candidate(lang, True) for lang in usable if lang.endswith("_vert")]
    return found


def ordered(found: list[Candidate], osd: Orientation | None) -> list[Candidate]:
    """OSD's script first, then the configured order."""
    first = _SCRIPT_LANGUAGES.get(osd.script, ()) if osd is not None else ()
    return sorted(found, key=lambda c: first.index(c.language) if c.language in first else len(first))


def _band(page: PageImage) -> Image | None:
    """The eighth of the page that holds the most lines, cut where no line is (a
    line cut in half reads as garbage and would lower the right language's
    confidence); None when the page holds too little ink for a band to tell."""
    width, height = page.image.size
    rows = page.image.resize((1, height), PILImage.Resampling.BOX).tobytes()  # one byte a row (mode L)
    # a row is inked when clearly darker than the paper (noise and grain darken every row a little)
    paper = sorted(rows)[int(height * 0.95)]
    blank = paper - max(6, (paper - min(rows)) * 0.08)
    inked = [1 if row < blank else 0 for row in rows]
    span = max(1, height // BAND_SHARE)
    count = sum(inked[:span])
    best, top = count, 0
    for start in range(1, height - span + 1):
        count += inked[start + span - 1] - inked[start - 1]
        if count > best:
            best, top = count, start
    if best < MIN_INK * height:
        return None

    def clear(row: int) -> int:
        for step in range(int(height * 0.06)):
            for at in (row - step, row + step):
                if 0 <= at < height and not inked[at]:
                    return at
        return row

    upper, lower = clear(top), clear(min(height - 1, top + span))
    return page.image.crop((0, upper, width, max(lower, upper + 1)))


def _score(reading: Reading) -> float:
    """Confidence, discounted below MIN_WORDS words (three sure words of a wrong
    language must not beat a page of doubtful right ones)."""
    return reading.confidence * min(1.0, len(reading.words) / MIN_WORDS)


def _probe(engine: Engine, page: PageImage, candidate: Candidate, whole: bool) -> Reading:
    image = None if whole else _band(page)
    return engine.read(page.image if image is None else image, candidate.language, candidate.vertical,
                       round(page.dpi[0]))


@dataclass(slots=True)
class _Best:
    candidate: Candidate
    score: float
    #: The probe's reading when it read the whole page (it is then the page's).
    reading: Reading | None
    tried: str
    #: The most words any probe found: fewer than MIN_WORDS say the band was empty.
    words: int = 0


def _best(engine: Engine, page: PageImage, options: list[Candidate], whole: bool,
          known: float | None = None) -> _Best:
    """The candidate reading ``page`` (a band of it, or ``whole``) most confidently;
    ``known``: the first candidate's band score, already measured."""
    tried: list[str] = []
    scores: list[float] = []
    best = _Best(options[0], -1.0, None, "")
    for candidate in options:
        reading = None if known is not None and candidate is options[0] and not whole else \
            _probe(engine, page, candidate, whole)
        score = _score(reading) if reading is not None else known or 0.0
        words = len(reading.words) if reading is not None else (MIN_WORDS if known else 0)
        best.words = max(best.words, words)
        tried.append(f"{candidate.language} {score:.0f}")
        scores.append(score)
        if score > best.score:
            best = _Best(candidate, score, reading if whole else None, "", best.words)
        if score >= SURE or (len(scores) > 1 and best.score >= CLEAR_FLOOR
                             and best.score - sorted(scores)[-2] >= CLEAR_LEAD):
            break
    best.tried = ", ".join(tried)
    return best


def _upright(engine: Engine, page: PageImage, osd: Orientation | None,
             first: Candidate) -> tuple[int, float, str]:
    """OSD's turn, if the first candidate reads a band of the page better so than as it
    lies (OSD turned a Korean fax upside down). Returns the turns, the band's score
    and what was measured."""
    turns = osd.turns if osd is not None else 0
    tries = {0: _score(_probe(engine, page, first, False))}
    if turns:
        tries[turns] = _score(_probe(engine, turned(page, turns), first, False))
    # OSD's turn stands unless the page reads clearly better as it lies (Tesseract reads
    # some sideways text as it lies nearly as well, in the wrong order), and only on a
    # good reading: two bad ones (the wrong language) tell nothing
    best = turns if tries.get(turns, 0.0) >= SURE / 2 and tries[turns] + TURN_MARGIN >= tries[0] else 0
    why = ", ".join(f"{t * 90}° {score:.0f}" for t, score in tries.items())
    return best, tries[best], f"{first.language} read {why}"


def _sideways(engine: Engine, page: PageImage, tried: int, best: _Best,
              whole: bool) -> tuple[int, _Best | None, str]:
    """When the page reads badly every way tried, the other quarter turns with the
    language that read it best (a sideways scan OSD could not place)."""
    found: tuple[int, _Best | None] = (tried, None)
    notes = []
    for turns in (0, 1, 2, 3):
        if turns == tried:
            continue
        reading = _probe(engine, turned(page, turns), best.candidate, whole)
        score = _score(reading)
        notes.append(f"{turns * 90}° {score:.0f}")
        if score >= SURE / 2 and score > max(best.score, (found[1].score if found[1] else 0.0)) + 10:
            found = (turns, _Best(best.candidate, score, reading if whole else None, best.tried))
    return found[0], found[1], ", ".join(notes)


def choose(engine: Engine, page: PageImage, languages: list[str]) -> Choice:
    """Read the page the way up and in the language that read it best."""
    found = candidates(languages, engine.languages)
    if not found:
        raise EngineMissing(f"no data for {'+'.join(languages)} in {engine.tessdata}; {INSTALL_HINT}")
    osd = engine.orientation(page.image)
    options = ordered(found, osd)
    turns, known, turning = _upright(engine, page, osd, options[0])
    why = f"OSD: {osd.script}, {osd.turns * 90}°" if osd is not None else "OSD: no answer"
    if page.straightened:
        why = f"straightened by {page.straightened:.1f}°; {why}"
    upright = turned(page, turns)
    whole = _band(upright) is None
    best = _best(engine, upright, options, whole, None if whole else known)
    if not whole and best.words < MIN_WORDS:  # the band holds too little to tell: try the whole page
        whole = True
        best = _best(engine, upright, options, True)
    if best.score < SURE / 2:
        turns, sideways, notes = _sideways(engine, page, turns, best, whole)
        turning += f"; {best.candidate.language} read {notes}"
        if sideways is not None:
            upright, best = turned(page, turns), sideways
    chosen = best.candidate
    reading = best.reading or engine.read(upright.image, chosen.language, chosen.vertical, round(upright.dpi[0]))
    return Choice(reading, upright, turns,
                  f"{why}; {turning}; tried {best.tried}; read as {chosen.language}, turned {turns * 90}°")
