"""Highlights from the postings' positions (indexer/snippets.py): the same marks
and fragments as Whoosh's own highlighter, which analyses each page again, and no
analysis of the page text to get them."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from whoosh import highlight

from pdfindex.indexer import PageIndex, SearchOptions
from pdfindex.indexer.analysis import PageTokenizer
from pdfindex.indexer.query import bound_expansions, parse
from pdfindex.indexer.search import _MarkerFormatter
from pdfindex.indexer.snippets import PositionHighlighter
from tests.index_helpers import page, record

# Pages with what the tokenizer treats specially: trailing apostrophes and dots,
# numbers with separators, accents and ligatures folded, stems, CJK runs (with a
# wrapped line and a lone character), and a page long enough for several fragments.
PAGES = [
    "The runner's runs were running late. U.S.A. totals 1,485.1 and résumé ﬁles; Running again.",
    "检索系统\n全文检索 and 中 stands alone; 系统的检索 then run.",
    " ".join(f"filler{i} word" if i % 37 else "the running ledger's entry" for i in range(400)),
    "Café society: cafe, CAFÉ and caffè; the ledger. Runs, ran, runner.",
]
QUERIES = ["running", "ledger", "cafe", "检索", "系统", "中", '"running late"', "run*", "runner OR ledger",
           "1,485.1", "résumé", "files", "the ledger", "ledger -cafe"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PageIndex]:
    root = tmp_path_factory.mktemp("snippets") / "index"
    ix = PageIndex(root, "en")
    # The first two documents in one commit, then a commit per document: several
    # segments, so hits carry segment offsets; the first document again, so the
    # second document's segment holds a deleted page (its postings are filtered).
    docs = [(record(f"doc{n}", f"/docs/{n}.pdf", [page(1, text)]), [page(1, text)]) for n, text in enumerate(PAGES)]
    with ix.writer() as writer:
        for doc, pages in docs[:2]:
            writer.add(doc, pages)
    for doc, pages in docs[2:]:
        ix.add(doc, pages)
    ix.add(*docs[0])
    yield ix
    ix.close()


def _whoosh_and_ours(ix: PageIndex, text: str) -> Iterator[tuple[str, str]]:
    searcher = ix._searcher()
    query, _ = bound_expansions(searcher, parse(searcher, text).query, float("inf"))
    results = searcher.search(query, limit=10)
    assert len(results), text
    docnums = [hit.docnum for hit in results]

    def highlighter(cls: Any, *args: Any) -> Any:
        return cls(*args, fragmenter=highlight.ContextFragmenter(maxchars=160, surround=40),
                   formatter=_MarkerFormatter())

    theirs, ours = highlighter(highlight.Highlighter), highlighter(PositionHighlighter, docnums)
    for hit in results:
        yield (theirs.highlight_hit(hit, "text", top=2), ours.highlight_hit(hit, "text", top=2))


@pytest.mark.parametrize("text", QUERIES)
def test_marks_and_fragments_are_whooshs(index: PageIndex, text: str) -> None:
    pairs = list(_whoosh_and_ours(index, text))
    assert any("\x02" in theirs for theirs, _ in pairs), text  # the query marks something
    for theirs, ours in pairs:
        assert ours == theirs


def _analyses(ix: PageIndex, text: str, highlight_on: bool) -> int:
    """How many times the tokenizer was entered while ``ix`` searched ``text``."""
    calls = 0
    code = PageTokenizer._pieces.__code__

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call" and frame.f_code is code:
            calls += 1

    sys.setprofile(profile)
    try:
        result = ix.search(text, SearchOptions(limit=10, highlight=highlight_on))
    finally:
        sys.setprofile(None)
    assert result.hits and all(bool(h.spans) == highlight_on for h in result.hits)
    return calls


@pytest.mark.parametrize("text", ["ledger", "检索", "run*"])
def test_highlights_do_not_analyse_the_page_text(index: PageIndex, text: str) -> None:
    _analyses(index, text, True)  # the searcher opened and the query's first parse done
    assert _analyses(index, text, True) == _analyses(index, text, False)



def _whooshs_fragments(text: str, marks: dict[int, str], fragmenter: highlight.ContextFragmenter,
                       top: int) -> str:
    """The oracle: every token of ``text`` (PageTokenizer's own analysis, its
    characters and positions) through Whoosh's merging, ContextFragmenter, scorer
    and formatter, as Whoosh's Highlighter runs them."""
    hl = highlight.Highlighter(fragmenter=fragmenter, formatter=_MarkerFormatter())

    def tokens() -> Iterator[Any]:
        for token in PageTokenizer("en")(text, positions=True, chars=True, mode="index"):
            token.matched = token.pos in marks
            token.text = marks.get(token.pos, "")
            token.boost = 1.0
            yield token

    fragments = fragmenter.fragment_tokens(text, hl._merge_matched_tokens(tokens()))
    return str(hl.formatter.format(highlight.top_fragments(fragments, top, hl.scorer, hl.order)))


_WORDS = ["fox", "Fox's", "U.S.A.", "1,485.1", "ran", "a", "filler", "x" * 45, "y" * 170, "检索系统", "中",
          "全文\n检索", "abc中文", "don't", "end.", "résumé", "ﬁles", "’quoted’"]


def test_fragments_are_whooshs_on_random_pages() -> None:
    """Our fragmenter steps over unmatched stretches; Whoosh's visits every token.
    Random pages and marks (touching CJK matches, tokens longer than the context
    or the fragment, pages past the character limit or without one, small, default
    and degenerate sizes: a context longer than the fragment, one character)
    give the same snippets."""
    import random

    from pdfindex.indexer.snippets import marked, token_spans

    rng = random.Random(24)
    with_marks = 0
    for _ in range(1500):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(0, 400))]
        text = "".join(w + rng.choice([" ", "  ", "\n", ", ", ""]) for w in words)
        count = len(token_spans(text)[0])
        density = rng.choice([0.0, 0.01, 0.05, 0.1, 0.3, 0.9])
        marks = {p: rng.choice(["fox", "检索", "ran"]) for p in range(count) if rng.random() < density}
        maxchars, surround = rng.choice([(160, 40), (30, 5), (200, 60), (12, 0), (40, 40), (5, 3), (1, 1), (80, 100)])
        charlimit = rng.choice([highlight.DEFAULT_CHARLIMIT, 500, 50, 7, None])
        fragmenter = highlight.ContextFragmenter(maxchars=maxchars, surround=surround, charlimit=charlimit)
        ours = highlight.Highlighter(fragmenter=fragmenter, formatter=_MarkerFormatter())
        top = rng.choice([1, 2, 3, 10])
        expected = _whooshs_fragments(text, marks, fragmenter, top)
        assert marked(ours, text, lambda _, m=marks: m, top) == expected, (text, marks, maxchars, surround, charlimit, top)
        with_marks += "\x02" in expected
    assert with_marks > 600  # most cases compare marked snippets, not empty ones


def test_token_spans_number_tokens_as_the_index_does() -> None:
    from pdfindex.indexer.snippets import token_spans

    import random

    rng = random.Random(24)
    texts = [" ".join(_WORDS) + " tail'", "U.S.A. don't 1,485.1 end. x'", "résumé’s ﬁles, d’état."]
    for alphabet in ("aZ9_.,' \n-é’ﬁ中文", "aZ9_.,' \n-x1", "a9_.,'’ \n-éΑ²\u0663"):  # \u0663: an Arabic-Indic digit
        texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(2000)]
    for text in texts:
        spans = [(t.startchar, t.endchar) for t in PageTokenizer("en")(text, positions=True, chars=True, mode="index")]
        assert token_spans(text) == ([s for s, _ in spans], [e for _, e in spans]), repr(text)
    assert all(len(token_spans(text)[0]) >= 3 for text in texts[:3])


def test_a_huge_page_is_read_only_as_far_as_the_fragmenter_goes() -> None:
    """Whoosh's fragmenter stops at its character limit (32 KB); a page of megabytes
    must not be split into tokens whole for a snippet. The part read is a prefix
    ending past the limit, and the snippets are Whoosh's on the whole page."""
    from pdfindex.indexer.snippets import fragmented_part, marked, token_spans

    fragmenter = highlight.ContextFragmenter(maxchars=160, surround=40)
    ours = highlight.Highlighter(fragmenter=fragmenter, formatter=_MarkerFormatter())
    for unit in ("fox ran a filler word, ", "检索系统全文检索。", "x" * 45 + " ", "中\n文 "):
        text = unit * (3_000_000 // len(unit))
        part = fragmented_part(text, highlight.DEFAULT_CHARLIMIT)
        assert highlight.DEFAULT_CHARLIMIT < len(part) < highlight.DEFAULT_CHARLIMIT + 200, unit
        assert text.startswith(part)
        count = len(token_spans(part)[0])
        for marks in ({p: "fox" for p in range(0, count, 7)}, {count - 2: "fox", count - 1: "fox"}, {1: "fox"}):
            assert marked(ours, text, lambda _, m=marks: m, 3) == _whooshs_fragments(text, marks, fragmenter, 3), unit
