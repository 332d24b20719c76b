"""Reading a stream's decoded bytes, bounded, with the damage reported, not hidden.

pdfminer.six returns empty data when a FlateDecode stream is not zlib at all, which
would make a damaged page look like an image scan; here that becomes a problem.

Bounded while decoding: pdfminer.six's ``PDFStream.decode`` inflates a whole stream
in one call (a 1 GiB Flate bomb is 1 MB on disk and ran 232 s at 2.1 GB), decodes
RunLength by concatenating bytes (an 8 MB stream reached 4.7 GB) and has no limit
for LZW or ASCII85 (whose ``z`` is four bytes). Our decoders stop producing output
at a cap: Flate through ``decompressobj`` with ``max_length``, the others in chunks.
We install ours as ``PDFStream.decode`` too, so what pdfminer.six decodes for itself
(object streams, xref streams) is bounded as well.

Its salvage path for damaged Flate data (``pdftypes.decompress_corrupted``) fed
zlib one byte at a time and concatenated bytes objects: quadratic, and it gave up
on damage anywhere but the checksum. Ours keeps everything decoded before the
damage, in linear time.

Budgets: ``page_budget`` makes the page being extracted the context of every read,
so the bytes decoded for one page (content, forms, CMaps, fonts) add up against
``Params.max_page_bytes`` wherever the read happens (``document.page_content``
included), and a cap hit becomes a problem of that page naming the cap.
"""
from __future__ import annotations

import re
import zlib
from base64 import a85decode
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from io import BytesIO

from pdfminer import pdftypes
from pdfminer.ascii85 import asciihexdecode
from pdfminer.lzw import LZWDecoder
from pdfminer.pdfexceptions import PDFNotImplementedError
from pdfminer.pdftypes import (
    LITERAL_CRYPT,
    LITERALS_ASCII85_DECODE,
    LITERALS_ASCIIHEX_DECODE,
    LITERALS_CCITTFAX_DECODE,
    LITERALS_DCT_DECODE,
    LITERALS_FLATE_DECODE,
    LITERALS_JBIG2_DECODE,
    LITERALS_JPX_DECODE,
    LITERALS_LZW_DECODE,
    LITERALS_RUNLENGTH_DECODE,
    PDFStream,
)
from pdfminer.utils import apply_png_predictor, apply_tiff_predictor

from .errors import DAMAGE, Problem, ProblemCode, caught
from .params import DEFAULT_PARAMS, Params

_CHUNK = 1 << 16  # compressed input fed to zlib per step
_OUT_CHUNK = 1 << 20  # most output one decoding step produces


def size_text(n: int) -> str:
    """A cap in words: "64 MB", "100000" for counts is done by callers."""
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KB"
    return f"{n} bytes"


# ---- bounded decoders: each returns (data, cut), data at most ``limit`` bytes ----

def _joined(out: list[bytes], size: int, limit: int) -> bytes:
    """The pieces joined and cut to ``limit`` without a second full-size copy."""
    if size > limit:
        out[-1] = out[-1][:len(out[-1]) - (size - limit)]
    data = b"".join(out)
    out.clear()
    return data


def _inflate(data: bytes, limit: int) -> tuple[bytes, bool]:
    """Inflate up to ``limit`` bytes. Damaged data keeps what decodes before the
    damage: whole chunks while they go through, byte by byte only inside the chunk
    where the damage is."""
    inflater = zlib.decompressobj()
    out: list[bytes] = []
    size = 0

    def feed(piece: bytes) -> bool:
        """Inflate one piece of input; True when the output reached the limit."""
        nonlocal size
        while True:
            got = inflater.decompress(piece, min(_OUT_CHUNK, limit - size + 1))
            if got:
                out.append(got)
                size += len(got)
            if size > limit:
                return True
            piece = inflater.unconsumed_tail
            if not piece or inflater.eof:
                return False

    for start in range(0, len(data), _CHUNK):
        chunk = data[start:start + _CHUNK]
        saved, saved_parts, saved_size = inflater.copy(), len(out), size
        try:
            if feed(chunk):
                return _joined(out, size, limit), True
        except zlib.error:
            inflater, size = saved, saved_size
            del out[saved_parts:]
            for k in range(len(chunk)):
                try:
                    if feed(chunk[k:k + 1]):
                        return _joined(out, size, limit), True
                except zlib.error:
                    break
                if inflater.eof:
                    break
            break
        if inflater.eof:
            break
    return b"".join(out), False


def salvage_flate(data: bytes) -> bytes:
    """pdfminer.six's ``decompress_corrupted``, replaced: linear and bounded."""
    return _inflate(data, DEFAULT_PARAMS.max_stream_bytes)[0]


pdftypes.decompress_corrupted = salvage_flate


def _run_length(data: bytes, limit: int) -> tuple[bytes, bool]:
    """RunLengthDecode (§7.4.5); a truncated run keeps the bytes it has."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        length = data[i]
        i += 1
        if length == 128:
            break
        if length < 128:
            out += data[i:i + length + 1]
            i += length + 1
        elif i < n:
            out += data[i:i + 1] * (257 - length)
            i += 1
        if len(out) > limit:
            del out[limit:]
            return bytes(out), True
    return bytes(out), False


def _lzw(data: bytes, limit: int) -> tuple[bytes, bool]:
    out: list[bytes] = []
    size = 0
    for piece in LZWDecoder(BytesIO(data)).run():
        out.append(piece)
        size += len(piece)
        if size > limit:
            return _joined(out, size, limit), True
    return b"".join(out), False


_A85_START = re.compile(rb"^\s*<?\s*~\s*")
_A85_END = re.compile(rb"\s*~\s*>?\s*$")
_A85_GROUPS = re.compile(rb"(?:z|[^z]{5})*+")
_WHITESPACE = re.compile(rb"\s+")


def _ascii85(data: bytes, limit: int) -> tuple[bytes, bool]:
    """ASCII85Decode as pdfminer.six reads it (leading ``<~``/``~`` and trailing
    ``~>``/``~`` stripped), decoded group-aligned piece by piece since ``z`` makes
    four bytes of one."""
    data = _A85_END.sub(b"", _A85_START.sub(b"", data))
    data = _WHITESPACE.sub(b"", data)
    out: list[bytes] = []
    size, pos, n = 0, 0, len(data)
    while pos < n:
        m = _A85_GROUPS.match(data, pos, min(n, pos + _OUT_CHUNK // 4))
        end = m.end() if m else pos
        if end == pos:  # a tail shorter than a group, or damage: a85decode says which
            end = n
        out.append(a85decode(data[pos:end]))
        size += len(out[-1])
        pos = end
        if size > limit:
            return _joined(out, size, limit), True
    return b"".join(out), False


def _predict(data: bytes, params: object) -> bytes:
    """Apply a /DecodeParms predictor the way pdfminer.six does."""
    if not isinstance(params, dict) or "Predictor" not in params:
        return data
    pred = _int(params["Predictor"])
    if pred == 1:
        return data
    colors, columns = _int(params.get("Colors", 1)), _int(params.get("Columns", 1))
    bpc = _int(params.get("BitsPerComponent", 8))
    if pred == 2:
        return apply_tiff_predictor(colors, columns, bpc, data)
    if pred >= 10:
        return apply_png_predictor(pred, colors, columns, bpc, data)
    raise PDFNotImplementedError(f"Unsupported predictor: {pred!r}")


def _int(value: object) -> int:
    value = pdftypes.resolve1(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def decode(stream: PDFStream, limit: int) -> tuple[bytes, bool]:
    """The stream's decoded data, at most ``limit`` bytes, and whether it was cut.
    Raises what damaged data raises (unsupported filter, bad predictor)."""
    if stream.data is not None:  # already decoded (by pdfminer.six's get_data)
        return stream.data[:limit], len(stream.data) > limit
    data = stream.rawdata or b""
    if stream.decipher:
        if stream.objid is None or stream.genno is None:
            raise PDFNotImplementedError("encrypted stream without an object number")
        data = stream.decipher(stream.objid, stream.genno, data, stream.attrs)
    cut = False
    for f, params in stream.get_filters():
        if f in LITERALS_FLATE_DECODE:
            data, c = _inflate(data, limit)
        elif f in LITERALS_LZW_DECODE:
            data, c = _lzw(data, limit)
        elif f in LITERALS_ASCII85_DECODE:
            data, c = _ascii85(data, limit)
        elif f in LITERALS_ASCIIHEX_DECODE:
            data = asciihexdecode(data)  # never longer than its input
            data, c = data[:limit], len(data) > limit
        elif f in LITERALS_RUNLENGTH_DECODE:
            data, c = _run_length(data, limit)
        elif f in LITERALS_DCT_DECODE or f in LITERALS_JBIG2_DECODE or f in LITERALS_JPX_DECODE:
            c = False  # image data, passed on as pdfminer.six does
        elif f in LITERALS_CCITTFAX_DECODE:
            # Fax images only; its output is not bounded by its input, and no text
            # stream uses it.
            raise PDFNotImplementedError("CCITTFaxDecode image data is not decoded")
        elif f == LITERAL_CRYPT:
            raise PDFNotImplementedError("/Crypt filter is unsupported")
        else:
            raise PDFNotImplementedError(f"Unsupported filter: {f!r}")
        cut = cut or c
        data = _predict(data, params)[:limit]
    return data, cut


# ---- budgets -----------------------------------------------------------------

class Budget:
    """What the page being extracted may still decode, and where its problems go."""

    __slots__ = ("left", "params", "problems")

    def __init__(self, params: Params, problems: list[str] | None = None) -> None:
        self.params = params
        self.left = params.max_page_bytes
        self.problems = problems

    def charge(self, what: str, n: int, problems: list[str]) -> bool:
        """Count ``n`` more bytes interpreted for the page (a cached form drawn
        again); False, with the problem recorded, when that passes the page cap."""
        if n > self.left:
            problems.append(Problem(ProblemCode.CAP_HIT, f"{what} skipped: the page's data is over the "
                                                         f"{size_text(self.params.max_page_bytes)} page cap"))
            self.left = 0
            return False
        self.left -= n
        return True


_BUDGET: ContextVar[Budget | None] = ContextVar("pdfindex_page_budget", default=None)


@contextmanager
def page_budget(params: Params, problems: list[str] | None = None) -> Iterator[Budget]:
    """Make every stream read inside the block count against one page's budget."""
    budget = Budget(params, problems)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def current_budget() -> Budget | None:
    """The budget of the page being extracted, if any."""
    return _BUDGET.get()


def read_stream(stream: PDFStream, what: str, problems: list[str], *, limit: int | None = None,
                cap_name: str = "stream") -> bytes | None:
    """The decoded data, or None (with a problem recorded) when it cannot be read.
    At most the stream cap (or ``limit``, named ``cap_name``, when smaller) and what
    is left of the page budget; a cut is reported and what came before it kept."""
    budget = _BUDGET.get()
    params = budget.params if budget is not None else DEFAULT_PARAMS
    cap, name = params.max_stream_bytes, "stream"
    if limit is not None and limit < cap:
        cap, name = limit, cap_name
    if budget is not None and budget.left < cap:
        if budget.left <= 0:
            problems.append(Problem(ProblemCode.CAP_HIT, f"{what} skipped: the page's data is over the "
                                                         f"{size_text(params.max_page_bytes)} page cap"))
            return None
        cap, name = budget.left, "page"
    raw = stream.rawdata
    try:
        data, cut = decode(stream, cap)
    except DAMAGE as exc:  # unsupported filter, corrupt data, bad predictor
        problems.append(caught(ProblemCode.STREAM_DAMAGED, f"{what} unreadable: ", exc, params.strict))
        return None
    if budget is not None:
        budget.left -= len(data)
    if cut:
        full = params.max_page_bytes if name == "page" else cap
        problems.append(Problem(ProblemCode.CAP_HIT, f"{what}: decompressed data over the {size_text(full)} "
                                                     f"{name} cap; the rest is ignored"))
    if not data and raw and stream.get_filters():
        problems.append(Problem(ProblemCode.STREAM_DAMAGED, f"{what} unreadable: its filtered data decodes to nothing"))
        return None
    return data


def _bounded_decode(self: PDFStream) -> None:
    """``PDFStream.decode`` for pdfminer.six's own reads (object streams, xref
    streams, anyone's ``get_data``): the same decoders, cut at the stream cap."""
    budget = _BUDGET.get()
    params = budget.params if budget is not None else DEFAULT_PARAMS
    data, cut = decode(self, params.max_stream_bytes)
    if cut and budget is not None and budget.problems is not None:
        budget.problems.append(Problem(ProblemCode.CAP_HIT, f"object {self.objid}: decompressed data over the "
                                       f"{size_text(params.max_stream_bytes)} stream cap; the rest is ignored"))
    self.data = data
    self.rawdata = None


PDFStream.decode = _bounded_decode  # type: ignore[method-assign]

__all__ = ["Budget", "current_budget", "decode", "page_budget", "read_stream", "salvage_flate", "size_text"]
