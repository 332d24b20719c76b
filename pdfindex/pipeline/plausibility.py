"""R7, beyond: is the decoded text plausible at all?

Coverage counts a glyph as resolved once it has a Unicode value, so a ToUnicode map
that lies scores 1.0: text shifted by a constant ("Khoor zruog"), private-use code
points, glyph ids passed off as Unicode. Each of these leaves a trace in the text
itself, which ``suspicion`` measures on a page:

* **unreadable characters**: private-use, control, unassigned and replacement
  characters, among all that are not white space;
* **mixed scripts inside words**: Latin, Greek and Cyrillic letters in one word (a
  map of look-alikes, or codes shifted into another block);
* **shifted letters**: the page's Latin letters read as text only once every code is
  moved by a constant (``_shift``, below): how much likelier the moved letters are,
  the lowercase words that only then have a vowel, and a character (``#`` is the
  space moved by 3) that stands between words where the page has no spaces;
* **Latin words without vowels**: on a page written mostly in Latin letters,
  lowercase words of three letters or more with no vowel (shifted Latin loses most
  of its vowels: "the" → "wkh"), whatever made them. Acronyms (upper case) are not
  counted, and a consonant that carries the syllable counts as a vowel: a w inside a
  word (Welsh "cwm"), r and l on a page that writes háček letters (Czech "krk").

The word signals scale with the number of words: a share is suspect only when real
text, whose words show that trait at most as often as ``Params`` says, would show
it so often with a chance below ``Params.suspect_chance`` (Chernoff's bound on the
binomial tail). Ten words need all ten without a vowel, a thousand about a third.
The first signal found makes the page suspect, with the reason. Real text stays far
from every threshold: the producers and real-world corpora have no page near them
(tests/test_plausibility.py checks both).
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from operator import mul

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
    (a page of 2,000 characters has about 60), ASCII words, most of any Latin page,
    take the short way, and a shift is weighed in full only when some shift makes the
    page's letters likelier."""
    for _, found in _findings(text, params):
        if found.level > 1:
            return Suspicion(found.reason, found.share)
    return None


def evidence(text: str, params: Params) -> dict[str, float]:
    """Each signal's evidence on ``text`` as a share of its threshold (above 1:
    suspect), so that a corpus can say how far its pages stay from being flagged."""
    return {name: found.level for name, found in _findings(text, params)}


@dataclass(frozen=True, slots=True)
class _Finding:
    """What a signal measured: ``level`` is its evidence over its threshold; the
    reason and the share are given only above 1."""

    level: float
    reason: str = ""
    share: float = 0.0


def _findings(text: str, params: Params) -> Iterator[tuple[str, _Finding]]:
    """The signals in the order they are asked, each measured only when asked."""
    text = text[:_MAX_CHARS]
    counts = Counter(text)
    yield "unreadable", _unreadable_share(counts, params)
    words = _count_words(text, counts)
    yield "mixed scripts", _mixed_scripts(words, params)
    yield "shifted letters", _shift(text, words, params)
    yield "no vowels", _no_vowels(words, params)


@dataclass(frozen=True, slots=True)
class _Words:
    """What the word signals count among a page's first ``_MAX_WORDS`` words."""

    letters: int  # in every word
    scripted: int  # words with letters of Latin, Greek or Cyrillic
    mixed: int  # ... of more than one of them
    latin_letters: int  # in words of Latin letters only
    latin: list[str]  # those of three letters or more in lower case
    hacek: bool  # the page writes a háček letter: r and l may carry a syllable


def _unreadable_share(counts: Counter[str], params: Params) -> _Finding:
    shown = sum(n for c, n in counts.items() if not c.isspace())
    if shown < params.suspect_min_chars:
        return _Finding(0.0)
    bad = sum(n for c, n in counts.items() if _unreadable(c))
    level = bad / shown / params.suspect_unreadable
    if level <= 1:
        return _Finding(level)
    return _Finding(level, f"{bad} of {shown} characters are private-use, control or replacement "
                           "characters (a ToUnicode map that does not give text)", bad / shown)


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
    return _Words(letters, scripted, mixed, latin_letters, latin, not _HACEK.isdisjoint(script))


def _surprise(hits: int, n: int, share: float) -> float:
    """How unlikely ``hits`` of ``n`` words showing a trait are in real text, in nats.

    Real text is taken to show the trait in at most ``share`` of its words, each word
    on its own; the chance that it shows ``hits`` or more is then below
    exp(-n·KL(hits/n ‖ share)) (Chernoff's bound), and this is n·KL. Against a chance
    of 1e-6 (13.8 nats) and share 0.25, a page needs 10 of 10 words, 13 of 14, 17 of
    20, half of 100, a third of 1,000."""
    if n <= 0 or hits <= share * n:
        return 0.0
    q = hits / n
    divergence = q * math.log(q / share)
    if q < 1:
        divergence += (1 - q) * math.log((1 - q) / (1 - share))
    return n * divergence


def _mixed_scripts(words: _Words, params: Params) -> _Finding:
    scripted, mixed = words.scripted, words.mixed
    level = _surprise(mixed, scripted, params.suspect_mixed_scripts) / -math.log(params.suspect_chance)
    if level <= 1:
        return _Finding(level)
    return _Finding(level, f"{mixed} of {scripted} words mix Latin, Greek or Cyrillic letters "
                           "(a ToUnicode map of look-alikes, or shifted codes)", mixed / scripted)


def _no_vowels(words: _Words, params: Params) -> _Finding:
    latin = words.latin
    if words.latin_letters * 2 <= words.letters:  # not a page in Latin script
        return _Finding(0.0)
    voiceless = sum(1 for w in latin if not _has_vowel(w) and not _syllabic(w, words.hacek))
    level = _surprise(voiceless, len(latin), params.suspect_no_vowels) / -math.log(params.suspect_chance)
    if level <= 1:
        return _Finding(level)
    return _Finding(level, f"{voiceless} of {len(latin)} lowercase Latin words have no vowel "
                           "(text shifted by a constant code offset?)", voiceless / len(latin))


_LATIN = frozenset({"LATIN"})
#: Letters with a háček, written in Czech, Slovak, Croatian, Slovene: languages whose
#: r and l carry syllables of their own ("strč prst skrz krk", "vlk", "krv").
_HACEK = frozenset("čřěůšžťďňČŘĚŮŠŽŤĎŇ")
_SYLLABIC = frozenset("rl")


def _syllabic(word: str, hacek: bool) -> bool:
    """Whether a word without vowels has a consonant that carries its syllable: a w
    inside it (Welsh "cwm", "trwm", "llwch"), or on a page that writes háček letters,
    an r or l (Czech "krk", "vlk")."""
    return "w" in word[1:-1] or (hacek and not _SYLLABIC.isdisjoint(word))


def _has_vowel(word: str) -> bool:
    if word.isascii():
        return not _VOWELS.isdisjoint(word)
    return any(_base(c) in _VOWELS for c in word)


# ----------------------------------------------------------------- shifted letters
#
# A ToUnicode map off by a constant k turns every code c into c + k: "The" into "Wkh"
# (k = 3), the space into "#". Moving the page's codes back by k then gives text, and
# moving real text by any k gives garbage. ``_shift`` ranks each k from -25 to 25
# (upper and lower case run in parallel 32 apart, so these cover every move of
# letters onto letters) by the log-likelihood ratio of the moved letters against the
# letters as they are, under the letter frequencies of European text: each letter
# counts its log-frequency, a letter the move turns into a symbol counts as a rare
# one. Each distinct word counts once, so a page that repeats "cell" forty times
# weighs one "cell". For the best shifts, more evidence joins: the lowercase words
# that only have a vowel once moved back (real words almost always have one), a "`"
# or "^" inside a word that the move makes a letter, and a symbol between letters
# that it makes the space, on a page with fewer spaces than that symbol.

#: Letter frequencies in per cent, rounded averages of published counts for English,
#: German, French and Spanish text; only their shape matters (e, a, i, n, o, r, s, t
#: common; j, q, x, z rare), and no letter is given less than 0.3.
_FREQUENCY = {"a": 8.0, "b": 1.5, "c": 3.0, "d": 4.2, "e": 13.0, "f": 1.3, "g": 2.0, "h": 2.5,
              "i": 7.0, "j": 0.6, "k": 1.2, "l": 4.5, "m": 3.0, "n": 7.5, "o": 6.5, "p": 2.3,
              "q": 0.5, "r": 6.8, "s": 6.5, "t": 6.5, "u": 3.8, "v": 1.2, "w": 1.0, "x": 0.3,
              "y": 0.8, "z": 0.8}
_TOTAL = sum(_FREQUENCY.values())
_LOG_FREQUENCY = [math.log(_FREQUENCY[chr(ord("a") + i)] / _TOTAL) for i in range(26)]
#: A letter that a move turns into a symbol: as likely as a letter of 0.1 %.
_LOG_LOST = math.log(0.001)
#: Shifts tried, either way; beyond 25 a move onto letters is one of these with the
#: case swapped (see ``_as_written``).
_MAX_SHIFT = 25
#: Per shift k, what each letter (a..z) gains when moved back by k.
_GAIN = {k: [(_LOG_FREQUENCY[i - k] if 0 <= i - k < 26 else _LOG_LOST) - _LOG_FREQUENCY[i] for i in range(26)]
         for k in range(-_MAX_SHIFT, _MAX_SHIFT + 1) if k}
#: Shifts weighed in full after the letters ranked them.
_BEST_SHIFTS = 3
#: Fewer distinct letters than this say too little (Roman numerals, "www", units).
_MIN_DISTINCT_LETTERS = 10
#: The share of real words of three letters or more that have no vowel; a string of
#: random letters has none with (1 - the vowels' share, about 0.4) ** its length.
_VOWELLESS = 0.02
_VOWEL_SHARE = sum(_FREQUENCY[v] for v in _VOWELS) / _TOTAL
#: A symbol turned into a space where spaces are missing: a space (about 15 % of
#: real text) against a symbol between letters (about 0.1 %).
_SPACE_GAIN = math.log(0.15 / 0.001)
#: Words for the shift: runs of ASCII letters with the symbols a shift turns letters
#: into (those around the letters in the code table), so "sg`s" stays one word.
_SHIFT_WORD = re.compile(r"[A-Za-z@\[\\\]^_`{|}~]+")
#: Symbols that real text hardly ever writes between two letters, and that a shift by
#: -1 to -3 makes of an "a" ("that" moved by -1 is "sg`s"): moved back onto a letter,
#: each counts as that letter against a lost one.
_STRAY = re.compile(r"(?<=[A-Za-z])[`^](?=[A-Za-z])")
#: A symbol that a shift by 1 to 15 makes of the space, between two characters that
#: are not spaces: "Wkh#txduwhuo|#uhsruw".
_STAND_IN = re.compile(r"(?<=[\w@\[\\\]^`{|}~])[!-/](?=[\w@\[\\\]^`{|}~])", re.ASCII)


def _vowel_gain(length: int) -> float:
    """Log-likelihood gained by a word of ``length`` letters that has a vowel once
    moved where it had none: as a real word against as random letters. Never
    negative: random letters seldom lack a vowel in a long word either."""
    if length == 0:
        return 0.0
    chance = (1 - _VOWEL_SHARE) ** length
    return max(0.0, math.log((1 - _VOWELLESS) / (1 - chance)) - math.log(_VOWELLESS / chance))


_VOWEL_GAIN = [_vowel_gain(n) for n in range(25)]


@dataclass(frozen=True, slots=True)
class _Moved:
    """What moving a page's codes back by ``k`` gives: the evidence in nats, and what
    the reason says of it."""

    k: int
    evidence: float
    vowels_gained: int = 0
    separator: str = ""
    stand_ins: int = 0


def _shift(text: str, words: _Words, params: Params) -> _Finding:
    """Whether moving every code back by one constant makes the page read as text.
    Real text loses at every shift, so it stops after the letters' ranking (0.1 ms on
    a page of 2,000 characters); only a page some shift favours is weighed in full."""
    tokens = {t for t in _SHIFT_WORD.findall(text)[:_MAX_WORDS] if 3 <= len(t) <= 24}
    counts = Counter("".join(tokens).lower())
    letters = [counts.get(chr(ord("a") + i), 0) for i in range(26)]
    if sum(1 for n in letters if n) < _MIN_DISTINCT_LETTERS:
        return _Finding(0.0)
    ranked = sorted(((sum(map(mul, letters, gain)), k) for k, gain in _GAIN.items()), reverse=True)
    if ranked[0][0] <= 0:  # real text: every shift makes its letters less likely
        return _Finding(0.0)
    lowercase = [t for t in tokens if t.islower()]
    stand_ins = Counter(_STAND_IN.findall(text))
    inside = Counter(_STRAY.findall(" ".join(tokens)))
    moved = max((_weigh(k, score, lowercase, inside, stand_ins, text.count(" "))
                 for score, k in ranked[:_BEST_SHIFTS] if score > 0), key=lambda m: m.evidence)
    level = min(ranked[0][0] / params.suspect_shift_letters, moved.evidence / params.suspect_shift_evidence)
    if level <= 1:
        return _Finding(level)
    k = _as_written(text, moved.k)
    reason = f"the letters read as Latin text only with every code moved by {-k:+d} (a ToUnicode map off by {k:+d})"
    if moved.vowels_gained:
        reason += f"; {moved.vowels_gained} of {len(lowercase)} lowercase words have no vowel until moved"
    if moved.stand_ins:
        reason += f"; {moved.separator!r} stands where {moved.stand_ins} spaces would"
    return _Finding(level, reason, words.latin_letters / words.letters)


def _weigh(k: int, letter_score: float, lowercase: list[str], inside: Counter[str],
           stand_ins: Counter[str], spaces: int) -> _Moved:
    """The letters' evidence for moving back by ``k`` with the words' vowels, the
    stray symbols inside words, and the stand-ins for spaces."""
    vowels = {chr(ord(v) + k) for v in _VOWELS}
    evidence = letter_score
    gained = 0
    for word in lowercase:
        had, has = not _VOWELS.isdisjoint(word), not vowels.isdisjoint(word)
        if had != has:
            evidence += _VOWEL_GAIN[len(word)] if has else -_VOWEL_GAIN[len(word)]
            gained += has
    evidence += sum(n * (_LOG_FREQUENCY[i] - _LOG_LOST) for c, n in inside.items()
                    if (i := _letter_index(ord(c) - k)) is not None)
    separator = chr(0x20 + k) if k > 0 else ""
    found = stand_ins.get(separator, 0) if separator else 0
    if found <= spaces:
        return _Moved(k, evidence, gained)
    return _Moved(k, evidence + found * _SPACE_GAIN, gained, separator, found)


def _letter_index(code: int) -> int | None:
    """0 to 25 for the code of an ASCII letter of either case, else None."""
    if 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A:
        return (code | 0x20) - 0x61
    return None


def _as_written(text: str, k: int) -> int:
    """The shift among k, k - 32 and k + 32 (the same letters, upper and lower case
    swapped) that moves most of the page's letters onto lowercase ones: glyph ids
    passed off as Unicode are off by -29 and turn "the" into "WKH", not by +3."""
    letters = [(ord(c), n) for c, n in Counter(text[:5000]).items() if _letter_index(ord(c)) is not None]

    def onto_lowercase(shift: int) -> int:
        return sum(n for code, n in letters if 0x61 <= code - shift <= 0x7A)
    return max((k, k - 32, k + 32), key=lambda shift: (onto_lowercase(shift), shift == k))
