"""Issue 8 items 4 and 5: document metadata (Info and XMP), dates, the date filters
and orders, and copies of one content under several paths."""
from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pdfindex import pipeline
from pdfindex.indexer import PageIndex, ReindexNeeded, SearchOptions, reindex, store
from pdfindex.indexer.schema import build_schema, doc_fields, page_fields
from pdfindex.pipeline.metadata import MAX_XMP_BYTES, parse_iso_date, parse_pdf_date, parse_xmp
from tests.builders import font_resources, mono_font, text_line
from tests.index_helpers import page, record, sha
from tests.ingest_helpers import run_in_home as run
from tests.pdfwriter import HexStr, Name, PdfWriter
from pdfindex.workers.outcome import Outcome, extract_outcome
from pdfindex.workers.plan import Plan, make_plan
from pdfindex.workers.session import change_paths


def utc(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()  # type: ignore[misc]


def xmp(**props: str) -> bytes:
    """An XMP packet with these properties (dc:title given as an rdf:Alt)."""
    body = []
    for name, value in props.items():
        prefix, local = name.split("_", 1)
        if (prefix, local) in (("dc", "title"), ("dc", "description")):
            value = f'<rdf:Alt><rdf:li xml:lang="x-default">{value}</rdf:li></rdf:Alt>'
        elif (prefix, local) == ("dc", "creator"):
            value = "<rdf:Seq>" + "".join(f"<rdf:li>{v}</rdf:li>" for v in value.split("|")) + "</rdf:Seq>"
        body.append(f"<{prefix}:{local}>{value}</{prefix}:{local}>")
    return (
        '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>'
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">'
        + "".join(body) + '</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>'
    ).encode()


def pdf(info: dict[str, bytes] | None = None, metadata: bytes | None = None, words: bytes = b"hello world") -> bytes:
    w = PdfWriter()
    if metadata is not None:
        w.catalog_attrs["Metadata"] = w.add_stream(metadata, {"Type": Name("Metadata"), "Subtype": Name("XML")})
    if info is not None:
        w.set_info(dict(info))
    w.add_page(text_line(72, 700, b"(" + words + b") Tj"), resources=font_resources(mono_font(w)))
    return w.to_bytes()


# ---- dates ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("D:20240131123000+01'00'", utc(2024, 1, 31, 11, 30)),
    ("D:20240131123000-05'30'", utc(2024, 1, 31, 18, 0)),
    ("D:20240131123000Z", utc(2024, 1, 31, 12, 30)),
    ("D:20240131123000+01'00", utc(2024, 1, 31, 11, 30)),  # no closing apostrophe, as many writers do
    ("D:20240131123000+01", utc(2024, 1, 31, 11, 30)),
    ("20240131123000", utc(2024, 1, 31, 12, 30)),  # no D: prefix, no zone: UTC
    ("D:2024", utc(2024, 1, 1)),
    ("D:202402", utc(2024, 2, 1)),
    ("D:20240229", utc(2024, 2, 29)),
])
def test_pdf_dates_with_zones_and_partial(text: str, expected: float) -> None:
    assert parse_pdf_date(text) == expected


@pytest.mark.parametrize("text", ["", "D:", "D:20241301", "D:20230229", "D:20240131256000", "yesterday",
                                  "D:2024013112300+01'00'x", "D:20240131123000+25'00'", "D:0000", "9" * 5000])
def test_broken_pdf_dates_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_pdf_date(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-01-31T12:30:00+01:00", utc(2024, 1, 31, 11, 30)),
    ("2024-01-31T12:30:00Z", utc(2024, 1, 31, 12, 30)),
    ("2024-01-31", utc(2024, 1, 31)),
    ("2024-01", utc(2024, 1, 1)),
    ("2024", utc(2024, 1, 1)),
])
def test_xmp_dates(text: str, expected: float) -> None:
    assert parse_iso_date(text) == expected


# ---- Info, XMP, both ---------------------------------------------------------------

def test_metadata_from_info_only() -> None:
    doc = pipeline.extract(pdf(info={"Title": b"Annual report", "Author": b"Jane Roe", "Subject": b"Money",
                                     "Keywords": b"tax, 2024", "CreationDate": b"D:20240131123000+01'00'",
                                     "ModDate": b"D:20240201"}))
    meta = doc.metadata
    assert (meta.title, meta.author, meta.subject, meta.keywords) == ("Annual report", "Jane Roe", "Money",
                                                                        "tax, 2024")
    assert meta.created == utc(2024, 1, 31, 11, 30)
    assert meta.modified == utc(2024, 2, 1)
    assert meta.problems == []


def test_metadata_from_xmp_only() -> None:
    packet = xmp(dc_title="Plan 2025", dc_creator="Ann|Bob", dc_description="The plan", pdf_Keywords="plan; budget",
                 xmp_CreateDate="2025-03-04T05:06:07+02:00", xmp_ModifyDate="2025-03-05")
    meta = pipeline.extract(pdf(metadata=packet)).metadata
    assert (meta.title, meta.author, meta.subject, meta.keywords) == ("Plan 2025", "Ann; Bob", "The plan",
                                                                        "plan; budget")
    assert meta.created == utc(2025, 3, 4, 3, 6, 7)
    assert meta.modified == utc(2025, 3, 5)


def test_xmp_properties_as_attributes() -> None:
    packet = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
              b'<rdf:Description xmlns:pdf="http://ns.adobe.com/pdf/1.3/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" '
              b'pdf:Keywords="alpha beta" xmp:CreateDate="2020-05-06"/></rdf:RDF></x:xmpmeta>')
    problems: list[str] = []
    assert parse_xmp(packet, problems) == {"keywords": "alpha beta", "created": "2020-05-06"}
    assert problems == []


def test_xmp_wins_where_both_disagree() -> None:
    data = pdf(info={"Title": b"Old title", "Author": b"Info Author", "Subject": b"Only in Info",
                     "CreationDate": b"D:19990101"},
               metadata=xmp(dc_title="New title", dc_creator="XMP Author", xmp_CreateDate="2021-06-07"))
    meta = pipeline.extract(data).metadata
    assert meta.title == "New title"
    assert meta.author == "XMP Author"
    assert meta.subject == "Only in Info"  # XMP has none: Info's stays
    assert meta.created == utc(2021, 6, 7)


def test_broken_dates_are_ignored_with_a_problem() -> None:
    doc = pipeline.extract(pdf(info={"Title": b"T", "CreationDate": b"D:2024133", "ModDate": b"D:20240230"}))
    assert doc.metadata.created is None and doc.metadata.modified is None
    assert doc.metadata.title == "T"
    problems = doc.pages[0].problems
    assert any("creation date ignored" in p and "D:2024133" in p for p in problems)
    assert any("modification date ignored" in p for p in problems)


BOMB = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                   for i in range(1, 10))
        + b']><x:xmpmeta xmlns:x="adobe:ns:meta/">&lol9;</x:xmpmeta>')


def test_entity_bomb_refused_fast() -> None:
    started = time.monotonic()
    doc = pipeline.extract(pdf(info={"Title": b"Kept"}, metadata=BOMB))
    assert time.monotonic() - started < 5
    assert doc.metadata.title == "Kept"  # Info still read
    assert any("XMP metadata ignored" in p and "DTD" in p for p in doc.pages[0].problems)


def test_entity_bomb_in_utf16_refused() -> None:
    problems: list[str] = []
    assert parse_xmp(BOMB.decode().encode("utf-16"), problems) == {}
    assert problems and "DTD" in problems[0]


def test_huge_xmp_refused() -> None:
    packet = xmp(dc_title="Huge") + b" " * (MAX_XMP_BYTES + 10)
    doc = pipeline.extract(pdf(metadata=packet))
    assert doc.metadata.title == ""
    assert any("XMP" in p for p in doc.pages[0].problems)


def test_xmp_that_is_not_xml() -> None:
    doc = pipeline.extract(pdf(info={"Author": b"A"}, metadata=b"<x:xmpmeta><unclosed"))
    assert doc.metadata.author == "A"
    assert any("not well-formed" in p for p in doc.pages[0].problems)


# ---- text strings: PDFDocEncoding, UTF-16 and PDF 2.0's UTF-8 (ISO 32000-2 §7.9.2.2) ----

BOM8, BOM16 = b"\xef\xbb\xbf", b"\xfe\xff"
#: The title of pdfcpu's PDF 2.0 UTF-8 test file (Peter Wyatt's), as UTF-8 after the BOM.
CJK_TITLE = "\u8868\u30dd\u3042A\u9dd7\u0152\xe9\uff22\u900d\xdc\xdf\xaa\u0105\xf1\u4e02\u3400\U00020000"


def test_utf8_info_strings_after_the_bom() -> None:
    doc = pipeline.extract(pdf(info={"Title": BOM8 + CJK_TITLE.encode(), "Author": BOM8 + b"Peter Wyatt",
                                     "Subject": BOM8 + "Café crème, Ærø, Łódź".encode(),
                                     "Keywords": HexStr(BOM8 + "東京, Straße".encode()), "Producer": BOM8 + b"By hand",
                                     "CreationDate": BOM8 + b"D:20211230134641+11'00'"}))
    meta = doc.metadata
    assert (meta.title, meta.author, meta.subject, meta.keywords, meta.producer) == (
        CJK_TITLE, "Peter Wyatt", "Café crème, Ærø, Łódź", "東京, Straße", "By hand")
    assert meta.created == utc(2021, 12, 30, 2, 46, 41)  # the date read, not refused for its BOM
    assert doc.info["Author"] == "Peter Wyatt"
    assert doc.pages[0].problems == []


def test_malformed_utf8_after_the_bom_is_replaced_not_raised() -> None:
    meta = pipeline.extract(pdf(info={"Title": BOM8 + b"Caf\xc3 ok \xff\xfe end", "Author": BOM8})).metadata
    assert meta.title == "Caf\ufffd ok \ufffd\ufffd end"
    assert meta.author == ""


@pytest.mark.parametrize(("raw", "text"), [
    (BOM16 + "Zoë 東京".encode("utf-16-be"), "Zoë 東京"),
    (b"\xff\xfe" + "Zoë 東京".encode("utf-16-le"), "Zoë 東京"),  # little-endian, as some writers do
    (b"Caf\xe9 \x80 \x93", "Café • ﬁ"),  # PDFDocEncoding: \x80 a bullet, \x93 the fi ligature
    # language escapes (§7.9.2.2): 00 1B, a 2-byte language code, maybe a 2-byte country code, 00 1B
    (BOM16 + b"\x00\x1bja\x00\x1b" + "東京 ".encode("utf-16-be") + b"\x00\x1benUS\x00\x1b" + "Tokyo".encode("utf-16-be"),
     "東京 Tokyo"),
    (BOM8 + "\x1bde\x1bStraße".encode(), "Straße"),
], ids=["utf16be", "utf16le", "pdfdoc", "utf16-language-escapes", "utf8-language-escape"])
def test_text_string_encodings(raw: bytes, text: str) -> None:
    assert pipeline.extract(pdf(info={"Title": raw})).metadata.title == text


def test_utf8_actual_text_replaces_the_glyphs() -> None:
    """The page text reads marked content's /ActualText (a text string, §14.9.4) by
    the same rules as the Info dictionary."""
    w = PdfWriter()
    content = (b"BT /F1 10 Tf 72 700 Td (ab) Tj /Span <</ActualText (" + BOM8 + "Œuvre".encode()
               + b")>> BDC (XYZ) Tj EMC ET")
    w.add_page(content, resources=font_resources(mono_font(w)))
    assert pipeline.extract(w.to_bytes()).pages[0].text == "abŒuvre"


def test_utf8_metadata_is_indexed_and_searchable(tmp_path: Path) -> None:
    path = tmp_path / "wyatt.pdf"
    path.write_bytes(pdf(info={"Title": BOM8 + CJK_TITLE.encode(), "Author": BOM8 + b"Peter Wyatt"}))
    ix = PageIndex(tmp_path / "ix")
    _ingest(ix, path)
    (hit,) = ix.search("author:wyatt").hits
    assert (hit.title, hit.author) == (CJK_TITLE, "Peter Wyatt")


def test_realworld_pdf20_utf8_info(realworld: Path) -> None:
    """pdfcpu's utf8test.pdf (PDF 2.0, written by hand by Peter Wyatt): every Info
    string is UTF-8 after the BOM."""
    doc = pipeline.extract(realworld / "pdfcpu__utf8test.pdf")
    meta = doc.metadata
    assert (meta.title, meta.author, meta.subject, meta.producer) == (CJK_TITLE, "Peter Wyatt",
                                                                      "PDF 2.0 UTF-8 test file", "By hand")
    assert meta.created == utc(2021, 12, 30, 2, 46, 41)
    assert meta.modified == utc(2021, 12, 30, 2, 48, 24)
    assert doc.info["Creator"] == "By hand"
    assert doc.pages[0].problems == []


# ---- through the index: fields, filters, orders ----------------------------------------

def _ingest(ix: PageIndex, path: Path) -> None:
    outcome = extract_outcome(path, sha(str(path)), [])
    ix.add(outcome.doc, outcome.pages)


def test_metadata_fields_searchable_and_shown(tmp_path: Path) -> None:
    path = tmp_path / "m.pdf"
    path.write_bytes(pdf(info={"Title": b"Quarterly", "Author": b"Zelda Quill", "Subject": b"Harvest",
                               "Keywords": b"orchard", "CreationDate": b"D:20230405"}))
    ix = PageIndex(tmp_path / "ix")
    _ingest(ix, path)
    for query in ("author:quill", "subject:harvest", "keywords:orchard", "title:quarterly"):
        hits = ix.search(query).hits
        assert [h.path for h in hits] == [str(path)], query
    hit = ix.search("hello").hits[0]
    assert (hit.author, hit.created, hit.paths) == ("Zelda Quill", utc(2023, 4, 5), [str(path)])
    assert ix.search("author:nobody").hits == []


def _dated_index(root: Path) -> PageIndex:
    ix = PageIndex(root)
    with ix.writer() as w:
        for label, extra in (("old", {"created": utc(2019, 5, 1)}), ("mid", {"modified": utc(2022, 3, 1)}),
                             ("new", {"created": utc(2024, 8, 1), "modified": utc(2018, 1, 1)}),
                             ("mtime", {"mtime": utc(2023, 1, 2)})):
            pages = [page(1, f"common words {label}")]
            w.add(record(label, f"/d/{label}.pdf", pages, **extra), pages)
    return ix


def test_since_until_and_sort(tmp_path: Path) -> None:
    ix = _dated_index(tmp_path / "ix")

    def paths(**kw: Any) -> list[str]:
        return [h.path for h in ix.search("common", SearchOptions(**kw)).hits]

    assert set(paths(since=utc(2022, 1, 1))) == {"/d/mid.pdf", "/d/new.pdf", "/d/mtime.pdf"}
    assert set(paths(until=utc(2022, 12, 31))) == {"/d/old.pdf", "/d/mid.pdf"}
    # "new" is created 2024 though modified 2018: created decides
    assert paths(since=utc(2024, 1, 1), until=utc(2024, 12, 31)) == ["/d/new.pdf"]
    assert paths(since=utc(2030, 1, 1)) == []
    assert paths(sort="date") == ["/d/new.pdf", "/d/mtime.pdf", "/d/mid.pdf", "/d/old.pdf"]
    assert paths(sort="path") == sorted(paths())
    assert paths(sort="date", limit=2, offset=1) == ["/d/mtime.pdf", "/d/mid.pdf"]
    grouped = ix.search("common", SearchOptions(sort="date", by_document=True)).groups
    assert [g.path for g in grouped] == ["/d/new.pdf", "/d/mtime.pdf", "/d/mid.pdf", "/d/old.pdf"]


def test_cli_since_until_sort(tmp_path: Path) -> None:
    root = tmp_path / "ix"
    _dated_index(root)
    home = tmp_path / "home"
    home.mkdir()
    proc = run(home, "search", "common", "--since", "2022-03-01", "--until", "2023-01-02", "--sort", "date",
               "--json", "--index", root)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [h["path"] for h in out["hits"]] == ["/d/mtime.pdf", "/d/mid.pdf"]
    assert out["hits"][1]["modified"] == utc(2022, 3, 1)
    for bad in (["--since", "2024-13-01"], ["--since", "nan"], ["--sort", "size"],
                ["--since", "2024-02-01", "--until", "2024-01-01"]):
        proc = run(home, "search", "common", *bad, "--index", root)
        assert proc.returncode == 2, (bad, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines()[-1].split(": ", 1)[-1]  # the last line names the problem


def test_outcome_json_keeps_metadata_and_refuses_bad_dates(tmp_path: Path) -> None:
    path = tmp_path / "m.pdf"
    path.write_bytes(pdf(info={"Author": b"Ann", "CreationDate": b"D:20200101"}))
    outcome = extract_outcome(path, sha("m"), [])
    again = Outcome.from_json(outcome.to_json())
    assert again.doc == outcome.doc and again.doc.author == "Ann" and again.doc.created == utc(2020, 1, 1)
    raw = json.loads(outcome.to_json())
    for key, value in (("created", float("nan")), ("created", 1e300), ("created", "2020"), ("paths", [1]),
                       ("paths", "x"), ("author", None)):
        forged = {**raw, "doc": {**raw["doc"], key: value}}
        with pytest.raises(ValueError):
            Outcome.from_json(json.dumps(forged))


# ---- copies --------------------------------------------------------------------

def _planned(ix: PageIndex, *args: Any, **kwargs: Any) -> Plan:
    """``make_plan``, then what an ingest's writer session does first with the plan:
    its path changes (copies of indexed content, pruned paths, documents gone)."""
    plan = make_plan(ix, *args, **kwargs)
    with ix.writer() as writer:
        change_paths(writer, plan.add_paths, plan.prune)
    return plan


def test_copies_under_two_names(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    first = docs / "first.pdf"
    first.write_bytes(pdf(words=b"unique copied words"))
    ix = PageIndex(tmp_path / "ix")
    plan = _planned(ix, [docs], recursive=True, retry_encrypted=False, prune=False)
    assert [j.path for j in plan.jobs] == [first]
    outcome = extract_outcome(first, plan.jobs[0].doc_hash, [])
    ix.add(outcome.doc, outcome.pages)

    other = tmp_path / "elsewhere"
    other.mkdir()
    second = other / "second name.pdf"
    shutil.copyfile(first, second)
    plan = _planned(ix, [docs, other], recursive=True, retry_encrypted=False, prune=False)
    assert plan.jobs == [] and plan.duplicates == 1 and plan.paths_added == 1
    (hit,) = ix.search("copied").hits
    assert hit.paths == [str(first), str(second)]
    assert [h.path for h in ix.search("copied", SearchOptions(path_glob=f"{other}/*")).hits] == [str(first)]
    assert [len(ix.search("copied", SearchOptions(path_glob=str(p))).hits) for p in (first, second)] == [1, 1]
    assert ix.check() == []

    # the first name deleted: the document stays under the second. (Each folder keeps a
    # file: an empty folder whose files are all indexed is taken for an unmounted share
    # and prunes nothing, workers/plan.py prune_scope.)
    for folder in (docs, other):
        (folder / "notes.txt").write_text("not a PDF\n")
    first.unlink()
    plan = _planned(ix, [docs, other], recursive=True, retry_encrypted=False, prune=True)
    assert plan.gone == [] and plan.paths_removed == 1
    (hit,) = ix.search("copied").hits
    assert (hit.path, hit.paths) == (str(second), [str(second)])
    assert [d.path for d in ix.documents()] == [str(second)]

    # the last name gone: the document goes
    second.unlink()
    plan = _planned(ix, [docs, other], recursive=True, retry_encrypted=False, prune=True)
    assert [d.doc_hash for d in plan.gone] == [outcome.doc.doc_hash]


def test_a_copy_replacing_other_content_takes_its_path(tmp_path: Path) -> None:
    ix = PageIndex(tmp_path / "ix")
    a, b = tmp_path / "a.pdf", tmp_path / "b.pdf"
    a.write_bytes(pdf(words=b"alpha content"))
    b.write_bytes(pdf(words=b"beta content"))
    for path in (a, b):
        _ingest(ix, path)
    shutil.copyfile(a, b)  # b now holds a's content
    plan = _planned(ix, [a, b], recursive=False, retry_encrypted=False, prune=False)
    assert plan.jobs == [] and plan.paths_added == 1
    assert ix.search("beta").hits == []  # b's old content had no other path: gone
    (hit,) = ix.search("alpha").hits
    assert hit.paths == [str(a), str(b)]
    assert ix.check() == []


def test_cli_shows_other_paths(tmp_path: Path) -> None:
    root = tmp_path / "ix"
    ix = PageIndex(root)
    pages = [page(1, "shared words here")]
    with ix.writer() as w:
        w.add(record("s", "/one/s.pdf", pages, author="Ann \x1b[31mRed", created=utc(2021, 2, 3)), pages)
        w.add_path(sha("s"), "/two/s copy.pdf")
    home = tmp_path / "home"
    home.mkdir()
    proc = run(home, "search", "shared", "--index", root)
    assert proc.returncode == 0, proc.stderr
    assert "also at /two/s copy.pdf" in proc.stdout
    assert "2021-02-03" in proc.stdout and "by Ann \\x1b[31mRed" in proc.stdout
    assert "\x1b[31m" not in proc.stdout
    out = json.loads(run(home, "search", "shared", "--json", "--index", root).stdout)
    assert out["hits"][0]["paths"] == ["/one/s.pdf", "/two/s copy.pdf"]
    assert out["hits"][0]["author"] == "Ann \x1b[31mRed"


# ---- an index built before metadata -----------------------------------------------

_NEW_FIELDS = ("author", "subject", "keywords", "date", "paths", "created", "modified")


def test_reindex_from_the_previous_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema 2 as it was: the same fields less the new ones, written as it wrote them."""
    root = tmp_path / "ix"

    def old_schema(language: str) -> Any:
        schema = build_schema(language)
        for name in _NEW_FIELDS:
            schema.remove(name)
        return schema

    with monkeypatch.context() as m:
        m.setattr(store, "build_schema", old_schema)
        m.setattr(store, "SCHEMA_VERSION", 2)
        path, whoosh_ix = store.new_generation(root, "en")
        store.switch_to(root, path)
        pages = [page(1, "legacy running text")]
        doc = record("legacy", "/old/legacy.pdf", pages, title="Old one", mtime=utc(2015, 6, 1))
        writer = whoosh_ix.writer()
        for fields in (doc_fields(doc), page_fields(doc, pages[0])):
            writer.add_document(**{k: v for k, v in fields.items() if k not in _NEW_FIELDS
                                   and k != "_stored_paths"})
        writer.commit()
        whoosh_ix.close()
    with pytest.raises(ReindexNeeded):
        PageIndex(root, "en")
    assert reindex(root, "en") == 2
    ix = PageIndex(root, "en")
    (hit,) = ix.search("run").hits
    assert (hit.path, hit.title, hit.author, hit.created, hit.paths) == ("/old/legacy.pdf", "Old one", "", None,
                                                                         ["/old/legacy.pdf"])
    # the date filters fall back on the mtime kept in the old record
    assert ix.search("run", SearchOptions(until=utc(2016, 1, 1))).hits
    assert not ix.search("run", SearchOptions(since=utc(2016, 1, 1))).hits
    assert ix.check() == []
