"""Issue 9 item 3: the problems extraction records on a page reach the index.

Real PDFs built with our own writer, each damaged in one way (a font that is not in
the page's resources, a content stream that does not decode, a cap hit), are
ingested by the real embedded ingest (``pdfindex ingest`` in a subprocess); then the
pages that lost something are found with ``problem:CODE``, listed with
``pdfindex list --problems`` and counted by ``pdfindex status``. Forged outcomes
carrying bad problem values are refused before they could become index records.
"""
from __future__ import annotations

import json
import pickle
import re
from pathlib import Path
from typing import Any

import pytest

from pdfindex import indexer, pipeline
from pdfindex.contract.problems import PROBLEM_CODES, Problem, ProblemCode, code_of
from pdfindex.indexer import DocumentRecord, PageIndex, PageRecord, ReindexNeeded, Status
from pdfindex.indexer.schema import fields_from_stored
from pdfindex.workers.outcome import MAX_PAGE_PROBLEMS, Outcome, _typed, extract_outcome
from tests.builders import font_resources, mono_font, text_line
from tests.index_helpers import sha
from tests.ingest_helpers import ROOT, ingest, parse_summary, run_cli, status_json, text_pdf, write
from tests.pdfwriter import Name, PdfWriter

# ---- the damaged files -------------------------------------------------------------------


def missing_font_pdf() -> bytes:
    """Page 1 draws a line with /F9, which its resources do not have; page 2 is fine."""
    w = PdfWriter()
    res = font_resources(mono_font(w))
    w.add_page(text_line(72, 700, b"(glyphless fontgone) Tj") + text_line(72, 680, b"(lost words) Tj", font=b"F9"),
               resources=res)
    w.add_page(text_line(72, 700, b"(healthy second page) Tj"), resources=res)
    return w.to_bytes()


def damaged_stream_pdf() -> bytes:
    """One page with two content streams: readable text, then a FlateDecode stream
    whose data is not zlib."""
    w = PdfWriter()
    broken = w.add_stream(b"this is not zlib data at all, just bytes", {"Filter": Name("FlateDecode")})
    w.add_page([text_line(72, 700, b"(streamwreck survives) Tj"), broken], resources=font_resources(mono_font(w)))
    return w.to_bytes()


def cap_hit_pdf() -> bytes:
    """Arrays nested deeper than Params.max_nesting (64): the inner ones are cut."""
    deep = b"[" * 80 + b"(inner)" + b"]" * 80 + b" 0 d\n"  # a dash pattern, ignored: only the cap speaks
    w = PdfWriter()
    w.add_page(text_line(72, 700, b"(deepnest kept) Tj") + deep, resources=font_resources(mono_font(w)))
    return w.to_bytes()


FILES = {"missing_font.pdf": missing_font_pdf, "damaged_stream.pdf": damaged_stream_pdf,
         "cap_hit.pdf": cap_hit_pdf}
CODES = {"missing_font.pdf": "font_missing", "damaged_stream.pdf": "stream_damaged", "cap_hit.pdf": "cap_hit"}


@pytest.mark.parametrize("name", sorted(FILES))
def test_extraction_records_each_problem_with_its_code(name: str) -> None:
    doc = pipeline.extract(FILES[name]())
    first = doc.pages[0]
    assert [code_of(p) for p in first.problems] == [CODES[name]], first.problems
    # still text for whoever printed problems as strings, and the code survives the
    # pickling between pool processes
    assert all(isinstance(p, str) for p in first.problems)
    again = pickle.loads(pickle.dumps(first))
    assert [(str(p), code_of(p)) for p in again.problems] == [(str(p), code_of(p)) for p in first.problems]
    assert all(p.problems == [] for p in doc.pages[1:])


def test_a_problem_is_its_text_and_a_plain_string_is_other() -> None:
    problem = Problem(ProblemCode.FONT_MISSING, "unknown font\nresource /F9")
    assert problem == "unknown font resource /F9" and problem.code == "font_missing"
    assert code_of("some text") == ProblemCode.OTHER
    long = Problem(ProblemCode.CAP_HIT, "x" * 5000)
    assert len(long) <= 200


def test_the_codes_of_the_cli_docs_and_pipeline_agree() -> None:
    assert tuple(str(c) for c in ProblemCode) == PROBLEM_CODES
    docs = (ROOT / "docs" / "extraction.md").read_text(encoding="utf-8")
    for code in PROBLEM_CODES:
        assert f"`{code}`" in docs, f"docs/extraction.md does not list {code}"
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", c) for c in PROBLEM_CODES)


# ---- through the real embedded ingest ----------------------------------------------------


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("problems")
    docs = base / "docs"
    docs.mkdir()
    for name, build in FILES.items():
        write(docs / name, build())
    write(docs / "clean.pdf", text_pdf("cleanfile", 2))
    index = base / "index"
    r = ingest(index, docs)
    assert parse_summary(r.stdout).indexed == 4, r.stdout
    return docs, index


def _cli_json(*args: str | Path) -> dict[str, Any]:
    r = run_cli(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", sorted(FILES))
def test_problem_search_finds_the_pages_that_lost_something(ingested: tuple[Path, Path], name: str) -> None:
    docs, index = ingested
    out = _cli_json("search", f"problem:{CODES[name]}", "--json", "--index", index)
    assert [(h["path"], h["page"]) for h in out["hits"]] == [(str(docs / name), 1)]
    (hit,) = out["hits"]
    assert [p["code"] for p in hit["problems"]] == [CODES[name]]
    assert hit["problems"][0]["message"]


def test_problem_search_combines_with_words_and_unknown_codes_find_nothing(ingested: tuple[Path, Path]) -> None:
    docs, index = ingested
    ix = PageIndex(index)
    assert [h.path for h in ix.search("fontgone problem:font_missing").hits] == [str(docs / "missing_font.pdf")]
    assert ix.search("fontgone problem:cap_hit").total == 0
    assert ix.search("problem:no_such_code").total == 0
    assert ix.search("healthy -problem:font_missing").total == 1  # page 2 of the same file has none
    out = _cli_json("search", "problem:no_such_code", "--json", "--index", index)
    assert out["total"] == 0


def test_list_problems_lists_the_pages_with_their_problems(ingested: tuple[Path, Path]) -> None:
    docs, index = ingested
    out = _cli_json("list", "--pages", "--problems", "--json", "--index", index)
    assert out["total"] == 3
    listed = {(Path(h["path"]).name, h["page"]): [p["code"] for p in h["problems"]] for h in out["hits"]}
    assert listed == {(name, 1): [code] for name, code in CODES.items()}

    one = _cli_json("list", "--pages", "--problems", "font_missing", "--json", "--index", index)
    assert [(h["path"], h["page"]) for h in one["hits"]] == [(str(docs / "missing_font.pdf"), 1)]
    assert "/F9" in one["hits"][0]["problems"][0]["message"]

    text = run_cli("list", "--pages", "--problems", "stream_damaged", "--index", index)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"{docs / 'damaged_stream.pdf'}  p.1")
    assert lines[1].startswith("    stream_damaged: content stream 2 unreadable")


def test_list_problems_of_documents_gives_their_sums(ingested: tuple[Path, Path]) -> None:
    docs, index = ingested
    out = _cli_json("list", "--problems", "--json", "--index", index)
    assert {Path(d["path"]).name: d["problems"] for d in out["documents"]} == {
        name: {code: 1} for name, code in CODES.items()}
    clean = _cli_json("list", "--path", docs / "clean.pdf", "--json", "--index", index)
    assert clean["documents"][0]["problems"] == {}
    text = run_cli("list", "--problems", "cap_hit", "--index", index)
    assert text.stdout.splitlines()[0] == f"{docs / 'cap_hit.pdf'}  indexed  1 pages  problems: cap_hit 1"


def test_list_refuses_an_unknown_problem_code(ingested: tuple[Path, Path]) -> None:
    _docs, index = ingested
    r = run_cli("list", "--problems", "font_mising", "--index", index)
    assert r.returncode == 2
    assert "'font_mising' is not a problem code" in r.stderr and "font_missing" in r.stderr


def test_status_counts_problems(ingested: tuple[Path, Path]) -> None:
    _docs, index = ingested
    report = status_json(index)
    assert report["problems"] == {code: {"pages": 1, "documents": 1} for code in sorted(CODES.values())}
    for command in ("status", "stats"):
        r = run_cli(command, "--index", index)
        assert r.returncode == 0, r.stderr
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("problems:"))
        assert "font_missing: 1 page in 1 document" in line and "cap_hit: 1 page" in line


# ---- outcomes between processes ----------------------------------------------------------


def test_real_outcomes_carry_problems_through_json(tmp_path: Path) -> None:
    path = write(tmp_path / "missing_font.pdf", missing_font_pdf())
    outcome = extract_outcome(path, sha("x"), [])
    assert [[p.code for p in page.problems] for page in outcome.pages] == [["font_missing"], []]
    assert outcome.doc.problems == {"font_missing": 1}
    assert Outcome.from_json(outcome.to_json()) == outcome


def test_a_page_with_hundreds_of_problems_stays_within_the_outcome_bound(tmp_path: Path) -> None:
    w = PdfWriter()
    stray = b"".join(b"BT /F%d 10 Tf 72 700 Td (x) Tj ET\n" % i for i in range(400))  # 400 distinct missing fonts
    w.add_page(stray, resources=font_resources(mono_font(w)))
    outcome = extract_outcome(write(tmp_path / "many.pdf", w.to_bytes()), sha("many"), [])
    (page,) = outcome.pages
    assert len(page.problems) == 200 and {p.code for p in page.problems} == {"font_missing"}  # max_page_problems
    assert outcome.doc.problems == {"font_missing": 200}
    assert Outcome.from_json(outcome.to_json()) == outcome


def test_more_problems_than_an_outcome_carries_end_with_a_count() -> None:
    """A caller's Params may keep more problems than an outcome may carry: the
    outcome keeps the first ones and says how many more."""
    typed = _typed([Problem(ProblemCode.CONTENT_SYNTAX, f"stray byte {i}") for i in range(1000)])
    assert len(typed) == MAX_PAGE_PROBLEMS
    assert typed[-1] == Problem("cap_hit", f"{1000 - MAX_PAGE_PROBLEMS + 1} more problems on this page not listed")
    assert typed[0] == Problem("content_syntax", "stray byte 0")


def _forged(pages: list[dict[str, Any]], sums: dict[str, Any] | None = None) -> str:
    doc = json.loads(Outcome(DocumentRecord(sha("f"), "/p.pdf", Status.INDEXED, page_count=len(pages)), []).to_json())
    doc["doc"]["problems"] = sums if sums is not None else {}
    doc["pages"] = pages
    return json.dumps(doc)


def _page(problems: Any) -> dict[str, Any]:
    return {"number": 1, "text": "t", "coverage": 1.0, "glyphs": 1, "unresolved": 0, "needs_ocr": False,
            "problems": problems}


GOOD = {"code": "font_missing", "message": "unknown font resource /F9"}


@pytest.mark.parametrize(("forged", "reason"), [
    (_forged([_page([{"code": "pwned", "message": "x"}])], {"pwned": 1}), "unknown problem code 'pwned'"),
    (_forged([_page([{"code": "FONT_MISSING", "message": "x"}])], {"FONT_MISSING": 1}), "unknown problem code"),
    (_forged([_page([{"code": 7, "message": "x"}])]), "unknown problem code"),
    (_forged([_page([{"code": "cap_hit", "message": "x" * 201}])], {"cap_hit": 1}), "at most 200 characters"),
    (_forged([_page([{"code": "cap_hit", "message": None}])], {"cap_hit": 1}), "at most 200 characters"),
    (_forged([_page([GOOD] * (MAX_PAGE_PROBLEMS + 1))], {"font_missing": MAX_PAGE_PROBLEMS + 1}), "at most 256"),
    (_forged([_page([{**GOOD, "evil": 1}])], {"font_missing": 1}), "fields \\['code', 'message'\\]"),
    (_forged([_page(["font_missing"])], {"font_missing": 1}), "fields \\['code', 'message'\\]"),
    (_forged([_page("font_missing")]), "field 'problems' has a str"),
    (_forged([_page([GOOD])], {"font_missing": 5}), "not the sum of its pages' problems"),
    (_forged([_page([GOOD])], {}), "not the sum"),
    (_forged([_page([])], {"cap_hit": -1}), "not the sum"),
    (_forged([_page([GOOD])], {"font_missing": True}), "not the sum"),  # True == 1 in Python, not in the index
    (_forged([_page([GOOD])], {"font_missing": 1.0}), "not the sum"),
    (json.dumps({**json.loads(_forged([_page([])])), "pages": [{k: v for k, v in _page([]).items()
                                                              if k != "problems"}]}), "not a record with the fields"),
])
def test_forged_outcomes_with_bad_problems_are_refused(forged: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        Outcome.from_json(forged)


def test_a_well_formed_outcome_with_problems_parses() -> None:
    outcome = Outcome.from_json(_forged([_page([GOOD])], {"font_missing": 1}))
    assert outcome.pages[0].problems == (Problem("font_missing", "unknown font resource /F9"),)


# ---- schema 5 and older indexes ----------------------------------------------------------


def test_reindex_of_an_older_index_keeps_working_with_problems_empty(tmp_path: Path) -> None:
    root = tmp_path / "index"
    old = DocumentRecord(sha("old"), "/old.pdf", Status.INDEXED, page_count=1)
    PageIndex(root).add(old, [PageRecord(1, "ancient words", 1.0, 10, 0, False)])
    meta = root / "current" / "pdfindex.json"
    meta.write_text(json.dumps({"schema_version": 4, "language": "en"}))
    with pytest.raises(ReindexNeeded, match="pdfindex reindex"):
        PageIndex(root)
    assert indexer.reindex(root, "en") == 2
    ix = PageIndex(root)
    assert ix.search("ancient").total == 1
    assert ix.search("ancient").hits[0].problems == []
    assert ix.search("problem:font_missing").total == 0
    assert ix.stats().problem_pages == {}
    # ingested again (here: added), the file gets its problems
    problem = Problem("font_missing", "unknown font resource /F9")
    ix.add(DocumentRecord(sha("old"), "/old.pdf", Status.INDEXED, page_count=1, problems={"font_missing": 1}),
           [PageRecord(1, "ancient words", 1.0, 10, 0, False, (problem,))])
    assert [h.problems for h in ix.search("problem:font_missing").hits] == [[problem]]
    assert ix.document(sha("old")).problems == {"font_missing": 1}  # type: ignore[union-attr]
    assert ix.stats().problem_pages == {"font_missing": 1} and ix.stats().problem_documents == {"font_missing": 1}


def test_stored_fields_of_a_schema_4_page_rebuild_without_problems() -> None:
    stored = {"kind": "page", "key": f"{sha('a')}:1", "doc_hash": sha("a"), "path": "/a.pdf", "page": 1,
              "text": "words", "coverage": 1.0, "glyphs": 5, "unresolved": 0, "needs_ocr": False}
    fields = fields_from_stored(stored)
    assert "problem" not in fields and "problems" not in fields
    record = fields_from_stored({"kind": "doc", "key": sha("a"), "doc_hash": sha("a"), "path": "/a.pdf",
                                 "status": "indexed"})
    assert "problem_counts" not in record


def test_deleted_pages_are_not_counted(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "index")
    problem = Problem("cap_hit", "arrays nested deeper than 64")
    ix.add(DocumentRecord(sha("d"), "/d.pdf", Status.INDEXED, page_count=1, problems={"cap_hit": 1}),
           [PageRecord(1, "doomed", 1.0, 5, 0, False, (problem,))])
    assert ix.stats().problem_pages == {"cap_hit": 1}
    assert ix.delete_document(sha("d"))
    assert ix.stats().problem_pages == {} and ix.stats().problem_documents == {}


@pytest.mark.parametrize("name", sorted(FILES))
def test_extract_json_gives_each_problem_its_code_as_search_does(ingested: tuple[Path, Path], name: str) -> None:
    docs, index = ingested
    extracted = _cli_json("extract", "--json", docs / name)["pages"][0]["problems"]
    searched = _cli_json("search", f"problem:{CODES[name]}", "--json", "--index", index)["hits"][0]["problems"]
    assert [p["code"] for p in extracted] == [CODES[name]]
    assert extracted == searched
