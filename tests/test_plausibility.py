"""R7, beyond (issues 11 and 23): quality that lies. A ToUnicode map that gives every
code a Unicode value scores full coverage whatever it says; the text's plausibility
catches the ones that lie (shifted by a constant, private-use code points, look-alike
letters of another script), on short pages too (10 to 20 words), while real short
pages (titles, tables, acronyms, addresses, code, other languages) stay unflagged.
Byte-built fonts; and the shared corpora, whose pages must not be flagged and must
stay well below every threshold."""
from __future__ import annotations

from pathlib import Path

import pytest

from pdfindex import pipeline
from pdfindex.contract.problems import ProblemCode, code_of
from pdfindex.pipeline.params import DEFAULT_PARAMS
from pdfindex.pipeline.plausibility import evidence, suspicion
from tests.builders import font_resources, mono_font, text_line
from tests.pdfwriter import PdfWriter, tounicode_cmap

SENTENCES = [
    "The quality of the text layer decides whether a page can be found by its words.",
    "Every extractor reads the same bytes, and most of them trust what the font says.",
    "When the map from codes to letters lies, the page looks fine and finds nothing.",
    "This sentence is here so that the page holds enough words for a fair judgement.",
]
#: Twenty words of a short page; a page of n words draws the first n.
SHORT = ("The quarterly report shows that our company grew steadily in every region, "
         "and the board expects further growth next year.").split()


def _pdf_page(lines: list[str], mapping: dict[int, str] | None) -> pipeline.Page:
    """``lines`` drawn with a font whose ToUnicode gives each code ``mapping``'s value
    (None: no ToUnicode, the codes read as WinAnsi, which is right here)."""
    w = PdfWriter()
    to_unicode = None if mapping is None else tounicode_cmap([(bytes([c]), t) for c, t in mapping.items()])
    font = mono_font(w, to_unicode=to_unicode)
    content = b"".join(text_line(72, 700 - 14 * i, b"(%s) Tj" % s.encode("cp1252")) for i, s in enumerate(lines))
    w.add_page(content, resources=font_resources(font))
    return pipeline.extract(w.to_bytes()).pages[0]


def _page(mapping: dict[int, str] | None) -> pipeline.Page:
    return _pdf_page(SENTENCES, mapping)


def _codes(lines: list[str] = SENTENCES) -> set[int]:
    return {b for s in lines for b in s.encode("cp1252")}


def _shifted(words: int, k: int, space: bool = True) -> pipeline.Page:
    """The first ``words`` words of SHORT, seven a line, every code mapped to code + k
    (the space too unless ``space`` is False)."""
    lines = [" ".join(SHORT[i:min(i + 7, words)]) for i in range(0, words, 7)]
    return _pdf_page(lines, {c: chr(c + k) for c in _codes(lines) if space or c != 32})


def _assert_suspect(page: pipeline.Page, words: str) -> None:
    q = page.quality
    assert q.suspect and words in q.suspect, q.suspect
    assert q.needs_ocr and q.coverage is not None and q.coverage < 0.8
    assert [code_of(p) for p in page.problems] == [ProblemCode.TEXT_SUSPECT]


def test_the_right_text_is_not_suspect() -> None:
    page = _page(None)
    assert page.text.split("\n") == SENTENCES
    assert page.quality.suspect == "" and page.quality.coverage == 1.0 and not page.quality.needs_ocr
    assert page.problems == []


def test_text_shifted_by_a_constant_is_suspect() -> None:
    page = _page({c: chr(c + 3) for c in _codes() if c != 32})  # "The" -> "Wkh"
    assert "wkh" in page.text
    _assert_suspect(page, "moved by -3 (a ToUnicode map off by +3)")
    assert "lowercase words have no vowel until moved" in page.quality.suspect
    assert page.quality.unresolved == 0  # every glyph has a Unicode value: coverage alone would say 1.0


def test_private_use_code_points_are_suspect() -> None:
    page = _page({c: chr(0xE000 + c) for c in _codes() if c != 32})
    _assert_suspect(page, "private-use")


def test_look_alike_letters_of_another_script_are_suspect() -> None:
    cyrillic = {ord("a"): "а", ord("e"): "е", ord("o"): "о", ord("p"): "р", ord("c"): "с"}
    page = _page(cyrillic)
    assert "а" in page.text
    _assert_suspect(page, "mix Latin, Greek or Cyrillic")


def test_a_page_mostly_in_another_script_is_not_judged_by_its_few_latin_words() -> None:
    """URLs on a Chinese page (www, cn, hk) have no vowels; they say nothing about it."""
    text = "东北电气发展股份有限公司报告全文" * 20 + " www cninfo com cn hkexnews hk" * 5
    assert suspicion(text, DEFAULT_PARAMS) is None
    shifted = "\n".join("".join(chr(ord(c) + 3) if c != " " else c for c in s) for s in SENTENCES)
    assert suspicion(shifted, DEFAULT_PARAMS) is not None


# ---------------------------------------------------------------- short pages (issue 23)
def test_the_issue_page_of_14_words_all_shifted_by_3_is_suspect() -> None:
    """Every code + 3, the space too: no space is left, '#' stands where they were,
    and 14 words were too few for the fixed share of vowel-less words."""
    page = _shifted(14, 3)
    assert page.text.startswith("Wkh#txduwhuo|#uhsruw#vkrzv") and " " not in page.text
    _assert_suspect(page, "moved by -3 (a ToUnicode map off by +3)")
    assert "'#' stands where" in page.quality.suspect
    assert page.quality.coverage == 0.0  # every letter is wrong


@pytest.mark.parametrize("words", [10, 14, 20])
@pytest.mark.parametrize("k", [-3, -2, -1, 1, 2, 4, 5, 7])
def test_short_pages_shifted_by_other_amounts_are_suspect(words: int, k: int) -> None:
    """A negative shift makes the space a control character (unresolved, so the page
    keeps a space there) and "a" a symbol ("`", "_", "^")."""
    page = _shifted(words, k)
    assert len(page.text.split()) <= words
    _assert_suspect(page, f"moved by {-k:+d} (a ToUnicode map off by {k:+d})")


@pytest.mark.parametrize("k", [-1, 1, 3])
def test_a_shifted_short_page_whose_spaces_are_right_is_suspect(k: int) -> None:
    page = _shifted(10, k, space=False)
    assert len(page.text.split()) == 10
    _assert_suspect(page, f"(a ToUnicode map off by {k:+d})")
    assert "stands where" not in page.quality.suspect


def test_glyph_ids_passed_off_as_unicode_are_suspect() -> None:
    """A TrueType glyph id is the code - 29 for most fonts: "the" reads "WKH", the
    space (glyph 3) a control character."""
    page = _shifted(10, -29)
    assert page.text.startswith("7KH TXDUWHUO\\ UHSRUW")
    _assert_suspect(page, "moved by +29 (a ToUnicode map off by -29)")


def test_the_evidence_of_a_shifted_space() -> None:
    """The same ten words shifted by 1, with '!' for the spaces and with spaces: the
    stand-ins are evidence of their own."""
    with_stand_ins = evidence(_shifted(10, 1).text, DEFAULT_PARAMS)["shifted letters"]
    with_spaces = evidence(_shifted(10, 1, space=False).text, DEFAULT_PARAMS)["shifted letters"]
    assert with_stand_ins > with_spaces + 1 and with_spaces > 1
    assert "'!' stands where 8 spaces would" in suspicion(_shifted(10, 1).text, DEFAULT_PARAMS).reason  # type: ignore[union-attr]


# ------------------------------------------------------------ the thresholds scale
def _level(text: str, signal: str) -> float:
    return evidence(text, DEFAULT_PARAMS)[signal]


@pytest.mark.parametrize(("voiceless", "words", "suspect"), [
    (10, 10, True), (9, 10, False), (13, 14, True), (12, 14, False), (17, 20, True), (16, 20, False),
    (50, 100, True), (44, 100, False), (330, 1000, True), (320, 1000, False)])
def test_the_share_of_words_without_vowels_needed_falls_with_the_words(voiceless: int, words: int,
                                                                        suspect: bool) -> None:
    """Vowel-less words that no shift explains: 10 words need all 10, 1,000 a third
    (real text is taken to have at most a quarter, and to exceed it by chance below
    one in a million)."""
    soup = ["bcd", "fgh", "jkl", "mnp", "qrst", "vxz", "pfft", "shh", "brr", "hmm"]
    text = " ".join([soup[i % len(soup)] for i in range(voiceless)] + ["word"] * (words - voiceless))
    assert (_level(text, "no vowels") > 1) is suspect


@pytest.mark.parametrize(("mixed", "words", "suspect"), [(10, 10, True), (8, 10, False), (45, 100, True),
                                                          (40, 100, False)])
def test_the_share_of_words_mixing_scripts_needed_falls_with_the_words(mixed: int, words: int,
                                                                        suspect: bool) -> None:
    text = " ".join(["wоrd"] * mixed + ["word"] * (words - mixed))  # a Cyrillic о
    assert (_level(text, "mixed scripts") > 1) is suspect


# ------------------------------------------------------- real short pages are not suspect
GENUINE = {
    "title": "Annual Report 2024",
    "title page": "Annual Report 2024\nPrepared for the Board of Directors\nMarch 2025",
    "numbers": "2021 2022 2023 2024\n1,234.5 2,345.6 3,456.7 4,567.8\n12.5% 13.1% 14.8% 15.2%\nTotal 10,604.6",
    "table": "Item Qty Unit Price Total\nA-100 12 pcs 4.50 54.00\nB-220 3 kg 12.00 36.00\n"
             "C-310 1 set 99.99 99.99\nVAT 19% 36.48\nTotal EUR 226.47",
    "acronyms": "NASA ESA JAXA CNES DLR ISRO CNSA ROSCOSMOS UKSA CSA ASI KARI",
    "acronyms in lower case": "nasa esa jaxa cnes dlr isro cnsa roscosmos uksa csa asi kari",
    "urls": "https://www.nasa.gov https://www.esa.int https://global.jaxa.jp\nhttp://www.dlr.de/en "
            "contact: info@example.com, press@esa.int\nwww.cnes.fr www.isro.gov.in ftp://ftp.example.org/pub/",
    "emails": "john.smith@example.com jane_doe@mail.co.uk webmaster@www.example.org support@help.desk.io",
    "tech words": "www http html css xml pdf png svg json yaml toml sql npm pnpm git ssh scp rsync",
    "german": "Übersicht der Maßnahmen für das Geschäftsjahr. Die Größe der Büros wurde verändert, "
              "und die Mitarbeiterinnen äußerten sich zufrieden.",
    "french": "Le président a présenté les résultats de l'exercice. Les élèves étaient très contents "
              "de la fête à l'école où ça s'est bien passé.",
    "chinese": "东北电气发展股份有限公司2018年第一季度报告全文 重要提示 公司董事会、监事会及董事保证季度报告内容的真实",
    "japanese": "社会流れ情報データも早いみどりと古い日本語まで方法を行いました。結果もサービスから、環境と、学校しました。",
    "c": '#include <stdio.h>\nint main(void) {\n  printf("hello\\n");\n  return 0;\n}\nx#include y#define',
    "python": "def fn(x):\n    return x**2 + sqrt(x)\nfor i in range(10): print(i, fn(i))",
    "hashtags": "#python #rust #golang #cpp #js #ts #devops #ml #ai #nlp #dataviz #opensource",
    "words joined by #": "see#section#three#for#details#and#the#annex#below",
    "tex": "\\documentclass{article}\\usepackage{amsmath}\\begin{document}\\section{Intro}\\end{document}",
    "czech": "Brno, Vltava, krk, strč prst skrz krk",
    "czech tongue twisters": "Strč prst skrz krk. Vlk zmrzl. Smrt, čtvrt, prst, krk, vlk, zmrzl, scvrkl, "
                             "mlč, smrk, plný krk.",
    "welsh": "Mae'r cwm yn llawn o goed. Crwth, cwtch, cwm, trwm, hwn, gwn, mwg, llwch, bwrdd, cwrw, dwr.",
    "welsh words": "cwm crwth cwtch trwm hwn gwn mwg llwch bwrdd cwrw twll ffrwd",
    "polish": "Zażółć gęślą jaźń. W Szczebrzeszynie chrząszcz brzmi w trzcinie i Szczebrzeszyn z tego słynie.",
    "finnish": "Kaikki ihmiset syntyvät vapaina ja tasavertaisina arvoltaan ja oikeuksiltaan.",
    "units": "5 mm 10 cm 2 km 3 kg 4 mg 7 ml 9 kWh 12 MHz 15 GHz 20 kbps 100 Mbps pH 7.4 3 nm 1 μm",
    "roman numerals": "I II III IV V VI VII VIII IX X XI XII XIII XIV XV",
    "identifiers": "get_user_by_id parse_http_response max_retry_count tcp_nodelay xml_http_request std_dev",
    "hex": "0x7fff 0xdeadbeef 0xcafebabe ff00ff 1a2b3c sha256:9f86d081884c7d659a2feaa0c55ad015",
    "chess": "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6",
    "shorthand": "pls thx brb lmk tbh imo fyi asap rsvp btw np nvm ty",
    "form": "Name: ______________ Date: ____________ Signature: __________________",
    "contents": "Table of Contents\nChapter 1 .............. 3\nChapter 2 .............. 17\nChapter 3 .............. 42",
}


@pytest.mark.parametrize("name", GENUINE)
def test_real_short_pages_are_not_suspect(name: str) -> None:
    levels = evidence(GENUINE[name], DEFAULT_PARAMS)
    assert max(levels.values()) < 0.75, levels


@pytest.mark.parametrize("name", ["title page", "table", "german", "french", "hashtags", "words joined by #"])
def test_real_short_pages_drawn_in_a_pdf_are_not_suspect(name: str) -> None:
    page = _pdf_page(GENUINE[name].split("\n"), None)
    assert page.quality.suspect == "" and page.problems == []


def test_the_trade_off_a_page_of_nothing_but_vowelless_words() -> None:
    """What the vowel signal cannot tell from garbage: a page of only Czech words whose
    r or l carries the syllable, with no háček letter to say it is Czech. With one,
    r and l count as vowels (the tongue twisters above)."""
    czech = "prst krk vlk smrt krk prst vlk smrk scvrkl prst"
    assert suspicion(czech, DEFAULT_PARAMS) is not None
    assert suspicion(czech + " čtvrt", DEFAULT_PARAMS) is None


# ------------------------------------------------------------------------- the corpora
#: No corpus page may come nearer than this to any threshold (1.0).
MARGIN = 0.5


def _corpus_levels(folder: Path) -> tuple[list[tuple[str, int, str]], dict[str, tuple[float, str]]]:
    """The flagged pages, and each signal's highest level with its page."""
    flagged: list[tuple[str, int, str]] = []
    highest: dict[str, tuple[float, str]] = {}
    for pdf in sorted(folder.glob("*.pdf")):
        try:
            doc = pipeline.extract(pdf)
        except pipeline.ExtractionError:
            continue  # encrypted or broken as a whole: no page text to judge
        for p in doc.pages:
            if p.quality.suspect:
                flagged.append((pdf.name, p.number, p.quality.suspect))
            for signal, level in evidence(p.text, DEFAULT_PARAMS).items():
                if level > highest.get(signal, (-1.0, ""))[0]:
                    highest[signal] = (level, f"{pdf.name} p{p.number}")
    return flagged, highest


def _check_corpus(folder: Path) -> None:
    flagged, highest = _corpus_levels(folder)
    assert flagged == []
    assert all(level < MARGIN for level, _ in highest.values()), highest
    print({signal: (round(level, 3), where) for signal, (level, where) in highest.items()})


def test_no_page_of_the_producers_corpus_is_suspect(producers: Path) -> None:
    _check_corpus(producers)


@pytest.mark.slow
def test_no_page_of_the_real_world_corpus_is_suspect(realworld: Path) -> None:
    _check_corpus(realworld)
