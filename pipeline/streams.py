"""Reading a stream's decoded bytes with the damage reported, not hidden.

pdfminer.six returns empty data when a FlateDecode stream is not zlib at all, which
would make a damaged page look like an image scan; here that becomes a problem.
"""
from __future__ import annotations

from pdfminer.pdftypes import PDFStream


def read_stream(stream: PDFStream, what: str, problems: list[str]) -> bytes | None:
    """The decoded data, or None (with a problem recorded) when it cannot be read."""
    raw = stream.rawdata
    try:
        data = stream.get_data()
    except Exception as exc:  # noqa: BLE001 - unsupported filter, corrupt data, bad predictor
        problems.append(f"{what} unreadable: {type(exc).__name__}: {exc}")
        return None
    if not data and raw and stream.get_filters():
        problems.append(f"{what} unreadable: its filtered data decodes to nothing")
        return None
    return data
