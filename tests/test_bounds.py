"""Bounded extraction (issue 7): hostile files stay within memory and time bounds,
each cap hit is a page problem naming the cap, and the text before the cut stays.

The hostile files come from tests/hostile.py. Memory and time are measured on a
real extraction in a child process (its peak RSS from /proc/self/status VmHWM);
the bounds are generous, since test machines are loaded. Cap logic is also
checked in-process with small caps, where it is cheap.
"""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from pdfminer.lzw import lzwdecode
from pdfminer.pdftypes import PDFStream
from pdfminer.psparser import LIT
from pdfminer.runlength import rldecode

from pdfindex import pipeline
from pdfindex.pipeline import Params
from pdfindex.pipeline.document import PdfFile, page_content, page_resources
from pdfindex.pipeline.errors import MAX_LINE, InternalError, NotAPdfError, brief, triage
from pdfindex.pipeline.extract import extract_page
from pdfindex.pipeline.fonts import CodeInfo, Font
from pdfindex.pipeline.geometry import IDENTITY
from pdfindex.pipeline.interpreter import Interpreter
from pdfindex.pipeline.streams import decode
from tests import hostile
from tests.builders import font_resources, mono_font, one_font_pdf, text_line
from tests.paths import ROOT
from tests.pdfwriter import Name, PdfWriter

MB = 1 << 20
BEFORE = hostile.BEFORE.decode()

_CHILD = r"""
import json, sys, time
from pdfindex import pipeline
start = time.process_time()  # CPU seconds: a bound on the work, whatever else the machine runs
doc = pipeline.extract(sys.argv[1])
seconds = time.process_time() - start
page = doc.pages[0]
with open("/proc/self/status") as fh:
    hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
print(json.dumps({"text": page.text, "problems": page.problems, "seconds": seconds, "rss_mb": hwm / 1024}))
"""


def run_child(tmp_path: Path, data: bytes, timeout: float = 120) -> dict[str, object]:
    """Extract the file in a fresh interpreter (strict mode) and report its result,
    time and peak RSS."""
    path = tmp_path / "hostile.pdf"
    path.write_bytes(data)
    env = dict(os.environ, PDFINDEX_STRICT="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def problems_of(result: dict[str, object]) -> list[str]:
    problems = result["problems"]
    assert isinstance(problems, list)
    return [str(p) for p in problems]


def assert_bounded(result: dict[str, object], rss_mb: float, seconds: float = 20) -> None:
    assert isinstance(result["rss_mb"], float) and result["rss_mb"] < rss_mb, result["rss_mb"]
    assert isinstance(result["seconds"], float) and result["seconds"] < seconds, result["seconds"]


# ---- hostile files, in a child process ------------------------------------------

@pytest.mark.slow
def test_gib_flate_bomb_in_content_stream(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.content_bomb(hostile.GIB))
    assert_bounded(result, rss_mb=200)
    assert result["text"] == BEFORE
    assert problems_of(result) == ["content stream 1: decompressed data over the 64 MB stream cap; the rest is ignored"]


def test_bomb_split_over_many_streams_hits_the_page_cap(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.split_content_bomb(streams=6, size=40 * MB))
    assert_bounded(result, rss_mb=200)
    assert result["text"] == BEFORE
    problems = problems_of(result)
    assert "content stream 3: decompressed data over the 64 MB page cap; the rest is ignored" in problems
    assert "content stream 4 skipped: the page's data is over the 64 MB page cap" in problems


def test_bomb_in_a_form_xobject(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.form_bomb(96 * MB))
    assert_bounded(result, rss_mb=200)
    assert result["text"] == BEFORE
    assert any(p.startswith("form /X: decompressed data over the 64 MB") for p in problems_of(result))


def test_bomb_in_a_tounicode_cmap_keeps_the_map_before_it(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.tounicode_bomb(32 * MB))
    assert_bounded(result, rss_mb=150)
    assert result["text"] == "ZZZ"  # A→Z comes before the bomb
    assert problems_of(result) == ["ToUnicode of font F1: decompressed data over the 8 MB CMap cap; the rest is ignored"]


def test_unclosed_string_of_escapes(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.unclosed_string(pairs=4_000_000))
    assert_bounded(result, rss_mb=200)
    assert result["text"] == BEFORE
    assert any("longer than the 1 MB string cap" in p for p in problems_of(result))


def test_run_length_bomb(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.run_length_bomb(4 * MB))
    assert_bounded(result, rss_mb=200)
    assert result["text"] == BEFORE
    assert problems_of(result) == ["content stream 1: decompressed data over the 64 MB stream cap; the rest is ignored"]


@pytest.mark.slow
def test_two_million_tj_keep_their_text_in_flat_memory(tmp_path: Path) -> None:
    data = hostile.many_tj(2_000_000)
    assert len(data) < 64 * 1024
    result = run_child(tmp_path, data, timeout=300)
    assert_bounded(result, rss_mb=300, seconds=120)
    assert result["text"] == "a" * 2_000_000
    assert problems_of(result) == []


def test_wide_width_ranges_are_capped(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.wide_widths(20_000))
    assert_bounded(result, rss_mb=200)
    assert result["text"] == "AB"
    assert problems_of(result) == [
        "font F1: /W gives widths to more than 262144 CIDs; the rest keep the default width"]


# ---- content tokenizer caps, in-process -------------------------------------------

@pytest.mark.parametrize(("builder", "size", "problem"), [
    (hostile.huge_array, 300_000, "array or dictionary with more than 100000 items; the rest is ignored"),
    (hostile.huge_dict, 200_000, "array or dictionary with more than 100000 items; the rest is ignored"),
    (hostile.deep_nesting, 50_000, "arrays nested deeper than 64 at byte 111; the inner ones are ignored"),
    (hostile.many_operands, 300_000, "more than 100000 operands without an operator; the oldest are dropped"),
])
def test_content_container_caps(builder: object, size: int, problem: str) -> None:
    assert callable(builder)
    page = pipeline.extract(builder(size), params=Params(strict=True)).pages[0]
    assert page.text.splitlines()[0] == BEFORE
    assert page.text.splitlines()[-1] == "After"  # the stream goes on after the cut
    assert problem in page.problems


def test_huge_array_stays_under_its_cap_in_memory(tmp_path: Path) -> None:
    result = run_child(tmp_path, hostile.huge_array(1_000_000))
    assert_bounded(result, rss_mb=150, seconds=60)
    assert result["text"] == f"{BEFORE}\nAfter"


def test_long_string_is_cut_and_the_stream_goes_on() -> None:
    params = Params(max_string_bytes=1000, strict=True)
    content = b"BT /F1 10 Tf 1 Tz 72 700 Td (" + b"x" * 5000 + b") Tj ET\n" + text_line(72, 600, b"(After) Tj")
    page = pipeline.extract(one_font_pdf(content), params=params).pages[0]
    assert page.text == "x" * 1000 + "\nAfter"  # 1 Tz: all 1000 on the page
    assert page.problems == [f"string at byte {content.index(b'(') + 1} longer than the 1000-byte string cap; cut"]


def test_long_hex_string_is_cut() -> None:
    params = Params(max_string_bytes=10, strict=True)
    content = text_line(72, 700, b"<" + b"41" * 50 + b"> Tj")
    page = pipeline.extract(one_font_pdf(content), params=params).pages[0]
    assert page.text == "A" * 10
    assert page.problems == [f"string at byte {content.index(b'<') + 1} longer than the 10-byte string cap; cut"]


def test_syntax_noise_is_counted_not_listed() -> None:
    content = text_line(72, 700, b"(Hello) Tj") + b") " * 20_000
    page = pipeline.extract(one_font_pdf(content), params=Params(strict=True)).pages[0]
    assert page.text == "Hello"
    assert len(page.problems) == 51
    assert page.problems[-1] == "more syntax errors in this content stream not listed"


# ---- bounded decoders ---------------------------------------------------------------

def _stream(data: bytes, filters: str | list[str]) -> PDFStream:
    names = [filters] if isinstance(filters, str) else filters
    return PDFStream({"Filter": [LIT(n) for n in names]}, data)


_SAMPLE = b"".join(b"line %d of some text\n" % k for k in range(5000))


@pytest.mark.parametrize(("filt", "encoded", "reference"), [
    ("FlateDecode", zlib.compress(_SAMPLE), zlib.decompress),
    ("LZWDecode", hostile.lzw_encode(_SAMPLE), lzwdecode),
    ("ASCII85Decode", base64.a85encode(_SAMPLE) + b"~>", lambda d: base64.a85decode(d[:-2])),
    ("RunLengthDecode", b"".join(bytes([len(_SAMPLE[k:k + 128]) - 1]) + _SAMPLE[k:k + 128]
                                 for k in range(0, len(_SAMPLE), 128)) + b"\x80", rldecode),
])
def test_decoders_match_pdfminer_and_stop_at_the_limit(filt: str, encoded: bytes, reference: object) -> None:
    assert callable(reference)
    assert decode(_stream(encoded, filt), 1 << 30) == (reference(encoded), False)
    data, cut = decode(_stream(encoded, filt), 1000)
    assert cut and data == _SAMPLE[:1000]


@pytest.mark.parametrize(("filt", "bomb"), [
    ("FlateDecode", hostile.deflate_bomb(b"", 256 * MB, b"\0")),
    ("LZWDecode", hostile.lzw_encode(b"\0" * (4 * MB))),
    ("ASCII85Decode", b"z" * (8 * MB) + b"~>"),  # 32 MB of zeros
    ("RunLengthDecode", b"\x81\0" * (1 * MB)),  # 128 MB of zeros
])
def test_decoders_never_produce_more_than_the_limit(filt: str, bomb: bytes) -> None:
    data, cut = decode(_stream(bomb, filt), 3 * MB)
    assert cut and data == b"\0" * (3 * MB)


def test_damaged_flate_keeps_what_decodes_before_the_damage() -> None:
    good = zlib.compress(_SAMPLE)
    data, cut = decode(_stream(good[:len(good) // 2], "FlateDecode"), 1 << 30)  # truncated
    assert not cut and len(data) > 1000 and _SAMPLE.startswith(data)
    data, cut = decode(_stream(good[:-4] + b"\0\0\0\0", "FlateDecode"), 1 << 30)  # bad checksum
    assert (data, cut) == (_SAMPLE, False)


def test_pdfminer_reads_object_streams_through_the_bounded_decoder() -> None:
    stream = _stream(hostile.deflate_bomb(b"x", 80 * MB), "FlateDecode")
    assert stream.get_data() == b"x" + b" " * (64 * MB - 1)


# ---- incremental assembly -------------------------------------------------------------

def test_text_is_the_same_when_assembled_in_small_chunks() -> None:
    data = hostile.many_lines(200)
    whole = pipeline.extract(data, params=Params(strict=True)).pages[0]
    chunked = pipeline.extract(data, params=Params(max_held_glyphs=37, strict=True)).pages[0]
    assert len(whole.text.splitlines()) == 200
    assert chunked.text == whole.text
    assert chunked.quality == whole.quality


def test_an_overlong_line_keeps_its_word_spaces_across_cuts() -> None:
    content = b"BT /F1 10 Tf 1 0 0 1 10 700 Tm " + b"[(abc) -400] TJ " * 28 + b"ET\n"
    data = one_font_pdf(content)
    whole = pipeline.extract(data, params=Params(strict=True)).pages[0]
    chunked = pipeline.extract(data, params=Params(max_held_glyphs=5, strict=True)).pages[0]
    assert whole.text == " ".join(["abc"] * 28)
    assert chunked.text == whole.text


def test_glyph_records_are_handed_over_in_bounded_chunks() -> None:
    pdf = PdfFile(hostile.many_lines(100))
    page = pdf.pages[0]
    chunks: list[int] = []

    def sink(glyphs: list[pipeline.Glyph], spans: list[tuple[int, int, str]]) -> None:
        chunks.append(len(glyphs))

    interpreter = Interpreter(Params(max_held_glyphs=100, strict=True), {}, [], sink=sink)
    interpreter.run_page(page_content(page, []), page_resources(page), IDENTITY)
    interpreter.finish()
    assert sum(chunks) > 4000 and len(chunks) > 10
    assert max(chunks) < 100 + 60  # held: the cap plus at most one string's glyphs
    assert interpreter.glyphs == []


def test_actual_text_spans_survive_chunking() -> None:
    span = b"/Span << /ActualText (\xfe\xff\x00X\x00Y) >> BDC (ab) Tj EMC "
    content = b"BT /F1 10 Tf 72 700 Td " + b"(cd) Tj " * 40 + span + b"(ef) Tj ET\n"
    data = one_font_pdf(content)
    whole = pipeline.extract(data, params=Params(strict=True)).pages[0]
    chunked = pipeline.extract(data, params=Params(max_held_glyphs=7, strict=True)).pages[0]
    assert whole.text == "cd" * 40 + "XYef"
    assert chunked.text == whole.text


# ---- damage or bug: the strict switch --------------------------------------------------

class _BuggyFont(Font):
    """A font whose decoding has a bug of ours (a TypeError raised outside pdfminer)."""

    def decode(self, data: bytes) -> list[CodeInfo]:
        return [CodeInfo(b, 1, None + "x", 0.5, False) for b in data]  # type: ignore[operator]


def _buggy_page(strict: bool) -> pipeline.Page:
    w = PdfWriter()
    font = mono_font(w)
    w.add_page(text_line(72, 700, b"(Hi) Tj"), resources=font_resources(font))
    pdf = PdfFile(w.to_bytes())
    fonts: dict[object, Font] = {font.num: _BuggyFont("F1", "Buggy", 0.8, -0.2)}
    return extract_page(pdf, 1, fonts, params=Params(strict=strict))


def test_strict_mode_raises_our_own_type_error() -> None:
    with pytest.raises(InternalError, match="TypeError") as info:
        _buggy_page(strict=True)
    assert isinstance(info.value.__cause__, TypeError)


def test_without_strict_mode_our_bug_is_an_internal_error_problem() -> None:
    page = _buggy_page(strict=False)
    assert len(page.problems) == 1
    assert re.match(r"operator Tj skipped at token \d+: internal error: TypeError: .* \(test_bounds\.py:\d+\)$",
                    page.problems[0])


def test_strict_mode_records_what_pdfminer_raises() -> None:
    try:
        PDFStream(None, b"")  # type: ignore[arg-type]  # pdfminer asserts on its input
    except AssertionError as exc:
        assert triage(exc, strict=True).startswith("AssertionError")
    else:
        pytest.fail("pdfminer accepted a stream without a dictionary")


def test_strict_mode_records_a_damaged_stream_in_a_page() -> None:
    w = PdfWriter()
    font = mono_font(w)
    bad = w.add_stream(b"garbage", {"Filter": Name("NoSuchDecode")})
    w.add_page([text_line(72, 700, b"(Hi) Tj"), bad], resources=font_resources(font))
    page = pipeline.extract(w.to_bytes(), params=Params(strict=True)).pages[0]
    assert page.text == "Hi"
    assert len(page.problems) == 1
    assert page.problems[0].startswith("content stream 2 unreadable: PDFNotImplementedError")
    assert "NoSuchDecode" in page.problems[0]


def test_strict_switch_comes_from_the_environment() -> None:
    code = "from pdfindex import pipeline; print(pipeline.Params().strict, pipeline.DEFAULT_PARAMS.strict)"
    for value, expected in (("1", "True True"), ("0", "False False"), ("", "False False")):
        env = dict(os.environ, PDFINDEX_STRICT=value, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
        assert out.stdout.strip() == expected, out.stderr


# ---- short problem and error lines ---------------------------------------------------

def test_a_dumped_object_in_a_problem_is_shortened() -> None:
    big = b"<< " + b" ".join(b"/K%d (value number %d)" % (k, k) for k in range(400)) + b" >>"
    content = text_line(72, 700, b"(Hi) Tj") + b"BT " + big + b" 10 Tf ET\n" + b"/" + b"x" * 5000 + b" 1 Tz\n"
    page = pipeline.extract(one_font_pdf(content), params=Params(strict=True)).pages[0]
    assert page.text == "Hi"
    assert page.problems and all(len(p) <= MAX_LINE + 20 for p in page.problems)
    assert any(p.startswith("operator Tf skipped at token") for p in page.problems)


def test_a_long_unknown_operator_is_reported_short() -> None:
    page = pipeline.extract(one_font_pdf(text_line(72, 700, b"(Hi) Tj") + b"q" * 100_000 + b"\n"),
                            params=Params(strict=True)).pages[0]
    assert page.text == "Hi"
    assert len(page.problems) == 1 and len(page.problems[0]) <= MAX_LINE + 20


def test_problem_count_per_page_is_capped() -> None:
    ops = b"".join(b"/F%d 10 Tf\n" % k for k in range(3000))
    page = pipeline.extract(one_font_pdf(text_line(72, 700, b"(Hi) Tj") + ops), params=Params(strict=True)).pages[0]
    assert page.text == "Hi"
    assert len(page.problems) <= 201


def test_extraction_error_messages_are_short() -> None:
    err = NotAPdfError("file.pdf", "unreadable PDF structure: " + "x" * 5000)
    assert str(err).startswith("file.pdf: unreadable PDF structure: xxx")
    assert len(str(err)) <= len("file.pdf: ") + MAX_LINE + 20


def test_brief_keeps_head_and_tail_on_one_line() -> None:
    text = "start\n" + "y" * 1000 + "\nend"
    line = brief(text)
    assert line.startswith("start y") and line.endswith("y end") and "\n" not in line
    assert len(line) <= MAX_LINE + 20
    assert brief("short one") == "short one"


# ---- params ----------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["max_stream_bytes", "max_page_bytes", "max_cmap_bytes", "max_cmap_entries",
                                   "max_width_entries", "max_string_bytes", "max_array_items", "max_nesting",
                                   "max_page_problems", "max_held_glyphs"])
@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_caps_must_be_positive_integers(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        Params(**{field: value})  # type: ignore[arg-type]


def test_cmap_entry_cap(tmp_path: Path) -> None:
    page = pipeline.extract(hostile.tounicode_flood(300_000), params=Params(strict=True)).pages[0]
    assert page.problems == ["ToUnicode of font F1: more than the 262144-entry cap; the rest is ignored"]
    assert page.text == "A" * len(BEFORE)  # every byte's code is among the entries kept
