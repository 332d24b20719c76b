"""Reading a stream's decoded bytes with the damage reported, not hidden.

pdfminer.six returns empty data when a FlateDecode stream is not zlib at all, which
would make a damaged page look like an image scan; here that becomes a problem.

Its salvage path for damaged Flate data (``pdftypes.decompress_corrupted``) feeds
zlib one byte at a time and concatenates bytes objects: quadratic, so a large
truncated stream (an interrupted download) hangs extraction, and it gives up on
damage anywhere but the checksum. We replace it with a linear salvage that keeps
everything decoded before the damage.
"""
from __future__ import annotations

import zlib

from pdfminer import pdftypes
from pdfminer.pdftypes import PDFStream

from .errors import DAMAGE

_CHUNK = 1 << 16


def salvage_flate(data: bytes) -> bytes:
    """Inflate as much of damaged zlib data as decodes: whole chunks while they
    go through, byte by byte only inside the chunk where the damage is."""
    inflater = zlib.decompressobj()
    out: list[bytes] = []
    for start in range(0, len(data), _CHUNK):
        chunk = data[start:start + _CHUNK]
        saved = inflater.copy()
        try:
            out.append(inflater.decompress(chunk))
        except zlib.error:
            inflater = saved
            for k in range(len(chunk)):
                try:
                    out.append(inflater.decompress(chunk[k:k + 1]))
                except zlib.error:
                    break
            break
        if inflater.eof:
            break
    return b"".join(out)


pdftypes.decompress_corrupted = salvage_flate


def read_stream(stream: PDFStream, what: str, problems: list[str]) -> bytes | None:
    """The decoded data, or None (with a problem recorded) when it cannot be read."""
    raw = stream.rawdata
    try:
        data = stream.get_data()
    except DAMAGE as exc:  # unsupported filter, corrupt data, bad predictor
        problems.append(f"{what} unreadable: {type(exc).__name__}: {exc}")
        return None
    if not data and raw and stream.get_filters():
        problems.append(f"{what} unreadable: its filtered data decodes to nothing")
        return None
    return data
