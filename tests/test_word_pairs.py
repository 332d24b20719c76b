"""The common-word pair field (indexer/textfields.py) answers phrases exactly as
positional matching does: on generated text full of stop words and line breaks,
every phrase finds the pages whose analysed terms hold it contiguously (the oracle
here is the tokenizer's term list, not the index), whether the phrase is one pair
term, holds pairs beside other words, or holds none; highlights mark the phrase's
words as before, and the top N of a pair phrase with block skipping is the top N
of all its matches."""
from __future__ import annotations

import random

import pytest

from pdfindex.indexer import PageIndex, SearchOptions
from pdfindex.indexer.analysis import PageTokenizer
from pdfindex.indexer.phrase import AdjacentPhrase
from tests.index_helpers import page, record

_COMMON = ["the", "of", "and", "to", "in", "a", "is", "it", "was", "for", "on", "with", "as", "at"]
_OTHER = ["river", "stone", "market", "winter", "signal", "harbour", "copper", "lantern"]
_TOKENIZER = PageTokenizer("en")


def _text(rng: random.Random) -> str:
    words = [rng.choice(_COMMON if rng.random() < 0.6 else _OTHER) for _ in range(rng.randint(5, 120))]
    lines = [" ".join(words[i:i + 9]) for i in range(0, len(words), 9)]
    return "\n".join(lines).capitalize() + "."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[PageIndex, dict[str, list[str]]]:
    rng = random.Random(20261201)
    ix = PageIndex(tmp_path_factory.mktemp("pairs") / "ix", "en")
    terms: dict[str, list[str]] = {}
    for batch in range(3):  # three segments
        with ix.writer() as w:
            for n in range(120):
                pages = [page(p, _text(rng)) for p in (1, 2)]
                doc = record(f"pairs-{batch}-{n}", f"/p/{batch}/{n}.pdf", pages)
                w.add(doc, pages)
                for pg in pages:
                    terms[f"{doc.doc_hash}:{pg.number}"] = _TOKENIZER.terms(pg.text)
    return ix, terms


def _holds(terms: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(terms[i:i + n] == phrase for i in range(len(terms) - n + 1))


def _phrases() -> list[list[str]]:
    rng = random.Random(3)
    out = [["of", "the"], ["the", "of"], ["in", "a"], ["a", "a"], ["the", "river"], ["river", "of", "the"],
           ["of", "the", "stone"], ["to", "the", "market", "of", "a"], ["it", "was", "the"]]
    pool = _COMMON + _OTHER
    out += [[rng.choice(pool) for _ in range(rng.choice((2, 2, 3, 4)))] for _ in range(30)]
    return out


def _keys(ix: PageIndex, query: str) -> set[str]:
    result = ix.search(query, SearchOptions(limit=10_000, highlight=False, exact_count=True))
    keys = {f"{h.doc_hash}:{h.page}" for h in result.hits}
    assert result.total == len(keys)
    top = ix.search(query, SearchOptions(limit=3, highlight=False, exact_count=True))  # skipping, then counting
    assert top.total == len(keys)
    return keys


@pytest.mark.parametrize("words", _phrases(), ids=" ".join)
def test_pages_found_are_the_pages_holding_the_phrase(corpus: tuple[PageIndex, dict[str, list[str]]],
                                                      words: list[str]) -> None:
    ix, terms = corpus
    expected = {key for key, page_terms in terms.items() if _holds(page_terms, [_TOKENIZER.terms(w)[0] for w in words])}
    assert _keys(ix, f'"{" ".join(words)}"') == expected


def test_the_oracle_sees_phrases_across_line_breaks(corpus: tuple[PageIndex, dict[str, list[str]]]) -> None:
    """Line breaks do not separate words: a pair straddling one is a pair (checked
    on a page whose text has one there), as positions have always had it."""
    ix, _ = corpus
    pages = [page(1, "nothing here at all\nthe end")]
    ix.add(record("straddle", "/p/straddle.pdf", pages), pages)
    assert any(h.path == "/p/straddle.pdf" for h in ix.search('"all the"', SearchOptions(limit=1000)).hits)


def test_a_pair_phrase_is_one_term_and_a_longer_one_uses_its_pairs(
        corpus: tuple[PageIndex, dict[str, list[str]]]) -> None:
    ix, _ = corpus
    schema = ix._searcher().schema
    assert AdjacentPhrase("text", ["of", "the"]).pair_term(schema) == "of the"
    assert AdjacentPhrase("text", ["the", "river"]).pair_term(schema) is None  # river is not common
    assert AdjacentPhrase("text", ["of", "the", "a"]).pair_term(schema) is None  # three words: verified
    assert AdjacentPhrase("text", ["of", "the"], slop=2).pair_term(schema) is None


def test_top_ten_of_a_pair_phrase_is_the_top_ten_of_all_matches(
        corpus: tuple[PageIndex, dict[str, list[str]]]) -> None:
    ix, _ = corpus
    every = ix.search('"of the"', SearchOptions(limit=10_000, highlight=False))
    top = ix.search('"of the"', SearchOptions(limit=10, highlight=False))
    assert every.total > 50
    assert [round(h.score, 9) for h in top.hits] == [round(h.score, 9) for h in every.hits[:10]]
    assert top.total == every.total


def test_highlights_mark_the_phrase_words(corpus: tuple[PageIndex, dict[str, list[str]]]) -> None:
    ix, _ = corpus
    result = ix.search('"of the"', SearchOptions(limit=5, highlight=True))
    assert result.hits
    for hit in result.hits:
        marked = {hit.snippet[s.start:s.end].lower() for s in hit.spans}
        assert marked and marked <= {"of", "the"}
