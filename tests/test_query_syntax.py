"""Issue 21 item 6: a query is read in two stages. ``query_syntax`` turns the text into
named tokens and syntax nodes and refuses what breaks the grammar, with no index and
no Whoosh; ``query_build`` analyses the words for an index's schema and checks what
depends on it. The language itself is pinned end to end in test_query_language.py.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pdfindex.indexer.errors import QueryError
from pdfindex.indexer.query import MAX_QUERY_TERMS, WordSpan, parse
from pdfindex.indexer.query_syntax import AllOf, AnyOf, Clause, InField, Node, Phrase, Range, Sign, Word, read, tokens
from pdfindex.indexer.schema import build_schema

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = build_schema("en")


def test_tokens_are_named_by_kind() -> None:
    kinds = [t.kind for t in tokens('(a) "b" [c TO d] +e -f title:g AND h-i OR NOT j')]
    assert kinds == ["open", "word", "close", "phrase", "range", "plus", "word", "minus", "word", "field", "word",
                     "and", "word", "or", "not", "word"]


def test_the_syntax_stage_reads_named_nodes() -> None:
    def one(sign: Sign, node: Node) -> AllOf:
        return AllOf((Clause(sign, node),))

    assert read('title:(free OR -culture) +"a b"~2 [a TO c] {d TO} cult*^2 fre~') == AnyOf((AllOf((
        Clause("", InField(0, "title", AnyOf((one("", Word(7, "free")), one("-", Word(16, "culture")))))),
        Clause("+", Phrase(26, "a b", slop=2)),
        Clause("", Range(34, "a", "c", exclusive=False)),
        Clause("", Range(43, "d", "", exclusive=True)),
        Clause("", Word(50, "cult*", boost=2.0)),
        Clause("", Word(58, "fre", edits=1)),
    )),))
    # NOT excludes like -, AND joins like a space, OR separates groups
    assert read("a OR NOT b AND c") == AnyOf((one("", Word(0, "a")), AllOf((
        Clause("-", Word(9, "b")), Clause("", Word(15, "c"))))))


def test_the_syntax_stage_loads_no_whoosh() -> None:
    probe = ("import sys\nfrom pdfindex.indexer.query_syntax import read\n"
             "read('title:(free OR culture^2) -\"a b\"~3 [a TO c]')\nprint('whoosh' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@pytest.mark.parametrize(("query", "message", "position"), [
    ("free (", "parenthesis is never closed", 5),
    ('free "culture', "quote .* never closed", 5),
    ("nosuchfield:foo", "unknown field 'nosuchfield'", 0),
    ("free^x", "must be followed by a weight", 0),
    ("+AND", "AND has nothing before it", 1),
    ("(" * 40 + "a" + ")" * 40, "nests parentheses or operators more than 32 deep", 32),
])
def test_grammar_errors_are_the_syntax_stages(query: str, message: str, position: int) -> None:
    with pytest.raises(QueryError, match=message) as info:
        read(query)
    assert info.value.position == position
    assert f"column {position + 1}" in str(info.value)


@pytest.mark.parametrize(("query", "message"), [
    ("status:bogus", "unknown status 'bogus'"),
    (" ".join(["free"] * (MAX_QUERY_TERMS + 1)), f"more than {MAX_QUERY_TERMS} words"),
    ("!!", "no searchable words"),
])
def test_what_depends_on_the_index_is_the_second_stages(query: str, message: str) -> None:
    read(query)  # the grammar is fine
    with pytest.raises(QueryError, match=message):
        parse(SCHEMA, query)


def test_a_syntax_error_is_named_before_an_error_of_the_index() -> None:
    """The grammar is read whole before any word is analysed, as in Whoosh's parser:
    an unknown status and an unclosed parenthesis name the parenthesis."""
    with pytest.raises(QueryError, match="parenthesis is never closed") as info:
        parse(SCHEMA, "status:bogus (")
    assert info.value.position == 13


def test_plain_words_are_spans_a_suggestion_may_replace() -> None:
    parsed = parse(SCHEMA, 'free title:culture fre~ cult* "a b"')
    assert parsed.words == [WordSpan(0, 4, "free", ("text", "title", "filename")),
                            WordSpan(11, 18, "culture", ("title",))]
