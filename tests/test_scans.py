"""Checks of the scanned-page builder itself (tests/scans.py), not of OCR: what pdfium
reads back from each variant (no text, one image per page, its pixel size, dpi, depth
and filter), that the degradations do what their names say, that a turned placement
renders turned, and that the hostile files build and open in little memory."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import PDFStream, resolve1
from pdfminer.psparser import LIT
from PIL import Image, ImageChops, ImageDraw, ImageStat

from tests import scans
from tests.pdfwriter import PdfWriter

PAGE = (306, 396)  # half-letter sides: small pages keep 300 dpi renders quick
LINES = {1: [b"Scanned page one", b"Known text here"], 2: [b"Second page", b"More words"]}
ROOT = Path(__file__).resolve().parent.parent
GIB = 1 << 30


def _source() -> bytes:
    """Two born-digital pages of large Helvetica text near their top left corner."""
    w = PdfWriter()
    font = w.standard_font("Helvetica")
    for lines in LINES.values():
        content = b"".join(b"BT /F1 24 Tf 20 %d Td (%s) Tj ET\n" % (340 - 40 * k, line)
                           for k, line in enumerate(lines))
        w.add_page(content, media_box=(0, 0, *PAGE), resources={"Font": {"F1": font}})
    return w.to_bytes()


SOURCE = _source()


def _diff(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute grey difference of two images of one size (0 equal, 255 opposite)."""
    assert a.size == b.size
    return float(ImageStat.Stat(ImageChops.difference(a.convert("L"), b.convert("L"))).mean[0])


def _mean(img: Image.Image, box: tuple[int, int, int, int] | None = None) -> float:
    return float(ImageStat.Stat(img.convert("L").crop(box) if box else img.convert("L")).mean[0])


def _pages(data: bytes) -> Iterator[tuple[pdfium.PdfPage, str, list[pdfium.PdfImage]]]:
    """Each page with its text as pdfium reads it and its image objects."""
    doc = pdfium.PdfDocument(data)
    for page in doc:
        text = page.get_textpage().get_text_range()
        yield page, text, list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]))


def _image_stream(data: bytes, number: int = 1) -> PDFStream:
    """The /Im0 stream of a page, as pdfminer parses it (raw data still encoded)."""
    doc = PDFDocument(PDFParser(io.BytesIO(data)))
    page = list(PDFPage.create_pages(doc))[number - 1]
    stream = resolve1(resolve1(resolve1(page.resources)["XObject"])["Im0"])
    assert isinstance(stream, PDFStream)
    return stream


def _raw(data: bytes, number: int = 1) -> bytes:
    """The /Im0 stream's data as stored (still encoded)."""
    raw = _image_stream(data, number).rawdata
    assert raw is not None
    return raw


def _sample(size: tuple[int, int] = (200, 100)) -> Image.Image:
    """An asymmetric grey image: a black block at its top left, a grey bar at its bottom."""
    img = Image.new("L", size, 255)
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, size[0] // 4, size[1] // 4), fill=0)
    draw.rectangle((size[0] // 2, size[1] - 10, size[0] - 1, size[1] - 1), fill=128)
    return img


# -------------------------------------------------------------- degradations
def test_render_pages_greyscale_at_dpi() -> None:
    images = scans.render_pages(SOURCE, 150)
    # 306 x 396 pt at 150 dpi is 637.5 x 825 pixels: half a pixel rounds up
    assert [(img.mode, img.size) for img in images] == [("L", (638, 825))] * 2
    assert all(img.getextrema() == (0, 255) for img in images)  # black text on white paper


def test_rotate_turns_clockwise() -> None:
    img = _sample()
    assert _black_corner(scans.rotate(img, 1)) == "top right"
    assert _black_corner(scans.rotate(img, 2)) == "bottom right"
    assert _black_corner(scans.rotate(img, 3)) == "bottom left"
    assert scans.rotate(img, 1).size == (100, 200)
    assert scans.rotate(img, 4).tobytes() == img.tobytes()
    assert scans.rotate(img, -1).tobytes() == scans.rotate(img, 3).tobytes()


def _black_corner(img: Image.Image) -> str:
    """Which corner of ``img`` is black (the _sample's block after a turn)."""
    w, h = img.size
    corners = {"top left": (0, 0), "top right": (w - 1, 0), "bottom right": (w - 1, h - 1),
               "bottom left": (0, h - 1)}
    (name,) = [name for name, xy in corners.items() if img.getpixel(xy) == 0]
    return name


def test_skew_expands_with_white_corners() -> None:
    img = _sample((400, 300))
    out = scans.skew(img, 3)
    assert out.mode == "L"
    assert out.width > img.width and out.height > img.height  # nothing of the page is cut
    assert out.getpixel((out.width - 1, 0)) == 255 and out.getpixel((0, out.height - 1)) == 255
    assert scans.skew(img, 0).size == img.size
    # counter-clockwise: the black block at the top left moves down along the left side
    assert _mean(out, (0, out.height // 10, 10, out.height // 10 + 1)) < 128


def test_jpeg_bytes_and_round_trip() -> None:
    img = Image.linear_gradient("L")
    data = scans.jpeg(img, 40)
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9"
    assert scans.sof_size(data) == img.size
    assert len(scans.jpeg(img, 90)) > len(data)
    again = scans.jpeg_image(img, 40)
    assert (again.mode, again.size) == ("L", img.size)
    assert 0 < _diff(again, img) < 3  # lossy, but the same picture


def test_fax_is_bilevel_with_half_the_rows() -> None:
    img = _sample((200, 101))
    out = scans.fax(img)
    assert (out.mode, out.size) == ("1", (200, 50))
    assert set(out.convert("L").tobytes()) == {0, 255}
    assert out.getpixel((0, 0)) == 0 and out.getpixel((199, 10)) == 255
    # the grey bar (128) is white at the default threshold and black above it
    assert out.getpixel((150, 47)) == 255 and scans.fax(img, threshold=200).getpixel((150, 47)) == 0


def test_phone_is_seeded_blurred_and_unevenly_lit() -> None:
    white = Image.new("L", (300, 400), 255)
    shot = scans.phone(white, 7)
    assert shot.tobytes() == scans.phone(white, 7).tobytes()
    assert shot.tobytes() != scans.phone(white, 8).tobytes()
    quarters = [_mean(shot, (x, y, x + 150, y + 200)) for y in (0, 200) for x in (0, 150)]
    assert max(quarters) > 225 and min(quarters) < max(quarters) - 40  # one corner in the shade
    sharp = scans.phone(_sample((300, 400)), 7)  # its black block ends at column 75
    column = [_mean(sharp, (x, 20, x + 1, 80)) for x in (10, 75, 76, 100)]
    assert column[0] == 0 and column[1] > 10 and column[2] < column[3] - 20  # a soft edge


# --------------------------------------------------------------- image_pdf
def test_image_pdf_content_and_dictionary() -> None:
    img = _sample((612, 792))
    data = scans.image_pdf([scans.ScanPage(img, (72, 72))])
    assert b"q 612 0 0 792 0 0 cm /Im0 Do Q" in data
    stream = _image_stream(data)
    assert {k: resolve1(v) for k, v in stream.attrs.items() if k != "Length"} == {
        "Type": LIT("XObject"), "Subtype": LIT("Image"), "Width": 612, "Height": 792,
        "ColorSpace": LIT("DeviceGray"), "BitsPerComponent": 8, "Filter": LIT("FlateDecode")}
    assert stream.get_data() == img.tobytes()


def test_jpeg_page_stores_the_exact_bytes() -> None:
    data = scans.jpeg(_sample(), 30)
    pdf = scans.image_pdf([scans.ScanPage(data, (144, 144))])
    assert _raw(pdf) == data
    (page, text, (image,)), = _pages(pdf)
    assert (page.get_size(), text, image.get_filters(), image.get_px_size()) == ((100, 50), "", ["DCTDecode"], (200, 100))


def test_bilevel_and_g4_render_as_the_fax_image() -> None:
    """The 1-bit polarity is right (1 = white) in Flate and in CCITT G4: both pages
    render exactly as the fax image, its rows doubled back to square pixels."""
    fax = scans.fax(_sample((400, 300)))
    expected = fax.convert("L").resize((400, 300), Image.Resampling.NEAREST)
    for encoding in ("bilevel", "g4"):
        (page, _, (image,)), = _pages(scans.image_pdf([scans.ScanPage(fax, (72, 36), encoding)]))
        assert page.get_size() == (400, 300)
        meta = image.get_metadata()
        assert (meta.bits_per_pixel, meta.horizontal_dpi, meta.vertical_dpi) == (1, 72, 36)
        assert _diff(page.render(scale=1, grayscale=True).to_pil(), expected) < 1


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_turned_placement_renders_turned(turns: int) -> None:
    img = _sample()
    pdf = scans.image_pdf([scans.ScanPage(img, (72, 72), quarter_turns=turns)])
    (page, _, (image,)), = _pages(pdf)
    assert image.get_px_size() == (200, 100)  # the stored pixels stay as they were
    assert page.get_size() == scans.rotate(img, turns).size
    assert _diff(page.render(scale=1, grayscale=True).to_pil(), scans.rotate(img, turns)) < 2
    # pdfium's dpi divides the pixel width by the width of the box the image covers on
    # the page, turned or not: a quarter turn reads 200 px over 100 pt and 100 px over 200 pt
    meta = image.get_metadata()
    assert (round(meta.horizontal_dpi), round(meta.vertical_dpi)) == ((144, 36) if turns % 2 else (72, 72))
    if turns == 1:
        assert b"q 0 -200 100 0 0 200 cm /Im0 Do Q" in pdf


def test_text_layer_over_the_image() -> None:
    page = scans.ScanPage(_sample(), (72, 72), text=b"BT /F1 12 Tf 10 60 Td (Layer words) Tj ET\n")
    (_, text, images), = _pages(scans.image_pdf([page]))
    assert text == "Layer words" and len(images) == 1


# ---------------------------------------------------------------- variants
_W, _H = PAGE[0] * 300 // 72, PAGE[1] * 300 // 72  # 1275 x 1650 pixels at 300 dpi
VARIANTS: list[tuple[str, dict[str, Any], tuple[int, int], tuple[int, int], str, int]] = [
    # variant, params, pixel size, (x, y) dpi, filter, bits per pixel
    ("clean", {}, (_W, _H), (300, 300), "FlateDecode", 8),
    ("jpeg", {"quality": 45}, (_W, _H), (300, 300), "DCTDecode", 8),
    ("rotated", {"quarter_turns": 1}, (_H, _W), (300, 300), "FlateDecode", 8),
    # pdfium's dpi of a turned placement: the pixel width over the page's width (see above)
    ("rotated", {"quarter_turns": 1, "placement": True}, (_H, _W), (388, 232), "FlateDecode", 8),
    ("fax", {}, (850, 550), (200, 100), "FlateDecode", 1),
    ("fax", {"g4": True}, (850, 550), (200, 100), "CCITTFaxDecode", 1),
    ("phone", {"seed": 3}, (638, 825), (150, 150), "DCTDecode", 8),
]


@pytest.mark.parametrize(("variant", "params", "pixels", "dpi", "filt", "bpp"), VARIANTS)
def test_variant_pages(variant: str, params: dict[str, Any], pixels: tuple[int, int],
                       dpi: tuple[int, int], filt: str, bpp: int) -> None:
    """Image-only: no text; one image per page, of the stated pixel size, dpi, depth and
    filter, drawn over a page of the source's size (turned for a turned sheet)."""
    pages = list(_pages(scans.scanned(SOURCE, variant, **params)))
    assert len(pages) == 2
    for page, text, images in pages:
        assert text == "" and len(images) == 1
        meta = images[0].get_metadata()
        assert images[0].get_px_size() == pixels and images[0].get_filters() == [filt]
        assert (round(meta.horizontal_dpi), round(meta.vertical_dpi)) == dpi
        assert (meta.bits_per_pixel, meta.colorspace) == (bpp, pdfium_c.FPDF_COLORSPACE_DEVICEGRAY)
        sideways = variant == "rotated" and not params.get("placement")
        assert page.get_size() == pytest.approx(PAGE[::-1] if sideways else PAGE, abs=0.5)


def _expected(variant: str, params: dict[str, Any]) -> tuple[float, Image.Image]:
    """The dpi a variant's page 1 is rendered at and what it must look like there: the
    degradation applied to the source page's own render."""
    source = {dpi: scans.render_pages(SOURCE, dpi)[0] for dpi in (150, 200, 300)}
    if variant == "fax":
        return 200, scans.fax(source[200]).convert("L").resize(source[200].size, Image.Resampling.NEAREST)
    if variant == "phone":
        return 150, scans.jpeg_image(scans.phone(source[150], params["seed"]), 85)
    page = {"clean": lambda img: img, "jpeg": lambda img: scans.jpeg_image(img, params.get("quality", 50)),
            "skew": lambda img: scans.skew(img, params.get("degrees", 1.5)),
            "rotated": lambda img: img if params.get("placement") else scans.rotate(img, params["quarter_turns"])}
    return 300, page[variant](source[300])


@pytest.mark.parametrize(("variant", "params"), [
    ("clean", {}), ("jpeg", {"quality": 40}), ("skew", {"degrees": 2}), ("fax", {}), ("fax", {"g4": True}),
    ("phone", {"seed": 5}), ("rotated", {"quarter_turns": 3}), ("rotated", {"quarter_turns": 1, "placement": True}),
])
def test_variant_renders_as_its_degradation(variant: str, params: dict[str, Any]) -> None:
    """Page 1 of each scan, rendered at its own resolution, is the degraded source page
    pixel for pixel (within pdfium's resampling): what OCR will see is what we meant."""
    dpi, expected = _expected(variant, params)
    scan = scans.render_pages(scans.scanned(SOURCE, variant, **params), dpi)[0]
    assert scan.size == expected.size
    # pdfium's JPEG decoder rounds differently from Pillow's, which shows on phone noise
    assert _diff(scan, expected) < (3 if variant == "phone" else 0.5)


def test_skew_variant_grows_the_page() -> None:
    (page, text, (image,)), _ = _pages(scans.scanned(SOURCE, "skew", degrees=2))
    width, height = image.get_px_size()
    assert width > _W and height > _H and text == ""
    assert page.get_size() == pytest.approx((width * 72 / 300, height * 72 / 300), abs=0.01)


def test_mixed_keeps_page_one_born_digital() -> None:
    """Page 1 is the source page copied through (its own text layer, no image); the
    others are scans with no text."""
    (first, text1, images1), (_, text2, images2) = _pages(scans.scanned(SOURCE, "mixed"))
    (source_first, source_text, _), _ = _pages(SOURCE)
    assert text1 == source_text and "Scanned page one" in text1 and images1 == []
    assert first.get_size() == source_first.get_size()
    assert text2 == "" and len(images2) == 1 and images2[0].get_px_size() == (_W, _H)


def test_unknown_variant_and_kind() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        scans.scanned(SOURCE, "sepia")
    with pytest.raises(ValueError, match="unknown hostile image"):
        scans.hostile_pdf("zip_bomb")
    assert set(scans.VARIANTS) == {"clean", "skew", "rotated", "jpeg", "fax", "phone", "mixed"}


# ------------------------------------------------------------------ hostile
_CHILD = """
import json, resource, sys
import pypdfium2 as pdfium
from tests import scans
def peak(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
base = peak()
kind = sys.argv[1]
data = scans.hostile_pdf(kind)
doc = pdfium.PdfDocument(data)
page = doc[0]
(image,) = page.get_objects(filter=[3])  # FPDF_PAGEOBJ_IMAGE
out = {"size": len(data), "pixels": image.get_px_size(), "filters": image.get_filters(),
       "text": page.get_textpage().get_text_range()}
if kind != "flate_bomb":  # pdfium inflates it whole (1.6 GB): that is the stage's job to bound
    try:
        out["rendered"] = page.render(scale=0.5, grayscale=True).to_pil().size
    except pdfium.PdfiumError as error:
        out["rendered"] = str(error)
out["grown"] = peak() - base
print(json.dumps(out))
"""

HOSTILE = {
    # kind: (stated pixels, filter)
    "huge_jpeg_header": ((65535, 65535), "DCTDecode"),
    "flate_bomb": ((40000, 40000), "FlateDecode"),
    "jbig2": ((256, 128), "JBIG2Decode"),
    "truncated_jpeg": ((1000, 1000), "DCTDecode"),
    "lying_size": ((10, 10), "FlateDecode"),
}


@pytest.mark.parametrize("kind", scans.HOSTILE_KINDS)
def test_hostile_files_open_in_little_memory(kind: str) -> None:
    """Built and opened (rendered, when pdfium would not inflate a bomb) in a child
    process whose peak memory grows by under 100 MB; the page keeps its text layer."""
    run = subprocess.run([sys.executable, "-c", _CHILD, kind], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    pixels, filt = HOSTILE[kind]
    assert (tuple(out["pixels"]), out["filters"], out["text"]) == (pixels, [filt], "Before the image")
    assert out["size"] < 4 << 20 and out["grown"] < 100 << 20
    if kind != "flate_bomb":
        assert out["rendered"] == [306, 396]


def test_huge_jpeg_header_claims_gigapixels() -> None:
    data = _raw(scans.hostile_pdf("huge_jpeg_header"))
    assert scans.sof_size(data) == (65535, 65535) and len(data) < 1000
    small = scans.hostile_pdf("huge_jpeg_header", declared=(16, 16))
    assert (_image_stream(small).attrs["Width"], _image_stream(small).attrs["Height"]) == (16, 16)
    assert scans.sof_size(_raw(small)) == (65535, 65535)


def test_flate_bomb_inflates_past_a_gigabyte_of_zeros() -> None:
    """Inflated 16 MB at a time, so the test never holds more than that."""
    pdf = scans.hostile_pdf("flate_bomb")
    attrs = _image_stream(pdf).attrs
    assert (attrs["Width"], attrs["Height"], attrs["BitsPerComponent"]) == (40000, 40000, 8)
    inflater, data, total = zlib.decompressobj(), _raw(pdf), 0
    assert len(data) < 2 << 20
    while data and total <= GIB:
        chunk = inflater.decompress(data, 16 << 20)
        assert not chunk.strip(b"\x00")
        total += len(chunk)
        data = inflater.unconsumed_tail
    assert total > GIB


def test_zero_bomb_is_exact() -> None:
    for size in (0, 5, 1 << 20, (3 << 20) + 12345):
        assert zlib.decompress(scans.zero_bomb(size)) == bytes(size)  # Adler-32 checked too


def test_jbig2_minimal_stream_renders_its_stripes() -> None:
    stream = _raw(scans.hostile_pdf("jbig2"))
    assert stream[4] == 48 and stream[-7:-4] == bytes((49, 0, 1))  # page information ... end of page
    stripes = Image.frombytes("L", (64, 8), bytes(0 if (x // 16) % 2 else 255 for _ in range(8) for x in range(64)))
    (page, _, (image,)), = _pages(scans.image_pdf([scans.ScanPage(stripes, (72, 72), "jbig2")]))
    assert image.get_filters() == ["JBIG2Decode"]
    assert _diff(page.render(scale=1, grayscale=True).to_pil(), stripes) < 1
    garbage = _raw(scans.hostile_pdf("jbig2", garbage=True))
    assert len(garbage) == 4096 and garbage == _raw(scans.hostile_pdf("jbig2", garbage=True))


def test_truncated_jpeg_and_lying_size() -> None:
    cut = _raw(scans.hostile_pdf("truncated_jpeg"))
    assert cut[:2] == b"\xff\xd8" and b"\xff\xd9" not in cut[-2:]
    assert scans.sof_size(cut) == (1000, 1000)
    whole = scans.jpeg(scans.noise_image((1000, 1000)), 75)
    assert cut == whole[:len(whole) // 2]
    lying = scans.hostile_pdf("lying_size")
    assert (_image_stream(lying).attrs["Width"], _image_stream(lying).attrs["Height"]) == (10, 10)
    assert len(zlib.decompress(_raw(lying))) == 2000 * 2000
