"""The first stage of reading a query: its text into tokens, the tokens into syntax nodes.

Whoosh's own ``qparser`` works in stages (text → syntax nodes → ``.query()``); so does
this one, for the same reason: each stage can be read and tested alone. This stage knows
the language's grammar and refuses what breaks it (an unclosed quote, an unknown field, a
bad ``^`` weight, nesting too deep), naming the column. It knows nothing of the index:
no Whoosh, no analyzer, no schema. What depends on them (how many words a phrase
analyses to, whether ``status:`` names a status, which fields an index has) is the next
stage's, ``query_build``.

The grammar, as the parser below reads it::

    query   := all_of (OR all_of)*
    all_of  := clause ((AND)? clause)*
    clause  := NOT clause | (+|-) primary | primary
    primary := ( query ) | field: primary | "phrase"~N | [a TO b] | {a TO b} | word
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .errors import QueryError

#: A longer query is refused before it is read (a person types far less; Whoosh's
#: parser took 0.6 s for 10k characters and 80 s for 100k).
MAX_QUERY_CHARS = 1000
#: Fuzzy words: at most this many edits.
MAX_FUZZY_EDITS = 2
#: A word's ``^weight``: above 0, at most this.
MAX_BOOST = 1000.0
#: A phrase's words at most this many words apart (``"a b"~100``).
MAX_PHRASE_SLOP = 100
#: Parentheses (and NOT/-/+) inside each other; deeper would exhaust the stack.
MAX_NESTING = 32
#: What ``field:`` may name. author, subject and keywords come with document
#: metadata; an index without them answers such a query with nothing.
FIELDS = ("text", "title", "author", "subject", "keywords", "producer", "filename", "error", "status", "problem",
          "source")

#: A number as the language writes one: a weight, and a word a suggestion leaves alone.
NUMBER = re.compile(r"\d+(?:\.\d+)?")

#: A token, one named group each, tried in this order, and the spaces after it; the
#: groups after each kind that can fail (a quote never closed, a sign or a field with
#: nothing after it) catch the failure. ``\s`` is ``str.isspace()``, character for character.
_TOKEN = re.compile(r"""(?:
    (?P<open>\()
  | (?P<close>\))
  | (?P<phrase>"(?P<words>[^"]*)"(?:~(?P<slop>\d*))?)
  | (?P<open_quote>")
  | (?P<range>\[[^\]]*\]|\{[^}]*\})
  | (?P<open_range>[\[{])
  | (?P<plus>(?<![^\s(])\+(?=[^\s)]))      # + or - after a space or ( and before a word
  | (?P<minus>(?<![^\s(])-(?=[^\s)]))
  | (?P<lone_sign>(?<![^\s(])[+-])
  | (?P<field>(?P<name>[A-Za-z_][A-Za-z0-9_]*):(?=[^\s)]))
  | (?P<lone_field>[A-Za-z_][A-Za-z0-9_]*:)
  | (?P<word>[^\s()"]+)                     # + or - inside a word is a hyphen: free-culture
)\s*""", re.VERBOSE)
_BOOST = re.compile(r"\^([^\^~]*)$")
_EDITS = re.compile(r"~(\d*)$")
_RANGE_TO = re.compile(r"\s+TO\s+|^\s*TO\s+|\s+TO\s*$|^\s*TO\s*$")


def bad_query(message: str, pos: int | None) -> QueryError:
    """The one form of every parse error: ``bad query at column N: ...``."""
    where = f" at column {pos + 1}" if pos is not None else ""
    return QueryError(f"bad query{where}: {message}", position=pos)


def quoted(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")


# ---- tokens --------------------------------------------------------------------------------------

#: What a token is. Plain strings, not an Enum: the parser compares kinds several times
#: a token, and an Enum member's lookup costs six times a string comparison.
Kind = Literal["word", "phrase", "range", "field", "open", "close", "and", "or", "not", "plus", "minus"]

_OPERATORS: dict[str, Kind] = {"AND": "and", "OR": "or", "NOT": "not"}
_PLAIN: dict[str, Kind] = {"open": "open", "close": "close", "range": "range", "plus": "plus", "minus": "minus"}
#: Tokens that cannot begin an operand.
_ENDS = frozenset({"or", "and", "close"})
#: Tokens that cannot be a field's value.
_NOT_A_VALUE = frozenset({"and", "or", "not", "plus", "minus", "field", "close"})


@dataclass(slots=True)
class Token:
    """A piece of the query text: ``text`` is a word or a range as typed, a phrase's
    words (without the quotes), a field's name (without the colon)."""

    kind: Kind
    text: str
    pos: int
    end: int
    slop: int = 1  # a phrase's ~distance


def tokens(text: str) -> list[Token]:
    """The query's tokens, left to right; QueryError for a quote, a range, a sign or a
    field that cannot be read whatever follows."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text, len(text) - len(text.lstrip())):  # each character in one group
        kind = m.lastgroup or ""  # never None: every alternative is a named group
        if kind == "word":
            word = m.group(kind)
            out.append(Token(_OPERATORS.get(word, "word"), word, m.start(), m.end(kind)))
        elif kind == "phrase":
            out.append(Token("phrase", m.group("words"), m.start(), m.end(kind), int(m.group("slop") or "1")))
        elif kind == "field":
            out.append(Token("field", m.group("name"), m.start(), m.end(kind)))
        elif kind in _PLAIN:
            out.append(Token(_PLAIN[kind], m.group(kind), m.start(), m.end(kind)))
        else:
            raise _unreadable(m)
    return out


def _unreadable(m: re.Match[str]) -> QueryError:
    kind, pos = m.lastgroup or "", m.start()
    text = m.group(kind)
    if kind == "open_quote":
        return bad_query('a quote (") is never closed: add the closing quote', pos)
    if kind == "open_range":
        closer = "]" if text == "[" else "}"
        return bad_query(f"a range opened with {text!r} is never closed with {closer!r}", pos)
    if kind == "lone_sign":
        return bad_query(f"{text!r} must be directly followed by a word (e.g. {text}draft)", pos)
    return bad_query(f"{text!r} needs a value after the colon (e.g. {text}report)", pos)


# ---- syntax nodes ------------------------------------------------------------------------------------

#: How a clause takes part: ``+word`` is required even inside an OR group, ``-word``
#: and ``NOT word`` exclude, a plain clause ("") is required beside AND and optional
#: inside OR (Lucene's reading).
Sign = Literal["", "+", "-"]


@dataclass(slots=True)
class Word:
    """A word as typed, without its ``^weight`` and ``~edits``: a term, a prefix, a
    wildcard or a fuzzy word once the next stage has analysed it for a field."""

    pos: int
    text: str
    boost: float = 1.0
    edits: int | None = None  # a fuzzy word's

    @property
    def wild(self) -> bool:
        return "*" in self.text or "?" in self.text


@dataclass(slots=True)
class Phrase:
    pos: int
    text: str
    slop: int


@dataclass(slots=True)
class Range:
    """``[start TO end]``, or ``{start TO end}`` with both ends excluded; an empty end
    is open."""

    pos: int
    start: str
    end: str
    exclusive: bool


@dataclass(slots=True)
class InField:
    """``name:value``: the value, and everything inside it, looked for in that field."""

    pos: int
    name: str
    value: Node


@dataclass(slots=True)
class Clause:
    sign: Sign
    node: Node


@dataclass(slots=True)
class AllOf:
    """Clauses side by side (or joined by AND)."""

    clauses: tuple[Clause, ...]


@dataclass(slots=True)
class AnyOf:
    """Groups joined by OR; a whole query, and each parenthesised one."""

    groups: tuple[AllOf, ...]


Node = Word | Phrase | Range | InField | AnyOf


# ---- the parser: tokens into nodes -------------------------------------------------------------------

def read(text: str) -> AnyOf:
    """``text`` as syntax nodes; QueryError, with the position where it is known, for a
    query that is too long, holds bytes that are not UTF-8, is empty, or breaks the
    grammar."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,}",
                         position=MAX_QUERY_CHARS)
    bad = re.search("[\ud800-\udfff]", text)
    if bad:
        raise bad_query("the query holds bytes that are not UTF-8", bad.start())
    if not text.strip():
        raise QueryError("the query is empty: give words to search for (or filters, with `pdfindex list`)",
                         position=None)
    return _Parser(text).query()


class _Parser:
    """Recursive descent over the tokens, one method a rule of the grammar."""

    def __init__(self, text: str) -> None:
        self.toks = tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def query(self) -> AnyOf:
        node = self.any_of()
        tok = self.peek()
        if tok is not None:  # only a stray ")" stops any_of early
            raise bad_query("a closing parenthesis has no opening one", tok.pos)
        return node

    def _operand_after(self, tok: Token) -> None:
        nxt = self.peek()
        if nxt is None or nxt.kind in _ENDS:
            raise _operand_missing(tok, "after")

    def any_of(self) -> AnyOf:
        groups = [self.all_of()]
        while (tok := self.peek()) is not None and tok.kind == "or":
            self.take()
            self._operand_after(tok)
            groups.append(self.all_of())
        return AnyOf(tuple(groups))

    def all_of(self) -> AllOf:
        clauses: list[Clause] = []
        while (tok := self.peek()) is not None and tok.kind not in ("or", "close"):
            if tok.kind == "and":
                if not clauses:
                    raise _operand_missing(tok, "before")
                self.take()
                self._operand_after(tok)
                continue
            clauses.append(self.clause())
        if not clauses and tok is not None and tok.kind == "or":
            raise _operand_missing(tok, "before")
        return AllOf(tuple(clauses))

    def clause(self) -> Clause:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise bad_query(f"the query nests parentheses or operators more than {MAX_NESTING} deep",
                            self.toks[self.i].pos)
        try:
            return self._clause()
        finally:
            self.depth -= 1

    def _clause(self) -> Clause:
        tok = self.take()
        if tok.kind == "not":
            self._operand_after(tok)
            return Clause("-", self.clause().node)
        if tok.kind == "plus":
            return Clause("+", self.primary(self.take()))  # the lexer saw a word follow
        if tok.kind == "minus":
            return Clause("-", self.primary(self.take()))
        return Clause("", self.primary(tok))

    def primary(self, tok: Token) -> Node:
        if tok.kind == "open":
            return self.group(tok)
        if tok.kind == "field":
            return self.in_field(tok)
        if tok.kind == "phrase":
            return _phrase(tok)
        if tok.kind == "range":
            return _range(tok)
        if tok.kind == "word":
            return _word(tok)
        raise _operand_missing(tok, "before")  # +AND, -OR, +NOT

    def group(self, tok: Token) -> AnyOf:
        nxt = self.peek()
        if nxt is None:
            raise bad_query("a parenthesis is never closed", tok.pos)
        if nxt.kind == "close":
            raise bad_query("empty parentheses", tok.pos)
        node = self.any_of()
        if self.peek() is None:
            raise bad_query("a parenthesis is never closed", tok.pos)
        self.take()
        return node

    def in_field(self, tok: Token) -> InField:
        if tok.text not in FIELDS:
            raise bad_query(f"unknown field {tok.text!r}; the fields are {', '.join(FIELDS)} "
                            f'(to search for "{tok.text}:" itself, put it in quotes)', tok.pos)
        nxt = self.take()  # the lexer saw a value follow
        if nxt.kind in _NOT_A_VALUE:
            raise bad_query(f"'{tok.text}:' needs a value after the colon (e.g. {tok.text}:report)", tok.pos)
        return InField(tok.pos, tok.text, self.primary(nxt))


def _operand_missing(tok: Token, side: str) -> QueryError:
    return bad_query(f"{tok.text} has nothing {side} it", tok.pos)


def _phrase(tok: Token) -> Phrase:
    if tok.slop > MAX_PHRASE_SLOP:
        raise bad_query(f"a phrase's ~ distance must be at most {MAX_PHRASE_SLOP}", tok.pos)
    return Phrase(tok.pos, tok.text, tok.slop)


def _range(tok: Token) -> Range:
    parts = _RANGE_TO.split(tok.text[1:-1])
    if len(parts) != 2:
        raise bad_query(f"a range is written [first TO last] (either may be left out), not {tok.text}", tok.pos)
    start, end = (p.strip() for p in parts)
    return Range(tok.pos, start, end, exclusive=tok.text[0] == "{")


def _word(tok: Token) -> Word:
    if "^" not in tok.text and "~" not in tok.text:  # most words: no need to look further
        return Word(tok.pos, tok.text)
    boost, text = _weight(tok)
    edits, text = _edits(tok, text)
    if not text:
        raise bad_query(f"{quoted(tok.text)} has no word before its '~' or '^'", tok.pos)
    return Word(tok.pos, text, boost, edits)


def _weight(tok: Token) -> tuple[float, str]:
    """A word's ``^weight`` (1 if none), and the word without it."""
    m = _BOOST.search(tok.text)
    if m is None:
        return 1.0, tok.text
    if not NUMBER.fullmatch(m.group(1)) or not 0 < float(m.group(1)) <= MAX_BOOST:
        raise bad_query(f"'^' in {quoted(tok.text)} must be followed by a weight from 0 to {MAX_BOOST:g} "
                        "(e.g. report^2)", tok.pos)
    return float(m.group(1)), tok.text[:m.start()]


def _edits(tok: Token, text: str) -> tuple[int | None, str]:
    """A fuzzy word's ``~edits`` (None for a word that is not fuzzy), and the word
    without them."""
    m = _EDITS.search(text)
    if m is None:
        return None, text
    edits = int(m.group(1)) if m.group(1) else 1
    if edits > MAX_FUZZY_EDITS:
        raise bad_query(f"a fuzzy word allows at most {MAX_FUZZY_EDITS} edits (e.g. report~2), not {edits}",
                        tok.pos)
    text = text[:m.start()]
    if "*" in text or "?" in text:
        raise bad_query(f"{quoted(tok.text)} is both a wildcard and fuzzy; use one", tok.pos)
    return edits, text
