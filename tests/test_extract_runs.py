"""The tokenizer's whole-run readings (content.py): a run of path and colour
operators after one of them is counted, not handed to the interpreter
(``skip_paths``), and a TJ array of plain items is read in one match. Both must
give the interpreter what token-by-token reading gives it: the same operations
with the same object indices (R1's token), the same values, the same problems."""
from __future__ import annotations

from dataclasses import replace

from pdfminer.psparser import LIT

from pdfindex.pipeline.content import PATH_OPERATORS, operations
from pdfindex.pipeline.params import DEFAULT_PARAMS
from tests.builders import all_glyphs, one_font_pdf

FIGURE = (b"BT /F1 12 Tf 72 700 Td (Hi) Tj ET q 0 0 m 10 10 l 1 2 3 4 5 6 c h S 0.5 g 1 0 0 RG "
          b"0 0 10 10 re f* W n Q BT /F1 12 Tf 72 650 Td [(x) -250 (y)] TJ ET")


def _ops(data: bytes, skip_paths: bool) -> list[tuple[bytes, list[object], int]]:
    problems: list[str] = []
    out = [(op, list(args), index) for op, args, index in operations(data, problems, skip_paths=skip_paths)]
    assert problems == []
    return out


def test_a_run_of_path_operators_is_counted_not_yielded() -> None:
    read = _ops(FIGURE, skip_paths=True)
    every = _ops(FIGURE, skip_paths=False)
    # the run's first operator (m) comes out; the rest of the run, up to q/Q or text, does not
    assert [op for op, _, _ in read if op in PATH_OPERATORS] == [b"m"]
    assert [op for op, _, _ in every if op in PATH_OPERATORS] == [
        b"m", b"l", b"c", b"h", b"S", b"g", b"RG", b"re", b"f*", b"W", b"n"]
    # everything else, with the same operands and object indices
    assert read == [o for o in every if o[0] not in PATH_OPERATORS or o[0] == b"m"]


def test_what_a_path_run_cannot_hold_is_read_token_by_token() -> None:
    # seven numbers before "c" (one too many for the run), an operator glued to a
    # number ("2l" is one keyword), a comment, and "cm", which the interpreter needs
    data = b"0 0 m 1 2 3 4 5 6 7 c 1 2l % note\n5 5 l 2 0 0 2 0 0 cm (x) Tj"
    read = _ops(data, skip_paths=True)
    assert read == [
        (b"m", [0, 0], 2), (b"c", [1, 2, 3, 4, 5, 6, 7], 10), (b"2l", [1], 12), (b"l", [5, 5], 15),
        (b"cm", [2, 0, 0, 2, 0, 0], 22), (b"Tj", [b"x"], 24)]
    assert read == _ops(data, skip_paths=False)


def test_glyph_tokens_after_a_figure_are_the_stream_indices() -> None:
    glyphs, problems = all_glyphs(one_font_pdf(FIGURE))
    assert problems == []
    operands = [index - 1 for op, _, index in _ops(FIGURE, skip_paths=False) if op in (b"Tj", b"TJ")]
    assert [(g.text, g.token) for g in glyphs] == [
        ("H", operands[0]), ("i", operands[0]), ("x", operands[1]), ("y", operands[1])]


def test_a_tj_array_reads_the_same_in_one_match_as_token_by_token() -> None:
    # plain items (one match) and the same items with a name among them, which only
    # the token-by-token reading takes: the values agree item for item
    items = rb"(a\(b\)\101) -250 <00 4 1> 1.5 () .5 -3. <>"
    plain = _ops(b"[" + items + b"] TJ", skip_paths=True)
    mixed = _ops(b"[" + items + b" /N] TJ", skip_paths=True)
    expected = [b"a(b)A", -250, b"\x00\x41", 1.5, b"", 0.5, -3.0, b""]
    assert plain == [(b"TJ", [expected], 1)]
    assert mixed == [(b"TJ", [[*expected, LIT("N")]], 1)]


def test_an_array_past_the_item_cap_is_cut_and_reported_as_before() -> None:
    params = replace(DEFAULT_PARAMS, max_array_items=3)
    problems: list[str] = []
    read = list(operations(b"[(a) 1 (b) 2 (c)] TJ", problems, params, skip_paths=True))
    assert read == [(b"TJ", [[b"a", 1, b"b"]], 1)]
    assert [str(p) for p in problems] == ["array or dictionary with more than 3 items; the rest is ignored"]
