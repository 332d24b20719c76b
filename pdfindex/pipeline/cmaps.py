"""CMap programs (R5) and the predefined CMaps bundled with pdfminer.six (R4 steps 2-3).

A parsed CMap answers two questions: how to split a string into codes (codespace
ranges of 1 to 4 bytes) and what a code maps to (Unicode text for a ToUnicode CMap,
a CID for an encoding CMap). Counts before ``beginbfchar`` and friends are ignored:
producers get them wrong, so we read until the matching ``end`` keyword.

Bounded: tokens are read lazily, a section's items are applied in batches instead
of being held until its ``end``, and a CMap stops at ``max_entries`` mapped codes
(a range kept as a range counts once), with a problem saying so.
"""
from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from .encodings import glyph_name_to_unicode
from .errors import Problem, ProblemCode

# Ranges wider than this are kept as ranges instead of being expanded into a dict:
# a `<0000> <FFFF> <0000>` identity bfrange is common, a 4-byte one is not rare.
_EXPAND_LIMIT = 4096

# One token per match, named by its group (``m.lastgroup``; None for a comment).
_TOKEN = re.compile(
    rb"<(?P<hex>[0-9A-Fa-f\s]*)>"
    rb"|(?P<open>\[)|(?P<close>\])"
    rb"|/(?P<name>[^\s/\[\]<>(){}%]*)"
    rb"|\((?P<string>(?:[^()\\]|\\.)*)\)"  # no nesting; rare in CMaps
    rb"|(?P<number>[-+]?\d+(?:\.\d*)?)"
    rb"|(?P<keyword>[A-Za-z_][A-Za-z0-9_.]*)"
    rb"|%[^\r\n]*",
    re.S,
)


def hex_bytes(digits: bytes) -> bytes:
    """A hex string's bytes; whitespace is ignored and an odd final digit is
    padded with 0, as ISO 32000-1 §7.3.4.3 says."""
    try:
        return bytes.fromhex(digits.decode("ascii"))  # skips ASCII whitespace itself
    except ValueError:
        pass
    hexd = bytes(c for c in digits if c not in b" \t\r\n\f\x00")
    if len(hexd) % 2:
        hexd += b"0"
    try:
        return bytes.fromhex(hexd.decode("ascii"))
    except ValueError:
        return b""


def utf16_text(dst: bytes) -> str:
    """A bfchar/bfrange destination: UTF-16BE with surrogate pairs joined.

    An odd-length destination is a producer that dropped the leading zero byte
    (``<41>`` for "A"); lone surrogates are dropped rather than kept as garbage.
    """
    if len(dst) % 2:
        dst = b"\x00" + dst
    text = dst.decode("utf-16-be", "surrogatepass")
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        text = "".join(ch for ch in text if not "\ud800" <= ch <= "\udfff")
    return text.replace("\x00", "")


@dataclass(slots=True)
class CMap:
    """A parsed CMap program. ``unicode`` is for ToUnicode maps, ``cids`` for
    encoding maps; each also has range lists for spans too wide to expand."""

    name: str = ""
    wmode: int = 0
    usecmap: str = ""
    codespace: list[tuple[int, int, int]] = field(default_factory=list)  # (nbytes, lo, hi)
    unicode: dict[int, str] = field(default_factory=dict)
    unicode_ranges: list[tuple[int, int, int, int]] = field(default_factory=list)  # lo, hi, dst, dst_len
    cids: dict[int, int] = field(default_factory=dict)
    cid_ranges: list[tuple[int, int, int]] = field(default_factory=list)  # lo, hi, first cid
    registry: str = ""
    ordering: str = ""

    def lookup_unicode(self, code: int) -> str | None:
        text = self.unicode.get(code)
        if text is not None:
            return text
        for lo, hi, dst, dst_len in self.unicode_ranges:
            if lo <= code <= hi:
                return utf16_text((dst + code - lo).to_bytes(dst_len, "big"))
        # Some writers put cidchar/cidrange sections in a ToUnicode CMap; their
        # numbers are then code points (pdfminer.six issue 566).
        cid = self.lookup_cid(code)
        if cid is not None and 0 < cid < 0x110000 and not 0xD800 <= cid <= 0xDFFF:
            return chr(cid)
        return None

    def lookup_cid(self, code: int) -> int | None:
        cid = self.cids.get(code)
        if cid is not None:
            return cid
        for lo, hi, first in self.cid_ranges:
            if lo <= code <= hi:
                return first + code - lo
        return None

    def code_lengths(self) -> tuple[int, ...]:
        return tuple(sorted({n for n, _, _ in self.codespace}))


#: Items of a section held before they are applied (an even number of pairs and
#: of triples, so batches never split one).
_BATCH = 3000
_GROUP = {"codespacerange": 2, "bfchar": 2, "cidchar": 2, "bfrange": 3, "cidrange": 3}


def parse_cmap(data: bytes, max_entries: int = 1 << 18, problems: list[str] | None = None,
               what: str = "CMap") -> CMap:
    """Parse a CMap program; never raises on bad syntax, it keeps what it could read."""
    reader = _Reader(CMap(), max_entries)
    stack = reader.stack
    for m in _TOKEN.finditer(data):
        kind = m.lastgroup
        if kind == "hex":
            stack.append(hex_bytes(m["hex"]))
        elif kind == "open":
            stack.append("[")
            reader.open_arrays += 1
        elif kind == "close":
            reader.close_array()
        elif kind == "name":
            stack.append(("/", m["name"].decode("latin-1")))
        elif kind == "string":
            stack.append(m["string"])
        elif kind == "number":
            num = m["number"]
            stack.append(float(num) if b"." in num else int(num))
        elif kind == "keyword":
            reader.keyword(m["keyword"].decode("ascii"))
        if len(stack) >= _BATCH and not reader.apply_batch():
            _cut(problems, what, f"a run of more than {max_entries} items")
            break
        if _size(reader.cmap) > max_entries:
            _cut(problems, what, f"more than the {max_entries}-entry cap")
            break
    return reader.cmap


class _Reader:
    """The state of parse_cmap: the operand stack (only ever changed in place),
    the section open (``bfchar`` for ``beginbfchar``) and the arrays open in it."""

    __slots__ = ("cmap", "max_entries", "open_arrays", "section", "stack")

    def __init__(self, cmap: CMap, max_entries: int) -> None:
        self.cmap = cmap
        self.max_entries = max_entries
        self.stack: list[object] = []
        self.section: str | None = None
        self.open_arrays = 0

    def close_array(self) -> None:
        stack = self.stack
        items: list[object] = []
        while stack and stack[-1] != "[":
            items.append(stack.pop())
        if stack:
            stack.pop()
            self.open_arrays -= 1
        items.reverse()
        stack.append(items)

    def keyword(self, kw: str) -> None:
        """``begin…``/``end…`` open and close a section (whatever its count said);
        ``def`` and ``usecmap`` take their operands. Other keywords outside a
        section (PostScript set-up) drop what was read."""
        stack = self.stack
        if kw.startswith("begin") and kw != "begincmap":
            self.section = kw[5:]
            stack.clear()
            self.open_arrays = 0
        elif kw.startswith("end") and kw not in ("endcmap", "end"):
            _apply_section(self.cmap, self.section, stack, self.max_entries)
            self.section = None
            stack.clear()
            self.open_arrays = 0
        elif kw == "def" and len(stack) >= 2:
            _apply_def(self.cmap, stack[-2], stack[-1])
            stack.clear()
        elif kw == "usecmap" and stack and isinstance(stack[-1], tuple):
            self.cmap.usecmap = str(stack[-1][1])
            stack.clear()
        elif self.section is None:
            stack.clear()

    def apply_batch(self) -> bool:
        """Apply the whole groups of a section read so far, so a section of a
        million codes is never held at once; False when items pile up outside a
        section (or in one huge array) past ``max_entries``."""
        stack = self.stack
        group = _GROUP.get(self.section or "")
        if group is not None and not self.open_arrays:
            whole = len(stack) - len(stack) % group
            _apply_section(self.cmap, self.section, stack[:whole], self.max_entries)
            del stack[:whole]
            return True
        return len(stack) < self.max_entries


def _size(cmap: CMap) -> int:
    return len(cmap.unicode) + len(cmap.cids) + len(cmap.unicode_ranges) + len(cmap.cid_ranges)


def _cut(problems: list[str] | None, what: str, why: str) -> None:
    if problems is not None:
        problems.append(Problem(ProblemCode.CAP_HIT, f"{what}: {why}; the rest is ignored"))


def _apply_def(cmap: CMap, key: object, value: object) -> None:
    if not (isinstance(key, tuple) and key[0] == "/"):
        return
    name = key[1]
    if name == "WMode" and isinstance(value, int):
        cmap.wmode = value
    elif name == "CMapName" and isinstance(value, tuple):
        cmap.name = value[1]
    elif name == "Registry" and isinstance(value, bytes):
        cmap.registry = value.decode("latin-1")
    elif name == "Ordering" and isinstance(value, bytes):
        cmap.ordering = value.decode("latin-1")


def _apply_section(cmap: CMap, section: str | None, items: list[object], limit: int = 1 << 18) -> None:
    """Apply a section's items; expansion stops once the CMap has ``limit`` entries
    (parse_cmap then reports the cut)."""
    if section == "codespacerange":
        for lo, hi in zip(items[0::2], items[1::2], strict=False):
            if isinstance(lo, bytes) and isinstance(hi, bytes) and 1 <= len(lo) <= 4:
                cmap.codespace.append((len(lo), int.from_bytes(lo, "big"), int.from_bytes(hi, "big")))
    elif section == "bfchar":
        _bf_chars(cmap, items)
    elif section == "cidchar":
        for src, cid in zip(items[0::2], items[1::2], strict=False):
            if isinstance(src, bytes) and src and isinstance(cid, int):
                cmap.cids[int.from_bytes(src, "big")] = cid
    elif section in ("bfrange", "cidrange"):
        _ranges(cmap, items, _bf_range if section == "bfrange" else _cid_range, limit)


def _bf_chars(cmap: CMap, items: list[object]) -> None:
    for src, dst in zip(items[0::2], items[1::2], strict=False):
        if isinstance(src, bytes) and src:
            text = _destination(dst)
            if text is not None:
                cmap.unicode[int.from_bytes(src, "big")] = text


def _ranges(cmap: CMap, items: list[object], apply: Callable[[CMap, int, int, object], None], limit: int) -> None:
    """The (low code, high code, destination) triples of a bfrange or cidrange
    section, each applied by ``apply`` until the CMap has ``limit`` entries."""
    for k in range(0, len(items) - 2, 3):
        if _size(cmap) > limit:
            return
        lo_b, hi_b, dst = items[k], items[k + 1], items[k + 2]
        if isinstance(lo_b, bytes) and isinstance(hi_b, bytes) and lo_b and hi_b:
            lo, hi = int.from_bytes(lo_b, "big"), int.from_bytes(hi_b, "big")
            if hi >= lo:
                apply(cmap, lo, hi, dst)


def _bf_range(cmap: CMap, lo: int, hi: int, dst: object) -> None:
    """One bfrange: an array of destinations, one per code, or a first destination
    counted up (kept as a range when too long to expand)."""
    if isinstance(dst, list):
        for off, d in enumerate(dst[: hi - lo + 1]):
            text = _destination(d)
            if text is not None:
                cmap.unicode[lo + off] = text
    elif isinstance(dst, bytes) and dst:
        base = int.from_bytes(dst, "big")
        if hi - lo >= _EXPAND_LIMIT:
            cmap.unicode_ranges.append((lo, hi, base, len(dst)))
            return
        for off in range(hi - lo + 1):
            try:
                cmap.unicode[lo + off] = utf16_text((base + off).to_bytes(len(dst), "big"))
            except OverflowError:
                break


def _cid_range(cmap: CMap, lo: int, hi: int, cid: object) -> None:
    """One cidrange: consecutive CIDs from ``cid`` (kept as a range when too long)."""
    if not isinstance(cid, int):
        return
    if hi - lo >= _EXPAND_LIMIT:
        cmap.cid_ranges.append((lo, hi, cid))
        return
    for off in range(hi - lo + 1):
        cmap.cids[lo + off] = cid + off


def _destination(dst: object) -> str | None:
    if isinstance(dst, bytes):
        return utf16_text(dst)
    if isinstance(dst, tuple) and dst[0] == "/":  # a glyph name destination
        return glyph_name_to_unicode(dst[1])
    return None


# --------------------------------------------------------------------------
# Predefined CMaps and CID collections, from pdfminer.six's bundled data.
# --------------------------------------------------------------------------

def _load_json(name: str) -> dict[str, object] | None:
    try:
        path = resources.files("pdfminer").joinpath("cmap", f"{name}.json.gz")
        with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
            data: dict[str, object] = json.load(fh)
            return data
    except (OSError, ValueError, ModuleNotFoundError):
        return None


def _int_tree(node: dict[str, object]) -> dict[int, object]:
    return {int(k): (_int_tree(v) if isinstance(v, dict) else v) for k, v in node.items()}


@dataclass(frozen=True, slots=True)
class PredefinedCMap:
    """A named CMap: code bytes → CID as a byte trie, plus its writing mode."""

    name: str
    vertical: bool
    trie: dict[int, object]


_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@cache
def predefined_cmap(name: str) -> PredefinedCMap | None:
    """Load a predefined CMap once per process; None when it is not bundled (R4:
    the chain then skips this step instead of failing)."""
    if not _SAFE_NAME.match(name):
        return None
    data = _load_json(name)
    if not data or not isinstance(data.get("CODE2CID"), dict):
        return None
    return PredefinedCMap(name, bool(data.get("IS_VERTICAL")), _int_tree(data["CODE2CID"]))  # type: ignore[arg-type]


@cache
def cid_to_unicode(ordering: str, vertical: bool = False) -> dict[int, str] | None:
    """CID → Unicode for Adobe-GB1, -CNS1, -Japan1, -Korea1 (R4 step 3), parsed once.
    Vertical fonts also get the CIDs of vertical glyph variants (the long-vowel
    mark, small kana), which only the collection's vertical table lists."""
    if ordering not in ("GB1", "CNS1", "Japan1", "Korea1"):
        return None
    data = _load_json(f"to-unicode-Adobe-{ordering}")
    horizontal = data.get("CID2UNICHR_H") if data else None
    if not isinstance(horizontal, dict):
        return None
    table = {int(k): v for k, v in horizontal.items()}
    extra = data.get("CID2UNICHR_V") if data else None
    if vertical and isinstance(extra, dict):
        for k, v in extra.items():
            table.setdefault(int(k), v)
    _add_utf32_cids(table, ordering, vertical)
    return table


#: The UTF-32 CMap of each collection: Unicode (any plane) → CID.
_UTF32_CMAP = {"GB1": "UniGB-UTF32", "CNS1": "UniCNS-UTF32", "Japan1": "UniJIS-UTF32", "Korea1": "UniKS-UTF32"}


def _add_utf32_cids(table: dict[int, str], ordering: str, vertical: bool) -> None:
    """Beyond the seeds: the to-Unicode tables come from UCS-2, which cannot hold a
    character outside the Basic Multilingual Plane, so a CID standing for one (381
    ideographs of Adobe-Japan1, 73 of CNS1) stayed unresolved. The collection's
    UTF-32 CMap maps Unicode to CIDs for every plane: inverted, it gives those CIDs
    their characters. CIDs the table already has keep their value."""
    for suffix in (("-V", "-H") if vertical else ("-H",)):
        cmap = predefined_cmap(_UTF32_CMAP[ordering] + suffix)
        if cmap is None:
            continue
        found: dict[int, int] = {}  # CID → the lowest code point mapped to it
        stack: list[tuple[dict[int, object], int]] = [(cmap.trie, 0)]
        while stack:
            node, code = stack.pop()
            for byte, value in node.items():
                point = (code << 8) | byte
                if isinstance(value, dict):
                    stack.append((value, point))
                elif isinstance(value, int) and value not in table and point <= 0x10FFFF \
                        and not 0xD800 <= point <= 0xDFFF and point < found.get(value, 0x110000):
                    found[value] = point
        table.update((cid, chr(point)) for cid, point in found.items())


# Orderings of the predefined CMaps by name prefix, for Type0 fonts whose
# CIDSystemInfo is missing.
_ORDERING_BY_PREFIX = (
    ("UniGB", "GB1"), ("GBK", "GB1"), ("GBT", "GB1"), ("GB", "GB1"),
    ("UniCNS", "CNS1"), ("B5", "CNS1"), ("ETen", "CNS1"), ("HK", "CNS1"), ("CNS", "CNS1"), ("ETHK", "CNS1"),
    ("UniJIS", "Japan1"), ("90", "Japan1"), ("83pv", "Japan1"), ("78", "Japan1"), ("EUC", "Japan1"),
    ("RKSJ", "Japan1"), ("Add", "Japan1"), ("Ext", "Japan1"), ("NWP", "Japan1"), ("Hankaku", "Japan1"),
    ("Hiragana", "Japan1"), ("Katakana", "Japan1"), ("Roman", "Japan1"), ("WP", "Japan1"),
    ("H", "Japan1"), ("V", "Japan1"),
    ("UniKS", "Korea1"), ("KSC", "Korea1"),
)


def ordering_of_cmap_name(name: str) -> str:
    for prefix, ordering in _ORDERING_BY_PREFIX:
        if name.startswith(prefix):
            return ordering
    return ""


def unicode_cmap_codec(name: str) -> str | None:
    """For the Uni* predefined CMaps the code itself is Unicode: the codec that reads it."""
    if not name.startswith("Uni"):
        return None
    for marker, codec in (("UCS2", "utf-16-be"), ("UTF16", "utf-16-be"), ("UTF32", "utf-32-be"), ("UTF8", "utf-8")):
        if f"-{marker}-" in name:
            return codec
    return None
