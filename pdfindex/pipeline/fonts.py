"""Fonts: splitting strings into codes, decoding codes to Unicode (R4), widths and
box heights (R3).

Every font answers ``decode(data)`` with a list of ``CodeInfo`` tuples, cached per
code, so the interpreter's per-glyph work is a table look-up. Widths are in text
space units (1.0 = the font size), already through /1000 or a Type 3 FontMatrix.
"""
from __future__ import annotations

from collections.abc import Callable

import re
from io import BytesIO
from typing import Any, NamedTuple

from pdfminer.fontmetrics import FONT_METRICS
from pdfminer.pdffont import TrueTypeFont
from pdfminer.pdftypes import PDFStream, resolve1
from pdfminer.psparser import PSLiteral

from . import encodings as enc
from .texencodings import tex_encoding
from .values import matrix, name, number
from .cff import cff_builtin_encoding
from .cmaps import (
    CMap,
    PredefinedCMap,
    cid_to_unicode,
    ordering_of_cmap_name,
    parse_cmap,
    predefined_cmap,
    unicode_cmap_codec,
)
from .errors import DAMAGE, Problem, ProblemCode, caught, triage
from .params import Params
from .streams import read_stream


# C0 and C1 control characters are not text: a glyph mapped to one is unresolved
# (R6), except the whitespace controls, which read as a space.
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_WHITESPACE_CONTROLS = re.compile("[\t\n\r\x0b\x0c]")


def _clean(text: str) -> str:
    return _CONTROLS.sub("", _WHITESPACE_CONTROLS.sub(" ", text))
_SELF_NAME = re.compile(r"^[A-Za-z]{1,2}(\d{1,3})$")


class CodeInfo(NamedTuple):
    code: int
    nbytes: int
    text: str  # "" when unresolved
    width: float  # horizontal advance w0, text space units
    is_space: bool  # single-byte code 32: word spacing Tw applies (§9.3.3)
    w1: float = 0.0  # vertical advance (negative: downwards), vertical fonts only
    vx: float = 0.0  # position vector from the vertical to the horizontal origin
    vy: float = 0.0


def _stream_data(x: object, problems: list[str], what: str) -> bytes | None:
    """A stream's data; a failure only loses this step of the chain (R4)."""
    x = resolve1(x)
    return read_stream(x, what, problems) if isinstance(x, PDFStream) else None


def _cmap_program(x: object, problems: list[str], what: str, params: Params) -> CMap | None:
    """Read and parse an embedded CMap, within the CMap caps (bytes and entries)."""
    x = resolve1(x)
    if not isinstance(x, PDFStream):
        return None
    data = read_stream(x, what, problems, limit=params.max_cmap_bytes, cap_name="CMap")
    return parse_cmap(data, params.max_cmap_entries, problems, what) if data else None


def _to_unicode(spec: dict[str, Any], problems: list[str], resource: str, params: Params) -> CMap | None:
    """The font's ToUnicode CMap (R4 step 1). The name /Identity-H or /Identity-V,
    which some writers put there, reads as "the two-byte code is UCS-2"."""
    value = resolve1(spec.get("ToUnicode"))
    if isinstance(value, PSLiteral) and str(value.name).startswith("Identity"):
        return CMap(name="Identity", unicode_ranges=[(0, 0xFFFF, 0, 2)])
    return _cmap_program(value, problems, f"ToUnicode of font {resource}", params)


def _strip_subset(base_font: str) -> str:
    if len(base_font) > 7 and base_font[6] == "+" and base_font[:6].isupper():
        return base_font[7:]
    return base_font


_STD14_ALIASES = {
    "Arial": "Helvetica", "ArialMT": "Helvetica", "Arial,Bold": "Helvetica-Bold", "Arial-BoldMT": "Helvetica-Bold",
    "TimesNewRoman": "Times-Roman", "TimesNewRomanPSMT": "Times-Roman", "CourierNew": "Courier",
    "CourierNewPSMT": "Courier", "Times": "Times-Roman",
}


def standard_metrics(base_font: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    name = _strip_subset(base_font)
    name = _STD14_ALIASES.get(name, name)
    found = FONT_METRICS.get(name)
    if found is None and "," in name:
        found = FONT_METRICS.get(name.split(",")[0])
    return found


def _sane_height(ascent: float, descent: float) -> bool:
    """A usable ascent/descent pair in em: positive height, not absurd."""
    return ascent > 0 and descent <= 0 and 0.3 <= ascent - descent <= 3.0


class Font:
    """Base of the font kinds; ``decode`` turns a string operand into codes."""

    vertical = False

    def __init__(self, resource: str, base_font: str, ascent: float, descent: float) -> None:
        self.resource = resource
        self.base_font = base_font
        self.ascent = ascent
        self.descent = descent

    def decode(self, data: bytes) -> list[CodeInfo]:
        raise NotImplementedError


def _vertical_metrics(descriptor: dict[str, Any], bbox: object, std: Any, scale: float,
                      params: Params) -> tuple[float, float]:
    """R3: Ascent/Descent, else FontBBox, else standard-14 metrics, else the default."""
    a, d = number(descriptor.get("Ascent")) * scale, number(descriptor.get("Descent")) * scale
    if _sane_height(a, d):
        return a, d
    box = resolve1(bbox if bbox is not None else descriptor.get("FontBBox"))
    if isinstance(box, list) and len(box) == 4:
        y0, y1 = number(box[1]) * scale, number(box[3]) * scale
        lo, hi = min(y0, y1), max(y0, y1)
        if _sane_height(hi, min(lo, 0.0)):
            return hi, min(lo, 0.0)
    if std is not None:
        a, d = number(std[0].get("Ascent")) / 1000, number(std[0].get("Descent")) / 1000
        if _sane_height(a, d):
            return a, d
    return params.default_ascent, params.default_descent


class SimpleFont(Font):
    """Type1, MMType1, TrueType and Type3 fonts: one byte per code, a 256-entry table."""

    def __init__(self, resource: str, spec: dict[str, Any], params: Params, problems: list[str]) -> None:
        subtype = name(spec.get("Subtype"))
        base_font = name(spec.get("BaseFont"))
        descriptor = resolve1(spec.get("FontDescriptor"))
        descriptor = descriptor if isinstance(descriptor, dict) else {}
        std = standard_metrics(base_font) if subtype != "Type3" else None
        scale_x, ascent, descent = self._scale(spec, subtype, descriptor, std, params)
        super().__init__(resource, base_font, ascent, descent)
        to_unicode = _to_unicode(spec, problems, resource, params)
        self_named: set[int] = set()
        names = self._glyph_names(spec, subtype, descriptor, problems, self_named)
        builtin = self._builtin(base_font, subtype, self_named)

        def text_of(code: int, cmap: CMap | None) -> str:
            return self._text(code, cmap, names, builtin)

        self.table = self._code_table(spec, descriptor, std, scale_x, to_unicode, text_of)

    @staticmethod
    def _scale(spec: dict[str, Any], subtype: str, descriptor: dict[str, Any], std: Any,
               params: Params) -> tuple[float, float, float]:
        """Glyph space to text space across (Type 3: its FontMatrix), and the ascent
        and descent."""
        if subtype != "Type3":
            return (0.001, *_vertical_metrics(descriptor, None, std, 0.001, params))
        font_matrix = matrix(spec.get("FontMatrix"))
        scale_x, scale = (font_matrix[0], font_matrix[3]) if font_matrix is not None else (0.001, 0.001)
        return (scale_x, *_vertical_metrics(descriptor, spec.get("FontBBox"), None, abs(scale), params))

    @staticmethod
    def _builtin(base_font: str, subtype: str, self_named: set[int]) -> dict[int, str]:
        """The built-in encoding a font without names falls back on (R4 step 4)."""
        plain = _strip_subset(base_font)
        if plain.startswith("Symbol"):
            return enc.SYMBOL
        if plain.startswith("ZapfDingbats"):
            return enc.ZAPF_DINGBATS
        if subtype == "Type3" and self_named:
            # pdfTeX's bitmap fonts: the codes used tell the TeX encoding (else WinAnsi, step 4)
            return tex_encoding(self_named) or {}
        return {}

    @staticmethod
    def _code_table(spec: dict[str, Any], descriptor: dict[str, Any], std: Any, scale_x: float,
                    to_unicode: CMap | None, text_of: Callable[[int, CMap | None], str]) -> list[CodeInfo]:
        """Each of the 256 codes: its text (R4) and its width (Widths, else the
        standard font's metrics for the glyph the encoding selects, else MissingWidth)."""
        widths = resolve1(spec.get("Widths"))
        first_char = int(number(spec.get("FirstChar"), 0))
        missing = number(descriptor.get("MissingWidth")) * scale_x
        std_widths = std[1] if std is not None else None
        table: list[CodeInfo] = []
        for code in range(256):
            text = _clean(text_of(code, to_unicode))
            width = None
            if isinstance(widths, list) and 0 <= code - first_char < len(widths):
                w = resolve1(widths[code - first_char])
                if isinstance(w, (int, float)):
                    width = float(w) * scale_x
            if width is None:
                # Metrics are keyed by the glyph the encoding selects, not by what
                # ToUnicode says it means (a ligature glyph maps to two letters).
                glyph_char = text_of(code, None) if to_unicode is not None else text
                if std_widths is not None and glyph_char and glyph_char in std_widths:
                    width = std_widths[glyph_char] / 1000
                elif std_widths is not None and code == 32:
                    width = std_widths.get(" ", 250) / 1000
                else:
                    width = missing or (0.5 if not isinstance(widths, list) else 0.0)
            table.append(CodeInfo(code, 1, text, width, code == 32))
        return table

    @staticmethod
    def _glyph_names(spec: dict[str, Any], subtype: str, descriptor: dict[str, Any],
                     problems: list[str], self_named: set[int]) -> dict[int, str | None]:
        """Code → Unicode from /Encoding (name, or BaseEncoding + /Differences) over the
        font's built-in encoding. None marks a glyph name that says nothing: that code
        is unresolved rather than guessed from WinAnsi. Codes whose glyphs are named
        after the code itself go into ``self_named``."""
        result: dict[int, str | None] = {}
        encoding = resolve1(spec.get("Encoding"))
        base_name = name(encoding) if not isinstance(encoding, dict) else name(encoding.get("BaseEncoding"))
        base = enc.base_encoding(base_name) if base_name else None
        if base is None:
            builtin_names = _program_encoding(descriptor, problems)
            if builtin_names:
                for code, gname in builtin_names.items():
                    result[code] = enc.glyph_name_to_unicode(gname)
            elif subtype in ("Type1", "MMType1") and not _strip_subset(name(spec.get("BaseFont"))).startswith(
                ("Symbol", "ZapfDingbats")
            ):
                base = enc.STANDARD
        if base is not None:
            result.update(base)
        if isinstance(encoding, dict):
            differences = resolve1(encoding.get("Differences"))
            if isinstance(differences, list):
                _apply_differences(differences, result, self_named)
        return result

    @staticmethod
    def _text(code: int, to_unicode: CMap | None, names: dict[int, str | None],
              builtin: dict[int, str]) -> str:
        if to_unicode is not None:  # step 1
            text = to_unicode.lookup_unicode(code)
            if text:
                return text
        if code in names:  # step 2: a named glyph decides, even when it says nothing
            return names[code] or ""
        if builtin:
            return builtin.get(code, "")
        # step 4: the built-in WinAnsi table, then MacRoman for what WinAnsi leaves out
        return enc.WIN_ANSI.get(code) or enc.MAC_ROMAN.get(code) or ""

    def decode(self, data: bytes) -> list[CodeInfo]:
        table = self.table
        return [table[b] for b in data]


def _program_encoding(descriptor: dict[str, Any], problems: list[str]) -> dict[int, str]:
    """Code → glyph name from the embedded font program's own encoding (a Type 1
    font's /Encoding array, a CFF font's encoding), for a font whose dictionary
    names no base encoding."""
    if "FontFile" in descriptor:
        program = _stream_data(descriptor["FontFile"], problems, "embedded font program")
        return enc.type1_builtin_encoding(program) if program else {}
    if "FontFile3" in descriptor:
        program = _stream_data(descriptor["FontFile3"], problems, "embedded font program")
        return cff_builtin_encoding(program) if program else {}
    return {}


def _apply_differences(differences: list[object], result: dict[int, str | None], self_named: set[int]) -> None:
    """/Differences (§9.6.6.1): a code, then the glyph names of it and the codes after it."""
    code = 0
    for item in differences:
        item = resolve1(item)
        if isinstance(item, int):
            code = item
        elif isinstance(item, PSLiteral):
            gname = str(item.name)
            self_name = _SELF_NAME.match(gname)
            if self_name and int(self_name.group(1)) == code:
                # pdfTeX's bitmap fonts name each glyph after its code
                # (/a65 at 65): no information, so the code goes on to
                # step 4 as if unnamed, as poppler does, unless the
                # codes used tell the font's TeX encoding.
                result.pop(code, None)
                self_named.add(code)
            elif 0 <= code < 256:
                result[code] = enc.glyph_name_to_unicode(gname)
            code += 1


class CIDFont(Font):
    """Type0 fonts: codes split by the Encoding CMap's codespace; text by ToUnicode,
    then a Unicode-based predefined CMap, then the CID collection (R4)."""

    def __init__(self, resource: str, spec: dict[str, Any], params: Params, problems: list[str]) -> None:
        base_font = name(spec.get("BaseFont"))
        descendants = resolve1(spec.get("DescendantFonts"))
        cid_font = resolve1(descendants[0]) if isinstance(descendants, list) and descendants else {}
        cid_font = cid_font if isinstance(cid_font, dict) else {}
        descriptor = resolve1(cid_font.get("FontDescriptor"))
        descriptor = descriptor if isinstance(descriptor, dict) else {}
        ascent, descent = _vertical_metrics(descriptor, None, None, 0.001, params)
        super().__init__(resource, base_font, ascent, descent)

        self.identity = False
        self.trie: dict[int, object] | None = None
        self.embedded: CMap | None = None
        self.codec: str | None = None
        cmap_name = self._read_encoding(resolve1(spec.get("Encoding")), resource, params, problems)
        self.codec = unicode_cmap_codec(cmap_name)
        self.collection = self._collection(cid_font, cmap_name)
        self.to_unicode = _to_unicode(spec, problems, resource, params)
        self.descriptor = descriptor
        self.cid_font = cid_font
        self.problems = problems
        self.strict = params.strict
        self._glyph_unicode: dict[int, str] | None = None
        self._cid_to_gid: bytes | None = None
        self._read_metrics(cid_font, resource, params, problems)
        self.cache: dict[bytes, CodeInfo] = {}

    def _read_encoding(self, encoding: object, resource: str, params: Params, problems: list[str]) -> str:
        """The Encoding CMap (R4): an embedded program, or a predefined one by name
        (Identity when unknown, with a problem); returns the CMap's name."""
        cmap_name = ""
        if isinstance(encoding, PDFStream):
            self.embedded = _cmap_program(encoding, problems, f"encoding CMap of font {resource}", params) or CMap()
            cmap_name = name(encoding.get("CMapName")) or self.embedded.name
            used = self.embedded.usecmap
            if used:
                self._use_predefined(used)
            wmode = resolve1(encoding.get("WMode"))
            self.vertical = (wmode if isinstance(wmode, int) else self.embedded.wmode) == 1
            if not self.embedded.codespace and self.trie is None and not self.identity:
                self.identity = True  # no codespace at all: two-byte codes, the common case
        else:
            cmap_name = name(encoding)
            self._use_predefined(cmap_name)
            if self.trie is None and not self.identity:
                problems.append(Problem(ProblemCode.FONT_MISSING, f"font {resource}: CMap {cmap_name or '(none)'} "
                                                                  "not available, read as Identity"))
                self.identity = True
        return cmap_name

    def _collection(self, cid_font: dict[str, Any], cmap_name: str) -> dict[int, str] | None:
        """CID → Unicode of the font's character collection (R4 step 3), from its
        CIDSystemInfo, else from the predefined CMap's name."""
        info = resolve1(cid_font.get("CIDSystemInfo"))
        ordering = name(info.get("Ordering")) if isinstance(info, dict) else ""
        registry = name(info.get("Registry")) if isinstance(info, dict) else ""
        if registry != "Adobe" or ordering not in ("GB1", "CNS1", "Japan1", "Korea1"):
            ordering = ordering_of_cmap_name(cmap_name) if cmap_name and cmap_name != "Identity-H" else ordering
        return cid_to_unicode(ordering, self.vertical) if ordering else None

    def _read_metrics(self, cid_font: dict[str, Any], resource: str, params: Params, problems: list[str]) -> None:
        """Widths (DW, W) and, for vertical writing, vertical metrics (DW2, W2)."""
        self.default_width = number(cid_font.get("DW"), 1000) / 1000
        self.widths = {cid: v[0] for cid, v in
                       _cid_metrics(resolve1(cid_font.get("W")), 1, params, problems, f"font {resource}: /W").items()}
        dw2 = resolve1(cid_font.get("DW2"))
        self.dw2 = (0.88, -1.0)  # §9.7.4.3 default DW2 [880 -1000]
        if isinstance(dw2, list) and len(dw2) == 2:
            self.dw2 = (number(dw2[0], 880) / 1000, number(dw2[1], -1000) / 1000)
        self.w2 = (_cid_metrics(resolve1(cid_font.get("W2")), 3, params, problems, f"font {resource}: /W2")
                   if self.vertical else {})

    def _use_predefined(self, name: str) -> None:
        if name in ("Identity-H", "Identity-V"):
            self.identity = True
            self.vertical = name == "Identity-V"
            return
        pre: PredefinedCMap | None = predefined_cmap(name)
        if pre is not None:
            self.trie = pre.trie
            self.vertical = pre.vertical

    def _split(self, data: bytes, i: int) -> tuple[int, int, int | None]:
        """(code, nbytes, cid) at offset i; bytes matching no codespace range are kept
        as a one-byte unresolved code instead of being dropped."""
        if self.identity:
            if i + 1 < len(data):
                code = (data[i] << 8) | data[i + 1]
                return code, 2, code
            return data[i], 1, None
        if self.embedded is not None and self.embedded.codespace:
            for n in self.embedded.code_lengths():
                if i + n <= len(data):
                    code = int.from_bytes(data[i:i + n], "big")
                    for length, lo, hi in self.embedded.codespace:
                        if length == n and lo <= code <= hi:
                            cid = self.embedded.lookup_cid(code)
                            if cid is None and self.trie is not None:
                                cid = self._trie_cid(data[i:i + n])
                            return code, n, cid
            n = self.embedded.code_lengths()[0]
            return int.from_bytes(data[i:i + n], "big"), min(n, len(data) - i), None
        if self.trie is not None:
            node: object = self.trie
            for k in range(4):
                if i + k >= len(data) or not isinstance(node, dict):
                    break
                node = node.get(data[i + k])
                if isinstance(node, int):
                    return int.from_bytes(data[i:i + k + 1], "big"), k + 1, node
                if node is None:
                    break
            return data[i], 1, None
        return data[i], 1, None

    def _trie_cid(self, code: bytes) -> int | None:
        node: object = self.trie
        for b in code:
            if not isinstance(node, dict):
                return None
            node = node.get(b)
        return node if isinstance(node, int) else None

    def _info(self, code: int, nbytes: int, cid: int | None) -> CodeInfo:
        text = ""
        if self.to_unicode is not None:
            text = self.to_unicode.lookup_unicode(code) or ""
        if not text and self.codec is not None and cid is not None:
            try:
                text = code.to_bytes(nbytes, "big").decode(self.codec)
            except UnicodeDecodeError:
                text = ""
        if not text and self.collection is not None and cid is not None:
            text = self.collection.get(cid, "")
        if not text and cid is not None and self.to_unicode is None:
            text = self._embedded_unicode(cid)
        text = _clean(text)
        key = cid if cid is not None else -1
        width = self.widths.get(key, self.default_width)
        if self.vertical:
            w1, vx, vy = self.w2.get(key, (self.dw2[1], width / 2, self.dw2[0]))
            return CodeInfo(code, nbytes, text, width, nbytes == 1 and code == 32, w1, vx, vy)
        return CodeInfo(code, nbytes, text, width, nbytes == 1 and code == 32)

    def _embedded_unicode(self, cid: int) -> str:
        """Beyond R4: a TrueType CID font with no ToUnicode still carries its own
        Unicode cmap table; read it backwards through CIDToGIDMap (what pdfminer.six
        does too, and why MuPDF prints mojibake for such files)."""
        if self._glyph_unicode is None:
            self._glyph_unicode = {}
            program = _stream_data(self.descriptor.get("FontFile2"), self.problems, "embedded TrueType font")
            if program:
                try:
                    umap = TrueTypeFont(self.base_font, BytesIO(program)).create_unicode_map()
                    self._glyph_unicode = dict(umap.cid2unichr)
                except DAMAGE as exc:  # a damaged font program only loses this step
                    triage(exc, self.strict)  # our own bug still raises in strict mode
                    self._glyph_unicode = {}
            to_gid = resolve1(self.cid_font.get("CIDToGIDMap"))
            if isinstance(to_gid, PDFStream):
                self._cid_to_gid = _stream_data(to_gid, self.problems, "CIDToGIDMap")
        gid = cid
        if self._cid_to_gid is not None:
            if 2 * cid + 2 > len(self._cid_to_gid):
                return ""
            gid = int.from_bytes(self._cid_to_gid[2 * cid:2 * cid + 2], "big")
        return self._glyph_unicode.get(gid, "")

    def decode(self, data: bytes) -> list[CodeInfo]:
        out: list[CodeInfo] = []
        cache = self.cache
        i, n = 0, len(data)
        while i < n:
            code, nbytes, cid = self._split(data, i)
            key = data[i:i + nbytes]
            info = cache.get(key)
            if info is None:
                info = cache[key] = self._info(code, nbytes, cid)
            out.append(info)
            i += max(nbytes, 1)
        return out


def _cid_metrics(array: object, size: int, params: Params, problems: list[str],
                 what: str) -> dict[int, tuple[float, ...]]:
    """Parse a /W (size 1: w0) or /W2 (size 3: w1y, vx, vy) array (§9.7.4.3):
    ``c [v v ...]`` gives consecutive CIDs from c, ``c_first c_last v...`` a range.
    Values are in thousandths of text space. At most ``max_width_entries`` CIDs get
    a value (ranges expanded), then the rest keeps the default width: 20,000 ranges
    of 65,536 CIDs each took 85 s of CPU before this cap."""
    result: dict[int, tuple[float, ...]] = {}
    if not isinstance(array, list):
        return result
    budget = params.max_width_entries
    i = 0
    while i + 1 < len(array):
        first, second = resolve1(array[i]), resolve1(array[i + 1])
        if isinstance(first, int) and isinstance(second, list):
            count = len(second) // size
            if count > budget:
                break
            values = [number(v) / 1000 for v in second]
            for k in range(count):
                result[first + k] = tuple(values[k * size:(k + 1) * size])
            budget -= count
            i += 2
        elif isinstance(first, int) and isinstance(second, int) and i + 1 + size < len(array):
            group = tuple(number(v) / 1000 for v in array[i + 2:i + 2 + size])
            if 0 <= second - first < 65536:
                if second - first + 1 > budget:
                    break
                for cid in range(first, second + 1):
                    result[cid] = group
                budget -= second - first + 1
            i += 2 + size
        else:
            i += 1
    if i + 1 < len(array):
        problems.append(Problem(ProblemCode.CAP_HIT, f"{what} gives widths to more than {params.max_width_entries} "
                                                     "CIDs; the rest keep the default width"))
    return result


class MissingFont(Font):
    """Stands in for a font resource that is absent or unreadable: glyphs keep their
    place (half-em advance) and count as unresolved, so coverage tells the truth."""

    def __init__(self, resource: str, params: Params) -> None:
        super().__init__(resource, "", params.default_ascent, params.default_descent)
        self.table = [CodeInfo(c, 1, "", 0.5, c == 32) for c in range(256)]

    def decode(self, data: bytes) -> list[CodeInfo]:
        table = self.table
        return [table[b] for b in data]


def load_font(resource: str, spec: object, params: Params, problems: list[str]) -> Font:
    """Build the font for a /Font resource entry; never raises."""
    spec = resolve1(spec)
    if not isinstance(spec, dict):
        problems.append(Problem(ProblemCode.FONT_DAMAGED, f"font {resource} is not a font dictionary"))
        return MissingFont(resource, params)
    try:
        if name(spec.get("Subtype")) == "Type0":
            return CIDFont(resource, spec, params, problems)
        return SimpleFont(resource, spec, params, problems)
    except DAMAGE as exc:  # a broken font loses only its own text (R17)
        problems.append(caught(ProblemCode.FONT_DAMAGED, f"font {resource} could not be read: ", exc, params.strict))
        return MissingFont(resource, params)
