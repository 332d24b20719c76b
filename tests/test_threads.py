"""Reading order by article threads (pipeline/threads.py, issue 23 item 6): on a page
with beads the text follows the document's threads, bead by bead, then the text
outside every bead in content order (R14); ``Params.threads`` / ``--no-threads``
keeps content order. Every PDF here draws its text in an order the threads
contradict, so content order (the behaviour before threads) fails each test.
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pdfindex import pipeline
from pdfindex.pipeline.document import PdfFile
from pdfindex.pipeline.explain import explain_page
from pdfindex.pipeline.threads import MAX_BEADS, PageBeads
from pdfindex.server.marks import page_words
from pdfindex.server.page_glyphs import text_glyphs
from tests.builders import font_resources, mono_font, text_line
from tests.pdfwriter import Name, PdfWriter, Raw, Ref

ROOT = Path(__file__).resolve().parents[1]
NO_THREADS = dataclasses.replace(pipeline.DEFAULT_PARAMS, threads=False)

# The mono font at 10 pt: a glyph at (x, y) spans x .. x + 5 and y - 2 .. y + 8.
LEFT = [b"Left one", b"Left two", b"Left three"]
RIGHT = [b"Right one", b"Right two", b"Right three"]
LEFT_BOX = (60, 650, 300, 720)
RIGHT_BOX = (310, 650, 540, 720)


def _column(x: float, words: Sequence[bytes], top: float = 700) -> bytes:
    return b"".join(text_line(x, top - 14 * i, b"(%s) Tj" % word) for i, word in enumerate(words))


def _thread(w: PdfWriter, beads: Sequence[tuple[Any, Any]], *, close: bool = True) -> Ref:
    """A thread of beads, each (page, rect): a page Ref or any value for /P, a
    rectangle or None for no /R. The chain is circular (the last /N is /F) as
    §12.4.3 has it, unless ``close`` is False (the last bead has no /N)."""
    thread = w.reserve()
    refs = [w.reserve() for _ in beads]
    for i, (ref, (page, rect)) in enumerate(zip(refs, beads, strict=True)):
        bead: dict[str, Any] = {"Type": Name("Bead"), "P": page, "V": refs[i - 1]}
        if i + 1 < len(refs) or close:
            bead["N"] = refs[(i + 1) % len(refs)]
        if rect is not None:
            bead["R"] = list(rect)
        if i == 0:
            bead["T"] = thread
        w.set_object(ref, bead)
    w.set_object(thread, {"Type": Name("Thread"), "F": refs[0]})
    return thread


def _pages(w: PdfWriter, contents: Sequence[bytes], **page_kw: Any) -> list[Ref]:
    res = font_resources(mono_font(w))
    return [w.add_page(content, resources=res, **page_kw) for content in contents]


def _texts(data: bytes, params: pipeline.Params = pipeline.DEFAULT_PARAMS) -> list[str]:
    return [page.text for page in pipeline.extract(data, params=params).pages]


def _two_columns(**page_kw: Any) -> bytes:
    """Left column drawn first; the one thread reads the right column first."""
    w = PdfWriter()
    (page,) = _pages(w, [_column(72, LEFT) + _column(320, RIGHT)], **page_kw)
    w.catalog_attrs["Threads"] = [_thread(w, [(page, RIGHT_BOX), (page, LEFT_BOX)])]
    return w.to_bytes()


RIGHT_FIRST = "Right one\nRight two\nRight three\nLeft one\nLeft two\nLeft three"
LEFT_FIRST = "Left one\nLeft two\nLeft three\nRight one\nRight two\nRight three"


def test_the_thread_reads_the_right_column_first() -> None:
    assert _texts(_two_columns()) == [RIGHT_FIRST]


def test_no_threads_keeps_content_order() -> None:
    assert _texts(_two_columns(), NO_THREADS) == [LEFT_FIRST]


def test_threads_change_the_order_only() -> None:
    """The same glyphs, counted the same: quality does not depend on the order."""
    data = _two_columns()
    (threaded,) = pipeline.extract(data).pages
    (plain,) = pipeline.extract(data, params=NO_THREADS).pages
    assert (threaded.quality.glyphs, threaded.quality.unresolved) == (plain.quality.glyphs, plain.quality.unresolved)
    assert sorted(threaded.text.split("\n")) == sorted(plain.text.split("\n"))
    assert threaded.problems == []


def test_bead_rects_are_in_default_user_space_whatever_rotate_and_crop_box() -> None:
    """/Rotate turns the page as shown and the crop box cuts it, but beads and glyphs
    are both in default user space: neither moves a bead."""
    assert _texts(_two_columns(rotate=90, crop_box=(50, 600, 560, 760))) == [RIGHT_FIRST]
    assert _texts(_two_columns(rotate=270, media_box=(0, 0, 612, 792))) == [RIGHT_FIRST]


def test_text_outside_every_bead_follows_in_content_order() -> None:
    w = PdfWriter()
    content = (text_line(72, 760, b"(Running head) Tj") + _column(72, LEFT) + _column(320, RIGHT)
               + text_line(72, 40, b"(Page footer) Tj"))
    (page,) = _pages(w, [content])
    w.catalog_attrs["Threads"] = [_thread(w, [(page, RIGHT_BOX)])]
    assert _texts(w.to_bytes()) == ["Right one\nRight two\nRight three\nRunning head\nLeft one\nLeft two\n"
                                    "Left three\nPage footer"]


def test_a_chain_spanning_two_pages_and_threads_in_catalog_order() -> None:
    """Thread A runs from the foot of page 1 to the head of page 2; thread B is the
    head of page 1. /Threads lists A first, so page 1 reads A's bead, then B's."""
    w = PdfWriter()
    one = text_line(72, 700, b"(Other story) Tj") + text_line(72, 100, b"(Story starts) Tj")
    two = text_line(72, 40, b"(Page two footer) Tj") + text_line(72, 700, b"(Story goes on) Tj")
    p1, p2 = _pages(w, [one, two])
    head, foot = (60, 650, 550, 750), (60, 50, 550, 150)
    story = _thread(w, [(p1, foot), (p2, head)])
    other = _thread(w, [(p1, head)])
    w.catalog_attrs["Threads"] = [story, other]
    assert _texts(w.to_bytes()) == ["Story starts\nOther story", "Story goes on\nPage two footer"]
    assert _texts(w.to_bytes(), NO_THREADS) == ["Other story\nStory starts", "Page two footer\nStory goes on"]


def test_each_bead_is_a_paragraph_of_its_own() -> None:
    """Two beads on one baseline: their words would join one line in content order;
    the boundary between two groups is a line break."""
    w = PdfWriter()
    (page,) = _pages(w, [text_line(72, 700, b"(first) Tj") + text_line(110, 700, b"(second) Tj")])
    w.catalog_attrs["Threads"] = [_thread(w, [(page, (100, 690, 200, 715)), (page, (60, 690, 100, 715))])]
    assert _texts(w.to_bytes()) == ["second\nfirst"]
    assert _texts(w.to_bytes(), NO_THREADS) == ["first second"]


def test_a_glyph_in_two_beads_belongs_to_the_first_in_thread_order() -> None:
    w = PdfWriter()
    (page,) = _pages(w, [_column(72, LEFT) + _column(320, RIGHT)])
    everything = (0, 0, 612, 792)
    w.catalog_attrs["Threads"] = [_thread(w, [(page, RIGHT_BOX), (page, everything), (page, LEFT_BOX)])]
    assert _texts(w.to_bytes()) == [RIGHT_FIRST]


def test_a_looping_chain_ends_where_it_comes_back() -> None:
    """/N of the third bead goes back to the second, not the first: the chain is
    read once round, and the page as the three beads order it."""
    w = PdfWriter()
    (page,) = _pages(w, [_column(72, [b"Top"], 700) + _column(72, [b"Middle"], 500) + _column(72, [b"Bottom"], 300)])
    thread, b1, b2, b3 = (w.reserve() for _ in range(4))
    rows = {b1: (60, 290, 300, 320), b2: (60, 490, 300, 520), b3: (60, 690, 300, 720)}
    for bead, after in ((b1, b2), (b2, b3), (b3, b2)):
        w.set_object(bead, {"Type": Name("Bead"), "T": thread, "P": page, "R": list(rows[bead]), "N": after})
    w.set_object(thread, {"Type": Name("Thread"), "F": b1})
    self_loop = w.reserve()  # a bead whose /N is itself, in a thread of its own
    w.set_object(self_loop, {"Type": Name("Bead"), "P": page, "R": [0, 0, 1, 1], "N": self_loop})
    w.catalog_attrs["Threads"] = [thread, w.add({"Type": Name("Thread"), "F": self_loop})]
    assert _texts(w.to_bytes()) == ["Bottom\nMiddle\nTop"]


@pytest.mark.parametrize("count", [MAX_BEADS, MAX_BEADS + 1])
def test_a_chain_longer_than_the_cap_stops_there_and_says_so(count: int) -> None:
    """A chain that never comes back: reading stops at MAX_BEADS (a bead left
    unread is a cap_hit problem on each page; a chain of exactly MAX_BEADS is
    not), and the beads read still order the page."""
    w = PdfWriter()
    (page,) = _pages(w, [_column(72, LEFT) + _column(320, RIGHT)])
    refs = [w.reserve() for _ in range(count)]
    for i, ref in enumerate(refs):
        box = RIGHT_BOX if i == 0 else LEFT_BOX if i == MAX_BEADS - 1 else (0, 0, 1, 1)
        bead: dict[str, Any] = {"P": page, "R": list(box)}
        if i + 1 < len(refs):
            bead["N"] = refs[i + 1]
        w.set_object(ref, bead)
    w.catalog_attrs["Threads"] = [w.add({"F": refs[0]})]
    (extracted,) = pipeline.extract(w.to_bytes()).pages
    assert extracted.text == RIGHT_FIRST
    cut = [("cap_hit", f"article threads: more than {MAX_BEADS} beads; the rest ignored")]
    assert [(p.code, str(p)) for p in map(pipeline.errors.as_problem, extracted.problems)] == (
        cut if count > MAX_BEADS else [])


def test_a_bead_of_another_page_does_not_order_this_one() -> None:
    """The first bead's rectangle lies over page 1's right column, but its /P is
    page 2: page 1 keeps content order, page 2 follows it. A /P that is no page at
    all (a font, a number) counts for none."""
    w = PdfWriter()
    _, p2 = _pages(w, [_column(72, LEFT) + _column(320, RIGHT)] * 2)
    font = w.add({"Type": Name("Font"), "Subtype": Name("Type1"), "BaseFont": Name("Helvetica")})
    w.catalog_attrs["Threads"] = [_thread(w, [(p2, RIGHT_BOX), (font, RIGHT_BOX), (7, RIGHT_BOX)])]
    assert _texts(w.to_bytes()) == [LEFT_FIRST, RIGHT_FIRST]


def test_a_bead_without_a_rectangle_is_passed_over() -> None:
    """No /R, an /R of three numbers, an /R of no area: passed over, and the chain
    goes on to the bead after them."""
    w = PdfWriter()
    (page,) = _pages(w, [_column(72, LEFT) + _column(320, RIGHT)])
    beads = [(page, None), (page, (0, 0, 612)), (page, (60, 650, 60, 720)), (page, RIGHT_BOX)]
    w.catalog_attrs["Threads"] = [_thread(w, beads, close=False)]
    assert _texts(w.to_bytes()) == [RIGHT_FIRST]


@pytest.mark.parametrize("threads", [
    Raw(b"(not an array)"), [], [7], [Raw(b"<< /F 9999 0 R >>")], [Raw(b"<< /F << /P 3 0 R >> >>")],
])
def test_threads_that_say_nothing_keep_content_order(threads: Any) -> None:
    w = PdfWriter()
    _pages(w, [_column(72, LEFT) + _column(320, RIGHT)])
    w.catalog_attrs["Threads"] = threads
    assert _texts(w.to_bytes()) == [LEFT_FIRST]


def test_many_beads_are_found_through_the_grid() -> None:
    """Twenty beads, one a line, threaded bottom to top, and a last one over the
    whole page: more than the linear look-up takes, so the grid answers, and
    it must answer as the linear one does."""
    w = PdfWriter()
    words = [b"line%02d" % i for i in range(20)]
    content = _column(72, words, 700) + text_line(400, 300, b"(aside) Tj")
    (page,) = _pages(w, [content])
    rows = [(60, 700 - 14 * i - 5, 200, 700 - 14 * i + 9) for i in range(20)]
    everything = (0, 0, 612, 792)
    w.catalog_attrs["Threads"] = [_thread(w, [(page, r) for r in reversed(rows)] + [(page, everything)])]
    expected = [word.decode() for word in reversed(words)] + ["aside"]
    assert _texts(w.to_bytes()) == ["\n".join(expected)]
    grid = PageBeads([*reversed(rows), everything])
    linear = PageBeads([*reversed(rows), everything][:8])
    assert grid.cells is not None and linear.cells is None
    for x in range(0, 620, 7):
        for y in range(0, 800, 3):
            want = next((k for k, (x0, y0, x1, y1) in enumerate([*reversed(rows), everything])
                         if x0 <= x <= x1 and y0 <= y <= y1), grid.outside)
            assert grid.find(2 * x, 2 * y) == want, (x, y)


def test_a_page_assembled_in_chunks_reads_the_same() -> None:
    """Each bead's text is assembled as the page goes (one PageText a bead): with
    only a few glyph records held at a time, the text is the same."""
    data = _two_columns()
    small = dataclasses.replace(pipeline.DEFAULT_PARAMS, max_held_glyphs=3)
    assert _texts(data, small) == _texts(data) == [RIGHT_FIRST]


def test_explain_and_the_marks_text_follow_the_threads() -> None:
    """The readers that assemble the page again from the glyphs extraction gives
    them (the marked page image, ``explain``) get them in thread order, so their
    text is the indexed text."""
    data = _two_columns()
    pdf = PdfFile(data)
    (page,) = pipeline.extract(data).pages
    glyphs, box = text_glyphs(pdf, 1)
    assert page_words(glyphs, box).text == page.text == RIGHT_FIRST
    steps = explain_page(pdf, 1).steps
    lines: dict[int, str] = {}
    for step in steps:
        lines[step.line] = lines.get(step.line, "") + step.text
    assert [lines[k] for k in sorted(lines)] == RIGHT_FIRST.split("\n")  # the spaces are drawn
    plain = explain_page(pdf, 1, NO_THREADS).steps
    assert "".join(s.text for s in plain if s.line == 1) == "Left one"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "pdfindex.cli.main", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_the_command_line_follows_threads_unless_told_not_to(tmp_path: Path) -> None:
    path = tmp_path / "threads.pdf"
    path.write_bytes(_two_columns())
    assert _run("extract", path).stdout == RIGHT_FIRST + "\n"
    assert _run("extract", "--no-threads", path).stdout == LEFT_FIRST + "\n"
    assert _run("extract", "--no-threads", path, "-o", tmp_path / "out.txt").returncode == 0
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == LEFT_FIRST
    explained = _run("explain", "--no-threads", path, "--page", "1", "--near", "Left one")
    assert explained.returncode == 0 and "line 1:" in explained.stdout


POEMS = ["pdfbox__PDFBOX-3110-poems-beads.pdf", "pdfbox__PDFBOX-3110-poems-beads-cropbox.pdf"]


@pytest.mark.parametrize("name", POEMS)
def test_the_poems_follow_their_beads(name: str, realworld: Path) -> None:
    """Quartz (Pages) draws Molière's text first; the first thread is Goethe's
    Erlkönig, in beads over the page's top half and foot, the second Molière's, on
    to page 2. PDFBox's expected text (which follows beads) starts with the poem."""
    pages = _texts((realworld / name).read_bytes())
    first = pages[0].split("\n")
    assert first[:4] == ["Wer reitet so spät durch Nacht und Wind?", "Es ist der Vater mit seinem Kind;",
                         "Er hat den Knaben wohl in dem Arm,", "Er fasst ihn sicher, er hält ihn warm."]
    end = first.index("In seinen Armen das Kind war tot.")
    assert first[end + 1].startswith("ARGAN, seul dans sa chambre")
    before = _texts((realworld / name).read_bytes(), NO_THREADS)
    assert before[0].startswith("ARGAN, seul dans sa chambre")
    assert sorted(pages[0].split()) == sorted(before[0].split())
