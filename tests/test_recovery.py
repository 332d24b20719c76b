"""Truncated and damaged files (issue 7, items 5 and 6): what a file cut short, or
with a looping xref chain or a lying object stream, still holds comes out, with a
page problem saying the structure was damaged; never a RecursionError or a
whole-document failure when a page can still be found.

The files are built byte by byte (tests/pdfwriter.py, and by hand here where the
writer cannot make object and xref streams), plus prefixes of real-world files.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pdfindex import pipeline
from pdfindex.pipeline.document import REBUILT_NOTE
from tests.builders import font_resources, mono_font, text_line
from tests.paths import ROOT
from tests.pdfwriter import Name, PdfWriter
from tests.time_limits import time_limit

WORDS = ["alpha bravo", "charlie delta", "echo foxtrot"]


def three_pages() -> bytes:
    w = PdfWriter()
    font = mono_font(w)
    for words in WORDS:
        w.add_page(text_line(72, 700, b"(%s) Tj" % words.encode()), resources=font_resources(font))
    return w.to_bytes()


def _texts(doc: pipeline.Document) -> list[str]:
    return [p.text for p in doc.pages]


def _obj_at(data: bytes, num: int) -> int:
    m = re.search(rb"(?m)^%d 0 obj" % num, data)
    assert m, num
    return m.start()


# ---- truncated files built here ------------------------------------------------------------

def test_cut_inside_the_last_page_keeps_the_pages_before_it() -> None:
    data = three_pages()
    third_content = data.index(b"(echo foxtrot)")
    doc = pipeline.extract(data[:third_content + 5])  # cut inside the third page's content stream
    assert _texts(doc)[:2] == WORDS[:2]
    assert all(REBUILT_NOTE in p.problems for p in doc.pages)


def test_cut_at_every_tenth_byte_never_fails_once_a_page_is_complete() -> None:
    data = three_pages()
    first_page_done = data.index(b"endobj", data.index(b"/Type /Page ")) + 6
    for cut in range(first_page_done, len(data), 10):
        with time_limit(20, "recovery"):
            doc = pipeline.extract(data[:cut])
        assert doc.pages and doc.pages[0].text == WORDS[0], cut


def test_pages_are_found_without_catalog_or_page_tree() -> None:
    data = three_pages()
    # blank out the catalog (1) and the page tree root (2), keeping every offset, and
    # drop the xref and trailer: only the page objects themselves are left.
    start, end = _obj_at(data, 1), _obj_at(data, 3)
    damaged = data[:start] + b" " * (end - start) + data[end:data.index(b"xref")]
    doc = pipeline.extract(damaged)
    assert _texts(doc) == WORDS  # in file order
    for page in doc.pages:
        assert REBUILT_NOTE in page.problems
        assert any("page found by scanning" in p for p in page.problems)


def test_inherited_resources_reach_a_page_found_by_scan() -> None:
    w = PdfWriter(pages_attrs={"Resources": None})
    font = mono_font(w)
    w.pages_attrs["Resources"] = font_resources(font)
    w.page_group("middle", {"Resources": font_resources(font)})
    w.add_page(text_line(72, 700, b"(golf hotel) Tj"), parent="middle")
    data = w.to_bytes()
    # the root /Pages node is gone; the page's parent (the middle node) survives
    start, end = _obj_at(data, 2), _obj_at(data, 3)
    damaged = data[:start] + b" " * (end - start) + data[end:data.index(b"xref")]
    assert pipeline.extract(damaged).pages[0].text == "golf hotel"


def test_nothing_but_blank_pages_is_still_an_error() -> None:
    w = PdfWriter()
    w.add_page(None)
    data = w.to_bytes()
    with pytest.raises(pipeline.NotAPdfError, match="<bytes>: file is truncated"):
        pipeline.extract(data[:data.index(b"xref") - 40])


def test_file_cut_before_any_page_says_it_is_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.pdf"
    data = three_pages()
    path.write_bytes(data[:data.index(b"/Type /Page ") - 20])
    with pytest.raises(pipeline.NotAPdfError) as info:
        pipeline.extract(path)
    assert str(info.value).startswith(f"{path}: file is truncated (no %%EOF at its end)")


def test_objects_inside_stream_data_do_not_shadow_real_ones() -> None:
    # a content stream whose bytes hold another catalog under the real one's number
    w = PdfWriter()
    font = mono_font(w)
    fake = b"(kilo) Tj\n1 0 obj\n<< /Type /Catalog /Pages 99 0 R >>\nendobj\n"
    w.add_page(text_line(72, 700, fake), resources=font_resources(font))
    w.set_info({"Title": b"x" * 200})
    data = w.to_bytes()
    doc = pipeline.extract(data[:data.index(b"x" * 100)])  # cut inside the last object
    assert _texts(doc) == ["kilo"]
    assert REBUILT_NOTE in doc.pages[0].problems
    assert not any("page found by scanning" in p for p in doc.pages[0].problems)  # through the real tree


@pytest.mark.parametrize("unit", [
    b"trailer <<\n",                          # each one would be parsed to the end of the file
    b"1 0 obj\n<<\n",                         # unclosed dictionaries under one number
    b"7 0 obj\n<< /Length 5 >>\nstream\nxx\n",  # streams without endstream
])
def test_rebuilding_stays_linear_on_hostile_repetition(unit: bytes) -> None:
    data = b"%PDF-1.4\n" + unit * 40_000
    # about 1 s here; quadratic searches take minutes
    with time_limit(20, "recovery"), pytest.raises(pipeline.NotAPdfError, match="<bytes>"):
        pipeline.extract(data)


# ---- streams whose /Length lies ----------------------------------------------------------

@pytest.mark.parametrize("delta", [None, -5, +2, +40, 10**9])
@pytest.mark.parametrize("filt", [None, "FlateDecode"])
def test_content_stream_with_a_lying_length(delta: int | None, filt: str | None) -> None:
    import zlib

    from tests.pdfwriter import Stream

    w = PdfWriter()
    font = mono_font(w)
    content = text_line(72, 700, b"(november oscar) Tj")
    data = zlib.compress(content) if filt else content
    length = 0 if delta is None else max(0, len(data) + delta)
    extra: dict[str, object] = {"Length": length}
    if filt:
        extra["Filter"] = Name(filt)
    ref = w.add(Stream(extra, data))
    w.add_page(ref, resources=font_resources(font))
    page = pipeline.extract(w.to_bytes()).pages[0]
    assert page.text == "november oscar"
    assert any("/Length does not end at its endstream" in p for p in page.problems)


# ---- object streams whose /N or /First lie ---------------------------------------------

def objstm_pdf(n: int | None = None, first: int | None = None, xref_stream: bool = True) -> bytes:
    """Catalog, page tree and page inside an object stream (its /N and /First as
    given, else true), found through an xref stream (PDF 1.5)."""
    members = [
        (1, b"<< /Type /Catalog /Pages 2 0 R >>"),
        (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>"),
    ]
    body, header = b"", []
    for num, obj in members:
        header.append(b"%d %d" % (num, len(body)))
        body += obj + b"\n"
    head = b" ".join(header) + b"\n"
    stm = head + body
    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}

    def put(num: int, obj: bytes) -> None:
        offsets[num] = len(out)
        out.extend(b"%d 0 obj\n" % num + obj + b"\nendobj\n")

    put(4, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    content = b"BT /F1 12 Tf 72 700 Td (lima mike) Tj ET"
    put(5, b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    put(6, b"<< /Type /ObjStm /N %d /First %d /Length %d >>\nstream\n%s\nendstream"
        % (len(members) if n is None else n, len(head) if first is None else first, len(stm), stm))
    if not xref_stream:
        return bytes(out)
    rows = [b"\x00" + (0).to_bytes(4, "big") + b"\xff\xff"]
    rows += [b"\x02" + (6).to_bytes(4, "big") + i.to_bytes(2, "big") for i in range(3)]
    xref_at = len(out)
    rows += [b"\x01" + offsets[k].to_bytes(4, "big") + b"\x00\x00" for k in (4, 5, 6)]
    rows.append(b"\x01" + xref_at.to_bytes(4, "big") + b"\x00\x00")
    table = b"".join(rows)
    put(7, b"<< /Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n%s\nendstream"
        % (len(table), table))
    out.extend(b"startxref\n%d\n%%%%EOF\n" % xref_at)
    return bytes(out)


def test_honest_object_stream_opens_without_a_note() -> None:
    page = pipeline.extract(objstm_pdf()).pages[0]
    assert page.text == "lima mike"
    assert page.problems == []


@pytest.mark.parametrize("n", [0, 1, 2, 4, 1000])
def test_object_stream_with_a_lying_n(n: int) -> None:
    page = pipeline.extract(objstm_pdf(n=n)).pages[0]
    assert page.text == "lima mike"
    assert any(f"/N says {n}" in p for p in page.problems), page.problems


# /N 2 with /First 3 (both lying, each consistent with the other) cannot be told
# from an honest stream of one object followed by integers.
@pytest.mark.parametrize(("n", "first"), [(None, 0), (None, 3), (None, 10_000), (2, 0), (2, 10_000)])
def test_object_stream_with_a_lying_first(first: int, n: int | None) -> None:
    page = pipeline.extract(objstm_pdf(n=n, first=first)).pages[0]
    assert page.text == "lima mike"
    assert any("does not end its header" in p for p in page.problems), page.problems


@pytest.mark.parametrize(("data", "n", "first"), [
    (b"1 5 2 0 << >> << >>", 5, 8),   # offsets that decrease, /N beyond the header
    (b"", 3, 0),
    (b"<< >>", -1, "x"),
    (b"1 0 2", True, 10**12),
])
def test_object_stream_header_that_fits_nothing(data: bytes, n: object, first: object) -> None:
    from pdfindex.pipeline.recover import objstm_members

    members, problem = objstm_members(data, n, first)  # found by the fuzz bench (strict mode)
    assert problem
    assert len(members) <= 1


@pytest.mark.parametrize("n", [None, 1, 7])
def test_truncated_file_with_an_object_stream_is_rebuilt_from_it(n: int | None) -> None:
    # cut before the xref stream: only the scan finds the object stream's members
    page = pipeline.extract(objstm_pdf(n=n, xref_stream=False)).pages[0]
    assert page.text == "lima mike"
    assert REBUILT_NOTE in page.problems


# ---- xref /Prev chains ------------------------------------------------------------------

def _append_sections(data: bytes, prevs: list[int | None], root: bytes = b"1 0 R") -> bytes:
    """Xref sections appended to ``data``, section k's /Prev being the offset of
    section prevs[k] (an index into the new sections), startxref at section 0."""
    out = bytearray(data)
    starts = [len(data) + 200 * k for k in range(len(prevs))]
    for k, prev in enumerate(prevs):
        assert len(out) == starts[k]
        prev_key = b"" if prev is None else b" /Prev %d" % starts[prev]
        section = b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Root %s%s >>\n" % (root, prev_key)
        out.extend(section.ljust(200, b" "))
    out.extend(b"startxref\n%d\n%%%%EOF\n" % starts[0])
    return bytes(out)


def test_xref_prev_pointing_at_itself() -> None:
    data = _append_sections(three_pages(), [0])
    doc = pipeline.extract(data)
    assert _texts(doc) == WORDS
    problems = doc.pages[0].problems
    assert any(p.startswith("xref /Prev chain loops") for p in problems), problems
    assert not any("Recursion" in p for p in problems)


def test_xref_prev_loop_through_two_sections_back_to_the_real_table() -> None:
    base = three_pages()
    real = base.rindex(b"xref\n0 ")
    # new section 0 → the file's own table; the file's table cannot point back (it is
    # written already), so section 1 → section 0 closes the loop via startxref at 1
    out = bytearray(base)
    a = len(out)
    out.extend((b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Root 1 0 R /Prev %d >>\n" % (a + 200)
                ).ljust(200, b" "))
    out.extend((b"xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Prev %d /XRefStm %d >>\n" % (a, real)
                ).ljust(200, b" "))
    out.extend(b"startxref\n%d\n%%%%EOF\n" % a)
    doc = pipeline.extract(bytes(out))
    assert _texts(doc) == WORDS
    assert any("xref /Prev chain loops" in p for p in doc.pages[0].problems)


def test_absurdly_long_xref_chain_is_cut_and_the_file_still_opens() -> None:
    count = 5000  # beyond Python's recursion limit, and our own cap
    data = _append_sections(three_pages(), [*range(1, count), None])
    with time_limit(30, "recovery"):
        doc = pipeline.extract(data)
    assert _texts(doc) == WORDS
    assert any("xref /Prev chain longer than" in p for p in doc.pages[0].problems)


def test_object_that_refers_to_itself_does_not_spin() -> None:
    data = three_pages()
    mid = _obj_at(data, 3)  # the font: make it "3 0 obj 3 0 R endobj", same length
    end = data.index(b"endobj", mid)
    body = b"3 0 obj\n3 0 R"
    damaged = data[:mid] + body.ljust(end - mid) + data[end:]
    with time_limit(20, "recovery"):  # pdfminer.six's resolve1 alone would loop forever
        doc = pipeline.extract(damaged)
    assert len(doc.pages) == 3


# ---- real-world prefixes ----------------------------------------------------------------

REALWORLD_CUTS = [
    ("pdfminer__simple4.pdf", 0.3),
    ("pdfbox__eu-001.pdf", 0.9),
    ("pdfjs__tracemonkey.pdf", 0.6),
    ("pdfbox__cweb.pdf", 0.6),
]


@pytest.mark.parametrize(("name", "fraction"), REALWORLD_CUTS)
def test_prefix_of_a_real_world_file_yields_its_words(realworld: Path, name: str, fraction: float) -> None:
    data = (realworld / name).read_bytes()
    whole = pipeline.extract(data)
    known = set(re.findall(r"\w+", " ".join(_texts(whole))))
    prefix = data[:int(len(data) * fraction)]

    doc = pipeline.extract(prefix)

    words = re.findall(r"\w+", " ".join(_texts(doc)))
    assert len(words) >= min(20, len(known))
    # what comes out is the file's own text, not decoding garbage
    assert sum(w in known for w in words) >= 0.98 * len(words)
    assert all(REBUILT_NOTE in p.problems for p in doc.pages)


def test_prefix_whose_fonts_come_first_gives_the_whole_page(realworld: Path) -> None:
    data = (realworld / "pdfminer__simple4.pdf").read_bytes()
    whole = pipeline.extract(data)
    assert _texts(pipeline.extract(data[:int(len(data) * 0.3)])) == _texts(whole)


def test_healthy_real_world_file_opens_without_a_note(realworld: Path) -> None:
    doc = pipeline.extract(realworld / "pdfjs__tracemonkey.pdf")
    assert not any(REBUILT_NOTE in p.problems or "xref" in " ".join(p.problems) for p in doc.pages)


# ---- the fuzz bench --------------------------------------------------------------------

def test_fuzz_mutants_are_deterministic(realworld: Path) -> None:
    from bench.fuzz import MUTATORS, corpus_files, make_mutant

    files = corpus_files(realworld)
    first = [make_mutant(files, 3, i) for i in range(12)]
    again = [make_mutant(files, 3, i) for i in range(12)]
    assert first == again
    assert [m.data for m in first] != [make_mutant(files, 4, i).data for i in range(12)]
    assert {m.kind for m in first} <= set(MUTATORS)
    for m in first:
        assert m.data != (realworld / m.source).read_bytes() or m.kind in {"objstm-N", "objstm-First",
                                                                       "length", "no-trailer"}


def test_fuzz_quick_mode_runs_both_tools(realworld: Path, tmp_path: Path) -> None:
    out = tmp_path / "fuzz.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz.py"), "--count", "3", "--seed", "5",
                           "--timeout", "20", "--json", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert "| **all** | 3 |" in proc.stdout, proc.stdout + proc.stderr
    import json

    report = json.loads(out.read_text())
    assert report["summary"]["mutants"] == 3
    for result in report["results"]:
        assert result["ours"]["outcome"] in {"text", "empty", "error", "traceback", "hang", "memory"}
        assert result["mupdf"]["outcome"] in {"text", "empty", "error", "traceback", "hang", "memory"}
        assert result["ours"]["rss_mb"] > 0
    assert proc.returncode == (1 if report["summary"]["tracebacks"] or report["summary"]["hangs"] else 0)


def test_fuzz_classifies_what_a_child_does(tmp_path: Path) -> None:
    from bench.fuzz import EXIT_EXTRACTION_ERROR, run_child, run_command

    py = [sys.executable, "-c"]
    assert run_command([*py, "raise TypeError('boom')"], 20).outcome == "traceback"
    assert run_command([*py, f"import sys; print('x: bad', file=sys.stderr); sys.exit({EXIT_EXTRACTION_ERROR})"],
                       20).outcome == "error"
    two_lines = f"import sys; print('a\\nb', file=sys.stderr); sys.exit({EXIT_EXTRACTION_ERROR})"
    assert run_command([*py, two_lines], 20).outcome == "traceback"
    assert run_command([*py, "import time; time.sleep(30)"], 0.5).outcome == "hang"
    big = run_command([*py, 'import json; x = bytearray(300 << 20); print(json.dumps({"chars": 0}))'], 20)
    assert big.outcome == "empty" and big.rss_mb > 250
    assert run_child("ours", tmp_path, 20, 0).outcome == "error"  # a folder: our one line
    good = tmp_path / "good.pdf"
    good.write_bytes(three_pages())
    assert run_child("ours", good, 20, 0).outcome == "text"
    assert run_child("mupdf", good, 20, 0).outcome == "text"


def test_unopenable_path_is_one_clear_error() -> None:
    with pytest.raises(pipeline.ExtractionError, match="cannot read file"):
        pipeline.extract("bad\0name.pdf")
