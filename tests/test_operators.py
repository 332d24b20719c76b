"""The interpreter's operator table: each handler names its operands, and the
table's operand count is what the handler takes (a mismatch would raise TypeError
for every use of the operator, recorded as a page problem, not caught as a bug)."""
from __future__ import annotations

import inspect

import pytest

from pdfindex.pipeline import interpreter
from tests.builders import all_glyphs, one_font_pdf, text_line


@pytest.mark.parametrize("op", sorted(interpreter._OPERATORS))
def test_operand_count_is_what_the_handler_takes(op: bytes) -> None:
    handler, arity = interpreter._OPERATORS[op]
    params = list(inspect.signature(handler).parameters.values())[1:]  # after self
    assert len(params) == arity
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)


def test_handlers_get_the_last_operands_and_extra_ones_are_ignored() -> None:
    # "9 9 (ab) Tj": Tj takes (ab); "1 2 3 0 0 Td" moves by (0, 0) only
    glyphs, problems = all_glyphs(one_font_pdf(text_line(72, 700, b"1 2 3 0 0 Td 9 9 (ab) Tj")))
    assert [(g.text, g.ox, g.oy) for g in glyphs] == [("a", 72, 700), ("b", 77, 700)]
    assert problems == []


def test_too_few_operands_skip_the_operator_with_a_problem() -> None:
    glyphs, problems = all_glyphs(one_font_pdf(b"BT /F1 10 Tf 72 700 Td 5 Td (a) Tj ET"))
    assert [(g.text, g.ox, g.oy) for g in glyphs] == [("a", 72, 700)]
    assert [str(p) for p in problems] == ["operator Td with too few operands (token 8)"]
