"""The expectations of the corpus's REFERENCE_NOTES.md (other projects' own tests on
these files) wherever their meaning matches ours.

Our page text convention: lines separated by "\\n", words by single spaces,
ligatures U+FB00-FB06 expanded, soft hyphens removed, content-stream order (R14).
Exact-equality oracles of pdf.js, pdfminer.six, pdfplumber and PDFBox carry their
own spacing and line conventions (trailing spaces, blank lines between boxes, "\\r\\n"
page ends, layout sorting), so they are compared here as lines of words, as word
sequences, or as character sequences, whichever keeps the meaning of the original
check. Search-count oracles ([B], pdf.js's find controller) run through a small
local matcher that mimics pdf.js's normalisation over our page texts.

Section numbers (§n) refer to REFERENCE_NOTES.md.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from pdfindex import pipeline
from tests.paths import REALWORLD


@cache
def _extract(name: str, password: str | None = None) -> pipeline.Document:
    return pipeline.extract(REALWORLD / name, password=password)


@pytest.fixture
def doc(realworld: Path) -> Callable[..., pipeline.Document]:
    """``doc(name)``: the extracted document, cached for the session (skips
    with a reason when the corpus is absent)."""
    return _extract


def page_texts(d: pipeline.Document) -> list[str]:
    return [p.text for p in d.pages]


def words(text: str) -> list[str]:
    """Words of a text; a space before closing punctuation is spacing, not a word
    (PDFBox writes "9302 ," where the glyphs say "9302,")."""
    return re.sub(r"\s+([,.;:!?)\]])", r"\1", text).split()


def word_lines(text: str) -> list[list[str]]:
    """Non-empty lines as word lists: PDFBox's trailing spaces, blank lines and
    "\\r\\n" page ends fall away."""
    return [w for w in (words(line) for line in text.replace("\r\n", "\n").split("\n")) if w]


def squeeze(text: str) -> str:
    """All whitespace removed: the characters and their order, nothing else."""
    return "".join(text.split())


def contains_line_run(text: str, expected: list[list[str]]) -> bool:
    """``expected`` (lines of words) occurs as consecutive lines of ``text``."""
    lines = word_lines(text)
    n = len(expected)
    return any(lines[i:i + n] == expected for i in range(len(lines) - n + 1))


# ---- a tiny pdf.js find-controller mimic ([B]) -------------------------------------------

# Ideographic characters (Han, kana, CJK punctuation, fullwidth forms): pdf.js joins
# a line break between two of them without a space.
_CJK = "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"


def _fold(text: str, match_diacritics: bool, case_sensitive: bool) -> str:
    # NFKC: ligatures, fullwidth forms, ½ → 1⁄2 (with U+2044, which pdf.js maps to "/").
    text = unicodedata.normalize("NFKC", text).replace("\u2044", "/")
    if not match_diacritics:
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = unicodedata.normalize("NFC", text)
    return text if case_sensitive else text.casefold()


def haystack(page_text: str, *, match_diacritics: bool = False, case_sensitive: bool = False) -> str:
    """A page text as pdf.js searches it: folded, an end-of-line hyphen between
    letters joined away, a line break between CJK characters dropped, every other
    whitespace run one space."""
    text = _fold(page_text, match_diacritics, case_sensitive)
    text = re.sub(r"(?<=[^\W\d_])-\n(?=[^\W\d_])", "", text)
    text = re.sub(rf"(?<={_CJK})\n(?={_CJK})", "", text)
    return re.sub(r"\s+", " ", text)


def query_pattern(query: str, *, match_diacritics: bool = False, case_sensitive: bool = False,
                  entire_word: bool = False) -> str:
    """pdf.js turns the query into a regex: whitespace runs match one or more spaces,
    punctuation may have spaces around it ("version.the" finds "version. The")."""
    parts: list[str] = []
    for ch in _fold(query, match_diacritics, case_sensitive).strip():
        if ch.isspace():
            if not parts or parts[-1] != "[ ]+":
                parts.append("[ ]+")
        elif unicodedata.category(ch).startswith("P") or ch in "$^*+?|\\":
            parts.append(f"[ ]*{re.escape(ch)}[ ]*")
        else:
            parts.append(re.escape(ch))
    body = "".join(parts)
    return rf"(?<!\w){body}(?!\w)" if entire_word else body


def find_count(page_text: str, *queries: str, match_diacritics: bool = False, case_sensitive: bool = False,
               entire_word: bool = False) -> int:
    """Matches on one page; several queries are pdf.js's "any term" (phraseSearch
    false) search: one alternation, non-overlapping, leftmost first."""
    hay = haystack(page_text, match_diacritics=match_diacritics, case_sensitive=case_sensitive)
    pattern = "|".join(
        f"(?:{query_pattern(q, match_diacritics=match_diacritics, case_sensitive=case_sensitive, entire_word=entire_word)})"
        for q in queries)
    return len(re.findall(pattern, hay))


def counts(d: pipeline.Document, *queries: str, **options: bool) -> list[int]:
    return [find_count(t, *queries, **options) for t in page_texts(d)]


def test_matcher_mimics_pdfjs_normalisation() -> None:
    assert find_count("a sim-\nple test", "simple") == 1          # hyphenated line end joined
    assert find_count("user\nexperience", "user experience") == 1  # line break is a space
    assert find_count("検知機\n構", "検知機構") == 1                 # CJK line break joined
    assert find_count("Crème BRÛLÉE", "creme brulee") == 1          # case and diacritics folded
    assert find_count("Crème", "creme", match_diacritics=True) == 0
    assert find_count("½ and 1/2", "1/2") == 2                    # NFKC fractions
    assert find_count("the ﬁle", "file") == 1                     # ligatures
    assert find_count("Governmental Government", "Government", entire_word=True) == 1
    assert find_count("2-\n3", "23") == 0                          # not between digits


# ---- §1 basicapi -------------------------------------------------------------------------

def test_basicapi_page1_text_and_title(doc) -> None:
    d = doc("pdfjs__basicapi.pdf")
    expected = ("Table Of Content\nChapter 1 .......................................................... 2\n"
                "Paragraph 1.1 ...................................................... 3\npage 1 / 3")
    assert word_lines(d.pages[0].text) == word_lines(expected)
    assert d.info["Title"] == "Basic API Test"
    assert d.page_count == 3


# ---- §2 short pdf.js exact texts -----------------------------------------------------------

@pytest.mark.parametrize(("name", "expected"), [
    # The PDF has soft hyphens inside words; our convention drops them, as pdf.js does.
    ("pdfjs__issue13226.pdf", "Mitarbeiterinnen und Mitarbeiter arbeiten in über 100 Ländern engagiert im Dienste"),
    ("pdfjs__issue18099_reduced.pdf", "Hello world!"),
    # Our line-break rule takes text rise out (R12), so the superscript 2 stays on its line.
    ("pdfjs__text_rise_eol_bug.pdf", "E = mc2 is the mass-energy equivalence."),
    ("pdfjs__90ms_rksj_h_sample.pdf", "Hello ASCII\n日本語テスト"),
])
def test_pdfjs_short_exact_texts(doc, name: str, expected: str) -> None:
    assert doc(name).pages[0].text == expected


def test_issue16316_only_text_inside_the_crop_box(doc) -> None:
    # pdf.js returns "Experimentation,". The comma's box centre (x 209.85) lies just
    # right of the CropBox edge (x 209.44), so R10's centre test drops it; either
    # way nothing from the rest of the (much larger) MediaBox may appear.
    page = doc("pdfjs__issue16316.pdf").pages[0]
    assert page.text in ("Experimentation,", "Experimentation")
    assert page.box == pytest.approx((149.625, 260.062, 209.438, 269.437), abs=1e-3)


# ---- §3 substring checks ---------------------------------------------------------------------

@pytest.mark.parametrize("expected", [
    "1. The first of these cases arises from the tragic handicap which has blighted the life of the Plaintiff, "
    "and from the response of the",
    "argued in this Court the appeal raises narrower, but important, issues which may be summarised as follows:-",
])
def test_issue11913_no_spaces_between_letters(doc, expected: str) -> None:
    assert expected in doc("pdfjs__issue11913.pdf").pages[0].text


def test_issue10900_merged_spaces(doc) -> None:
    expected = ("3 3 3 3\n851.5 854.9 839.3 837.5\n633.6 727.8 789.9 796.2\n1,485.1 1,582.7 1,629.2 1,633.7\n"
                "114.2 121.7 125.3 130.7\n13.0x 13.0x 13.0x 12.5x")
    assert expected in doc("pdfjs__issue10900.pdf").pages[0].text


# ---- §4 issue10640 -------------------------------------------------------------------------

def test_issue10640_spaces_and_normalised_ligatures(doc) -> None:
    # The normalised pdf.js variant ("figure", "files"). pdf.js shows the digits as
    # the control characters \x80-\x82 its broken font maps them to; the glyphs drawn
    # are 0, 1 and 2 ("Type 1", "version 2.0"), which is what we decode.
    expected = (
        "Open Sans is a humanist sans serif typeface designed by Steve Matteson.\nOpen Sans was designed with an "
        "upright stress, open forms and a neu-\ntral, yet friendly appearance. It was optimized for print, web, and "
        "mobile\ninterfaces, and has excellent legibility characteristics in its letterforms (see\nfigure \x81 on the "
        "following page). This font is available from the Google Font\nDirectory [\x81] as TrueType files licensed "
        "under the Apache License version \x82.\x80.\nThis package provides support for this font in LATEX. It "
        "includes Type \x81\nversions of the fonts, converted for this package using FontForge from its\nsources, "
        "for full support with Dvips."
    ).translate({0x80: "0", 0x81: "1", 0x82: "2"})
    text = doc("pdfjs__issue10640.pdf").pages[0].text
    assert expected in text
    assert "\ufb01" not in text


# ---- §5 bug2013793 ----------------------------------------------------------------------------

def test_bug2013793_no_words_run_together(doc) -> None:
    expected = (
        "This is a great deal of nothing. The purpose is to help in identifying a bug when the PDF\nis read by "
        "Firefox. I want to know whether any of the two words in this paragraph run\ntogether. If they do, I will "
        "file a bug report. The problem seems to occur somewhere\nbetween the 240th and 260th character in the "
        "paragraph. I should have written that much\nby now. So, here’s to squashing bugs.\nThis is a great deal "
        "of nothing. The purpose is to help in identifying a bug when the\nPDF is read by Firefox. I want to know "
        "whether any of the two words in this\nparagraph run together. If they do, I will file a bug report. The "
        "problem seems to\noccur somewhere between the 240th and 260th character in the paragraph. I should\nhave "
        "written that much by now. So, here’s to squashing bugs."
    )
    text = doc("pdfjs__bug2013793.pdf").pages[0].text
    ours = set(text.split())
    assert [w for w in expected.split() if w not in ours] == []  # every word a word of its own
    assert text.split() == expected.split()                       # and in the same order
    assert word_lines(text) == word_lines(expected)


# ---- §6 pr6531_2 (password) -----------------------------------------------------------------

def test_pr6531_2_text_with_password(doc) -> None:
    # The text is a FreeText annotation's appearance stream; wrong and missing
    # passwords are covered in test_realworld.py.
    assert doc("pdfjs__pr6531_2.pdf", "asdfasdf").pages[0].text == "Bluebeam should be encrypting this."


# ---- §7 and §9 tracemonkey -------------------------------------------------------------------

def test_tracemonkey_info(doc) -> None:
    info = doc("pdfjs__tracemonkey.pdf").info
    assert info["Creator"] == "TeX"
    assert info["Producer"] == "pdfeTeX-1.21a"


@pytest.mark.parametrize(("heading", "page"), [
    ("2. Overview: Example Tracing Run", 2),
    ("3. Trace Trees", 4),
    ("4. Nested Trace Tree Formation", 6),
])
def test_tracemonkey_section_headings(doc, heading: str, page: int) -> None:
    # The notes say "pages 2-4" loosely; the headings are lines of pages 2, 4 and 6
    # (MuPDF agrees), each a line of its own.
    texts = page_texts(doc("pdfjs__tracemonkey.pdf"))
    assert heading in texts[page - 1].split("\n")
    assert [i + 1 for i, t in enumerate(texts) if heading in t.split("\n")] == [page]


TRACEMONKEY_COUNTS: list[tuple[tuple[str, ...], dict[str, bool], list[int]]] = [
    (("Dynamic",), {}, [11, 5, 0, 3, 0, 0, 0, 1, 1, 1, 0, 3, 4, 4]),
    (("Dynamic",), {"case_sensitive": True}, [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3]),
    (("optimiz",), {}, [1, 4, 2, 3, 3, 0, 2, 9, 1, 0, 0, 6, 3, 4]),
    (("conference",), {}, [0] * 13 + [5]),
    (("alternate", "solution"), {}, [0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 0, 0, 0, 0]),
    (("alternate solution", "solution"), {}, [0, 0, 0, 0, 0, 1, 0, 0, 3, 0, 0, 0, 0, 0]),
    (("user experience",), {}, [1] + [0] * 13),
    (("version.the",), {}, [0, 1] + [0] * 12),
    (("trace-based  just-in-time",), {}, [1] + [0] * 12 + [1]),
    (("[Programming Languages]",), {}, [1] + [0] * 13),
    (("\t   (checks)",), {}, [0, 1] + [0] * 12),
    (("complex applications.",), {}, [1] + [0] * 13),
    (("complex applications.J",), {}, [1] + [0] * 13),
    (("complex applications. j",), {}, [1] + [0] * 13),
]


@pytest.mark.parametrize(("queries", "options", "expected"), TRACEMONKEY_COUNTS,
                         ids=[f"{'|'.join(q)}{'-' + ','.join(o) if o else ''}" for q, o, _ in TRACEMONKEY_COUNTS])
def test_tracemonkey_find_counts(doc, queries: tuple[str, ...], options: dict[str, bool], expected: list[int]) -> None:
    assert counts(doc("pdfjs__tracemonkey.pdf"), *queries, **options) == expected


def test_tracemonkey_entire_word_government(doc) -> None:
    # pdf.js: only page 13 (where "Governmental" must not count). Page 14 has
    # "the U.S. Gov-\nernment," which the documented end-of-line hyphen joining
    # finds as a whole word; pdf.js counts 0 there, presumably because its text
    # items do not mark that line end as a hyphenated one. For a search index the
    # joined word is a hit, so page 13 stays exact and page 14 counts it.
    d = doc("pdfjs__tracemonkey.pdf")
    got = counts(d, "Government", entire_word=True)
    assert got == [0] * 12 + [1, 1]
    assert "Gov-\nernment" in d.pages[13].text
    assert counts(d, "Government") == [0] * 12 + [2, 1]  # + "Governmental"


# ---- §10-§12 other find oracles ----------------------------------------------------------------

@pytest.mark.parametrize(("query", "expected"), [
    ("fraction", 3), ("1/2", 2), ("½", 2), ("1", 3), ("2", 2), ("1/", 3), ("1/21", 1),
])
def test_fraction_highlight_counts(doc, query: str, expected: int) -> None:
    assert counts(doc("pdfjs__fraction-highlight.pdf"), query) == [expected]


@pytest.mark.parametrize(("query", "match_diacritics", "expected"), [("a", False, 6), ("u", False, 6), ("ë", True, 2)])
def test_french_diacritics_counts(doc, query: str, match_diacritics: bool, expected: int) -> None:
    assert counts(doc("pdfjs__french_diacritics.pdf"), query, match_diacritics=match_diacritics) == [expected]


def test_hangul_phrase_found_once(doc) -> None:
    # R11 (beyond): Hangul words keep their spaces, so the two-word phrase matches.
    assert counts(doc("pdfjs__bug1771477.pdf"), "안녕하세요 세계") == [1]


def test_ideographs_across_a_line_break(doc) -> None:
    # "検知機" ends a line and "構" starts the next: no space may be inserted.
    d = doc("pdfjs__issue15340.pdf")
    assert "検知機\n構" in d.pages[0].text
    assert counts(d, "検知機構") == [1]


def test_text_find_ligatures_flag_twice(doc) -> None:
    # §38 (PyMuPDF search_for "flag"): 2 hits once the ﬂ glyph is expanded; we
    # always expand, so the plain text has both.
    text = doc("pymupdf__text-find-ligatures.pdf").pages[0].text
    assert text.count("flag") == 2
    assert "\ufb02" not in text


# ---- §13-§17 pdfminer.six ---------------------------------------------------------------------

@pytest.mark.parametrize(("name", "expected"), [
    # pdfminer spaces out the letter-spaced copies ("H e l l o"); we read tracking
    # as tracking (R11), so compare the characters and their order only.
    ("pdfminer__simple1.pdf", "Hello \n\nWorld\n\nHello \n\nWorld\n\nH e l l o  \n\nW o r l d\n\nH e l l o  \n\nW o r l d\n\n\x0c"),
    # pdfminer puts each vertical glyph and each raised copy on its own line; we
    # read the vertical run as one column (R13) and keep risen text on its line (R12).
    ("pdfminer__simple3.pdf", "Hello\n\nHello\nあ\nい\nう\nえ\nお\nあ\nい\nう\nえ\nお\nWorld\n\nWorld\n\n\x0c"),
    ("pdfminer__simple4.pdf", "Text1\nText2\nText3\n\n\x0c"),
    ("pdfminer__simple5.pdf", "Heading\n\nLink to heading that is working with vim-pandoc.\n\nLink to heading “that is” "
                              "not working with vim-pandoc.\n\nSubheading\n\nSome “more text”\n\n1\n\n\x0c"),
])
def test_pdfminer_simple_files(doc, name: str, expected: str) -> None:
    text = doc(name).pages[0].text
    assert squeeze(text) == squeeze(expected)
    if name in ("pdfminer__simple4.pdf", "pdfminer__simple5.pdf"):  # same boxes, same lines
        assert word_lines(text) == word_lines(expected)


def test_simple1_words(doc) -> None:
    assert doc("pdfminer__simple1.pdf").pages[0].text.split() == ["Hello", "World"] * 4


def test_zen_of_python_corrupted_zlib_still_yields_text(doc) -> None:
    # pdfminer checks the prefix 'Mai 30, 18 13:27\n\nzen_of_python.txt'; that header
    # comes last in the content stream, and we keep stream order (R14).
    text = doc("pdfminer__zen_of_python_corrupted.pdf").pages[0].text
    assert "Mai 30, 18 13:27" in text
    assert "zen_of_python.txt" in text
    assert text.startswith("Beautiful is better than ugly.\nExplicit is better than implicit.")
    assert "Namespaces are one honking great idea" in text


# ---- §18 CJK / CMap regressions -----------------------------------------------------------------

@pytest.mark.parametrize(("name", "expected"), [
    ("pdfminer__issue_566_test_2.pdf", "甲方：中国饮料有限公司（盖章）"),
    ("pdfminer__issue-791-non-unicode-cmap.pdf", "Peněžní prostředky na účtech"),
])
def test_pdfminer_cmap_regressions_exact(doc, name: str, expected: str) -> None:
    assert doc(name).pages[0].text.strip() == expected


def test_issue625_identity_cmap_encrypted_with_empty_password(doc) -> None:
    # pdfminer: line 7 of its output; we put "Metoda płatności: przelew" on the same
    # line (same baseline), so the expected line starts one of ours.
    lines = doc("pdfminer__issue-625-identity-cmap.pdf").pages[0].text.split("\n")
    assert any(line.startswith("Termin płatności: 2021-05-03") for line in lines)


# ---- §19-§24 pdfplumber ----------------------------------------------------------------------------

PDFFILL_PAGE1 = (
    "First Page Previous Page Next Page Last Page\nPrint\nPDFill: PDF Drawing\nYou can open a PDF or create a blank "
    "PDF by PDFill.\nOnline Help\nHere are the PDF drawings created by PDFill\nPlease save into a new PDF to see the "
    "effect!\nGoto Page 2: Line Tool\nGoto Page 3: Arrow Tool\nGoto Page 4: Tool for Rectangle, Square and Rounded "
    "Corner\nGoto Page 5: Tool for Circle, Ellipse, Arc, Pie\nGoto Page 6: Tool for Basic Shapes\nGoto Page 7: Tool "
    "for Curves\nHere are the tools to change line width, style, arrow style and colors"
)


def test_pdffill_demo_lines(doc) -> None:
    # pdfplumber sorts lines top to bottom; we keep content-stream order (R14) ("Print",
    # drawn at the right edge, and the title 10 units lower and back at the left are
    # two lines: R12's return to the line's start). So: every expected line
    # is a run of whole words within one of our lines, and nothing else is there.
    ours = [" ".join(w) for w in word_lines(doc("pdfplumber__pdffill-demo.pdf").pages[0].text)]
    for line in PDFFILL_PAGE1.split("\n"):
        assert any(f" {line} " in f" {o} " for o in ours), line
    assert sorted(squeeze(PDFFILL_PAGE1)) == sorted(squeeze(" ".join(ours)))


def test_nics_outside_table_text_and_page_size(doc) -> None:
    plain = doc("pdfplumber__nics-background-checks-2015-11.pdf")
    rotated = doc("pdfplumber__nics-background-checks-2015-11-rotated.pdf")
    assert "Page 1 of 205" in plain.pages[0].text.split("\n")
    box = plain.pages[0].box
    assert (box[2] - box[0], box[3] - box[1]) == pytest.approx((1008, 612))
    # Same content; /Rotate does not change the reading of the glyphs.
    assert rotated.pages[0].text == plain.pages[0].text


def test_duplicate_chars_are_not_doubled(doc) -> None:
    # pdfplumber's last line of page 1 with dedupe_chars(): "微软 培训课程： 名模意义一些有意义一些".
    # Fake bold draws each glyph twice; our text must read it once. pdfplumber sorts
    # "微软" (a header at the same height) into the line; we keep stream order.
    text = doc("pdfplumber__issue-71-duplicate-chars.pdf").pages[0].text
    assert text.split("\n")[-1] == "培训课程： 名模意义一些有意义一些"
    assert "微软" in text.split("\n")
    for doubled in ("微微软软", "培培训训", "名名模模"):
        assert doubled not in text


def test_extra_attrs_colored_runs(doc) -> None:
    # Font and colour changes with no gap are not word boundaries (pdfplumber's default).
    assert doc("pdfplumber__extra-attrs-example.pdf").pages[0].text == "BlackRedArial"


def test_line_char_render_lines(doc) -> None:
    # "first" is drawn with the fi ligature glyph.
    assert doc("pdfplumber__line-char-render-example.pdf").pages[0].text == "first line\nsecond line\nthird line"


def test_scotus_transcript_lines(doc) -> None:
    # pdfplumber's layout text puts the line number "1" before the heading; our
    # reading-flow text has the margin numbers first, then the lines.
    lines = doc("pdfplumber__scotus-transcript-p1.pdf").pages[0].text.split("\n")
    assert "Official - Subject to Final Review" in lines
    assert "IN THE SUPREME COURT OF THE UNITED STATES" in lines
    assert lines[:25] == [str(n) for n in range(1, 26)]


# ---- §25-§27 sample-file sources, pypdf ---------------------------------------------------------------

LOREM = (
    "Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et "
    "dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum. Stet "
    "clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, "
    "consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, "
    "sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea "
    "takimata sanctus est Lorem ipsum dolor sit amet."
)


@pytest.mark.parametrize(("name", "password"), [
    ("pysamples__minimal-document.pdf", None),
    ("pysamples__002-trivial-libre-office-writer.pdf", None),
    ("pysamples__libreoffice-writer-password.pdf", "openpassword"),
])
def test_lorem_source_words_in_order(doc, name: str, password: str | None) -> None:
    # TeX hyphenates ("taki-\nmata"): join a hyphenated line end, then compare words.
    text = re.sub(r"(?<=[a-z])-\n(?=[a-z])", "", doc(name, password).pages[0].text)
    found = text.split()
    assert found[:len(LOREM.split())] == LOREM.split()


def test_habibi_logical_order(doc) -> None:
    # WeasyPrint's ToUnicode gives the whole Arabic word to one DejaVu glyph as well
    # as to the Times glyph that draws it, so the word comes out twice; the source
    # line must still be there in logical order.
    for name in ("pysamples__habibi.pdf", "pysamples__habibi-rotated.pdf"):
        for page in doc(name).pages:
            assert "حَبيبي habibi" in page.text, (name, page.number)


@pytest.mark.parametrize("expected", ["Hello World", "مرحبا بالعالم", "Привет, мир", "你好世界", "สวัสดีชาวโลก", "こんにちは世界"])
def test_multilang_substrings(doc, expected: str) -> None:
    assert expected in doc("pypdf__multilang.pdf").pages[0].text


# ---- §28-§37 PDFBox -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "start"), [
    ("pdfbox__cweb.pdf",
     "The CWEB System of Structured Documentation\n(Version 3.64 — February 2002)\nDonald E. Knuth and Silvio Levy\n"),
    ("pdfbox__eu-001.pdf",
     "E-PRTR pollutants and their thresholds \n \nA facility has to report data under E-PRTR if it fulfils the "
     "following criteria:  \n"),
    ("pdfbox__PDFBOX-3044-010197-p5-ligatures.pdf",
     "1 Overview\nHeavy ion collisions at the Large Hadron Collider (LHC) provide an opportunity for an "
     "unprecedented expansion\n"),
    ("pdfbox__PDFBOX-3038-001033-p2.pdf",
     "1\nIn the matter of Rambus Inc., FTC Dkt. No. 9302 , Opinion of the Comm’n (Aug. 2, 2006),\n"),
])
def test_pdfbox_starts_with(doc, name: str, start: str) -> None:
    # PDFBox ends lines with spaces and writes blank lines; compare words per line.
    expected = word_lines(start)
    assert word_lines(doc(name).pages[0].text)[:len(expected)] == expected


def test_pdfbox_ligatures_expanded(doc) -> None:
    # PDFBox's expected text has no U+FB0x characters and the words whole. Font R16
    # (Type1C, symbolic, no /Encoding, no ToUnicode) draws fi/fl as codes 2/3 of the
    # embedded CFF's built-in encoding (ISO 32000 §9.6.6.1): 'quark-gluon fluid'.
    text = doc("pdfbox__PDFBOX-3044-010197-p5-ligatures.pdf").pages[0].text
    assert not re.search("[\ufb00-\ufb06]", text)
    found = set(re.findall(r"\w+", text))
    assert {"fluid", "significant", "field", "first", "five"} <= found
    assert doc("pdfbox__PDFBOX-3044-010197-p5-ligatures.pdf").pages[0].quality.unresolved == 0


@pytest.mark.parametrize("name", ["pdfbox__PDFBOX-3110-poems-beads.pdf", "pdfbox__PDFBOX-3110-poems-beads-cropbox.pdf"])
def test_pdfbox_poems_lines(doc, name: str) -> None:
    # PDFBox follows the article beads, so its text starts with the Erlkönig and
    # glues the bead boundary ("warm.Mein"); we follow the beads too (threads.py) and
    # break the line there. The poem's first lines must be consecutive lines, first.
    expected = word_lines("Wer reitet so spät durch Nacht und Wind?\nEs ist der Vater mit seinem Kind;\n"
                          "Er hat den Knaben wohl in dem Arm,\nEr fasst ihn sicher, er hält ihn warm.\n"
                          "Mein Sohn, was birgst du so bang dein Gesicht? \n")
    text = doc(name).pages[0].text
    assert contains_line_run(text, expected)
    assert text.startswith("Wer reitet so spät"), text[:80]


def test_pdfbox_poems_cropbox_same_text(doc) -> None:
    # PDFBox's expected text is identical for both files.
    assert (page_texts(doc("pdfbox__PDFBOX-3110-poems-beads-cropbox.pdf"))
            == page_texts(doc("pdfbox__PDFBOX-3110-poems-beads.pdf")))


def _pdfbox_pages(expected: str) -> list[list[list[str]]]:
    """PDFBox ends every page with "\\r\\n"."""
    return [word_lines(page) for page in expected.split("\r\n")[:-1]]


@pytest.mark.parametrize(("name", "expected"), [
    ("pdfbox__PDFBOX-2984-rotations.pdf",
     "Apache PDFBox ®\n90° text matrix\r\nApache PDFBox ®\n90° ctm\r\nApache PDFBox ®\n180° text matrix\r\n"
     "Apache PDFBox ®\n180° ctm\r\nApache PDFBox ®\n270° text matrix\r\nApache PDFBox ®\n270° ctm\r\n"),
    ("pdfbox__rotation.pdf",
     " \n \nThis is my first page with normal layout. \nThis is the second line on the page. \n \n \n \n \r\n"
     "This is my second page.  It will have a landscape layout. \nSecond line here. \r\n"),
    ("pdfbox__Liste732004001452_001_0.pdf_0_.pdf",
     "Ich bin Marios test.\n$Anhang=/home/im/tmp/AGB.pdf$\n$Auftragsnummer=2004001452-001$\n$Mandant=1$\n"
     "$MailTo=mario@ops.co.at$\n$User=mario$\nEnde\r\n"),
    ("pdfbox__PDFBOX-3833-reduced.pdf", "ターン\r\n"),
    ("pdfbox__simple-openoffice.pdf", "I am a simple pdf.\r\n"),
])
def test_pdfbox_full_texts_as_lines_of_words(doc, name: str, expected: str) -> None:
    assert [word_lines(t) for t in page_texts(doc(name))] == _pdfbox_pages(expected)


def test_pdfbox_negative_font_size(doc) -> None:
    assert doc("pdfbox__PDFBOX-3067-negativeTf.pdf").pages[0].text == "PDFBox"


def _nfkc_letters(text: str) -> list[str]:
    return [c for c in unicodedata.normalize("NFKC", text) if not c.isspace()]


def test_pdfbox_arabic_harakat_characters(doc) -> None:
    # PDFBox expects 'بُآتَّا' (bidi-reordered, presentation forms normalised). We
    # keep the ToUnicode characters (presentation forms, SPEC has no NFKC step) and
    # this file's odd glyph order, so compare the characters under NFKC, as a multiset.
    text = doc("pdfbox__FC60_Times.pdf").pages[0].text
    assert sorted(_nfkc_letters(text)) == sorted(_nfkc_letters("بُآتَّا  \n \r\n"))


@pytest.mark.parametrize("name", ["pdfbox__PDFBOX-4531-bidi-ligature-1.pdf", "pdfbox__PDFBOX-4531-bidi-ligature-2.pdf"])
def test_pdfbox_bidi_ligatures(doc, name: str) -> None:
    # PDFBox decomposes U+FB30 and the lam-alef ligature; compare under NFKC.
    text = doc(name).pages[0].text
    assert _nfkc_letters(text) == _nfkc_letters(" אּ\n \n لا\n \n")
    assert len(word_lines(text)) == 2


# ---- §38 and §39 PyMuPDF ---------------------------------------------------------------------------------

def test_pymupdf_4363_lines(doc) -> None:
    expected = ("Deal Roadshow SiteTour\nWe know your process. We know your standard.\n"
                "Professional Site Tour Video Productions for the Capital Markets.\n1\n")
    assert word_lines(doc("pymupdf__test_4363.pdf").pages[0].text) == word_lines(expected)
