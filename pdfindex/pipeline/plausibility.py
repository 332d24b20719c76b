"""R7, beyond: is the decoded text plausible at all?

Coverage counts a glyph as resolved once it has a Unicode value, so a ToUnicode map
that lies scores 1.0: text shifted by a constant ("Khoor zruog"), private-use code
points, glyph ids passed off as Unicode. Each of these leaves a trace in the text
itself, which ``suspicion`` measures on a page:

* **unreadable characters**: private-use, control, unassigned and replacement
  characters, among all that are not white space;
* **mixed scripts inside words**: Latin, Greek and Cyrillic letters in one word (a
  map of look-alikes, or codes shifted into another block);
* **Latin words without vowels**: on a page written mostly in Latin letters,
  lowercase words of three letters or more with no vowel (shifted Latin loses most
  of its vowels: "the" → "wkh"). Acronyms (upper case) are not counted, and a page
  needs many words before this one speaks (a Chinese page's few URLs do not).

Each signal has a share and a threshold (``Params``); the first over its threshold
makes the page suspect, with the reason. The thresholds sit far above what real
text shows: the producers corpus and the real-world corpus have no page near them
(tests/test_plausibility.py checks both).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from .params import Params

_WORD = re.compile(r"[^\W\d_]+")
_VOWELS = frozenset("aeiouy")
_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")
#: Words looked at per page: a book page needs no more to tell.
_MAX_WORDS = 3000
#: Characters looked at per page for the unreadable share.
_MAX_CHARS = 50_000


@dataclass(frozen=True, slots=True)
class Suspicion:
    """Why a page's text is not to be trusted, and the share of it that is not."""

    reason: str
    share: float


def _unreadable(ch: str) -> bool:
    if ch == "\ufffd":
        return True
    category = unicodedata.category(ch)
    return category in ("Co", "Cn", "Cs") or (category == "Cc" and ch not in "\t\n\f\r")


def _script(ch: str) -> str | None:
    name = unicodedata.name(ch, "")
    for script in _SCRIPTS:
        if name.startswith(script):
            return script
    return None


def _base(ch: str) -> str:
    return unicodedata.normalize("NFD", ch)[0].lower()


def suspicion(text: str, params: Params) -> Suspicion | None:
    """The first plausibility signal of ``text`` over its threshold, or None.

    It runs on every page extracted, so each distinct character is classified once
    (a page of 2,000 characters has about 60), and ASCII words, most of any Latin
    page, take the short way."""
    text = text[:_MAX_CHARS]
    counts = Counter(text)
    found = _unreadable_share(counts, params)
    if found is None:
        words = _count_words(text, counts)
        found = _mixed_scripts(words, params) or _no_vowels(words, params)
    return found


@dataclass(frozen=True, slots=True)
class _Words:
    """What the word signals count among a page's first ``_MAX_WORDS`` words."""

    letters: int  # in every word
    scripted: int  # words with letters of Latin, Greek or Cyrillic
    mixed: int  # ... of more than one of them
    latin_letters: int  # in words of Latin letters only
    latin: list[str]  # those of three letters or more in lower case


def _unreadable_share(counts: Counter[str], params: Params) -> Suspicion | None:
    shown = sum(n for c, n in counts.items() if not c.isspace())
    if shown < params.suspect_min_chars:
        return None
    bad = sum(n for c, n in counts.items() if _unreadable(c))
    if bad / shown > params.suspect_unreadable:
        return Suspicion(f"{bad} of {shown} characters are private-use, control or replacement "
                         "characters (a ToUnicode map that does not give text)", bad / shown)
    return None


def _count_words(text: str, counts: Counter[str]) -> _Words:
    script = {c: _script(c) for c in counts if not c.isascii() and c.isalpha()}
    scripted = mixed = letters = latin_letters = 0
    latin: list[str] = []
    for word in _WORD.findall(text)[:_MAX_WORDS]:
        letters += len(word)
        scripts: frozenset[str] = _LATIN if word.isascii() else frozenset(
            s for s in (script.get(c, "LATIN") for c in word) if s is not None)
        if not scripts:
            continue
        scripted += 1
        if len(scripts) > 1:
            mixed += 1
        elif scripts == _LATIN:
            latin_letters += len(word)
            if len(word) >= 3 and word.islower():
                latin.append(word)
    return _Words(letters, scripted, mixed, latin_letters, latin)


def _mixed_scripts(words: _Words, params: Params) -> Suspicion | None:
    scripted, mixed = words.scripted, words.mixed
    if scripted >= params.suspect_min_words and mixed / scripted > params.suspect_mixed_scripts:
        return Suspicion(f"{mixed} of {scripted} words mix Latin, Greek or Cyrillic letters "
                         "(a ToUnicode map of look-alikes, or shifted codes)", mixed / scripted)
    return None


def _no_vowels(words: _Words, params: Params) -> Suspicion | None:
    latin = words.latin
    if len(latin) >= params.suspect_min_words and words.latin_letters * 2 > words.letters:  # a page in Latin script
        voiceless = sum(1 for w in latin if not _has_vowel(w))
        if voiceless / len(latin) > params.suspect_no_vowels:
            return Suspicion(f"{voiceless} of {len(latin)} lowercase Latin words have no vowel "
                             "(text shifted by a constant code offset?)", voiceless / len(latin))
    return None


_LATIN = frozenset({"LATIN"})


def _has_vowel(word: str) -> bool:
    if word.isascii():
        return not _VOWELS.isdisjoint(word)
    return any(_base(c) in _VOWELS for c in word)
