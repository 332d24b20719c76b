"""A tiny PDF writer of our own, used by tests to build PDFs byte by byte.

Why our own: test fixtures must pin down the exact bytes (wrong counts in a
ToUnicode CMap, fonts without /Widths, inherited boxes, odd filters,
encryption revisions).  A producer library would "fix" or normalise those, so
no third-party PDF producer decides anything here.  Only ``hashlib``, ``zlib``,
``base64`` and (lazily, for AES) ``cryptography`` are used.

Value mapping used by the serialiser (:func:`PdfWriter.serialize`):
``int``/``float``/``bool``/``None`` -> number, ``true``/``false``, ``null``;
``Name("F1")`` -> ``/F1``; ``bytes`` -> literal string ``(...)``;
``HexStr(b"..")`` -> ``<..>``; ``list``/``tuple`` -> array; ``dict`` (str keys)
-> dictionary; ``Ref`` -> ``N 0 R``; ``Raw(b"..")`` -> verbatim.  A plain
``str`` value is rejected on purpose: name or string must be explicit.

Escape hatches for "broken on purpose" fixtures: ``Length`` or ``Filter`` in a
stream's ``dict_extra`` are written as given (data not re-encoded); in every
``*_attrs`` dict a ``None`` value removes the key; ``raw_counts`` in
:func:`tounicode_cmap` writes deliberately wrong block counts.
"""

from __future__ import annotations

import base64
import hashlib
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "PASSWORD_PADDING",
    "HexStr",
    "Name",
    "PdfWriter",
    "Raw",
    "Ref",
    "Stream",
    "cid_cmap",
    "rc4",
    "tounicode_cmap",
]


class Name(str):
    """A PDF name; ``Name("F1")`` serialises to ``/F1`` (``#xx``-escaped)."""


class HexStr(bytes):
    """A PDF string written in hexadecimal form ``<...>``."""


class Raw(bytes):
    """Bytes inserted verbatim into the output (never escaped nor encrypted)."""


@dataclass(frozen=True)
class Ref:
    """An indirect reference ``num gen R`` (our objects always use gen 0)."""

    num: int
    gen: int = 0


@dataclass
class Stream:
    """A stream object: its dictionary and its (already filter-encoded) data."""

    dict: dict[str, Any]
    data: bytes


PASSWORD_PADDING = (
    b"\x28\xbf\x4e\x5e\x4e\x75\x8a\x41\x64\x00\x4e\x56\xff\xfa\x01\x08"
    b"\x2e\x2e\x00\xb6\xd0\x68\x3e\x80\x2f\x0c\xa9\xfe\x64\x53\x69\x7a"
)
_DELIMS = b"()<>[]{}/%#"
_Filter = str | Sequence[str] | None
DEFAULT_ID = hashlib.md5(b"pdfindex-tests").digest()


def rc4(key: bytes, data: bytes) -> bytes:
    """Plain RC4 (encrypt == decrypt); a few lines beat a crypto dependency."""
    s, j = list(range(256)), 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) & 0xFF
        s[i], s[j] = s[j], s[i]
    out, i, j = bytearray(), 0, 0
    for b in data:
        i = (i + 1) & 0xFF
        j = (j + s[i]) & 0xFF
        s[i], s[j] = s[j], s[i]
        out.append(b ^ s[(s[i] + s[j]) & 0xFF])
    return bytes(out)


def _fmt_float(x: float) -> bytes:
    """Compact decimal without exponent (PDF has no exponent syntax)."""
    if math.isnan(x) or x in (float("inf"), float("-inf")):
        raise ValueError(f"PDF cannot represent {x!r}")
    s = format(Decimal(repr(x)), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return b"0" if s in ("-0", "") else s.encode()


def _fmt_name(name: str) -> bytes:
    out = bytearray(b"/")
    for b in name.encode("utf-8"):
        out += b"#%02X" % b if b < 0x21 or b > 0x7E or b in _DELIMS else bytes((b,))
    return bytes(out)


def _fmt_literal(data: bytes) -> bytes:
    # \r is escaped too: a raw CR (or CRLF) inside a string reads back as LF.
    esc = data.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return b"(" + esc.replace(b"\r", b"\\r") + b")"


def _names(seq: Sequence[Any]) -> list[Any]:
    """Differences-style list: plain ``str`` items become names."""
    return [Name(v) if isinstance(v, str) else v for v in seq]


def _merge(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """Overlay ``extra`` on ``base``; a ``None`` value removes the key."""
    for k, v in (extra or {}).items():
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    return base


def _utf16(dst: str | bytes) -> bytes:
    return dst if isinstance(dst, bytes) else dst.encode("utf-16-be")


def _hex(b: bytes) -> bytes:
    return b"<" + b.hex().upper().encode() + b">"


def _cmap_block(kind: str, rows: list[bytes], count: int | None) -> bytes:
    """``N begin<kind> ... end<kind>``; chunks of 100 unless a count is forced."""
    k = kind.encode()
    chunks = [rows] if count is not None else [rows[i:i + 100] for i in range(0, len(rows), 100)]
    return b"".join(b"%d begin%s\n%s\nend%s\n" % (len(c) if count is None else count,
                                                     k, b"\n".join(c), k) for c in chunks)


def tounicode_cmap(
    bfchars: list[tuple[bytes, str | bytes]],
    bfranges: list[tuple[bytes, bytes, str | bytes | list[str | bytes]]] = [],  # noqa: B006
    codespace: list[tuple[bytes, bytes]] = [(b"\x00", b"\xff")],  # noqa: B006
    raw_counts: dict[str, int] | None = None,
    cmap_name: str = "Adobe-Identity-UCS",
) -> bytes:
    """Write a ToUnicode CMap program (the text, not the stream).

    Destinations given as ``str`` are UTF-16BE encoded; ``bytes`` are written
    as-is so tests can use surrogate pairs, ligatures ("fi" -> ``b"\\x00f\\x00i"``)
    or garbage.  A bfrange destination that is a list uses the array form.
    ``raw_counts`` (keys "codespace", "bfchar", "bfrange") overrides the count
    written before a block, to produce deliberately wrong CMaps.
    """
    rc = raw_counts or {}
    out = (b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
           b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
           b"/CMapName " + _fmt_name(cmap_name) + b" def\n/CMapType 2 def\n")
    out += _cmap_block("codespacerange", [_hex(lo) + b" " + _hex(hi) for lo, hi in codespace],
                       rc.get("codespace"))
    if bfchars:
        out += _cmap_block("bfchar", [_hex(s) + b" " + _hex(_utf16(d)) for s, d in bfchars],
                           rc.get("bfchar"))
    rows = []
    for lo, hi, dst in bfranges:
        d = (b"[" + b" ".join(_hex(_utf16(x)) for x in dst) + b"]"
             if isinstance(dst, list) else _hex(_utf16(dst)))
        rows.append(_hex(lo) + b" " + _hex(hi) + b" " + d)
    if rows:
        out += _cmap_block("bfrange", rows, rc.get("bfrange"))
    return out + b"endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"


def cid_cmap(
    cmap_name: str = "Custom",
    codespace: list[tuple[bytes, bytes]] = [(b"\x00\x00", b"\xff\xff")],  # noqa: B006
    cidranges: list[tuple[bytes, bytes, int]] = [],  # noqa: B006
    cidchars: list[tuple[bytes, int]] = [],  # noqa: B006
    ordering: tuple[str, str, int] = ("Adobe", "Identity", 0),
    wmode: int = 0,
) -> bytes:
    """Write an encoding (code -> CID) CMap program for ``type0_font(encoding=...)``."""
    reg, ordr, sup = ordering
    out = (b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
           b"/CIDSystemInfo << /Registry (%s) /Ordering (%s) /Supplement %d >> def\n"
           b"/CMapName %s def\n/CMapType 1 def\n/WMode %d def\n"
           % (reg.encode(), ordr.encode(), sup, _fmt_name(cmap_name), wmode))
    out += _cmap_block("codespacerange", [_hex(lo) + b" " + _hex(hi) for lo, hi in codespace], None)
    if cidchars:
        out += _cmap_block("cidchar", [_hex(c) + b" %d" % cid for c, cid in cidchars], None)
    if cidranges:
        out += _cmap_block("cidrange", [_hex(lo) + b" " + _hex(hi) + b" %d" % cid
                                        for lo, hi, cid in cidranges], None)
    return out + b"endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"


def _encode_filters(data: bytes, filt: _Filter) -> tuple[bytes, Any]:
    """Encode ``data`` so that decoding with ``/Filter filt`` yields it back."""
    if filt is None:
        return data, None
    names = [filt] if isinstance(filt, str) else list(filt)
    for f in reversed(names):  # the first filter listed is decoded first
        if f == "FlateDecode":
            data = zlib.compress(data)
        elif f == "ASCIIHexDecode":
            data = data.hex().upper().encode() + b">"
        elif f == "ASCII85Decode":
            data = base64.a85encode(data, adobe=False) + b"~>"
        else:
            raise ValueError(f"cannot encode filter {f!r}")
    return data, (Name(names[0]) if isinstance(filt, str) else [Name(n) for n in names])


class PdfWriter:
    """Collects indirect objects and serialises a classic-xref PDF 1.7 file.

    Object 1 is the catalog and object 2 the /Pages root, so output is
    deterministic and small.  All add/helper methods return a :class:`Ref`.
    """

    def __init__(self, pages_attrs: dict[str, Any] | None = None,
                 catalog_attrs: dict[str, Any] | None = None,
                 version: str = "1.7", file_id: bytes | None = None) -> None:
        self._objs: dict[int, Any] = {}
        self.version = version
        self.pages_attrs: dict[str, Any] = dict(pages_attrs or {})
        self.catalog_attrs: dict[str, Any] = dict(catalog_attrs or {})
        self.file_id = file_id
        self.info: Ref | None = None
        self.catalog = self.reserve()
        self.pages_root = self.reserve()
        self._kids: dict[str | None, list[Ref]] = {None: []}
        self._groups: dict[str, tuple[Ref, str | None]] = {}
        self._group_attrs: dict[str, dict[str, Any]] = {}
        self._page_refs: set[Ref] = set()
        self.pages: list[Ref] = []  # in order of creation
        self._crypt: dict[str, Any] | None = None
        self._cur: int | None = None  # object being serialised (for encryption)
        self._iv_counter = 0

    # ---------------------------------------------------------------- objects
    def reserve(self) -> Ref:
        """Allocate an object number now, fill it later (cycles, self-reference)."""
        ref = Ref(len(self._objs) + 1)
        self._objs[ref.num] = None
        return ref

    def set_object(self, ref: Ref, obj: Any) -> Ref:
        """Set (or replace) the value of an indirect object."""
        self._objs[ref.num] = obj
        return ref

    def add(self, obj: Any) -> Ref:
        """Add any serialisable value (or a :class:`Stream`) as a new object."""
        return self.set_object(self.reserve(), obj)

    def make_stream(self, data: bytes, dict_extra: dict[str, Any] | None = None,
                    filter: _Filter = None) -> Stream:
        """Build a :class:`Stream` without adding it (see :meth:`add_stream`)."""
        d = dict(dict_extra or {})
        if filter is not None:
            data, d["Filter"] = _encode_filters(data, filter)
        return Stream(d, data)

    def add_stream(self, data: bytes, dict_extra: dict[str, Any] | None = None,
                   filter: _Filter = None, ref: Ref | None = None) -> Ref:
        """Add a stream; ``filter`` encodes ``data`` (name or list, chained).

        /Length is computed at write time (after encryption) unless
        ``dict_extra`` already has one; a ``Filter`` in ``dict_extra`` with
        ``filter=None`` is written as-is over unencoded ``data``.
        """
        return self.set_object(ref or self.reserve(), self.make_stream(data, dict_extra, filter))

    def set_info(self, info: dict[str, Any]) -> Ref:
        """Attach a document information dictionary (trailer /Info)."""
        self.info = self.add(info)
        return self.info

    # ------------------------------------------------------------------ pages
    def page_group(self, name: str, attrs: dict[str, Any] | None = None,
                   parent: str | None = None) -> Ref:
        """Create/update an intermediate /Pages node (``parent``: another group).

        The node takes its place among the parent's /Kids when first created,
        so create groups in the order they should appear in the page tree.
        """
        if name not in self._groups:
            if parent is not None:
                self.page_group(parent)
            ref = self.reserve()
            self._groups[name] = (ref, parent)
            self._kids[name] = []
            self._kids[parent].append(ref)
        self._group_attrs.setdefault(name, {}).update(attrs or {})
        return self._groups[name][0]

    def add_page(self, content: bytes | Ref | list[bytes | Ref] | None = b"",
                 media_box: Sequence[float] | None = (0, 0, 612, 792),
                 crop_box: Sequence[float] | None = None,
                 resources: dict[str, Any] | Ref | None = None,
                 rotate: int | None = None,
                 page_attrs: dict[str, Any] | None = None,
                 parent: str | None = None, filter: _Filter = None) -> Ref:
        """Add a page; a list of contents gives a /Contents array.

        ``media_box=None`` omits /MediaBox (to test inheritance from /Pages);
        ``parent`` names an intermediate /Pages node (see :meth:`page_group`).
        """
        node = self.pages_root if parent is None else self.page_group(parent)
        page: dict[str, Any] = {"Type": Name("Page"), "Parent": node}
        if media_box is not None:
            page["MediaBox"] = list(media_box)
        if crop_box is not None:
            page["CropBox"] = list(crop_box)
        if resources is not None:
            page["Resources"] = resources
        if rotate is not None:
            page["Rotate"] = rotate
        if content is not None:
            items = content if isinstance(content, list) else [content]
            refs = [c if isinstance(c, Ref) else self.add_stream(c, filter=filter) for c in items]
            page["Contents"] = refs if isinstance(content, list) else refs[0]
        ref = self.add(_merge(page, page_attrs))
        self._kids[parent].append(ref)
        self._page_refs.add(ref)
        self.pages.append(ref)
        return ref

    def _count(self, key: str | None) -> int:
        """Leaf pages below a node (/Count), recursing into groups."""
        group_of = {ref: name for name, (ref, _) in self._groups.items()}
        return sum(1 if k in self._page_refs else self._count(group_of[k])
                   for k in self._kids[key])

    def _finish_tree(self) -> None:
        root = {"Type": Name("Pages"), "Kids": list(self._kids[None]), "Count": self._count(None)}
        self.set_object(self.pages_root, _merge(root, self.pages_attrs))
        for name, (ref, parent) in self._groups.items():
            node = {"Type": Name("Pages"),
                    "Parent": self.pages_root if parent is None else self._groups[parent][0],
                    "Kids": list(self._kids[name]), "Count": self._count(name)}
            self.set_object(ref, _merge(node, self._group_attrs.get(name)))
        cat = {"Type": Name("Catalog"), "Pages": self.pages_root}
        self.set_object(self.catalog, _merge(cat, self.catalog_attrs))

    # ------------------------------------------------------------------ fonts
    def _descriptor(self, base_font: str, descriptor: dict[str, Any] | None,
                    font_file: tuple[str, Ref] | None = None) -> Ref:
        d: dict[str, Any] = {"Type": Name("FontDescriptor"), "FontName": Name(base_font),
                             "Flags": 32, "FontBBox": [0, -200, 1000, 900], "ItalicAngle": 0,
                             "Ascent": 800, "Descent": -200, "CapHeight": 700, "StemV": 80}
        if font_file:
            d[font_file[0]] = font_file[1]
        d = _merge(d, {k: list(v) if isinstance(v, tuple) else v
                       for k, v in (descriptor or {}).items()})
        return self.add(d)

    def _to_unicode(self, to_unicode: bytes | None, filt: _Filter) -> Ref | None:
        return None if to_unicode is None else self.add_stream(to_unicode, filter=filt)

    @staticmethod
    def _encoding(encoding: str | dict[str, Any] | Ref | None) -> Any:
        if isinstance(encoding, str):
            return Name(encoding)
        if isinstance(encoding, dict):
            enc = {"Type": Name("Encoding"), **encoding}
            if isinstance(enc.get("BaseEncoding"), str):
                enc["BaseEncoding"] = Name(enc["BaseEncoding"])
            if "Differences" in enc:
                enc["Differences"] = _names(enc["Differences"])
            return enc
        return encoding

    def standard_font(self, base_font: str = "Helvetica",
                      encoding: str | dict[str, Any] | Ref | None = None,
                      font_attrs: dict[str, Any] | None = None) -> Ref:
        """Standard-14 Type1 font: no /Widths, no descriptor (reader uses AFM)."""
        d: dict[str, Any] = {"Type": Name("Font"), "Subtype": Name("Type1"),
                             "BaseFont": Name(base_font)}
        if encoding is not None:
            d["Encoding"] = self._encoding(encoding)
        return self.add(_merge(d, font_attrs))

    def simple_font(self, subtype: Literal["TrueType", "Type1", "MMType1"] = "TrueType",
                    base_font: str = "Arial", first_char: int = 32,
                    widths: Sequence[float] | None = None,
                    encoding: str | dict[str, Any] | Ref | None = None,
                    to_unicode: bytes | None = None, to_unicode_filter: _Filter = None,
                    descriptor: dict[str, Any] | None = None, font_file: bytes | None = None,
                    font_file_lengths: tuple[int, int, int] | None = None,
                    font_file_subtype: str | None = None,
                    font_attrs: dict[str, Any] | None = None) -> Ref:
        """Simple (single-byte) font with /Widths, optional descriptor and FontFile.

        ``descriptor`` keys override sane defaults (zero/absurd values are
        kept as given). ``font_file`` goes in FontFile2 (TrueType), FontFile
        with Length1/2/3 (Type1; split at ``eexec`` unless given) or FontFile3
        when ``font_file_subtype`` (e.g. "Type1C", "OpenType") is set.
        """
        d: dict[str, Any] = {"Type": Name("Font"), "Subtype": Name(subtype),
                             "BaseFont": Name(base_font)}
        if widths is not None:
            d.update(FirstChar=first_char, LastChar=first_char + len(widths) - 1,
                     Widths=list(widths))
        if encoding is not None:
            d["Encoding"] = self._encoding(encoding)
        ff: tuple[str, Ref] | None = None
        if font_file is not None:
            if font_file_subtype is not None:
                ff = ("FontFile3", self.add_stream(font_file, {"Subtype": Name(font_file_subtype)}))
            elif subtype == "TrueType":
                ff = ("FontFile2", self.add_stream(font_file, {"Length1": len(font_file)}))
            else:
                if font_file_lengths is None:
                    i = font_file.find(b"eexec")
                    l1 = len(font_file) if i < 0 else i + 5
                    while l1 < len(font_file) and font_file[l1] in b"\r\n":
                        l1 += 1
                    font_file_lengths = (l1, len(font_file) - l1, 0)
                l1, l2, l3 = font_file_lengths
                ff = ("FontFile", self.add_stream(font_file, {"Length1": l1, "Length2": l2,
                                                              "Length3": l3}))
        if descriptor is not None or ff is not None:
            d["FontDescriptor"] = self._descriptor(base_font, descriptor, ff)
        tu = self._to_unicode(to_unicode, to_unicode_filter)
        if tu is not None:
            d["ToUnicode"] = tu
        return self.add(_merge(d, font_attrs))

    def type0_font(self, base_font: str = "Dummy", encoding: str | bytes = "Identity-H",
                   cid_subtype: Literal["CIDFontType2", "CIDFontType0"] = "CIDFontType2",
                   ordering: tuple[str, str, int] = ("Adobe", "Identity", 0),
                   dw: float | None = 1000, w: list[Any] | None = None,
                   dw2: Sequence[float] | None = None, w2: list[Any] | None = None,
                   descriptor: dict[str, Any] | None = None, to_unicode: bytes | None = None,
                   to_unicode_filter: _Filter = None, cmap_name: str = "Custom",
                   wmode: int = 0, font_attrs: dict[str, Any] | None = None,
                   cid_font_attrs: dict[str, Any] | None = None) -> Ref:
        """Composite font: predefined CMap name, or embedded CMap program bytes.

        The descendant CIDFont always gets a descriptor (required by the
        spec); CIDFontType2 also gets ``/CIDToGIDMap /Identity``.
        """
        reg, ordr, sup = ordering
        csi = {"Registry": reg.encode(), "Ordering": ordr.encode(), "Supplement": sup}
        enc: Any = Name(encoding) if isinstance(encoding, str) else self.add_stream(
            encoding, {"Type": Name("CMap"), "CMapName": Name(cmap_name),
                       "CIDSystemInfo": csi, "WMode": wmode})
        cid: dict[str, Any] = {"Type": Name("Font"), "Subtype": Name(cid_subtype),
                               "BaseFont": Name(base_font), "CIDSystemInfo": csi,
                               "FontDescriptor": self._descriptor(base_font, descriptor)}
        if dw is not None:
            cid["DW"] = dw
        if w is not None:
            cid["W"] = w
        if dw2 is not None:
            cid["DW2"] = list(dw2)
        if w2 is not None:
            cid["W2"] = w2
        if cid_subtype == "CIDFontType2":
            cid["CIDToGIDMap"] = Name("Identity")
        d: dict[str, Any] = {"Type": Name("Font"), "Subtype": Name("Type0"),
                             "BaseFont": Name(base_font), "Encoding": enc,
                             "DescendantFonts": [self.add(_merge(cid, cid_font_attrs))]}
        tu = self._to_unicode(to_unicode, to_unicode_filter)
        if tu is not None:
            d["ToUnicode"] = tu
        return self.add(_merge(d, font_attrs))

    def type3_font(self, char_procs: dict[str, bytes], encoding_differences: list[Any],
                   first_char: int, widths: Sequence[float],
                   font_matrix: Sequence[float] = (0.001, 0, 0, 0.001, 0, 0),
                   font_bbox: Sequence[float] = (0, 0, 1000, 1000),
                   resources: dict[str, Any] | Ref | None = None,
                   to_unicode: bytes | None = None,
                   font_attrs: dict[str, Any] | None = None) -> Ref:
        """Type3 font: glyphs are content streams (``d0``/``d1`` + drawing)."""
        d: dict[str, Any] = {
            "Type": Name("Font"), "Subtype": Name("Type3"), "FontBBox": list(font_bbox),
            "FontMatrix": list(font_matrix),
            "CharProcs": {k: self.add_stream(v) for k, v in char_procs.items()},
            "Encoding": {"Type": Name("Encoding"), "Differences": _names(encoding_differences)},
            "FirstChar": first_char, "LastChar": first_char + len(widths) - 1,
            "Widths": list(widths)}
        if resources is not None:
            d["Resources"] = resources
        tu = self._to_unicode(to_unicode, None)
        if tu is not None:
            d["ToUnicode"] = tu
        return self.add(_merge(d, font_attrs))

    def form_xobject(self, content: bytes, bbox: Sequence[float] | None = (0, 0, 612, 792),
                     matrix: Sequence[float] | None = None,
                     resources: dict[str, Any] | Ref | None = None, ref: Ref | None = None,
                     filter: _Filter = None, form_attrs: dict[str, Any] | None = None) -> Ref:
        """Form XObject; pass ``ref=self.reserve()`` to let resources name itself."""
        d: dict[str, Any] = {"Type": Name("XObject"), "Subtype": Name("Form")}
        if bbox is not None:
            d["BBox"] = list(bbox)
        if matrix is not None:
            d["Matrix"] = list(matrix)
        if resources is not None:
            d["Resources"] = resources
        return self.add_stream(content, _merge(d, form_attrs), filter=filter, ref=ref)

    # ------------------------------------------------------------- encryption
    def encrypt(self, user_password: str, owner_password: str,
                method: Literal["RC4-128", "RC4-40", "AES-128"] = "RC4-128",
                permissions: int = -4) -> Ref:
        """Standard security handler (ISO 32000-1 §7.6.3), revisions 2-4.

        Everything (strings and streams of every object except /Encrypt) is
        encrypted at write time, so objects may be added after this call.
        Passwords are encoded as Latin-1, as readers do for R2-R4.
        """
        v, r, bits = {"RC4-40": (1, 2, 40), "RC4-128": (2, 3, 128), "AES-128": (4, 4, 128)}[method]
        n = bits // 8
        doc_id = self.file_id or DEFAULT_ID
        self.file_id = doc_id
        upw = (user_password.encode("latin-1") + PASSWORD_PADDING)[:32]
        opw = (owner_password.encode("latin-1") + PASSWORD_PADDING)[:32] if owner_password else upw
        h = hashlib.md5(opw).digest()  # Algorithm 3: /O
        if r >= 3:
            for _ in range(50):
                h = hashlib.md5(h).digest()
        o = rc4(h[:n], upw)
        if r >= 3:
            for i in range(1, 20):
                o = rc4(bytes(b ^ i for b in h[:n]), o)
        p = struct.unpack("<i", struct.pack("<I", permissions & 0xFFFFFFFF))[0]
        key = hashlib.md5(upw + o + struct.pack("<i", p) + doc_id).digest()  # Algorithm 2
        if r >= 3:
            for _ in range(50):
                key = hashlib.md5(key[:n]).digest()
        key = key[:n]
        if r == 2:  # Algorithm 4
            u = rc4(key, PASSWORD_PADDING)
        else:  # Algorithm 5 (padded to 32 bytes with arbitrary bytes)
            u = rc4(key, hashlib.md5(PASSWORD_PADDING + doc_id).digest())
            for i in range(1, 20):
                u = rc4(bytes(b ^ i for b in key), u)
            u += b"\x00" * 16
        d: dict[str, Any] = {"Filter": Name("Standard"), "V": v, "R": r, "Length": bits,
                             "O": HexStr(o), "U": HexStr(u), "P": p}
        if v == 4:
            d["CF"] = {"StdCF": {"CFM": Name("AESV2"), "AuthEvent": Name("DocOpen"),
                                 "Length": 16}}
            d["StmF"] = d["StrF"] = Name("StdCF")
        ref = self.add(d)
        self._crypt = {"ref": ref, "key": key, "aes": v == 4}
        return ref

    def _crypt_bytes(self, data: bytes) -> bytes:
        """Algorithm 1 with the current object number (gen 0)."""
        c = self._crypt
        if c is None or self._cur is None or self._cur == c["ref"].num:
            return data
        k = c["key"] + struct.pack("<i", self._cur)[:3] + b"\x00\x00"
        if not c["aes"]:
            return rc4(hashlib.md5(k).digest()[:min(len(k), 16)], data)
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        okey = hashlib.md5(k + b"sAlT").digest()[:16]
        # Deterministic IV (hash of object number and a counter) keeps
        # output byte-identical across runs; readers take the IV as given.
        self._iv_counter += 1
        iv = hashlib.md5(okey + b"iv%d" % self._iv_counter).digest()
        pad = 16 - len(data) % 16
        enc = Cipher(algorithms.AES(okey), modes.CBC(iv)).encryptor()
        return iv + enc.update(data + bytes([pad]) * pad) + enc.finalize()

    # ---------------------------------------------------------- serialisation
    def serialize(self, v: Any) -> bytes:
        """Serialise one direct value (strings encrypted if encryption is on)."""
        if isinstance(v, bool):
            return b"true" if v else b"false"
        if v is None:
            return b"null"
        if isinstance(v, int):
            return b"%d" % v
        if isinstance(v, float):
            return _fmt_float(v)
        if isinstance(v, Name):
            return _fmt_name(v)
        if isinstance(v, Raw):
            return bytes(v)
        if isinstance(v, Ref):
            return b"%d %d R" % (v.num, v.gen)
        if isinstance(v, HexStr):
            return _hex(self._crypt_bytes(bytes(v)))
        if isinstance(v, (bytes, bytearray)):
            return _fmt_literal(self._crypt_bytes(bytes(v)))
        if isinstance(v, (list, tuple)):
            return b"[" + b" ".join(self.serialize(x) for x in v) + b"]"
        if isinstance(v, dict):
            return b"<<" + b" ".join(_fmt_name(k) + b" " + self.serialize(x)
                                     for k, x in v.items()) + b">>"
        if isinstance(v, str):
            raise TypeError(f"plain str {v!r}: use Name(...) or bytes")
        raise TypeError(f"cannot serialise {type(v).__name__}: {v!r}")

    def _serialize_object(self, num: int, obj: Any) -> bytes:
        self._cur = num
        try:
            if not isinstance(obj, Stream):
                return self.serialize(obj)
            data = self._crypt_bytes(obj.data)
            d = dict(obj.dict)
            d.setdefault("Length", len(data))
            return self.serialize(d) + b"\nstream\n" + data + b"\nendstream"
        finally:
            self._cur = None

    def to_bytes(self) -> bytes:
        """Serialise the whole file (classic xref table, trailer, %%EOF)."""
        self._finish_tree()
        self._iv_counter = 0
        out = bytearray(b"%%PDF-%s\n%%\xe2\xe3\xcf\xd3\n" % self.version.encode())
        offsets: list[int] = []
        for num in range(1, len(self._objs) + 1):
            obj = self._objs[num]
            if obj is None:
                raise ValueError(f"object {num} was reserved but never set")
            offsets.append(len(out))
            out += b"%d 0 obj\n" % num + self._serialize_object(num, obj) + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
        out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
        trailer: dict[str, Any] = {"Size": len(offsets) + 1, "Root": self.catalog}
        if self.info is not None:
            trailer["Info"] = self.info
        if self._crypt is not None:
            trailer["Encrypt"] = self._crypt["ref"]
        if self.file_id is not None:  # trailer strings are never encrypted
            trailer["ID"] = [HexStr(self.file_id), HexStr(self.file_id)]
        out += b"trailer\n" + self.serialize(trailer) + b"\nstartxref\n%d\n%%%%EOF\n" % xref
        return bytes(out)

    def save(self, path: str | Path) -> Path:
        """Write :meth:`to_bytes` to ``path`` and return it as a Path."""
        p = Path(path)
        p.write_bytes(self.to_bytes())
        return p
