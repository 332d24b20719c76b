"""The JSON API of ``pdfindex serve`` over real HTTP (issue 10, item 4, API part).

One real server (a subprocess, tests/serve_helpers.py) over one index built by the
real embedded ingest of generated PDFs, shared by the module; servers with a token
and an index being written get their own. Every answer is compared with what the
CLI prints for the same question (``pdfindex search|list|status --json``, run as
processes), and every input is tried at its worst: bad parameters, malformed
hashes, ``..`` in every path segment, hostile titles and file names, forged
cookies, foreign Host headers, oversized forms.

The page-image endpoint (``/api/documents/{hash}/pages/{n}.png``) has tests of its
own and is left out here.
"""
from __future__ import annotations

import asyncio
import html
import io
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from PIL import Image

from pdfindex.cli.serve_cmd import _listen
from pdfindex.indexer import PageIndex, QueryError
from pdfindex.server.access import session_value
from tests.builders import font_resources, mono_font, text_line
from tests.ingest_helpers import (
    ROOT,
    cli_argv,
    cli_env,
    corrupt_pdf,
    encrypted_pdf,
    image_only_pdf,
    ingest,
    kill_group,
    page_word,
    run_cli,
    text_pdf,
    text_then_scan_pdf,
    write,
)
from tests.pdfwriter import PdfWriter
from tests.serve_helpers import Server, free_port, raw_request, serving, start_server

TOKEN = "correct-horse-battery"
ENV_TOKEN = "env-token-0123456789"
#: In the environment of the --token server: --token must win over it.
LOSING_ENV_TOKEN = "loses-to-the-option"
SECRET = "TOP-SECRET-5a0c2e1f-never-served"
HOSTILE_NAME = b"<img src=x onerror=alert(1)>\x1b[31m\xff.pdf"
NEWLINE_NAME = "line\nbreak\u202eevil.pdf"
SCRIPT_TITLE = "<script>alert(1)</script>"
ESC_AUTHOR = "\x1b[31mred \u202eauthor"
API_ROUTES = ("/api/search", "/api/documents", "/api/documents/{doc_hash}", "/api/documents/{doc_hash}/pdf",
              "/api/status", "/healthz")


# ---- the corpus and the index -----------------------------------------------------------------

def dated_pdf(tag: str, pages: int, created: str | None = None, title: str | None = None,
              author: str | None = None) -> bytes:
    """``text_pdf`` with an Info dictionary: title, author (UTF-16, so control
    characters survive), creation date (``D:YYYYMMDD``)."""
    w = PdfWriter()
    info: dict[str, Any] = {}
    if title is not None:
        info["Title"] = title.encode("latin-1")
    if author is not None:
        info["Author"] = b"\xfe\xff" + author.encode("utf-16-be")
    if created is not None:
        info["CreationDate"] = f"D:{created}120000Z".encode()
    if info:
        w.set_info(info)
    return text_pdf(tag, pages, writer=w)


def problem_pdf(tag: str) -> bytes:
    """Page 1 draws text in a font the page does not have (font_missing), then a
    line in its own font with ``page_word(tag, 1)``."""
    w = PdfWriter()
    res = font_resources(mono_font(w))
    w.add_page(text_line(72, 720, b"(ghost text) Tj", font=b"F9")
               + text_line(72, 700, b"(%s visible) Tj" % page_word(tag, 1).encode()), resources=res)
    return w.to_bytes()


def markup_pdf(tag: str) -> bytes:
    """A page whose text is markup: the snippet must be shown as text."""
    w = PdfWriter()
    w.set_info({"Title": SCRIPT_TITLE.encode(), "Author": b"\xfe\xff" + ESC_AUTHOR.encode("utf-16-be")})
    res = font_resources(mono_font(w))
    w.add_page(text_line(72, 700, b"(<b>bold</b> <script>x</script> %s) Tj" % page_word(tag, 1).encode()),
               resources=res)
    return w.to_bytes()


@dataclass
class Corpus:
    root: Path
    index: Path
    docs: Path
    secret: Path
    other: Path
    #: file name (relative to docs, as str) -> its path
    files: dict[str, Path] = field(default_factory=dict)
    #: file name -> content hash, from `pdfindex list --json`
    hashes: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("serve")
    docs = root / "docs"
    secret = root / "secret.txt"  # next to the index: nothing may ever serve it
    secret.write_text(SECRET + "\n")
    other = root / "other.pdf"  # a readable file outside the indexed ones
    other.write_bytes(b"%PDF-1.4\n% " + SECRET.encode() + b"\n" + text_pdf("other", 1))
    c = Corpus(root, root / "index", docs, secret, other)

    def put(name: str, data: bytes) -> None:
        c.files[name] = write(docs / name, data)

    put("alpha report.pdf", dated_pdf("alpha", 3, "20190310", title="Alpha annual report", author="Ann Author"))
    put("bravo.pdf", dated_pdf("bravo", 12, "20210601", title="Bravo book"))
    put("sub/charlie.pdf", dated_pdf("charlie", 2, "20230202"))
    put("sub/deep/delta.pdf", text_pdf("delta", 1))
    put("letter-with-scan.pdf", text_then_scan_pdf("echo"))
    put("scan-only.pdf", image_only_pdf())
    put("broken.pdf", corrupt_pdf())
    put("locked.pdf", encrypted_pdf("foxtrot", 1))
    put("problem.pdf", problem_pdf("golf"))
    put(os.fsdecode(HOSTILE_NAME), markup_pdf("xss"))
    put(NEWLINE_NAME, text_pdf("newline", 1))
    for name in ("changed", "deleted", "swapped", "devzero", "fifo", "dir"):
        put(f"served/{name}.pdf", text_pdf(f"served{name}", 1))
    same = text_pdf("twin", 1)
    put("served/copy-a.pdf", same)
    put("served/copy-b.pdf", same)
    ingest(c.index, docs, "--recursive")
    listing = cli_json("list", "--json", "--index", c.index)
    by_path = {p: d["doc_hash"] for d in listing["documents"] for p in d["paths"]}
    c.hashes = {name: by_path[str(path)] for name, path in c.files.items()}
    return c


def cli_json(*args: str | Path) -> dict[str, Any]:
    r = run_cli(*args)
    assert r.returncode == 0, f"{args}: {r.returncode}\n{r.stderr}"
    out: dict[str, Any] = json.loads(r.stdout)
    return out


@pytest.fixture(scope="module")
def server(corpus: Corpus) -> Iterator[Server]:
    with serving(corpus.index, log_dir=corpus.root) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


@pytest.fixture(scope="module")
def token_server(corpus: Corpus) -> Iterator[Server]:
    """``--token TOKEN``, with another token in PDFINDEX_API_TOKEN (the option wins)."""
    with serving(corpus.index, token=TOKEN, env=cli_env(PDFINDEX_API_TOKEN=LOSING_ENV_TOKEN),
                 log_dir=corpus.root) as s:
        yield s


def without_took(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != "took"}


def answer_json(r: httpx.Response) -> dict[str, Any]:
    """The body as strict JSON from strict UTF-8 (no NaN, no invalid bytes)."""
    assert r.headers["content-type"].startswith("application/json"), r.headers
    def no_constants(name: str) -> Any:
        raise AssertionError(f"non-standard JSON constant {name}")
    out: dict[str, Any] = json.loads(r.content.decode("utf-8"), parse_constant=no_constants)
    return out


def assert_error(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text[:300])
    message = answer_json(r)["error"]
    assert isinstance(message, str)
    assert message.strip()
    assert "Traceback" not in message
    return message


# ---- /api/search ------------------------------------------------------------------------------

def cli_search_args(params: dict[str, str]) -> list[str]:
    """The `pdfindex search` options asking what ``params`` ask the API."""
    args: list[str] = []
    for key, value in params.items():
        if key == "q":
            continue
        if key == "needs_ocr":
            args.append("--needs-ocr" if value == "true" else "--has-text")
        elif key in ("by_document", "exact_count"):
            assert value == "true"
            args.append("--" + key.replace("_", "-"))
        else:
            args += ["--" + key.replace("_", "-"), value]
    return [*args, "--", params.get("q", "")]


def search_cases(docs: Path) -> list[dict[str, str]]:
    return [
        {"q": "filler"},
        {"q": "alphazq2w"},
        {"q": "filler", "limit": "5"},
        {"q": "filler", "limit": "5", "offset": "5"},
        {"q": "filler", "limit": "7", "offset": "1000"},
        {"q": "filler", "limit": "1000", "offset": "1000000"},
        {"q": '"quarterly report" OR alphazq1w', "limit": "20"},
        {"q": "title:(bravo OR alpha) -alphazq3w", "limit": "20"},
        {"q": "filler", "by_document": "true", "limit": "3"},
        {"q": "filler", "by_document": "true", "limit": "3", "offset": "3"},
        {"q": "filler", "min_coverage": "0.99", "limit": "50"},
        {"q": "echozq1w OR filename:scan", "needs_ocr": "true"},
        {"q": "filename:letter", "needs_ocr": "false"},
        {"q": "filler", "path": str(docs / "sub"), "limit": "50"},
        {"q": "filler", "path": str(docs / "sub") + "/*/*.pdf"},
        {"q": "filler", "since": "2020", "until": "2022-12-31", "limit": "50"},
        {"q": "filler", "since": "2023-02-02", "sort": "date", "limit": "50"},
        {"q": "filler", "sort": "date", "limit": "50"},
        {"q": "filler", "sort": "path", "limit": "50", "by_document": "true"},
        {"q": "report", "exact_count": "true"},
        {"q": "alphazq1w~1", "limit": "20"},
        {"q": "bravozq10w", "since": "2021-06-01", "until": "2021-06-01"},
        {"q": "nosuchwordanywhere"},
        {"q": "", "needs_ocr": "true"},  # no words: a listing of what the filters let through
        {"q": "*", "min_coverage": "0", "limit": "5", "offset": "2"},
        {"q": "", "path": str(docs / "sub"), "sort": "path"},
        {"q": "problem:font_missing"},
    ]


def test_search_equals_cli(corpus: Corpus, client: httpx.Client) -> None:
    seen_hits = 0
    for params in search_cases(corpus.docs):
        r = client.get("/api/search", params=params)
        assert r.status_code == 200, (params, r.text)
        api = answer_json(r)
        cli = cli_json("search", "--json", "--index", corpus.index, *cli_search_args(params))
        assert without_took(api) == without_took(cli), params
        assert isinstance(api["took"], float)
        seen_hits += len(api["hits"])
    assert seen_hits > 50  # the cases are not all empty


def test_search_finds_what_it_should(corpus: Corpus, client: httpx.Client) -> None:
    """The comparison with the CLI is only as good as the CLI: pin a few answers."""
    one = answer_json(client.get("/api/search", params={"q": "alphazq2w"}))
    assert [(h["path"], h["page"]) for h in one["hits"]] == [(str(corpus.files["alpha report.pdf"]), 2)]
    hit = one["hits"][0]
    assert hit["title"] == "Alpha annual report" and hit["author"] == "Ann Author"
    assert hit["doc_hash"] == corpus.hashes["alpha report.pdf"]
    assert hit["snippet"][slice(*hit["highlights"][0])].lower() == "alphazq2w"
    grouped = answer_json(client.get("/api/search", params={"q": "bravozq3w OR bravozq4w OR alphazq1w",
                                                                   "by_document": "true"}))
    assert {d["doc_hash"]: sorted(d["pages"]) for d in grouped["documents"]} == {
        corpus.hashes["bravo.pdf"]: [3, 4], corpus.hashes["alpha report.pdf"]: [1]}
    assert len(grouped["hits"]) == 3
    ocr = answer_json(client.get("/api/search", params={"q": "echozq1w OR filename:scan", "needs_ocr": "true"}))
    assert {(h["doc_hash"], h["page"]) for h in ocr["hits"]} == {
        (corpus.hashes["letter-with-scan.pdf"], 2), (corpus.hashes["scan-only.pdf"], 1)}
    assert all(h["needs_ocr"] for h in ocr["hits"])
    dated = answer_json(client.get("/api/search", params={"q": "filler", "since": "2021", "until": "2021",
                                                                 "limit": "50"}))
    assert {h["doc_hash"] for h in dated["hits"]} == {corpus.hashes["bravo.pdf"]}
    under = answer_json(client.get("/api/search", params={"q": "filler", "path": str(corpus.docs / "sub"),
                                                                 "limit": "50"}))
    assert {h["doc_hash"] for h in under["hits"]} == {corpus.hashes["sub/charlie.pdf"],
                                                       corpus.hashes["sub/deep/delta.pdf"]}


def test_hits_sorted_by_date_or_path_have_no_score(client: httpx.Client) -> None:
    """Issue 20: sorted by date, the API answered Whoosh's sort key as the score
    (-9.2e18); hits ordered by date or path are not scored: null, as in the CLI."""
    for sort in ("date", "path"):
        for grouped in ("false", "true"):
            out = answer_json(client.get("/api/search", params={"q": "filler", "sort": sort, "limit": "5",
                                                                "by_document": grouped}))
            assert out["hits"] and all(h["score"] is None for h in out["hits"]), (sort, grouped)
            assert all(d["score"] is None for d in out["documents"])
    scored = answer_json(client.get("/api/search", params={"q": "filler", "limit": "5"}))
    assert all(isinstance(h["score"], float) and h["score"] > 0 for h in scored["hits"])


def test_a_title_word_is_one_hit_for_its_document(corpus: Corpus, client: httpx.Client) -> None:
    """Issue 20: a word only in a document's title matched each of its 12 pages."""
    bravo = corpus.hashes["bravo.pdf"]
    for grouped in ("false", "true"):
        out = answer_json(client.get("/api/search", params={"q": "title:bravo", "by_document": grouped}))
        assert [(h["doc_hash"], h["page"]) for h in out["hits"]] == [(bravo, 1)] and out["total"] == 1, out
    out = answer_json(client.get("/api/search", params={"q": "book OR bravozq5w", "limit": "50"}))
    assert sorted(h["page"] for h in out["hits"] if h["doc_hash"] == bravo) == [1, 5]  # the title, page 5's text


def test_search_pages_follow_each_other(client: httpx.Client) -> None:
    """Pages of 4 put together are the first 20 hits, none twice; the total stays."""
    whole = answer_json(client.get("/api/search", params={"q": "filler", "limit": "20"}))
    assert whole["total"] > 20
    paged: list[Any] = []
    for offset in range(0, 20, 4):
        part = answer_json(client.get("/api/search", params={"q": "filler", "limit": "4", "offset": str(offset)}))
        assert part["total"] == whole["total"]
        assert len(part["hits"]) == 4
        paged += part["hits"]
    assert paged == whole["hits"]
    assert len({(h["doc_hash"], h["page"]) for h in paged}) == 20
    beyond = answer_json(client.get("/api/search", params={"q": "filler", "offset": str(whole["total"])}))
    assert beyond["hits"] == [] and beyond["total"] == whole["total"]


@pytest.mark.parametrize("query", ['"unclosed', "(", "title:", "nofield:x", "word AND", "a OR OR b", ")",
                                   "[a TO", "x" * 1001, "w " * 70, "-", "\x00", "%"])
def test_malformed_query_is_400_with_the_query_error(corpus: Corpus, client: httpx.Client, query: str) -> None:
    with pytest.raises(QueryError) as refused:  # the message the query parser gives, in this process
        PageIndex(corpus.index, None, create=False).search(query)
    expected = str(refused.value)
    message = assert_error(client.get("/api/search", params={"q": query}), 400)
    assert message == expected
    page = client.get("/", params={"q": query})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")


BAD_SEARCH_PARAMS: list[tuple[str, str]] = [
    ("limit=0", "limit"), ("limit=abc", "limit"), ("limit=-1", "limit"), ("limit=1.5", "limit"),
    ("limit=1001", "limit"), ("limit=99999999999999999999999", "limit"), ("offset=-1", "offset"),
    ("offset=1000001", "offset"), ("offset=99999999999999999999", "offset"), ("offset=", "offset"),
    ("sort=bogus", "sort"), ("sort=", "sort"), ("min_coverage=2", "min_coverage"),
    ("min_coverage=-0.1", "min_coverage"), ("min_coverage=nan", "min_coverage"), ("min_coverage=inf", "min_coverage"),
    ("min_coverage=abc", "min_coverage"), ("needs_ocr=maybe", "needs_ocr"), ("by_document=2", "by_document"),
    ("exact_count=x", "exact_count"), ("since=junk", "since"), ("until=junk", "until"), ("since=2024-13", "since"),
    ("since=0000", "since"), ("since=2024-02-30", "since"), ("since=" + "9" * 41, "since"),
    ("since=2024-01-01T00:00:00%2B99:00", "since"), ("since=2024&until=2023", "since"),
    ("since=2024-03-02&until=2024-03-01", "since"), ("q=" + "a" * 5000, "q"), ("path=%00", "NUL"),
    ("path=" + quote(str(Path("/docs") / "a\x00b")), "NUL"), ("path=" + "a" * 4097, "path"),
]


@pytest.mark.parametrize(("query", "named"), BAD_SEARCH_PARAMS, ids=[q[:40] for q, _ in BAD_SEARCH_PARAMS])
def test_bad_search_parameters_are_400(client: httpx.Client, query: str, named: str) -> None:
    message = assert_error(client.get("/api/search?q=filler&" + query if not query.startswith("q=")
                                      else "/api/search?" + query), 400)
    assert named in message, message


def test_worst_glob_and_query_answer_quickly(client: httpx.Client) -> None:
    """A path glob and a query built to make pattern matching backtrack."""
    for params in ({"q": "filler", "path": "*a" * 2000 + "b"}, {"q": "a*" * 300 + "b"},
                   {"q": "filler", "path": "[" * 4000}, {"q": "filler", "path": "**/" * 1300}):
        started = time.monotonic()
        r = client.get("/api/search", params=params)
        assert r.status_code in (200, 400), r.text[:200]
        assert time.monotonic() - started < 5, params


# ---- /api/documents -----------------------------------------------------------------------------

def list_cases(docs: Path) -> list[tuple[dict[str, str], list[str]]]:
    """(API parameters, `pdfindex list` options) asking the same."""
    return [
        ({"limit": "1000"}, []),
        ({"limit": "3"}, ["--limit", "3"]),
        ({"limit": "3", "offset": "3"}, ["--limit", "3", "--offset", "3"]),
        ({"limit": "5", "offset": "1000"}, ["--limit", "5", "--offset", "1000"]),
        ({"status": "failed"}, ["--status", "failed"]),
        ({"status": "encrypted"}, ["--status", "encrypted"]),
        ({"status": "empty"}, ["--status", "empty"]),
        ({"status": "indexed", "needs_ocr": "true"}, ["--status", "indexed", "--needs-ocr"]),
        ({"needs_ocr": "false", "limit": "1000"}, ["--has-text"]),
        ({"min_coverage": "0.99", "limit": "1000"}, ["--min-coverage", "0.99"]),
        ({"path": str(docs / "sub")}, ["--path", str(docs / "sub")]),
        ({"path": str(docs / "served") + "/copy-?.pdf"}, ["--path", str(docs / "served") + "/copy-?.pdf"]),
        ({"since": "2020", "until": "2022"}, ["--since", "2020", "--until", "2022"]),
        ({"problem": ""}, ["--problems"]),
        ({"problem": "font_missing"}, ["--problems", "font_missing"]),
        ({"problem": "FONT_MISSING"}, ["--problems", "FONT_MISSING"]),
    ]


def test_documents_equal_cli_list(corpus: Corpus, client: httpx.Client) -> None:
    nonempty = 0
    for params, options in list_cases(corpus.docs):
        r = client.get("/api/documents", params=params)
        assert r.status_code == 200, (params, r.text)
        api = answer_json(r)
        cli = cli_json("list", "--json", "--index", corpus.index, *options)
        assert without_took(api) == without_took(cli), params
        nonempty += bool(api["documents"])
    assert nonempty >= 12
    every = answer_json(client.get("/api/documents", params={"limit": "1000"}))
    assert every["total"] == len(every["documents"]) == len(set(corpus.hashes.values()))
    assert answer_json(client.get("/api/documents"))["total"] == every["total"]  # the default limit pages, counts all
    statuses = {d["doc_hash"]: d["status"] for d in every["documents"]}
    assert statuses[corpus.hashes["broken.pdf"]] == "failed"
    assert statuses[corpus.hashes["locked.pdf"]] == "encrypted"
    assert statuses[corpus.hashes["scan-only.pdf"]] == "empty"
    problems = answer_json(client.get("/api/documents", params={"problem": "font_missing"}))
    assert [d["doc_hash"] for d in problems["documents"]] == [corpus.hashes["problem.pdf"]]


def test_documents_pages_follow_each_other(client: httpx.Client) -> None:
    whole = answer_json(client.get("/api/documents", params={"limit": "1000"}))["documents"]
    paged = []
    for offset in range(0, len(whole), 4):
        paged += answer_json(client.get("/api/documents", params={"limit": "4", "offset": str(offset)}))["documents"]
    assert paged == whole


@pytest.mark.parametrize("query", ["status=bogus", "status=", "limit=0", "limit=1001", "offset=-1", "since=x",
                                   "until=2024-00", "since=2024&until=2023", "min_coverage=1.5", "needs_ocr=2",
                                   "path=%00", "problem=" + "x" * 65, "problem=bogus", "problem=font missing"])
def test_bad_documents_parameters_are_400(client: httpx.Client, query: str) -> None:
    """As `pdfindex list` refuses them (an unknown problem code would list nothing
    without a word)."""
    assert_error(client.get("/api/documents?" + query), 400)


def test_cli_refuses_unknown_problem_code_too(corpus: Corpus) -> None:
    r = run_cli("list", "--json", "--problems", "bogus", "--index", corpus.index)
    assert r.returncode == 2 and "bogus" in r.stderr


def test_document_record_and_pages(corpus: Corpus, client: httpx.Client) -> None:
    listing = {d["doc_hash"]: d for d in cli_json("list", "--json", "--index", corpus.index)["documents"]}
    pages: dict[str, list[dict[str, Any]]] = {}
    for h in cli_json("list", "--pages", "--json", "--index", corpus.index)["hits"]:
        pages.setdefault(h["doc_hash"], []).append(
            {"page": h["page"], "coverage": h["coverage"], "needs_ocr": h["needs_ocr"], "problems": h["problems"]})
    for doc_hash, record in listing.items():
        r = client.get(f"/api/documents/{doc_hash}")
        assert r.status_code == 200, r.text
        out = answer_json(r)
        got_pages = out.pop("pages")
        assert out == record
        assert got_pages == sorted(pages.get(doc_hash, []), key=lambda p: p["page"])
        if record["status"] in ("indexed", "empty"):
            assert [p["page"] for p in got_pages] == list(range(1, record["page_count"] + 1))
    letter = answer_json(client.get(f"/api/documents/{corpus.hashes['letter-with-scan.pdf']}"))
    assert [(p["page"], p["needs_ocr"]) for p in letter["pages"]] == [(1, False), (2, True)]
    assert letter["pages"][0]["coverage"] == 1.0 and letter["pages"][0]["problems"] == []
    problem = answer_json(client.get(f"/api/documents/{corpus.hashes['problem.pdf']}"))
    assert [p["code"] for p in problem["pages"][0]["problems"]] == ["font_missing"]
    assert problem["pages"][0]["problems"][0]["message"]
    broken = answer_json(client.get(f"/api/documents/{corpus.hashes['broken.pdf']}"))
    assert broken["status"] == "failed" and broken["error"] and broken["pages"] == []
    twins = answer_json(client.get(f"/api/documents/{corpus.hashes['served/copy-a.pdf']}"))
    assert sorted(twins["paths"]) == sorted(str(corpus.files[n]) for n in ("served/copy-a.pdf", "served/copy-b.pdf"))


def test_unknown_hash_is_404(client: httpx.Client) -> None:
    for suffix in ("", "/pdf"):
        for unknown in ("0" * 64, "f" * 64):
            assert_error(client.get(f"/api/documents/{unknown}{suffix}"), 404)


MALFORMED_HASHES = ["abc", "A" * 64, "0" * 63, "0" * 65, "..", "%2e%2e", "%00", "0" * 63 + "%00", "0" * 64 + "%0a",
                    "0" * 64 + "%20", "%d9%a0" * 64, "0" * 64 + ".pdf", "x" * 10_000, "%ff" * 64, "-1", "%25"]


@pytest.mark.parametrize("bad", MALFORMED_HASHES, ids=[b[:20] for b in MALFORMED_HASHES])
def test_malformed_hash_is_400_or_404(server: Server, bad: str) -> None:
    for suffix in ("", "/pdf"):
        r = raw_request(server, f"/api/documents/{bad}{suffix}")
        assert r.status in (400, 404), (bad, suffix, r.status, r.body[:200])
        assert json.loads(r.body)["error"]


# ---- /api/documents/{hash}/pdf ------------------------------------------------------------------

def test_pdf_is_the_exact_file(corpus: Corpus, client: httpx.Client) -> None:
    for name in ("alpha report.pdf", "bravo.pdf", "letter-with-scan.pdf", os.fsdecode(HOSTILE_NAME), NEWLINE_NAME):
        r = client.get(f"/api/documents/{corpus.hashes[name]}/pdf")
        assert r.status_code == 200, (name, r.text[:200])
        assert r.headers["content-type"] == "application/pdf"
        assert r.content == corpus.files[name].read_bytes(), name
        assert int(r.headers["content-length"]) == len(r.content)
        disposition = r.headers["content-disposition"]
        assert disposition.startswith("inline; filename*=UTF-8''")
        assert not set(disposition) & set("\r\n\x1b\"<>"), disposition


def test_pdf_of_a_document_without_text(corpus: Corpus, client: httpx.Client) -> None:
    """A scan without a text layer is in the index (its page is listed as needing
    OCR, the search page links to it): its PDF is served like any other."""
    r = client.get(f"/api/documents/{corpus.hashes['scan-only.pdf']}/pdf")
    assert r.status_code == 200, r.text
    assert r.content == corpus.files["scan-only.pdf"].read_bytes()


def test_every_pdf_link_of_a_needs_ocr_search_opens(corpus: Corpus, client: httpx.Client) -> None:
    result = answer_json(client.get("/api/search", params={"q": "echozq1w OR filename:scan", "needs_ocr": "true"}))
    assert len(result["hits"]) == 2
    for hit in result["hits"]:
        assert client.get(f"/api/documents/{hit['doc_hash']}/pdf").status_code == 200, hit["path"]


def test_pdf_of_a_failed_document_is_refused(corpus: Corpus, client: httpx.Client) -> None:
    for name in ("broken.pdf", "locked.pdf"):
        message = assert_error(client.get(f"/api/documents/{corpus.hashes[name]}/pdf"), 409)
        assert "not indexed" in message


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


def test_pdf_changed_since_indexing_is_409(corpus: Corpus, client: httpx.Client) -> None:
    path = corpus.files["served/changed.pdf"]
    with path.open("ab") as fh:
        fh.write(b"\n% appended after the ingest\n")
    doc = corpus.hashes["served/changed.pdf"]
    mend = f"pdfindex ingest --index {corpus.index} {path}"  # the server's index is not the default one
    for target in (f"/api/documents/{doc}/pdf", f"/api/documents/{doc}/pages/1.png"):
        for accept in ({}, {"Accept": "application/json"}, {"Accept": "*/*"}):
            message = assert_error(client.get(target, headers=accept), 409)
            assert "changed since it was indexed" in message and str(path) in message, (target, message)
            assert mend in message and "remove" not in message, (target, message)
        page = unavailable_page(client.get(target, headers={"Accept": BROWSER_ACCEPT}), 409)
        assert "has changed since it was indexed" in page and mend in page and "remove" not in page, page


def test_pdf_deleted_is_404(corpus: Corpus, client: httpx.Client) -> None:
    """A file deleted (or moved) since: the index can only forget it, which is
    `pdfindex remove PATH` (ingest --prune of a folder left empty refuses: it looks
    like an unmounted share), not "ingest it again"."""
    path = corpus.files["served/deleted.pdf"]
    path.unlink()
    doc = corpus.hashes["served/deleted.pdf"]
    mend = f"pdfindex remove --index {corpus.index} {path}"
    for target in (f"/api/documents/{doc}/pdf", f"/api/documents/{doc}/pages/1.png"):
        for accept in ({}, {"Accept": "application/json"}, {"Accept": "application/json, text/html;q=0.5"}):
            message = assert_error(client.get(target, headers=accept), 404)
            assert str(path) in message and "gone" in message and mend in message, (target, message)
            assert "ingest" not in message, message
        page = unavailable_page(client.get(target, headers={"Accept": BROWSER_ACCEPT}), 404)
        assert "This file is gone" in page and mend in page and "ingest it again" not in page, page


def unavailable_page(r: httpx.Response, status: int) -> str:
    """The HTML a browser gets for a hit's link whose file is gone or changed:
    a page of the site (its style, no script), the commands as text."""
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("text/html"), r.headers
    assert_security_headers(r.headers, "an unavailable file's page")
    text = html.unescape(r.text)
    assert '<link rel="stylesheet" href="/static/style.css">' in r.text and "<script" not in r.text
    assert '<a href="/">' in r.text  # back to the search
    return text


def test_pdf_replaced_by_a_symlink_is_refused(corpus: Corpus, client: httpx.Client) -> None:
    path = corpus.files["served/swapped.pdf"]
    path.unlink()
    path.symlink_to(corpus.other)
    r = client.get(f"/api/documents/{corpus.hashes['served/swapped.pdf']}/pdf")
    assert_error(r, 409)
    assert SECRET.encode() not in r.content and b"%PDF" not in r.content


def test_pdf_replaced_by_a_device_fifo_or_folder_is_refused_at_once(corpus: Corpus, client: httpx.Client) -> None:
    """Endless or blocking files are never read (a FIFO would hang, /dev/zero never end)."""
    corpus.files["served/devzero.pdf"].unlink()
    corpus.files["served/devzero.pdf"].symlink_to("/dev/zero")
    corpus.files["served/fifo.pdf"].unlink()
    os.mkfifo(corpus.files["served/fifo.pdf"])
    corpus.files["served/dir.pdf"].unlink()
    corpus.files["served/dir.pdf"].mkdir()
    for name in ("served/devzero.pdf", "served/fifo.pdf", "served/dir.pdf"):
        started = time.monotonic()
        r = client.get(f"/api/documents/{corpus.hashes[name]}/pdf", timeout=10)
        assert r.status_code in (404, 409), (name, r.status_code)
        assert time.monotonic() - started < 5


def test_pdf_served_from_another_copy_when_one_is_gone(corpus: Corpus, client: httpx.Client) -> None:
    doc_hash = corpus.hashes["served/copy-a.pdf"]
    expected = corpus.files["served/copy-b.pdf"].read_bytes()
    corpus.files["served/copy-a.pdf"].unlink()
    r = client.get(f"/api/documents/{doc_hash}/pdf")
    assert r.status_code == 200, r.text
    assert r.content == expected


# ---- traversal --------------------------------------------------------------------------------

def traversal_variants(secret: Path) -> list[str]:
    """``..`` spelled every way a server might decode into a parent step, each
    also aimed at the secret file by an absolute path."""
    rel = str(secret).lstrip("/")
    up = 12
    return [
        "..", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "...", "..;", "..%00", "..%2f", "..%5c", "..\\", "%2e%2e%5c",
        "/".join([".."] * up) + "/" + rel,
        "%2f".join([".."] * up) + "%2f" + quote(rel, safe=""),
        "%2F".join(["%2e%2e"] * up) + "%2F" + quote(rel, safe=""),
        "\\".join([".."] * up) + "\\" + rel.replace("/", "\\"),
        "%5c".join([".."] * up) + "%5c" + quote(rel.replace("/", "\\"), safe=""),
        "..%c0%af" * up + rel, "%252e%252e%252f" * up + rel,
        "/" + str(secret).lstrip("/"), quote(str(secret), safe=""),
    ]


def traversal_targets(corpus: Corpus) -> list[str]:
    """Every route with ``..`` in each of its segments, replacing it and before it."""
    h = corpus.hashes["alpha report.pdf"]
    routes = ["/", "/healthz", "/openapi.json", "/docs", "/signin", "/api/search?q=filler", "/api/documents",
              f"/api/documents/{h}", f"/api/documents/{h}/pdf", "/api/status", "/static/style.css", "/static/"]
    targets: set[str] = set()
    for route in routes:
        path, _, query = route.partition("?")
        segments = path.strip("/").split("/") if path.strip("/") else [""]
        for i in range(len(segments) + 1):
            for variant in traversal_variants(corpus.secret):
                for replaced in ([*segments[:i], variant, *segments[i + 1:]], [*segments[:i], variant, *segments[i:]]):
                    targets.add("/" + "/".join(replaced) + ("?" + query if query else ""))
    return sorted(targets)


def _check_traversal(corpus: Corpus, server: Server, authorized: bool) -> None:
    """Every traversal target: never a 500, never the secret, /etc/passwd or an
    index file; a PDF only the indexed one's bytes; without the token, only what
    needs none."""
    index_files = [p.read_bytes()[:64] for p in corpus.index.rglob("*") if p.is_file() and p.stat().st_size > 64]
    alpha = corpus.files["alpha report.pdf"].read_bytes()
    headers = [("Authorization", f"Bearer {server.token}")] if authorized and server.token else []
    for target in traversal_targets(corpus):
        r = raw_request(server, target, headers=headers)
        assert r.status < 500, (target, r.status, r.body[:200])
        assert SECRET.encode() not in r.body, target
        assert b"root:x:0:0" not in r.body, target
        assert not any(chunk in r.body for chunk in index_files), target
        if r.status != 200:
            continue
        if (r.header("content-type") or "").startswith("application/pdf"):
            assert r.body == alpha, target
        if server.token is not None and not authorized:  # only what needs no token
            assert target.split("?")[0] in ("/healthz", "/signin") or target.startswith("/static/"), target
            assert b"alphazq" not in r.body and corpus.hashes["alpha report.pdf"].encode() not in r.body, target


@pytest.mark.slow
def test_traversal_in_every_segment_serves_nothing_outside(corpus: Corpus, server: Server) -> None:
    assert len(traversal_targets(corpus)) > 500
    _check_traversal(corpus, server, authorized=False)


@pytest.mark.slow
def test_traversal_does_not_get_past_the_token(corpus: Corpus, token_server: Server) -> None:
    _check_traversal(corpus, token_server, authorized=False)
    _check_traversal(corpus, token_server, authorized=True)


def test_static_serves_its_files_only(server: Server, corpus: Corpus) -> None:
    css = raw_request(server, "/static/style.css")
    assert css.status == 200 and (css.header("content-type") or "").startswith("text/css")
    for target in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py", "/static/..%5capp.py",
                   "/static/../templates/base.html", "/static/%2e%2e%2f%2e%2e%2fpyproject.toml",
                   "/static//etc/passwd", "/static/%2fetc%2fpasswd", "/static/" + quote(str(corpus.secret), safe="")):
        r = raw_request(server, target)
        assert r.status == 404, (target, r.status)
        assert b"import" not in r.body and b"<html" not in r.body and b"[project]" not in r.body


# ---- /api/status, /healthz, /openapi.json --------------------------------------------------------

def test_status_equals_cli(corpus: Corpus, client: httpx.Client) -> None:
    api = answer_json(client.get("/api/status"))
    assert api == cli_json("status", "--json", "--index", corpus.index)
    assert api["documents"] == len(set(corpus.hashes.values()))
    assert {f["status"] for f in api["failures"]} == {"failed", "encrypted"}
    assert api["problems"]["font_missing"]["documents"] == 1


def test_healthz_without_token(token_server: Server) -> None:
    with token_server.client(auth=False) as c:
        r = c.get("/healthz")
        assert r.status_code == 200 and answer_json(r) == {"ok": True}
        assert c.get("/api/status").status_code == 401


def test_the_icon_is_served_without_token_and_linked(token_server: Server) -> None:
    """Browsers ask for /favicon.ico by themselves (also for a PDF or the API's JSON):
    it is answered without the token (it reads nothing of the index), as is the
    SVG the pages link to."""
    with token_server.client(auth=False) as c:
        r = c.get("/favicon.ico")
        assert r.status_code == 200 and r.headers["content-type"] == "image/x-icon"
        with Image.open(io.BytesIO(r.content)) as icon:
            assert icon.format == "ICO" and icon.size[0] >= 16
        form = c.get("/signin").text
        links = re.findall(r'<link rel="icon" href="([^"]+)"', form)
        assert "/static/favicon.svg" in links, form
        for link in links:
            r = c.get(link)
            assert r.status_code == 200 and r.headers["content-type"].startswith("image/"), (link, r.status_code)
        assert c.get("/favicon.icox").status_code != 200


def test_openapi_lists_every_endpoint(client: httpx.Client) -> None:
    spec = answer_json(client.get("/openapi.json"))
    for route in API_ROUTES:
        assert "get" in spec["paths"].get(route, {}), route
        assert spec["paths"][route]["get"].get("summary"), route
    params = {p["name"] for p in spec["paths"]["/api/search"]["get"]["parameters"]}
    assert params >= {"q", "limit", "offset", "by_document", "min_coverage", "needs_ocr", "path", "since",
                      "until", "sort"}
    assert "/" not in spec["paths"] and "/signin" not in spec["paths"]  # the page is not part of the API


# ---- the token --------------------------------------------------------------------------------

def test_token_required(corpus: Corpus, token_server: Server) -> None:
    doc = corpus.hashes["alpha report.pdf"]
    with token_server.client(auth=False) as c:
        for path in ("/api/search?q=filler", "/api/documents", f"/api/documents/{doc}", f"/api/documents/{doc}/pdf",
                     "/api/status", "/openapi.json"):
            r = c.get(path)
            message = assert_error(r, 401)
            assert "token" in message
            assert r.headers["www-authenticate"].startswith("Bearer")
            assert b"alphazq" not in r.content
        for auth in (f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer", f"Basic {TOKEN}", TOKEN,
                     f"Bearer {LOSING_ENV_TOKEN}", f"Bearer {session_value(TOKEN)}"):
            assert_error(c.get("/api/status", headers={"Authorization": auth}), 401)
        for forged in (TOKEN, session_value(LOSING_ENV_TOKEN), session_value(TOKEN)[:-1], "", "é"):
            r = c.get("/api/status", headers={"Cookie": f"pdfindex_session={quote(forged)}"})
            assert_error(r, 401)
        for auth in (f"Bearer {TOKEN}", f"bearer {TOKEN}"):
            r = c.get("/api/search", params={"q": "alphazq1w"}, headers={"Authorization": auth})
            assert r.status_code == 200 and answer_json(r)["total"] == 1
        r = c.get(f"/api/documents/{doc}/pdf", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200 and r.content == corpus.files["alpha report.pdf"].read_bytes()


def test_a_wrong_token_is_told_apart_from_none(token_server: Server) -> None:
    """No token: one is required. A wrong one, or a session cookie of another token:
    it is wrong (RFC 6750's invalid_token), without repeating what was sent."""
    wrong = "guessed-token-4242"
    with token_server.client(auth=False) as c:
        for path in ("/api/status", "/openapi.json"):
            r = c.get(path)
            assert "a token is required" in assert_error(r, 401)
            assert "invalid_token" not in r.headers["www-authenticate"]
            r = c.get(path, headers={"Authorization": f"Bearer {wrong}"})
            message = assert_error(r, 401)
            assert "wrong" in message and "required" not in message and wrong not in r.text, message
            assert 'error="invalid_token"' in r.headers["www-authenticate"]
            r = c.get(path, headers={"Cookie": f"pdfindex_session={session_value(wrong)}"})
            message = assert_error(r, 401)
            assert "session" in message and "sign in again" in message and "required" not in message, message
            assert session_value(wrong) not in r.text
            for malformed in (f"Basic {TOKEN}", TOKEN, "Bearer"):
                message = assert_error(c.get(path, headers={"Authorization": malformed}), 401)
                assert "Bearer <token>" in message and TOKEN not in message, (malformed, message)
        # The page: to the sign-in form, which says what was wrong.
        for headers, said in (({"Authorization": f"Bearer {wrong}"}, "not the token this server was started with"),
                              ({"Cookie": f"pdfindex_session={session_value(wrong)}"}, "no longer valid")):
            r = c.get("/", params={"q": "alphazq1w"}, headers=headers)
            assert r.status_code == 303 and r.headers["location"].startswith("/signin?"), r.headers
            form = c.get(r.headers["location"])
            assert form.status_code == 200 and said in html.unescape(form.text), form.text
            assert wrong not in form.text
        form = c.get(c.get("/", params={"q": "alphazq1w"}).headers["location"])
        assert 'class="error"' not in form.text  # nothing sent: nothing was wrong
        # A reason the server did not give is not shown.
        assert 'class="error"' not in c.get("/signin", params={"why": "<b>made up</b>"}).text


def test_token_from_the_environment(corpus: Corpus) -> None:
    with serving(corpus.index, env=cli_env(PDFINDEX_API_TOKEN=ENV_TOKEN), log_dir=corpus.root) as s, \
            s.client(auth=False) as c:
        assert_error(c.get("/api/status"), 401)
        assert_error(c.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"}), 401)
        assert c.get("/api/status", headers={"Authorization": f"Bearer {ENV_TOKEN}"}).status_code == 200


def test_page_without_token_goes_to_signin(token_server: Server) -> None:
    with token_server.client(auth=False) as c:
        r = c.get("/", params={"q": "alphazq1w", "sort": "date"})
        assert r.status_code == 303
        assert r.headers["location"] == "/signin?" + urlencode({"next": "/?q=alphazq1w&sort=date"})
        assert b"alphazq" not in r.content
        form = c.get(r.headers["location"])
        assert form.status_code == 200 and 'name="token"' in form.text
        assert 'value="/?q=alphazq1w&amp;sort=date"' in form.text


def signin(c: httpx.Client, token: str, next_: str = "/") -> httpx.Response:
    return c.post("/signin", content=urlencode({"token": token, "next": next_}),
                  headers={"Content-Type": "application/x-www-form-urlencoded"})


def test_signin_sets_a_safe_cookie_that_works(corpus: Corpus, token_server: Server) -> None:
    doc = corpus.hashes["alpha report.pdf"]
    with token_server.client(auth=False) as c:
        for wrong in ("nope", TOKEN + " ", TOKEN.upper(), LOSING_ENV_TOKEN, "", "é" * 20):
            r = signin(c, wrong)
            assert r.status_code == 401, wrong
            assert "set-cookie" not in r.headers
            assert r.headers["content-type"].startswith("text/html")
        r = signin(c, TOKEN, "/?q=alphazq1w")
        assert r.status_code == 303 and r.headers["location"] == "/?q=alphazq1w"
        cookie = r.headers["set-cookie"]
        assert TOKEN not in cookie
        attributes = {a.strip().split("=")[0].lower(): a.strip() for a in cookie.split(";")[1:]}
        assert "httponly" in attributes
        assert attributes["samesite"].lower() == "samesite=strict"
        name, _, value = cookie.split(";")[0].partition("=")
        assert name == "pdfindex_session" and value and value != TOKEN
    with token_server.client(auth=False, headers={"Cookie": f"{name}={value}"}) as c:
        assert c.get("/api/status").status_code == 200
        page = c.get("/", params={"q": "alphazq1w"})
        assert page.status_code == 200 and "alphazq1w" in page.text and doc in page.text
        pdf = c.get(f"/api/documents/{doc}/pdf")
        assert pdf.status_code == 200 and pdf.content == corpus.files["alpha report.pdf"].read_bytes()


@pytest.mark.parametrize("target", ["//evil.example", "https://evil.example", "/\\evil.example", "\\\\evil.example",
                                    "/\t/evil.example", "javascript:alert(1)", "http:evil.example", " //evil.example",
                                    "/\r\nSet-Cookie: x=y", "%2f%2fevil.example", ""])
def test_signin_goes_nowhere_else(token_server: Server, target: str) -> None:
    with token_server.client(auth=False) as c:
        r = signin(c, TOKEN, target)
        assert r.status_code == 303
        location = r.headers["location"]
        browser_sees = re.sub(r"[\t\n\r]", "", location)  # what a browser's URL parser strips first
        assert browser_sees.startswith("/") and not browser_sees.startswith(("//", "/\\")), location
        assert "\n" not in location and all("x=y" not in v for v in r.headers.get_list("set-cookie"))
        if target in ("//evil.example", "https://evil.example", "/\\evil.example"):
            assert location == "/"
        form = c.get("/signin", params={"next": target})
        [kept] = re.findall(r'name="next" value="([^"]*)"', form.text)
        kept = re.sub(r"[\t\n\r]", "", html.unescape(kept))
        assert kept.startswith("/") and not kept.startswith(("//", "/\\")), kept


def _answer_head(s: socket.socket) -> bytes:
    """The status line and headers the server sent, read until the blank line."""
    s.settimeout(10)
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
    return answer


def test_signin_refuses_a_huge_form_without_reading_it(token_server: Server) -> None:
    """1 MB announced, 16 KiB sent: the answer (413) comes before the rest is sent."""
    head = (f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{token_server.port}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {1 << 20}\r\n"
            "Connection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", token_server.port), timeout=10) as s:
        s.sendall(head + b"token=" + b"a" * (16 * 1024))
        answer = _answer_head(s)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_signin_refuses_a_huge_chunked_form(token_server: Server) -> None:
    """No length announced: 12 KiB of chunks (more than the form's 8 KiB) and the
    answer comes while the body has not ended."""
    with socket.create_connection(("127.0.0.1", token_server.port), timeout=10) as s:
        s.sendall((f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{token_server.port}\r\n"
                   "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode())
        for _ in range(3):
            s.sendall(b"1000\r\n" + b"a" * 4096 + b"\r\n")
        answer = _answer_head(s)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


@pytest.mark.parametrize("args", [["--token", "short"], ["--token", ""], ["--token", " padded-token-value "],
                                  ["--token", "1234567"]])
def test_a_bad_token_is_refused_at_start(corpus: Corpus, args: list[str]) -> None:
    r = run_cli("serve", "--index", corpus.index, "--port", str(free_port()), *args, timeout=30)
    assert r.returncode == 2, r.stderr
    assert "token" in r.stderr and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_a_port_in_use_is_one_line_and_status_1(corpus: Corpus) -> None:
    """Bound before anything is said: no "serving on" for a server that never
    served, no uvicorn traceback, and 1 (an error), not 3 (a password problem)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run_cli("serve", "--index", corpus.index, "--port", str(port), timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr == f"pdfindex: cannot serve on 127.0.0.1:{port}: address already in use (choose another --port)\n"


def test_connections_to_the_served_socket_send_without_delay() -> None:
    """The socket `pdfindex serve` binds, served by asyncio as uvicorn serves it: each
    connection it accepts has Nagle's algorithm off. With the protocol left 0, asyncio
    left it on and every response waited ~40 ms for the client's delayed ACK."""
    sock = _listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    async def serve() -> None:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.05)
            writer.close()

    asyncio.run(serve())
    assert seen and seen[0] != 0, seen


def test_a_short_token_in_the_environment_is_refused_at_start(corpus: Corpus) -> None:
    r = run_cli("serve", "--index", corpus.index, "--port", str(free_port()),
                env=cli_env(PDFINDEX_API_TOKEN="short"), timeout=30)
    assert r.returncode == 2 and "token" in r.stderr and "Traceback" not in r.stderr, r.stderr


# ---- passwords ---------------------------------------------------------------------------------

PASSWORD = "pw-4f1c9-never-shown"


@pytest.fixture(scope="module")
def locked_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """An index of one encrypted file (ingested with its password); the password
    file, behind a wrong password; the document's hash."""
    root = tmp_path_factory.mktemp("locked")
    write(root / "docs" / "locked.pdf", encrypted_pdf("kilo", 2, user=PASSWORD))
    passwords = root / "passwords.txt"
    passwords.write_text("wrong-one\n" + PASSWORD + "\n")
    r = run_cli("ingest", root / "docs", "--index", root / "index", "--password-file", passwords)
    assert r.returncode == 0, r.stdout + r.stderr
    (doc,) = cli_json("list", "--json", "--index", root / "index")["documents"]
    assert doc["status"] == "indexed"
    return root / "index", passwords, doc["doc_hash"]


def test_page_images_of_encrypted_files_with_the_password_file(locked_index: tuple[Path, Path, str]) -> None:
    """The /pdf of an encrypted file is served (the browser asks its password);
    its page image needs the server to know the password: --password-file, or
    PDFINDEX_PASSWORD_FILE as for ingest. No answer and no log line holds it."""
    index, passwords, doc = locked_index
    image = f"/api/documents/{doc}/pages/2.png?q=kilozq2w"
    with serving(index, extra=["--password-file", str(passwords)], log_dir=index.parent) as s, s.client() as c:
        r = c.get(image)
        assert r.status_code == 200 and r.headers["content-type"] == "image/png", r.text[:300]
        assert r.content.startswith(b"\x89PNG")
        assert c.get(f"/api/documents/{doc}/pdf").status_code == 200
        stderr = s.stderr
    assert PASSWORD not in stderr and str(passwords) not in stderr
    with serving(index, env=cli_env(PDFINDEX_PASSWORD_FILE=str(passwords)), log_dir=index.parent) as s, \
            s.client() as c:
        assert c.get(image).status_code == 200
    other = index.parent / "other-passwords.txt"
    other.write_text("not-this-one\n")
    with serving(index, extra=["--password-file", str(other)], log_dir=index.parent) as s, s.client() as c:
        r = c.get(image)
        assert "no known password opens it" in assert_error(r, 409)
        assert PASSWORD not in r.text and "not-this-one" not in r.text
        assert "not-this-one" not in s.stderr


def test_an_unreadable_password_file_is_refused_at_start(locked_index: tuple[Path, Path, str]) -> None:
    index, _, _ = locked_index
    missing = index.parent / "no-such-passwords.txt"
    for argv, env in ((["--password-file", str(missing)], None),
                      ([], cli_env(PDFINDEX_PASSWORD_FILE=str(missing)))):
        r = run_cli("serve", "--index", index, "--port", str(free_port()), *argv, env=env, timeout=60)
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert r.stderr == f"pdfindex: {missing}: cannot read password file: No such file or directory\n"


# ---- Host header ------------------------------------------------------------------------------

def test_foreign_host_is_421(server: Server, token_server: Server) -> None:
    for host in ("evil.example", f"evil.example:{server.port}", "localhost.evil.example", "127.0.0.1.nip.io",
                 f"127.0.0.2.evil.example:{server.port}", "", "0.0.0.0", "10.0.0.1", "127.1"):
        for path in ("/api/status", "/", "/healthz", "/static/style.css"):
            r = raw_request(server, path, host=host)
            assert r.status == 421, (host, path, r.status)
            assert json.loads(r.body)["error"]
            assert b"alphazq" not in r.body
    r = raw_request(token_server, "/api/status", host="evil.example",
                    headers=[("Authorization", f"Bearer {TOKEN}")])
    assert r.status == 421  # a token does not make a rebound name safe


def test_loopback_hosts_are_answered(server: Server) -> None:
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", f"[::1]:{server.port}", "localhost",
                 "127.0.0.1"):
        r = raw_request(server, "/api/status", host=host)
        assert r.status == 200, (host, r.status, r.body[:200])


@pytest.mark.slow
def test_non_loopback_bind_without_token_warns(corpus: Corpus) -> None:
    with serving(corpus.index, host="0.0.0.0", log_dir=corpus.root) as s:
        warning = [line for line in s.stderr.splitlines() if "warning" in line]
        assert len(warning) == 1, s.stderr
        assert "0.0.0.0" in warning[0] and "without a token" in warning[0] and "PDFINDEX_API_TOKEN" in warning[0]
        # Not loopback-only: any Host is answered (the warning says who can reach it).
        assert raw_request(s, "/healthz", host="files.example").status == 200
    with serving(corpus.index, host="0.0.0.0", token=TOKEN, log_dir=corpus.root) as s:
        assert "warning" not in s.stderr, s.stderr
        assert raw_request(s, "/api/status").status == 401


# ---- escaping ---------------------------------------------------------------------------------

def test_hostile_names_and_titles_round_trip_in_json(corpus: Corpus, client: httpx.Client) -> None:
    name = os.fsdecode(HOSTILE_NAME)
    result = answer_json(client.get("/api/search", params={"q": page_word("xss", 1)}))
    [hit] = result["hits"]
    assert os.fsencode(hit["path"]) == os.fsencode(corpus.files[name])
    assert hit["path"].endswith(name) and hit["title"] == SCRIPT_TITLE and hit["author"] == ESC_AUTHOR
    assert "bold</b> <script>x</script>" in hit["snippet"]
    record = answer_json(client.get(f"/api/documents/{corpus.hashes[name]}"))
    assert os.fsencode(record["path"]) == os.fsencode(corpus.files[name]) and record["title"] == SCRIPT_TITLE
    listing = answer_json(client.get("/api/documents", params={"limit": "1000"}))
    assert str(corpus.files[name]) in {d["path"] for d in listing["documents"]}
    assert str(corpus.files[NEWLINE_NAME]) in {d["path"] for d in listing["documents"]}
    raw = client.get("/api/search", params={"q": page_word("xss", 1)}).content
    raw.decode("utf-8")  # strict: the \xff byte travels as a JSON escape, not as an invalid byte
    assert b"\x1b" not in raw  # JSON escapes control characters


def test_hostile_names_and_titles_are_text_on_the_page(corpus: Corpus, client: httpx.Client) -> None:
    for params in ({"q": page_word("xss", 1)}, {"q": page_word("xss", 1), "by_document": "true"},
                   {"q": page_word("newline", 1)}):
        r = client.get("/", params=params)
        assert r.status_code == 200, r.text[:300]
        page = r.content.decode("utf-8")
        assert_no_markup(page)
        if "newline" in params["q"]:
            assert "line\\x0abreak\\u202eevil.pdf" in page
            continue
        assert "&lt;img src=x onerror=alert(1)&gt;\\x1b[31m\\xff.pdf" in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        if "by_document" not in params:
            assert "\\x1b[31mred \\u202eauthor" in page
            assert "bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;" in page


#: What a page must show escaped: C0 controls but tab and newline, DEL, C1, bidirectional overrides, surrogates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def assert_no_markup(page: str) -> None:
    """Nothing from a file or a query became markup, and no control character is
    shown as text. Form fields keep what was typed (``value="..."``): sending the
    form again must search for the same thing."""
    assert "<script" not in page.lower()
    assert "<img src=x" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert "<b>" not in page
    outside_fields = re.sub(r'value="[^"]*"', "", page)
    outside_fields = re.sub(r"<title>.*?</title>", "", outside_fields, flags=re.S)  # test_query_in_the_title
    found = _CONTROL.search(outside_fields)
    assert found is None, outside_fields[max(0, found.start() - 80):found.end() + 80]


@pytest.mark.parametrize("query", [SCRIPT_TITLE, '"<script>', "\x1b[31m red", "\"><img src=x onerror=alert(1)>",
                                   "</title><script>alert(1)</script>", "title:<b>", "\u202eevil"])
def test_hostile_query_is_text_on_the_page(client: httpx.Client, query: str) -> None:
    for params in ({"q": query}, {"q": query, "path": query}, {"q": "filler", "since": query[:40]}):
        r = client.get("/", params=params)
        assert r.status_code in (200, 400), (params, r.status_code)
        assert_no_markup(r.content.decode("utf-8"))
        api = client.get("/api/search", params=params)
        assert api.status_code in (200, 400)
        answer_json(api)


@pytest.mark.parametrize("query", ["\x1b[31m red", "\u202eevil"])
def test_query_in_the_title_is_shown_escaped(client: httpx.Client, query: str) -> None:
    r = client.get("/", params={"q": query})
    [title] = re.findall(r"<title>(.*?)</title>", r.text, flags=re.S)
    assert not _CONTROL.search(title), title


BAD_PAGE_PARAMS = ["page=0", "page=abc", "page=10001", "min_coverage=2", "min_coverage=nan", "needs_ocr=maybe",
                   "sort=bogus", "q=" + "a" * 5000, "q=a&path=%00", "q=a&since=junk", "q=a&since=2024&until=2023",
                   "path=" + "a" * 4097, "by_document=x", "q=%ff%fe", "q=a&path=%ff"]


@pytest.mark.parametrize("query", BAD_PAGE_PARAMS, ids=[q[:30] for q in BAD_PAGE_PARAMS])
def test_bad_page_parameters_are_never_500(client: httpx.Client, query: str) -> None:
    r = client.get("/?" + query)
    assert r.status_code in (200, 400), (query, r.status_code, r.text[:300])
    if r.headers["content-type"].startswith("text/html"):
        assert_no_markup(r.text)


# ---- security headers -------------------------------------------------------------------------

def assert_security_headers(headers: Any, what: str) -> None:
    csp = headers.get("content-security-policy") or ""
    for directive in ("default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'"):
        assert directive in csp, (what, csp)
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, (what, csp)
    assert (headers.get("x-content-type-options") or "").lower() == "nosniff", what
    assert (headers.get("x-frame-options") or "").upper() == "DENY", what


def test_security_headers_on_every_kind_of_answer(corpus: Corpus, server: Server, token_server: Server) -> None:
    doc = corpus.hashes["alpha report.pdf"]
    with server.client() as c:
        for path, status in (("/", 200), ("/?q=alphazq1w", 200), ("/?q=%22", 400), ("/api/search?q=filler", 200),
                             ("/api/search?q=%22", 400), ("/api/search?limit=0", 400), ("/api/documents", 200),
                             (f"/api/documents/{doc}", 200), (f"/api/documents/{doc}/pdf", 200),
                             (f"/api/documents/{'0' * 64}", 404), ("/api/status", 200), ("/healthz", 200),
                             ("/openapi.json", 200), ("/static/style.css", 200), ("/nowhere", 404),
                             ("/signin", 303)):
            r = c.get(path)
            assert r.status_code == status, (path, r.status_code)
            assert_security_headers(r.headers, path)
        r = c.post("/api/status")
        assert r.status_code == 405
        assert_security_headers(r.headers, "POST /api/status")
    with token_server.client(auth=False) as c:
        for path, status in (("/api/status", 401), ("/", 303), ("/signin", 200)):
            r = c.get(path)
            assert r.status_code == status, path
            assert_security_headers(r.headers, f"token {path}")
        assert_security_headers(signin(c, "wrong").headers, "signin 401")
        assert_security_headers(signin(c, TOKEN).headers, "signin 303")
    r = raw_request(server, "/api/status", host="evil.example")
    assert r.status == 421
    assert_security_headers({k.lower(): v for k, v in r.headers}, "421")


# ---- the index being written during requests -----------------------------------------------------

@dataclass
class IngestRun:
    tags: list[str]
    answers: int  # while the ingest ran
    errors: list[str]
    counts: list[int]  # documents in the index, as /api/status saw them while the ingest ran


def search_during_ingest(tmp_path: Path, **env: str) -> IngestRun:
    """A real `pdfindex ingest` of 40 files (3 pages each) into an index the server
    has open, while four threads keep asking it; then every new file must be found
    by the same server (asked more times than it has searchers: each must follow)."""
    index = tmp_path / "index"
    ingest(index, write(tmp_path / "first" / "first.pdf", text_pdf("first", 2)))
    later = tmp_path / "later"
    tags = [f"late{chr(ord('a') + i)}{chr(ord('a') + j)}" for i in range(5) for j in range(8)]
    for tag in tags:
        write(later / f"{tag}.pdf", text_pdf(tag, 3))
    run = IngestRun(tags, 0, [], [])
    done = threading.Event()
    with serving(index, log_dir=tmp_path) as server:
        def ask(n: int) -> None:
            queries = [{"q": "filler", "limit": "50"}, {"q": page_word(tags[n * 7 % len(tags)], 2)},
                       {"q": "quarterly", "by_document": "true", "limit": "20"}]
            with server.client() as c:
                i = 0
                while not done.is_set():
                    try:
                        if i % 4 == 3:
                            r = c.get("/api/documents" if i % 8 == 3 else "/api/status")
                        else:
                            r = c.get("/api/search", params=queries[i % 3])
                        run.answers += 1
                        if r.status_code != 200:
                            run.errors.append(f"{r.url}: {r.status_code} {r.text[:300]}")
                        elif r.url.path == "/api/status":
                            run.counts.append(answer_json(r)["documents"])
                        else:
                            answer_json(r)
                    except Exception as exc:
                        run.errors.append(f"{type(exc).__name__}: {exc}")
                    i += 1

        def follow() -> None:
            """Status alone, asked without pause: a commit in the middle of the run is
            seen however slowly the searches above are answered on a loaded machine."""
            with server.client() as c:
                while not done.is_set():
                    r = c.get("/api/status")
                    if r.status_code == 200:
                        run.counts.append(answer_json(r)["documents"])
                    else:
                        run.errors.append(f"{r.url}: {r.status_code} {r.text[:300]}")
                    time.sleep(0.02)

        threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
        threads.append(threading.Thread(target=follow))
        for t in threads:
            t.start()
        try:
            proc = subprocess.Popen(cli_argv("ingest", later, "--index", index), cwd=ROOT, env=cli_env(**env),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            try:
                out, err = proc.communicate(timeout=120)
            finally:
                kill_group(proc, grace=2)
        finally:
            done.set()
            for t in threads:
                t.join(30)
        assert proc.returncode == 0, (out, err)
        assert not run.errors, run.errors[:5]
        assert run.answers >= 20, run.answers
        with server.client() as c:
            for _ in range(3):
                for tag in tags[::5]:
                    found = answer_json(c.get("/api/search", params={"q": page_word(tag, 3)}))
                    assert [Path(h["path"]).name for h in found["hits"]] == [f"{tag}.pdf"], tag
                assert answer_json(c.get("/api/status"))["documents"] == 1 + len(tags)
                assert answer_json(c.get("/api/documents", params={"limit": "1000"}))["total"] == 1 + len(tags)
        assert server.alive()
        assert "Traceback" not in server.stderr, server.stderr
    return run


@pytest.mark.slow
def test_searches_while_an_ingest_writes(tmp_path: Path) -> None:
    """The default batching: segments written during the run, one commit at its
    end, which the running server then shows."""
    search_during_ingest(tmp_path)


@pytest.mark.slow
def test_searches_while_an_ingest_commits_every_file(tmp_path: Path) -> None:
    """A commit for every file (PDFINDEX_BATCH_PAGES=3): 40 commits, and merges,
    while the server reads; it follows them as they come."""
    run = search_during_ingest(tmp_path, PDFINDEX_BATCH_PAGES="3")
    assert any(1 < n < 1 + len(run.tags) for n in run.counts), sorted(set(run.counts))


def test_the_server_stops_on_sigterm(corpus: Corpus) -> None:
    """The helper's stop: SIGTERM ends the server (and its port is free again)."""
    server = start_server(corpus.index, log_dir=corpus.root)
    try:
        assert server.alive()
        started = time.monotonic()
        server.stop()
        # ended by the SIGTERM (uvicorn re-raises it after its graceful shutdown), not the SIGKILL after
        assert server.proc.returncode in (0, -signal.SIGTERM), server.proc.returncode
        assert time.monotonic() - started < 5
        with pytest.raises(httpx.TransportError), httpx.Client(trust_env=False, timeout=2) as c:
            c.get(server.base_url + "/healthz")
    finally:
        server.stop()
