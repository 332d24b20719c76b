"""Text analysis for the page index: the same pipeline for page text and queries.

- Unicode NFKC per token, so the ligature "ﬁ" matches "fi" and fullwidth "ＰＤＦ"
  matches "PDF"; case folding; accent folding of the combining diacritics block
  (café matches cafe; Hangul and other scripts are left whole).
- Runs of Han, kana and Hangul become overlapping character bigrams (one character
  alone stays a unigram): Chinese and Japanese have no spaces, so "PDF中文全文检索系统"
  must not be one token, and a Korean stem (검색) then matches words with particles
  attached (검색은).
- Words of other scripts are stemmed for the configured language; numbers keep
  their inner separators ("1,485.1") and are not stemmed.

Offsets (startchar/endchar) refer to the original text, which highlighting needs.
"""
from __future__ import annotations

import itertools
import operator
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from functools import cache, lru_cache, partial
from typing import Any

from whoosh.analysis import Token, Tokenizer
from whoosh.lang import has_stemmer, stemmer_for_language

# Han (with extensions and compatibility ideographs), kana (with halfwidth), Hangul
# syllables and jamo.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005\u3007\u3021-\u3029\u3038-\u303b\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff"
    "\uff66-\uffdc\U00020000-\U0003134f"
)


def _word_patterns(letter: str, after_number: str, mark: str) -> tuple[str, str]:
    """A word token's pattern, made from the class of its letters, the class a number
    may not run on into, and its marks; as matched (a number keeps its separators:
    1,485.1; letters keep inner apostrophes and dots and a trailing one, which the
    tokenizer cuts off: U.S.A.), and as split by (the same tokens, each in two groups:
    the part its term is made of, then its trailing mark, if any). One definition,
    so the patterns of a script and of ASCII, matched or split, find the same words."""
    number = rf"\d+(?:[.,]\d+)+(?!{after_number})"
    return f"{number}|(?:{letter}+{mark}?)+", f"({number}|{letter}+(?:{mark}{letter}+)*)({mark}?)"


# Each use of the CJK class costs ~3.5 ms of start-up to compile (re builds a
# 64k-entry map of it in Python): it appears twice, and the letter class of words
# once (the split form, twice more, is compiled on first use).
_WORD, _WORD_SPLIT = _word_patterns(f"[^\\W_{_CJK}]", r"[^\W_]", "['’.]")
TOKENS = re.compile(f"(?P<cjk>(?:[{_CJK}]\n?)+)|(?P<word>{_WORD})")  # a line break inside CJK text is a wrapped line
_ASCII_WORD, _ASCII_WORD_SPLIT = _word_patterns("[A-Za-z0-9]", "[A-Za-z0-9]", "['.]")
#: ``TOKENS`` on ASCII text, where it can only find words: the same matches, in
#: half the time (a small class instead of the CJK ranges), one string each.
_ASCII_WORDS = re.compile(_ASCII_WORD)
#: ``_ASCII_WORDS`` to split a text by (``word_spans``).
_ASCII_SPLIT = re.compile(_ASCII_WORD_SPLIT)


@cache
def _cjk_and_words() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """A CJK character, ``TOKENS``'s word branch alone, and that branch to split by:
    compiled on first use, not at start-up (each CJK class is ~3.5 ms to compile)."""
    return re.compile(f"[{_CJK}]"), re.compile(_WORD), re.compile(_WORD_SPLIT)


@cache
def outside_tokens() -> re.Pattern[str]:
    """A character no token holds (no letter, digit, CJK character, word mark,
    number separator or wrapped line): a text cut there keeps every token before the
    cut as the whole text has it. Compiled on first use (a CJK class)."""
    return re.compile(f"[^\\w\n'’.,{_CJK}]")


def words_only(text: str) -> re.Pattern[str] | None:
    """A pattern whose matches are ``text``'s tokens, one string each, when they are
    all words (no CJK character, so no bigrams): ``TOKENS``'s matches without a
    group per match. None when ``text`` holds CJK."""
    if text.isascii():
        return _ASCII_WORDS
    cjk, words, _ = _cjk_and_words()
    return None if cjk.search(text) else words


@lru_cache(maxsize=8)
def word_spans(text: str) -> tuple[list[str], list[int], list[int]] | None:
    """For a text whose tokens are all words (``words_only``): each word without its
    trailing apostrophe or dot (the part its term is made of), where it starts, and
    where it ends (that mark left out, as the index's offsets leave it). None when
    ``text`` holds CJK. One split by the pattern, the offsets summed from the
    pieces' lengths: no match object per word. Kept for the last few texts, since a
    snippet reads a page's terms and then its spans (the lists are shared: not to
    be changed)."""
    if text.isascii():
        split = _ASCII_SPLIT
    else:
        cjk, _, split = _cjk_and_words()
        if cjk.search(text):
            return None
    pieces = split.split(text)  # between, word, mark, between, word, mark, ..., between
    ends = list(itertools.accumulate(map(len, pieces)))
    return pieces[1::3], ends[0:-1:3], ends[1::3]


WORD_END = "'’."
_COMBINING = re.compile("[\u0300-\u036f]")
_DIGITS = re.compile(r"^[\d.,'’]+$")
#: Words whose terms ``PageTokenizer.terms`` keeps (then it starts again): ~10 MB.
_KNOWN_WORDS = 100_000
_IS_NFKC = partial(unicodedata.is_normalized, "NFKC")


def fold(text: str) -> str:
    """NFKC, case folding and accent folding of a token (or of a whole text: the
    same steps, so a page folded at once matches its words folded one by one)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    if _COMBINING.search(decomposed):
        text = unicodedata.normalize("NFC", _COMBINING.sub("", decomposed))
    return text


def is_cjk(text: str) -> bool:
    m = TOKENS.fullmatch(text)
    return m is not None and m.group("cjk") is not None and "\n" not in text


def cjk_spans(run: str, start: int = 0) -> list[tuple[int, int]]:
    """Where the tokens of a CJK run found at ``start`` lie: overlapping bigrams of
    its characters (a line break inside is a wrapped line, passed over), one
    character alone for a run of one. One definition for the index, its queries and
    the snippets (``snippets``), whose positions must agree."""
    if "\n" not in run and len(run) > 1:
        return list(zip(range(start, start + len(run) - 1), range(start + 2, start + len(run) + 1), strict=True))
    at = [start + k for k, char in enumerate(run) if char != "\n"]
    return [(at[0], at[0] + 1)] if len(at) == 1 else [(i, j + 1) for i, j in itertools.pairwise(at)]


def cjk_terms(run: str) -> list[str]:
    """The terms of a CJK run's tokens (``cjk_spans``), as ``_cjk_term`` makes each:
    a run without a line break whose bigrams are all in NFKC is those bigrams as
    they stand, made without a Python call per character (a Chinese page is a token
    per character)."""
    if "\n" not in run and len(run) > 1:
        bigrams = list(map(operator.add, run, run[1:]))
        if all(map(_IS_NFKC, bigrams)):
            return bigrams
    return [_cjk_term(run, start, end) for start, end in cjk_spans(run)]


def _cjk_term(text: str, start: int, end: int) -> str:
    """The term of the CJK token at ``start:end`` of ``text`` (``cjk_spans``): its
    first and last characters, NFKC."""
    return unicodedata.normalize("NFKC", text[start] if end - start == 1 else text[start] + text[end - 1])


def stemmer(language: str) -> Callable[[str], str] | None:
    """The stemming function for a language code, or None ("none", unknown)."""
    if language in ("", "none") or not has_stemmer(language):
        return None
    return lru_cache(maxsize=50_000)(stemmer_for_language(language))


class PageTokenizer(Tokenizer):
    """Whoosh tokenizer implementing the module's analysis in one pass (Whoosh
    filters per token would cost a generator layer each on millions of tokens)."""

    def __init__(self, language: str = "en") -> None:
        self.language = language
        self._stem = stemmer(language)
        self._last: tuple[str, list[str]] | None = None
        self._known: dict[str, str] = {}  # a word as written -> its term (``terms``)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PageTokenizer) and other.language == self.language

    def __hash__(self) -> int:
        return hash(("PageTokenizer", self.language))

    def __getstate__(self) -> dict[str, Any]:
        return {"language": self.language}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["language"])  # type: ignore[misc]

    def __call__(self, value: str, positions: bool = False, chars: bool = False, keeporiginal: bool = False,
                 removestops: bool = True, start_pos: int = 0, start_char: int = 0, tokenize: bool = True,
                 mode: str = "", **kwargs: Any) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        if not tokenize:
            # Wildcard, prefix and fuzzy query text: folded, not split nor stemmed.
            folded = fold(value)
            pieces: Iterable[_Piece] = [(folded, start_pos, start_char, start_char + len(value), folded)]
        else:
            pieces = ((text, start_pos + n, start_char + start, start_char + end, raw)
                      for n, (text, start, end, raw) in enumerate(self._pieces(value)))
        return _tokens(token, pieces, positions, chars, keeporiginal)

    def _pieces(self, value: str) -> Iterator[tuple[str, int, int, str]]:
        """(term, start, end, as written) of each token: the one tokenization that
        queries (``__call__``) and indexing (``terms``) share."""
        for m in TOKENS.finditer(value):
            run = m.group("cjk")
            if run is not None:
                for start, end in cjk_spans(run, m.start()):
                    term = _cjk_term(value, start, end)
                    yield term, start, end, term
                continue
            raw = m.group("word")
            if raw[-1] in WORD_END:
                raw = raw.rstrip(WORD_END)
            yield self._term(raw), m.start(), m.start() + len(raw), raw

    def terms(self, value: str) -> list[str]:
        """The terms of ``value`` in order (a term's position is its index): what
        indexing needs, without a Token per word. The same terms as ``_pieces``, made
        faster for the writer, where this is most of a page's cost: no match object
        per word, and a word seen before is looked up, not folded and stemmed again
        (a corpus's words are mostly the same few thousand). The last text's terms are
        kept, because the page text is indexed twice (its words, then its word pairs)."""
        last = self._last
        if last is not None and last[0] is value:
            return last[1]
        pattern = words_only(value)
        if pattern is not None:
            terms = self._looked_up(pattern.findall(value))
        else:
            known = self._known_words()
            terms = []
            for run, word in TOKENS.findall(value):
                if run:
                    terms += cjk_terms(run)
                    continue
                terms.append(known.get(word) or self._known_term(word))
        self._last = (value, terms)
        return terms

    def shown_terms(self, value: str) -> list[str]:
        """``terms`` of a text whose token spans are read too (a snippet's page):
        made from ``word_spans``, which the spans come from as well, so the text is
        read by the pattern once, not twice."""
        split = word_spans(value)
        return self.terms(value) if split is None else self._looked_up(split[0])

    def _known_words(self) -> dict[str, str]:
        """The words seen and their terms, emptied past ``_KNOWN_WORDS``."""
        if len(self._known) > _KNOWN_WORDS:
            self._known.clear()
        return self._known

    def _looked_up(self, words: Iterable[str]) -> list[str]:
        """The terms of ``words`` (as ``TOKENS`` finds them, or without their trailing
        mark), each looked up among the words seen first."""
        known = self._known_words()
        return [known.get(word) or self._known_term(word) for word in words]

    def _known_term(self, word: str) -> str:
        """The term of a word as ``TOKENS`` found it, kept for the next time."""
        term = self._known[word] = self._term(word.rstrip(WORD_END))
        return term

    def _term(self, raw: str) -> str:
        form = fold(raw)
        return self._stem(form) if self._stem is not None and not _DIGITS.match(form) else form


class PathsTokenizer(Tokenizer):
    """Each path of a list (or one path) as one token, unchanged: the field that
    lets ``--path`` match any copy of a document."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathsTokenizer)

    def __hash__(self) -> int:
        return hash("PathsTokenizer")

    def __call__(self, value: str | list[str], positions: bool = False, chars: bool = False,
                 keeporiginal: bool = False, removestops: bool = True, start_pos: int = 0, start_char: int = 0,
                 tokenize: bool = True, mode: str = "", **kwargs: Any) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        return _tokens(token, _path_pieces(value, start_pos, start_char), positions, chars, keeporiginal)


def _path_pieces(value: str | list[str], start_pos: int, start_char: int) -> Iterator[_Piece]:
    for pos, text in enumerate([value] if isinstance(value, str) else value):
        if not isinstance(text, str):
            raise ValueError(f"a path is a {type(text).__name__}, not text")
        yield text, start_pos + pos, start_char, start_char + len(text), text


#: (term, position, start character, end character, as written) of one token.
_Piece = tuple[str, int, int, int, str]


def _tokens(token: Token, pieces: Iterable[_Piece], positions: bool, chars: bool,
            keeporiginal: bool) -> Iterator[Token]:
    """The one Token a Whoosh tokenizer hands out, set to each piece in turn."""
    for text, pos, start, end, raw in pieces:
        token.text = text
        token.boost = 1.0
        token.stopped = False
        if keeporiginal:
            token.original = raw
        if positions:
            token.pos = pos
        if chars:
            token.startchar, token.endchar = start, end
        yield token


def folded_words(text: str) -> Iterator[str]:
    """The words of ``text`` as the tokenizer folds them before stemming (numbers
    and CJK runs left out): what a query's words were typed as."""
    for m in TOKENS.finditer(text):
        word = m.group("word")
        if word is not None and (word := word.rstrip(WORD_END)) and not _DIGITS.match(folded := fold(word)):
            yield folded
