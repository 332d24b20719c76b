"""Keeps bench/extract_speed.py from rotting: its document generator must still
build a PDF that pipeline.extract reads back word for word. Nothing is timed."""
from __future__ import annotations

import re
from pathlib import Path

import pipeline
from bench.extract_speed import VOCABULARY, build_document

_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def test_generated_document_extracts_to_its_own_words(tmp_path: Path) -> None:
    doc = build_document(tmp_path / "bench.pdf", pages=3)
    assert doc.page_count == 3 and doc.path.stat().st_size > 0

    extracted = pipeline.extract(doc.path)

    assert extracted.page_count == 3
    assert len(extracted.pages) == 3
    for made, page in zip(doc.pages, extracted.pages, strict=True):
        assert len(made.lines) == 45
        assert set(made.words) <= set(VOCABULARY)
        assert _words(" ".join(made.lines)) == list(made.words)
        assert page.problems == []
        # header, every body word in order (capitals and punctuation aside), page number
        assert _words(page.text) == _words("\n".join(made.text_lines))
        assert page.text.rstrip().splitlines()[-1].strip() == made.footer


def test_generated_document_is_deterministic(tmp_path: Path) -> None:
    a = build_document(tmp_path / "a.pdf", pages=3)
    b = build_document(tmp_path / "b.pdf", pages=3)
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.pages == b.pages
