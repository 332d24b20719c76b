"""The search page in a real browser (issue 10, item 4): Debian's Chromium driven by
Playwright (``executable_path``; no browser is downloaded), against the real
``pdfindex serve`` on a free loopback port over an index built by the real ingest
from generated PDFs.

Chromium missing is a failure, not a skip: ``.ci/run`` installs it. Set
``PDFINDEX_SCREENSHOT=path.png`` to keep the results page's screenshot (the one in
the README is made so).
"""
from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pdfindex import pipeline
from tests.builders import font_resources, mono_font, text_line
from tests.index_helpers import JIS, cjk_pdf
from tests.ingest_helpers import image_only_pdf, ingest, page_word, parse_summary, run_cli, text_pdf, write
from tests.pdfwriter import PdfWriter, tounicode_cmap
from tests.serve_helpers import Server, start_server

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TOKEN = "browser-test-token-1234"
REPORTS = 25
HEBREW = "שלום"
XSS_TITLE = "<script>alert(1)</script>"
XSS_NAME = "<img src=x onerror=alert(1)>.pdf"
#: The mark's colour over a white page: (255, 214, 0) at alpha 90 (server/page_image.py).
MARK_ON_WHITE = (255, 245, 166)
#: Pages of plenty.pdf: more than COUNT_CAP (contract/limits.py) match "plentiful".
PLENTY = 1005


def _doubtful_pdf() -> bytes:
    """One line the index can read and eight glyphs of a font the page lacks:
    coverage about 0.6, below the page's "doubtful" line but not needing OCR."""
    w = PdfWriter()
    content = (b"BT /F1 12 Tf 72 700 Td (doubtword is here) Tj ET\n"
               b"BT /F9 12 Tf 72 650 Td (xxxxxxxxxx) Tj ET\n")
    w.add_page(content, resources=font_resources(mono_font(w)))
    return w.to_bytes()


def _plenty_pdf(pages: int) -> bytes:
    """``pages`` pages saying "plentiful" one to seven times: more matches than a
    search counts by default (COUNT_CAP), with scores that differ, so that the
    count stops at the cap."""
    w = PdfWriter()
    res = font_resources(mono_font(w))
    for n in range(pages):
        w.add_page(text_line(72, 700, b"(%s page %d) Tj" % (b"plentiful " * (n % 7 + 1), n)), resources=res)
    return w.to_bytes()


def _word_pdf(word: str) -> bytes:
    """One page with one line holding ``word`` (and not "Quarterly report", which
    the paging test counts)."""
    w = PdfWriter()
    w.add_page(text_line(72, 700, b"(a line with %s in it) Tj" % word.encode()), resources=font_resources(mono_font(w)))
    return w.to_bytes()


def _hebrew_pdf() -> bytes:
    """A Hebrew word drawn left to right, as producers of right-to-left text do."""
    w = PdfWriter()
    font = mono_font(w, to_unicode=tounicode_cmap([(b"a", "ם"), (b"b", "ו"), (b"c", "ל"), (b"d", "ש")]))
    w.add_page(text_line(72, 700, b"(abcd) Tj"), resources=font_resources(font))
    return w.to_bytes()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("page")
    docs, index = base / "docs", base / "index"
    for n in range(REPORTS):
        write(docs / f"report-{n:02d}.pdf", text_pdf(f"rep{n}", 1))
    files = {
        "volcano": write(docs / "volcano.pdf", text_pdf("volc", 2, title="Volcano survey")),
        "doubtful": write(docs / "doubtful.pdf", _doubtful_pdf()),
        "scan": write(docs / "scan.pdf", image_only_pdf()),
        "xss": write(docs / XSS_NAME, text_pdf("xss", 1, title=XSS_TITLE)),
        "cjk": write(docs / "tokyo.pdf", cjk_pdf([["東京都の天気予報"]], JIS)),
        "hebrew": write(docs / "hebrew.pdf", _hebrew_pdf()),
    }
    # Identical copies under three names (one of them in another folder), files that
    # will be gone or changed, and a match for more pages than are counted.
    twin = _word_pdf("twinword")
    files["copy-one"] = write(docs / "copy-one.pdf", twin)
    files["copy-two"] = write(docs / "copy-two.pdf", twin)
    files["elsewhere"] = write(base / "elsewhere" / "copy.pdf", twin)
    files["vanish"] = write(docs / "vanish.pdf", _word_pdf("vanishword"))
    files["altered"] = write(docs / "altered.pdf", _word_pdf("alteredword"))
    files["plenty"] = write(docs / "plenty.pdf", _plenty_pdf(PLENTY))
    summary = parse_summary(ingest(index, docs, base / "elsewhere").stdout)
    # the scan has no text; the second and third copies are known content
    assert (summary.indexed, summary.empty, summary.unchanged) == (REPORTS + len(files) - 3, 1, 2), summary
    open_server = start_server(index, log_dir=base)
    locked = start_server(index, token=TOKEN, log_dir=base)
    try:
        yield {"index": index, "files": files, "open": open_server, "locked": locked}
    finally:
        open_server.stop()
        locked.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM}: Debian's chromium is not installed (.ci/run installs it)"
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    tab.set_default_timeout(15_000)
    try:
        yield tab
    finally:
        context.close()
        assert dialogs == [], f"a script ran: {dialogs}"


def _search(tab: Any, server: Server, query: str) -> None:
    tab.goto(server.base_url + "/")
    tab.fill("#q", query)
    with tab.expect_navigation():
        tab.press("#q", "Enter")


def _hits(tab: Any) -> list[tuple[str, str]]:
    """(file name, page) of each hit shown."""
    return [(h.locator(".file a").first.inner_text(), h.locator(".page").inner_text())
            for h in tab.locator("ol.hits > li.hit").all()]


def test_a_query_typed_and_entered_shows_its_hit_with_the_word_marked(site: dict[str, Any], page: Any) -> None:
    server = site["open"]
    page.goto(server.base_url + "/")
    assert page.evaluate("document.activeElement.id") == "q"  # focus on the box at load
    page.keyboard.type(page_word("volc", 1))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert _hits(page) == [("volcano.pdf", "page 1")]
    assert page.locator(".hit mark").all_inner_texts() == [page_word("volc", 1)]
    assert "Volcano survey" in page.locator(".hit .meta").first.inner_text()
    assert page.locator(".badge.ok").count() == 1
    assert page.locator(".hit details.marked summary").inner_text() == "Show the page with the matches marked"
    shot = os.environ.get("PDFINDEX_SCREENSHOT")
    _search(page, server, "volcano OR quarterly report")
    page.click(".hit details.marked summary")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0",
                           arg=page.locator(".hit details.marked img").first.element_handle())
    page.screenshot(path=shot or str(site["index"].parent / "results.png"))


def test_results_are_reached_by_tab(site: dict[str, Any], page: Any) -> None:
    _search(page, site["open"], "quarterly")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('li.hit')"):
            return
    pytest.fail("no result got the focus after 40 Tabs")


def test_pages_of_results_hold_different_hits_and_cover_all(site: dict[str, Any], page: Any) -> None:
    _search(page, site["open"], "quarterly")
    seen: list[tuple[str, str]] = []
    # every text_pdf file says "Quarterly report": the reports, the volcano (2 pages), the xss file
    total = REPORTS + 3
    for number in range(1, 10):
        shown = _hits(page)
        assert shown and len(shown) <= 10
        assert _summary(page) == f"Results {len(seen) + 1}–{len(seen) + len(shown)} of {total} pages"
        seen += shown
        assert page.locator("nav.pages [aria-current=page]").inner_text() == str(number)
        if page.locator("a[rel=next]").count() == 0:
            break
        with page.expect_navigation():
            page.click("a[rel=next]")
    assert len(seen) == len(set(seen)) == total
    with page.expect_navigation():
        page.click("a[rel=prev]")
    assert page.locator("nav.pages [aria-current=page]").inner_text() == "2"


def _summary(tab: Any) -> str:
    return " ".join(tab.locator("p.summary").inner_text().split())


def _page_numbers(tab: Any) -> list[str]:
    """The page-number row: numbers, "…" for a gap, the current one in brackets."""
    return [f"[{item.inner_text()}]" if item.locator("[aria-current=page]").count() else item.inner_text()
            for item in tab.locator("nav.pages ol > li").all()]


def test_page_numbers_are_links_the_keyboard_reaches(site: dict[str, Any], page: Any) -> None:
    _search(page, site["open"], "quarterly")
    assert _summary(page) == f"Results 1–10 of {REPORTS + 3} pages"
    assert _page_numbers(page) == ["[1]", "2", "3"]
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('aria-label')") == "page 3":
            break
    else:
        pytest.fail("the link to page 3 got no focus after 80 Tabs")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert _summary(page) == f"Results 21–{REPORTS + 3} of {REPORTS + 3} pages"
    assert _page_numbers(page) == ["1", "2", "[3]"]
    assert page.locator("a[rel=next]").count() == 0


def test_a_count_stopped_at_its_cap_is_shown_as_at_least(site: dict[str, Any], page: Any) -> None:
    """Past 1,000 matches the count stops ("1,000+", as the CLI says): the last page
    is not known, so there is no link to it, a gap says there are more, and each
    full page has a next one."""
    server = site["open"]
    _search(page, server, "plentiful")
    assert _summary(page) == "Results 1–10 of 1,000+ pages"
    assert _page_numbers(page) == ["[1]", "2", "3", "…"]
    page.goto(server.base_url + "/?q=plentiful&page=100")
    assert _summary(page) == "Results 991–1,000 of 1,000+ pages"
    assert _page_numbers(page) == ["1", "…", "98", "99", "[100]", "…"]
    with page.expect_navigation():
        page.click("a[rel=next]")
    # the last page, not full: now the total is known
    assert _summary(page) == f"Results 1,001–{PLENTY:,} of {PLENTY:,} pages"
    assert page.locator("a[rel=next]").count() == 0


def test_filters_coverage_needs_ocr_and_grouping(site: dict[str, Any], page: Any) -> None:
    server = site["open"]
    _search(page, server, "doubtword")
    assert _hits(page) == [("doubtful.pdf", "page 1")]
    assert "text doubtful" in page.locator(".badge.warn").inner_text()
    page.click("details.filters summary")
    page.select_option("select[name=min_coverage]", "0.9")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert _hits(page) == []
    assert page.locator("details.filters").get_attribute("open") is not None  # the filters stay visible
    # Pages needing OCR, without a query.
    page.goto(server.base_url + "/")
    page.click("details.filters summary")
    page.select_option("select[name=needs_ocr]", "yes")
    with page.expect_navigation():
        page.press("#q", "Enter")
    assert _hits(page) == [("scan.pdf", "page 1")]
    assert page.locator(".badge.ocr").inner_text() == "needs OCR"
    # nothing to mark without a query: the page is offered as it is
    assert page.locator(".hit details.marked summary").inner_text() == "Show the page"
    image = page.locator(".hit details.marked img")
    assert "q=" not in image.get_attribute("src") and "marked" not in image.get_attribute("alt")
    # Grouped by document: the volcano file once, with its two pages.
    _search(page, server, "volczq1w OR volczq2w")
    page.click("details.filters summary")
    page.check("input[name=by_document]")
    with page.expect_navigation():
        page.click("button[type=submit]")
    groups = page.locator("li.group")
    assert groups.count() == 1
    assert groups.locator(".file a").first.inner_text() == "volcano.pdf"
    assert sorted(groups.locator("li.hit .file a").all_inner_texts()) == ["page 1", "page 2"]


def _word_box(pdf: Path, word: str, page_number: int) -> tuple[float, float, float, float]:
    """The word's box in PDF user space (x0, y0, x1, y1), from our own glyphs."""
    (page,) = pipeline.iter_pages(pipeline.PdfFile(pdf.read_bytes()), [page_number], keep_glyphs=True)
    text = "".join(g.text for g in page.glyphs)
    start = text.index(word)
    quads = [g.quad for g in page.glyphs[start:start + len(word)]]
    xs = [q[i] for q in quads for i in (0, 2, 4, 6)]
    ys = [q[i] for q in quads for i in (1, 3, 5, 7)]
    return min(xs), min(ys), max(xs), max(ys)


def test_the_marked_page_image_boxes_the_word_where_it_is(site: dict[str, Any], page: Any) -> None:
    server = site["open"]
    word = page_word("volc", 2)
    _search(page, server, word)
    page.click(".hit details.marked summary")
    image = page.locator(".hit details.marked img")
    image.wait_for(state="visible")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    response = page.request.get(server.base_url + image.get_attribute("src"))
    assert response.status == 200 and response.headers["content-type"] == "image/png"
    png = Image.open(io.BytesIO(response.body())).convert("RGB")
    x0, y0, x1, y1 = _word_box(site["files"]["volcano"], word, 2)
    scale = png.width / 612  # the generated pages are US Letter
    cx, cy = (x0 + x1) / 2 * scale, png.height - (y0 + y1) / 2 * scale
    # Inside the word's box the page is marked (the mark over white, or over a glyph's ink)...
    inside = [png.getpixel((int(cx + dx), int(cy + dy))) for dx in (-6, -3, 0, 3, 6) for dy in (-2, 0, 2)]
    assert any(_close(p, MARK_ON_WHITE) for p in inside), inside
    assert all(p[2] < 200 for p in inside), inside  # no pure white: everything there is under the mark
    # ... and nowhere else: the line above (other words) and an empty margin are not.
    above = png.getpixel((int(cx), int(cy - 20 * scale)))
    margin = png.getpixel((int(20 * scale), int(cy)))
    assert not _close(above, MARK_ON_WHITE) and not _close(margin, MARK_ON_WHITE), (above, margin)


def _close(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour, strict=False))


def test_the_pdf_link_opens_the_file_at_the_page(site: dict[str, Any], page: Any) -> None:
    server = site["open"]
    _search(page, server, page_word("volc", 2))
    href = page.locator(".hit .file a").first.get_attribute("href")
    assert href.endswith("/pdf#page=2")
    response = page.request.get(server.base_url + href.split("#")[0])
    assert response.status == 200 and response.headers["content-type"] == "application/pdf"
    assert response.body() == site["files"]["volcano"].read_bytes()


def test_the_token_is_asked_once_and_kept_for_the_session(site: dict[str, Any], page: Any) -> None:
    server = site["locked"]
    query = page_word("volc", 1)
    page.goto(f"{server.base_url}/?q={query}")
    assert "/signin" in page.url
    assert page.evaluate("document.activeElement.id") == "token"
    page.fill("#token", "wrong-token-000")
    with page.expect_navigation():
        page.press("#token", "Enter")
    assert "not the token" in page.locator(".error").inner_text()
    page.fill("#token", TOKEN)
    with page.expect_navigation():
        page.press("#token", "Enter")
    assert page.url == f"{server.base_url}/?q={query}"  # back where it was going
    assert _hits(page) == [("volcano.pdf", "page 1")]
    cookies = page.context.cookies()
    assert [c["name"] for c in cookies] == ["pdfindex_session"]
    assert cookies[0]["httpOnly"] and cookies[0]["sameSite"] == "Strict" and TOKEN not in cookies[0]["value"]
    assert cookies[0]["expires"] == -1  # for the browser session only
    href = page.locator(".hit .file a").first.get_attribute("href")
    assert page.request.get(server.base_url + href.split("#")[0]).status == 200  # the cookie opens the PDF too
    page.goto(server.base_url + "/")
    assert "/signin" not in page.url


def test_hostile_titles_and_file_names_are_shown_as_text(site: dict[str, Any], page: Any) -> None:
    _search(page, site["open"], page_word("xss", 1))
    assert _hits(page) == [(XSS_NAME, "page 1")]
    assert page.locator(".hit .meta").first.inner_text() == XSS_TITLE
    assert page.locator("script").count() == 0 and page.locator("main img[onerror]").count() == 0


def test_a_word_no_page_holds_with_the_others_is_shown_as_missing(site: dict[str, Any], page: Any) -> None:
    _search(page, site["open"], page_word("volc", 1) + " <b>zzqx</b>")
    assert _hits(page) == [("volcano.pdf", "page 1")]
    assert page.locator(".hit .missing s").all_inner_texts() == ["<b>zzqx</b>"]  # shown as text
    assert "showing pages that hold 1 of them" in page.locator(".summary").inner_text()


def test_cjk_and_right_to_left_text(site: dict[str, Any], page: Any) -> None:
    server = site["open"]
    _search(page, server, "天気")
    assert _hits(page) == [("tokyo.pdf", "page 1")]
    assert "".join(page.locator(".hit mark").all_inner_texts()) == "天気"
    _search(page, server, HEBREW)
    assert _hits(page) == [("hebrew.pdf", "page 1")]
    snippet = page.locator(".hit .snippet")
    assert HEBREW in snippet.inner_text()
    assert snippet.evaluate("el => getComputedStyle(el).direction") == "rtl"


def test_a_hit_shows_its_folder_and_the_other_paths_of_its_copies(site: dict[str, Any], page: Any) -> None:
    files = site["files"]
    _search(page, site["open"], "twinword")
    ((name, _),) = _hits(page)
    first = files["copy-one"] if name == "copy-one.pdf" else files["copy-two"]
    where = page.locator(".hit .where")
    assert where.get_attribute("title") == str(first)  # the whole path, at hand
    folder = where.inner_text()
    shown = folder.split("/…/")
    assert str(first.parent).endswith(shown[-1]) and (len(shown) == 1 or str(first.parent).startswith(shown[0]))
    copies = page.locator(".hit .copies")
    assert copies.inner_text().startswith("also at ")
    titles = [c.get_attribute("title") for c in copies.locator("span").all()]
    assert sorted(titles) == sorted(str(p) for p in (files["copy-one"], files["copy-two"], files["elsewhere"])
                                    if p != first)
    assert {t.rsplit("/", 1)[-1] for t in copies.locator("span").all_inner_texts()} == (
        {"copy.pdf", "copy-two.pdf"} if first == files["copy-one"] else {"copy.pdf", "copy-one.pdf"})


def test_a_hit_whose_file_is_gone_says_how_to_take_it_off(site: dict[str, Any], page: Any) -> None:
    """The hit says so in place of its page image, with the command; its link (and
    the image's address, opened in a tab) is an HTML page saying the same, not the
    API's JSON."""
    server, index, path = site["open"], site["index"], site["files"]["vanish"]
    path.unlink()
    mend = f"pdfindex remove --index {index} {path}"
    _search(page, server, "vanishword")
    assert _hits(page) == [("vanish.pdf", "page 1")]
    notice = page.locator(".hit .gone")
    assert "The file is gone" in notice.inner_text() and notice.locator("code").inner_text() == mend
    assert page.locator(".hit details.marked").count() == 0
    image = f"/api/documents/{_hash(site, path)}/pages/1.png?q=vanishword"
    with page.expect_navigation():
        page.click(".hit .file a")
    for _ in range(2):
        assert page.locator("h1").inner_text() == "This file is gone"
        assert page.locator("main").inner_text().count(str(path)) == 2  # the path, then the command
        assert page.locator("pre code").all_inner_texts() == [mend]
        assert page.title() == "File gone · pdfindex"
        page.goto(server.base_url + image)


def test_a_hit_whose_file_changed_says_to_ingest_it_again(site: dict[str, Any], page: Any) -> None:
    server, index, path = site["open"], site["index"], site["files"]["altered"]
    with path.open("ab") as fh:
        fh.write(b"\n% changed after the ingest\n")
    _search(page, server, "alteredword")
    assert page.locator(".hit .gone").count() == 0  # it is there; only opening it can tell it changed
    with page.expect_navigation():
        page.click(".hit .file a")
    assert page.locator("h1").inner_text() == "This file has changed since it was indexed"
    assert page.locator("pre code").all_inner_texts() == [f"pdfindex ingest --index {index} {path}"]


def _hash(site: dict[str, Any], path: Path) -> str:
    listing = json.loads(run_cli("list", "--json", "--index", site["index"]).stdout)
    (doc_hash,) = [d["doc_hash"] for d in listing["documents"] if str(path) in d["paths"]]
    return str(doc_hash)


def test_readable_on_a_phone_width_window(site: dict[str, Any], browser: Any) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True)
    try:
        tab = context.new_page()
        _search(tab, site["open"], "quarterly")
        assert len(_hits(tab)) == 10
        assert tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        box = tab.locator("#q").bounding_box()
        assert box is not None and box["width"] > 200
    finally:
        context.close()
