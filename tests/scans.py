"""Scanned-page PDFs for the OCR tests (issue 22): our test PDFs rendered to images,
degraded the way scanners, fax machines and phones degrade pages, and written back as
image-only PDFs with our own writer (tests/pdfwriter.py).

Why build them: an OCR test needs pages whose text is known exactly, in every variant
the issue measures (clean, skewed, turned, JPEG, fax, phone, mixed), and with the exact
bytes a scanner would store (DCT, Flate 8-bit and 1-bit, CCITT G4, non-square fax
pixels, a rotated placement). Rendering is pypdfium2's; degradations are Pillow's, each
a pure function, seeded where noise is involved, so a page is the same on every run.

``hostile_pdf`` builds the images a robustness test feeds the page-image stage: a JPEG
header claiming gigapixels, a Flate bomb (built piece by piece, never held inflated), a
JBIG2 stream, a truncated JPEG and an image whose dictionary lies about its size.
"""
from __future__ import annotations

import io
import itertools
import random
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pypdfium2 as pdfium
from pdfminer.pdfdocument import PDFDocument
from pdfminer.pdfpage import PDFPage
from pdfminer.pdfparser import PDFParser
from pdfminer.pdftypes import PDFObjRef, PDFStream
from pdfminer.psparser import PSLiteral
from PIL import Image, ImageChops, ImageFilter, TiffImagePlugin

from tests.pdfwriter import Name, PdfWriter, Ref, Stream

Encoding = Literal["flate", "jpeg", "bilevel", "g4", "jbig2"]
VARIANTS = ("clean", "skew", "rotated", "jpeg", "fax", "phone", "mixed")
HOSTILE_KINDS = ("huge_jpeg_header", "flate_bomb", "jbig2", "truncated_jpeg", "lying_size")
FAX_DPI = (200, 100)
SOF_MAX = 65535  # a JPEG's frame header holds its size in 16 bits
HOSTILE_TEXT = b"Before the image"  # the text layer of every hostile page
_COLOUR_SPACES = {"L": "DeviceGray", "1": "DeviceGray", "RGB": "DeviceRGB", "CMYK": "DeviceCMYK"}
_TURNS = {1: Image.Transpose.ROTATE_270, 2: Image.Transpose.ROTATE_180, 3: Image.Transpose.ROTATE_90}


# ------------------------------------------------------------------ rendering
def render_pages(pdf_bytes: bytes, dpi: float) -> list[Image.Image]:
    """Every page as a greyscale image at ``dpi``: what the scanner's sensor sees of
    the printed page, before any degradation."""
    doc = pdfium.PdfDocument(pdf_bytes)
    try:
        return [_render(page, dpi) for page in doc]
    finally:
        doc.close()


def _render(page: pdfium.PdfPage, dpi: float) -> Image.Image:
    """One page, ``points * dpi / 72`` pixels rounded half up on each side. pypdfium2
    takes the ceiling, which float error turns into one pixel too many (pdfium keeps a
    page box of 319.92 pt as 319.920013, so 1333 pixels at 300 dpi would come out 1334)."""
    width, height = (int(side * dpi / 72 + 0.5) for side in page.get_size())
    # convert() copies the pixels out of pdfium's bitmap, which dies with the document
    img = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
    return img if img.size == (width, height) else img.crop((0, 0, width, height))


# --------------------------------------------------------------- degradations
def skew(img: Image.Image, degrees: float) -> Image.Image:
    """The sheet fed askew: turned ``degrees`` counter-clockwise (negative: clockwise).
    The corners the turn uncovers are white paper, and the canvas grows so no ink is cut."""
    return img.rotate(degrees, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)


def rotate(img: Image.Image, quarter_turns: int) -> Image.Image:
    """The sheet put in sideways or upside down: ``quarter_turns`` of 90° clockwise
    (1: 90°, 2: 180°, 3: 270°), losslessly."""
    turns = quarter_turns % 4
    return img.copy() if turns == 0 else img.transpose(_TURNS[turns])


def jpeg(img: Image.Image, quality: int) -> bytes:
    """The JPEG file a scanner or phone stores at ``quality``; stored as is (DCTDecode)
    by :func:`image_pdf`, so the PDF holds exactly these bytes."""
    buf = io.BytesIO()
    img.convert("L" if img.mode == "1" else img.mode).save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def jpeg_image(img: Image.Image, quality: int) -> Image.Image:
    """``img`` after a JPEG round trip: its artefacts on pixels a test can go on
    degrading or store losslessly."""
    out = Image.open(io.BytesIO(jpeg(img, quality)))
    out.load()
    return out


def bilevel(img: Image.Image, threshold: int = 128) -> Image.Image:
    """Black and white by a fixed threshold, as fax machines do (no dithering, which
    ``convert("1")`` would add and no fax has)."""
    if img.mode == "1":
        return img.copy()
    return img.convert("L").point(lambda v: 255 if v >= threshold else 0, mode="1")


def fax(img: Image.Image, threshold: int = 128) -> Image.Image:
    """A standard-resolution fax of a page rendered at 200 dpi: bilevel, and 100 lines
    per inch, so the height halves and each pixel is twice as tall as wide (store it
    with ``dpi=FAX_DPI``)."""
    grey = img.convert("L")
    rows = grey.resize((grey.width, max(1, grey.height // 2)), Image.Resampling.BOX)
    return bilevel(rows, threshold)


def phone(img: Image.Image, seed: int) -> Image.Image:
    """A phone shot of a page rendered at 150 dpi: slightly out of focus, the light
    falling off toward one corner (where OCR loses whole paragraphs), a little sensor
    noise. ``seed`` picks blur, corner, depth and noise, so a page is the same each run."""
    rng = random.Random(seed)
    blurred = img.convert("L").filter(ImageFilter.GaussianBlur(rng.uniform(0.6, 1.1)))
    lit = ImageChops.multiply(blurred, light(blurred.size, rng.randrange(4), rng.uniform(0.45, 0.6)))
    noise = Image.frombytes("L", lit.size, rng.randbytes(lit.width * lit.height))
    return ImageChops.subtract(lit, noise.point(lambda v: v >> 4))


def light(size: tuple[int, int], corner: int, depth: float) -> Image.Image:
    """A multiplier for :func:`phone`: 255 (full light) far from ``corner`` (0 top left,
    then clockwise), down to ``255 * (1 - depth)`` at it. Computed on a small grid and
    scaled up, since light varies smoothly."""
    grid = 32
    cx, cy = (0 if corner in (0, 3) else grid - 1), (0 if corner in (0, 1) else grid - 1)
    reach = (grid - 1) * 1.2  # a bit further than a side: the far corner is fully lit
    values = bytes(round(255 * (1 - depth * max(0.0, 1 - ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5 / reach)))
                   for y in range(grid) for x in range(grid))
    return Image.frombytes("L", (grid, grid), values).resize(size, Image.Resampling.BILINEAR)


def g4(img: Image.Image) -> bytes:
    """CCITT Group 4 data of a bilevel image, as fax software stores it: Pillow writes
    a one-strip G4 TIFF (libtiff) and we keep the strip. libtiff codes 0 bits as white
    runs, and in Pillow's "1" mode white is 1, so the pixels are inverted first."""
    page = bilevel(img)
    buf = io.BytesIO()
    ImageChops.invert(page).save(buf, "TIFF", compression="group4", tiffinfo={278: page.height})
    tiff = TiffImagePlugin.TiffImageFile(io.BytesIO(buf.getvalue()))
    (offset,), (count,) = tiff.tag_v2[273], tiff.tag_v2[279]  # StripOffsets, StripByteCounts
    return buf.getvalue()[offset:offset + count]


# ----------------------------------------------------------------- the writer
@dataclass(frozen=True)
class ScanPage:
    """One page of an image-only PDF: the picture and how the page holds it.

    ``image``: greyscale ("L") or bilevel ("1") pixels, or the bytes of a JPEG file
    stored as they are, so a test keeps the exact JPEG it degraded.
    ``dpi``: (x, y) resolution of the image on the page; the page is the image's size at
    that resolution, so (200, 100) draws a fax's non-square pixels over the whole page.
    ``encoding``: None picks from the image (JPEG bytes: "jpeg"; mode "1": "bilevel",
    Flate 1-bit; else "flate", Flate 8-bit); "g4" stores a bilevel image CCITT G4,
    "jbig2" as a minimal JBIG2 stream, and "jpeg" encodes pixels at quality 75.
    ``quarter_turns``: the placement matrix turns the image this many quarter turns
    clockwise on the page (whose size follows), as scanners store a sideways sheet: the
    page-image stage must read the turn from the CTM, not from the pixels.
    ``text``: a content fragment drawn over the image with /F1 as Helvetica (a standard
    font), for a page with a text layer beside its image.
    """

    image: Image.Image | bytes
    dpi: tuple[float, float] = (300, 300)
    encoding: Encoding | None = None
    quarter_turns: int = 0
    text: bytes | None = None

    def pixels(self) -> Image.Image:
        """The image as Pillow sees it (a JPEG is only opened: its header gives size and mode)."""
        return Image.open(io.BytesIO(self.image)) if isinstance(self.image, bytes) else self.image

    def kind(self) -> Encoding:
        """The stored encoding (see the class docstring)."""
        if self.encoding is not None:
            return self.encoding
        if isinstance(self.image, bytes):
            return "jpeg"
        return "bilevel" if self.image.mode == "1" else "flate"

    def size_pt(self) -> tuple[float, float]:
        """The image's drawn width and height in points, before the turn."""
        width, height = self.pixels().size
        return width * 72 / self.dpi[0], height * 72 / self.dpi[1]


@dataclass(frozen=True)
class SourcePage:
    """Page ``number`` (from 1) of a born-digital PDF, copied through with its own
    contents, resources and boxes: the text-layer page of a "mixed" file, with the
    source's own fonts (CJK included), which no standard font could redraw."""

    pdf: bytes
    number: int = 1


def placement(width: float, height: float, quarter_turns: int) -> tuple[float, ...]:
    """The ``cm`` matrix drawing the unit image square as ``width`` x ``height`` points,
    turned ``quarter_turns`` clockwise, onto a page whose lower left corner is the origin."""
    return {0: (width, 0, 0, height, 0, 0), 1: (0, -width, height, 0, 0, width),
            2: (-width, 0, 0, -height, width, height), 3: (0, width, -height, 0, height, 0)}[quarter_turns % 4]


def _image_data(page: ScanPage) -> tuple[bytes, dict[str, Any]]:
    """The stream data of the page's image and the dictionary entries its encoding sets."""
    kind = page.kind()
    if kind == "jpeg":
        data = page.image if isinstance(page.image, bytes) else jpeg(page.image, 75)
        return data, {"Filter": Name("DCTDecode"), "BitsPerComponent": 8}
    img = page.pixels()
    if kind == "flate":
        return zlib.compress(img.convert("L").tobytes()), {"Filter": Name("FlateDecode"), "BitsPerComponent": 8}
    if kind == "bilevel":  # Pillow packs "1" rows MSB first with 1 = white, as DeviceGray reads them
        return zlib.compress(bilevel(img).tobytes()), {"Filter": Name("FlateDecode"), "BitsPerComponent": 1}
    if kind == "jbig2":
        return jbig2_stream(img), {"Filter": Name("JBIG2Decode"), "BitsPerComponent": 1}
    params = {"K": -1, "Columns": img.width, "Rows": img.height, "BlackIs1": False}
    return g4(img), {"Filter": Name("CCITTFaxDecode"), "DecodeParms": params, "BitsPerComponent": 1}


def image_xobject(w: PdfWriter, page: ScanPage) -> Ref:
    """The page's Image XObject: pixel size, colour space, depth and filter as stored."""
    img = page.pixels()
    data, entries = _image_data(page)
    space = "DeviceGray" if page.kind() != "jpeg" else _COLOUR_SPACES[img.mode]
    return w.add_stream(data, {"Type": Name("XObject"), "Subtype": Name("Image"), "Width": img.width,
                               "Height": img.height, "ColorSpace": Name(space), **entries})


def _add_scan(w: PdfWriter, page: ScanPage, font: Callable[[], Ref]) -> None:
    """One image page: its MediaBox in points, ``q <placement> cm /Im0 Do Q``, then the text layer."""
    width, height = page.size_pt()
    matrix = placement(width, height, page.quarter_turns)
    box = (width, height) if page.quarter_turns % 2 == 0 else (height, width)
    content = b"q %s cm /Im0 Do Q\n" % b" ".join(w.serialize(round(v, 4)) for v in matrix)
    resources: dict[str, Any] = {"XObject": {"Im0": image_xobject(w, page)}}
    if page.text is not None:
        content += page.text
        resources["Font"] = {"F1": font()}
    w.add_page(content, media_box=(0, 0, round(box[0], 4), round(box[1], 4)), resources=resources)


def _copied(w: PdfWriter, obj: Any, refs: dict[int, Ref]) -> Any:
    """A pdfminer object as our writer's value; indirect objects copied once each."""
    if isinstance(obj, PDFObjRef):
        if obj.objid not in refs:
            refs[obj.objid] = w.reserve()
            w.set_object(refs[obj.objid], _copied(w, obj.resolve(), refs))
        return refs[obj.objid]
    if isinstance(obj, PDFStream):
        attrs = {k: _copied(w, v, refs) for k, v in obj.attrs.items() if k != "Length"}
        return Stream(attrs, obj.rawdata if obj.rawdata is not None else obj.get_data())
    if isinstance(obj, PSLiteral):
        return Name(obj.name if isinstance(obj.name, str) else obj.name.decode("latin-1"))
    if isinstance(obj, dict):
        return {k: _copied(w, v, refs) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copied(w, v, refs) for v in obj]
    return obj


def _add_source(w: PdfWriter, source: SourcePage) -> None:
    """The source page's contents, resources and boxes (inherited ones included) on a
    page of ours; annotations and the rest of its document stay behind."""
    doc = PDFDocument(PDFParser(io.BytesIO(source.pdf)))
    if doc.encryption:
        raise ValueError("cannot copy a page of an encrypted PDF (its streams stay encrypted)")
    page = next(itertools.islice(PDFPage.create_pages(doc), source.number - 1, None))
    refs: dict[int, Ref] = {}
    keys = ("Contents", "Resources", "MediaBox", "CropBox", "Rotate")
    attrs = {k: _copied(w, page.attrs[k], refs) for k in keys if k in page.attrs}
    w.add_page(None, media_box=None, page_attrs=attrs)


def image_pdf(pages: Sequence[ScanPage | SourcePage]) -> bytes:
    """An image-only PDF of ``pages`` (a SourcePage copied through, for mixed files),
    byte for byte ours: one Image XObject per scanned page, drawn over the whole page."""
    w = PdfWriter()
    fonts: list[Ref] = []

    def helvetica() -> Ref:
        if not fonts:
            fonts.append(w.standard_font("Helvetica"))
        return fonts[0]

    for page in pages:
        if isinstance(page, SourcePage):
            _add_source(w, page)
        else:
            _add_scan(w, page, helvetica)
    return w.to_bytes()


# ------------------------------------------------------------------ variants
def _clean(pdf: bytes, dpi: float = 300) -> list[ScanPage | SourcePage]:
    return [ScanPage(img, (dpi, dpi)) for img in render_pages(pdf, dpi)]


def _skew(pdf: bytes, degrees: float = 1.5, dpi: float = 300) -> list[ScanPage | SourcePage]:
    return [ScanPage(skew(img, degrees), (dpi, dpi)) for img in render_pages(pdf, dpi)]


def _rotated(pdf: bytes, quarter_turns: int = 2, placement: bool = False,
             dpi: float = 300) -> list[ScanPage | SourcePage]:
    """Pixels turned (the sheet went in turned), or with ``placement`` pixels turned
    back by the page's matrix (the page shows upright, the stored image is turned)."""
    if placement:
        return [ScanPage(rotate(img, -quarter_turns), (dpi, dpi), quarter_turns=quarter_turns)
                for img in render_pages(pdf, dpi)]
    return [ScanPage(rotate(img, quarter_turns), (dpi, dpi)) for img in render_pages(pdf, dpi)]


def _jpeg(pdf: bytes, quality: int = 50, dpi: float = 300) -> list[ScanPage | SourcePage]:
    return [ScanPage(jpeg(img, quality), (dpi, dpi)) for img in render_pages(pdf, dpi)]


def _fax(pdf: bytes, g4: bool = False, threshold: int = 128) -> list[ScanPage | SourcePage]:
    kind: Encoding = "g4" if g4 else "bilevel"
    return [ScanPage(fax(img, threshold), FAX_DPI, kind) for img in render_pages(pdf, FAX_DPI[0])]


def _phone(pdf: bytes, seed: int = 0, quality: int = 85, dpi: float = 150) -> list[ScanPage | SourcePage]:
    """Each page its own shot (seed + page index), stored as the phone stores it: JPEG."""
    return [ScanPage(jpeg(phone(img, seed + i), quality), (dpi, dpi))
            for i, img in enumerate(render_pages(pdf, dpi))]


def _mixed(pdf: bytes, dpi: float = 300) -> list[ScanPage | SourcePage]:
    """Page 1 the born-digital page itself, the rest clean scans."""
    return [SourcePage(pdf, 1), *_clean(pdf, dpi)[1:]]


_VARIANTS: dict[str, Callable[..., list[ScanPage | SourcePage]]] = {
    "clean": _clean, "skew": _skew, "rotated": _rotated, "jpeg": _jpeg,
    "fax": _fax, "phone": _phone, "mixed": _mixed,
}


def scanned(pdf_bytes: bytes, variant: str, **params: Any) -> bytes:
    """The scan of a whole source PDF in one variant of the issue's corpus.

    clean (dpi=300): grey, Flate. skew (degrees=1.5, dpi): turned counter-clockwise,
    white corners. rotated (quarter_turns=2, placement=False, dpi): clockwise turns of
    the pixels, or upright through the placement matrix. jpeg (quality=50, dpi).
    fax (g4=False, threshold=128): bilevel at 200 x 100 dpi, Flate 1-bit or CCITT G4.
    phone (seed=0, quality=85, dpi=150): blur, uneven light, noise, JPEG. mixed (dpi):
    page 1 copied with its text layer, the others clean.
    """
    if variant not in _VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}")
    return image_pdf(_VARIANTS[variant](pdf_bytes, **params))


# ------------------------------------------------------------- hostile images
def _hostile_page(data: bytes, entries: dict[str, Any]) -> bytes:
    """One page: the text ``HOSTILE_TEXT`` (so a test sees the page's text survive),
    then the image drawn over most of the page; ``entries`` complete its dictionary."""
    w = PdfWriter()
    image = w.add_stream(data, {"Type": Name("XObject"), "Subtype": Name("Image"),
                                "ColorSpace": Name("DeviceGray"), "BitsPerComponent": 8, **entries})
    content = b"BT /F1 12 Tf 72 750 Td (%s) Tj ET\nq 468 0 0 600 72 100 cm /Im0 Do Q\n" % HOSTILE_TEXT
    w.add_page(content, resources={"Font": {"F1": w.standard_font("Helvetica")}, "XObject": {"Im0": image}})
    return w.to_bytes()


def noise_image(size: tuple[int, int], seed: int = 0) -> Image.Image:
    """A grey gradient with seeded noise: a JPEG of it is large for its size, so cutting
    it cuts real scan data."""
    rng = random.Random(seed)
    noise = Image.frombytes("L", size, rng.randbytes(size[0] * size[1]))
    gradient = Image.linear_gradient("L").resize(size)
    return Image.blend(gradient, noise, 0.3)


def sof_size(data: bytes) -> tuple[int, int]:
    """The (width, height) a JPEG's baseline frame header (SOF0) claims."""
    at = data.index(b"\xff\xc0")
    height, width = struct.unpack(">HH", data[at + 5:at + 9])
    return width, height


def _huge_jpeg_header(declared: tuple[int, int] | None = None) -> bytes:
    """A 16 x 16 JPEG whose frame header claims 65,535 x 65,535 pixels (4.3 Gpx, the
    largest its 16-bit fields hold); the dictionary says the same unless ``declared``."""
    data = bytearray(jpeg(Image.new("L", (16, 16), 128), 75))
    at = data.index(b"\xff\xc0")
    data[at + 5:at + 9] = struct.pack(">HH", SOF_MAX, SOF_MAX)
    width, height = declared or (SOF_MAX, SOF_MAX)
    return _hostile_page(bytes(data), {"Width": width, "Height": height, "Filter": Name("DCTDecode")})


def zero_bomb(size: int, block: int = 1 << 20) -> bytes:
    """zlib data of ``size`` zero bytes, built without compressing them all: after a
    full flush the compressor forgets its history, so every 1 MiB block codes to the
    same bytes; we repeat them and end the stream with an empty final block and the
    Adler-32 of n zeros, which is ((n mod 65521) << 16) | 1."""
    z = zlib.compressobj(9)
    count, rest = divmod(size, block)
    head = z.compress(b"") + z.flush(zlib.Z_FULL_FLUSH)  # the zlib header, then the pieces
    piece = z.compress(bytes(block)) + z.flush(zlib.Z_FULL_FLUSH)
    tail = z.compress(bytes(rest)) + z.flush(zlib.Z_FULL_FLUSH)
    final = b"\x03\x00"  # an empty last block: BFINAL, fixed codes, end of block
    return head + piece * count + tail + final + struct.pack(">I", ((size % 65521) << 16) | 1)


def _flate_bomb(width: int = 40_000, height: int = 40_000) -> bytes:
    """An 8-bit grey image whose Flate stream inflates to width x height zeros (1.6 GB
    by default) from about 1.6 MB."""
    return _hostile_page(zero_bomb(width * height), {"Width": width, "Height": height,
                                                     "Filter": Name("FlateDecode")})


def jbig2_stream(img: Image.Image) -> bytes:
    """A minimal embedded JBIG2 stream of a bilevel image: a page information segment,
    one immediate generic region coded MMR (its data is T.6, the same as G4), end of page."""
    page = bilevel(img)

    def segment(number: int, kind: int, body: bytes) -> bytes:
        return struct.pack(">IBBBI", number, kind, 0, 1, len(body)) + body

    info = struct.pack(">IIIIBH", page.width, page.height, 0, 0, 0, 0)
    region = struct.pack(">IIIIB", page.width, page.height, 0, 0, 0) + b"\x01" + g4(page)
    return segment(0, 48, info) + segment(1, 38, region) + segment(2, 49, b"")


def _jbig2(garbage: bool = False, seed: int = 0) -> bytes:
    """A 1-bit /JBIG2Decode image: a minimal valid stream of a stripe pattern, or 4 KB
    of seeded garbage."""
    size = (256, 128)
    if garbage:
        data = random.Random(seed).randbytes(4096)
    else:
        stripes = Image.frombytes("L", size, bytes(0 if (x // 16) % 2 else 255 for _ in range(size[1])
                                                   for x in range(size[0])))
        data = jbig2_stream(stripes)
    return _hostile_page(data, {"Width": size[0], "Height": size[1], "BitsPerComponent": 1,
                                "Filter": Name("JBIG2Decode")})


def _truncated_jpeg(size: tuple[int, int] = (1000, 1000), keep: float = 0.5) -> bytes:
    """A real JPEG cut after ``keep`` of its bytes: no end-of-image marker, half the scan
    data; the dictionary gives its true size."""
    data = jpeg(noise_image(size), 75)
    return _hostile_page(data[:int(len(data) * keep)], {"Width": size[0], "Height": size[1],
                                                        "Filter": Name("DCTDecode")})


def _lying_size(declared: tuple[int, int] = (10, 10), actual: tuple[int, int] = (2000, 2000)) -> bytes:
    """The dictionary says ``declared`` pixels; the Flate data holds ``actual`` (4 MB of
    grey rows for the default 2000 x 2000)."""
    rows = bytes(range(256)) * (actual[0] * actual[1] // 256 + 1)
    return _hostile_page(zlib.compress(rows[:actual[0] * actual[1]], 9),
                         {"Width": declared[0], "Height": declared[1], "Filter": Name("FlateDecode")})


_HOSTILE: dict[str, Callable[..., bytes]] = {
    "huge_jpeg_header": _huge_jpeg_header, "flate_bomb": _flate_bomb, "jbig2": _jbig2,
    "truncated_jpeg": _truncated_jpeg, "lying_size": _lying_size,
}


def hostile_pdf(kind: str, **params: Any) -> bytes:
    """A one-page PDF whose image is hostile to the page-image stage (see each builder
    for its ``params``); the page's text layer is ``HOSTILE_TEXT``. Small to build:
    nothing here allocates the sizes the images claim."""
    if kind not in _HOSTILE:
        raise ValueError(f"unknown hostile image {kind!r}; one of {', '.join(HOSTILE_KINDS)}")
    return _HOSTILE[kind](**params)
