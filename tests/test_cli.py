"""The ``pdfindex`` command line, run for real in a subprocess
(``python -m cli.main``, the same entry point as the console script).

Errors the user can cause end as exactly one line on stderr naming the file, a
non-zero exit status, and never a traceback.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import font_resources, mono_font, text_line
from tests.pdfwriter import PdfWriter

ROOT = Path(__file__).resolve().parents[1]

PAGE_TEXTS = ["Page one", "Page two\nsecond line", "Page three", ""]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "pdfindex.cli.main", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120)


def _doc(w: PdfWriter) -> bytes:
    res = font_resources(mono_font(w))
    w.add_page(text_line(72, 700, b"(Page one) Tj"), resources=res)
    w.add_page(text_line(72, 700, b"(Page two) Tj") + text_line(72, 680, b"[(second)-400(line)] TJ"),
               resources=res)
    w.add_page(text_line(72, 700, b"(Page three) Tj"), resources=res)
    w.add_page(b"q 0.5 g 72 72 468 648 re f Q", resources=res)  # no text: an image scan
    return w.to_bytes()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    plain = d / "four pages.pdf"
    plain.write_bytes(_doc(PdfWriter()))
    w = PdfWriter()
    w.encrypt("userpw", "ownerpw", method="RC4-128")
    locked = d / "locked.pdf"
    locked.write_bytes(_doc(w))
    w = PdfWriter()
    font = mono_font(w)
    form = w.form_xobject(text_line(72, 500, b"(In form) Tj"), resources=font_resources(font))
    res = font_resources(font)
    res["XObject"] = {"Fm": form}
    # Tokens: BT 0, /F1 1, 10 2, Tf 3, 1 4, Tc 5, 72 6, 700 7, Td 8, (Pg) 9, Tj 10, ET 11.
    w.add_page(b"BT /F1 10 Tf 1 Tc 72 700 Td (Pg) Tj ET /Fm Do", resources=res)
    glyphs = d / "glyphs.pdf"
    glyphs.write_bytes(w.to_bytes())
    notpdf = d / "notes.pdf"
    notpdf.write_text("just some notes, not a PDF\n")
    return {"plain": plain, "locked": locked, "glyphs": glyphs, "notpdf": notpdf, "dir": d}


def _pages(stdout: str) -> list[str]:
    return [part.strip("\n") for part in stdout.split("\f")]


# ---- extract ---------------------------------------------------------------------

def test_extract_plain_separates_pages_with_form_feeds(files: dict[str, Path]) -> None:
    r = run("extract", files["plain"])
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.count("\f") == len(PAGE_TEXTS) - 1  # between pages, not after the last
    assert _pages(r.stdout) == PAGE_TEXTS


@pytest.mark.parametrize(("spec", "expected"), [
    ("2-3", [PAGE_TEXTS[1], PAGE_TEXTS[2]]),
    ("1,3", [PAGE_TEXTS[0], PAGE_TEXTS[2]]),
    ("3-", [PAGE_TEXTS[2], PAGE_TEXTS[3]]),
    ("2", [PAGE_TEXTS[1]]),
])
def test_extract_page_selection(files: dict[str, Path], spec: str, expected: list[str]) -> None:
    r = run("extract", files["plain"], "--pages", spec)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\f") == len(expected) - 1
    assert _pages(r.stdout) == expected


def test_extract_json_structure(files: dict[str, Path]) -> None:
    r = run("extract", files["plain"], "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["file"] == str(files["plain"])
    pages = data["pages"]
    assert [p["page"] for p in pages] == [1, 2, 3, 4]
    assert [p["text"] for p in pages] == PAGE_TEXTS
    for p in pages:
        assert set(p) >= {"page", "text", "glyphs", "unresolved", "coverage", "needs_ocr", "problems"}
        assert isinstance(p["problems"], list)
    # Glyph counts: every drawn glyph, space glyphs included.
    assert [p["glyphs"] for p in pages] == [len("Page one"), len("Page twosecondline"), len("Page three"), 0]
    assert [p["unresolved"] for p in pages] == [0, 0, 0, 0]
    assert [p["coverage"] for p in pages] == [1.0, 1.0, 1.0, None]
    assert [p["needs_ocr"] for p in pages] == [False, False, False, True]
    assert all(p["problems"] == [] for p in pages)


def test_extract_json_with_page_selection(files: dict[str, Path]) -> None:
    r = run("extract", files["plain"], "--json", "--pages", "2-3")
    assert r.returncode == 0, r.stderr
    assert [p["page"] for p in json.loads(r.stdout)["pages"]] == [2, 3]


@pytest.mark.parametrize("password", ["userpw", "ownerpw"])
def test_extract_with_password(files: dict[str, Path], password: str) -> None:
    r = run("extract", files["locked"], "--password", password)
    assert r.returncode == 0, r.stderr
    assert _pages(r.stdout) == PAGE_TEXTS


# ---- glyphs ----------------------------------------------------------------------

R1_FIELDS = {"text", "code", "nbytes", "font", "size", "quad", "origin", "end", "glyph_end",
             "direction", "render_mode", "token"}


def test_glyphs_prints_one_json_object_per_line_with_r1_fields(files: dict[str, Path]) -> None:
    r = run("glyphs", files["glyphs"], "--page", "1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2  # R2: the page stream's own glyphs; the form's are not listed
    p, g = (json.loads(line) for line in lines)
    assert set(p) >= R1_FIELDS
    assert (p["text"], p["code"], p["nbytes"], p["font"], p["size"]) == ("P", 80, 1, "F1", 10)
    assert p["origin"] == [72, 700]
    assert p["glyph_end"] == [77, 700]  # own advance only: 0.5 em × 10
    assert p["end"] == [78, 700]  # pen after Tc 1
    assert p["quad"] == [72, 698, 77, 698, 77, 708, 72, 708]  # descent -2, ascent +8
    assert p["direction"] == [1, 0]
    assert p["render_mode"] == 0
    assert p["token"] == 9 and g["token"] == 9
    assert g["text"] == "g" and g["origin"] == [78, 700]


def test_glyphs_of_encrypted_file_with_password(files: dict[str, Path]) -> None:
    r = run("glyphs", files["locked"], "--page", "1", "--password", "userpw")
    assert r.returncode == 0, r.stderr
    assert "".join(json.loads(line)["text"] for line in r.stdout.splitlines()) == "Page one"


# ---- errors: one line naming the file, non-zero exit, no traceback ------------------

def _assert_one_line_error(r: subprocess.CompletedProcess[str], name: str) -> None:
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    assert r.stderr.endswith("\n") and r.stderr.count("\n") == 1, r.stderr
    assert name in r.stderr
    assert r.stdout == ""


def test_missing_file(files: dict[str, Path]) -> None:
    missing = files["dir"] / "no-such-file.pdf"
    _assert_one_line_error(run("extract", missing), "no-such-file.pdf")
    _assert_one_line_error(run("glyphs", missing, "--page", "1"), "no-such-file.pdf")


def test_not_a_pdf(files: dict[str, Path]) -> None:
    _assert_one_line_error(run("extract", files["notpdf"]), "notes.pdf")
    _assert_one_line_error(run("extract", files["notpdf"], "--json"), "notes.pdf")


def test_empty_file(files: dict[str, Path]) -> None:
    empty = files["dir"] / "empty.pdf"
    empty.write_bytes(b"")
    _assert_one_line_error(run("extract", empty), "empty.pdf")


def test_missing_password(files: dict[str, Path]) -> None:
    r = run("extract", files["locked"])
    _assert_one_line_error(r, "locked.pdf")
    assert "password" in r.stderr.lower()
    _assert_one_line_error(run("glyphs", files["locked"], "--page", "1"), "locked.pdf")


def test_wrong_password(files: dict[str, Path]) -> None:
    r = run("extract", files["locked"], "--password", "guess")
    _assert_one_line_error(r, "locked.pdf")
    assert "password" in r.stderr.lower()


@pytest.mark.parametrize("spec", ["3-1", "abc", "0", "1-x"])
def test_bad_page_range(files: dict[str, Path], spec: str) -> None:
    _assert_one_line_error(run("extract", files["plain"], "--pages", spec), files["plain"].name)


def test_glyphs_page_out_of_range(files: dict[str, Path]) -> None:
    _assert_one_line_error(run("glyphs", files["plain"], "--page", "9"), files["plain"].name)
