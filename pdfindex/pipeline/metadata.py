"""Document metadata: the Info dictionary and the catalog's XMP packet, merged.

Users filter and sort by author and dates in every tool they know, and both places
hold them: the Info dictionary (PDF 1.0 on) and XMP (PDF 1.4 on, which PDF 2.0 makes
the only one). Where both give a field, XMP wins: writers that keep both update XMP
and often leave a stale Info entry behind (ISO 32000-2 §14.3.3).

The XMP packet is untrusted XML. It is parsed only when it is at most
``MAX_XMP_BYTES`` decoded and has no DOCTYPE (so no entity can be declared, which is
what a "billion laughs" needs); otherwise it is ignored with a problem noted. A date
that cannot be read is ignored the same way: a broken date must not fail a file.
"""
from __future__ import annotations

import calendar
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Any

from pdfminer.pdftypes import PDFStream, resolve1

from pdfindex.contract.problems import Problem, ProblemCode

from .errors import DAMAGE
from .streams import read_stream

#: Decoded XMP above this is not parsed (real packets are a few KB, padding included).
MAX_XMP_BYTES = 1 << 20

_RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_XMP = "{http://ns.adobe.com/xap/1.0/}"
_PDF = "{http://ns.adobe.com/pdf/1.3/}"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

#: XMP property → our field.
_XMP_FIELDS = {
    f"{_DC}title": "title", f"{_DC}creator": "author", f"{_DC}description": "subject",
    f"{_PDF}Keywords": "keywords", f"{_XMP}CreateDate": "created", f"{_XMP}ModifyDate": "modified",
}
_INFO_FIELDS = {"Title": "title", "Author": "author", "Subject": "subject", "Keywords": "keywords",
                "CreationDate": "created", "ModDate": "modified"}

# D:YYYYMMDDHHmmSSOHH'mm' — everything after the year optional (ISO 32000-1 §7.9.4).
_PDF_DATE = re.compile(
    r"(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
    r"(?:([Zz])|([+\-])(\d{2})(?:'?(\d{2}))?'?)?"
)
_XMP_PARTIAL = re.compile(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")
_HAS_DTD = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_HAS_DTD_WIDE = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


@dataclass(slots=True)
class Metadata:
    title: str = ""
    author: str = ""
    subject: str = ""
    keywords: str = ""
    producer: str = ""
    #: seconds since the epoch, UTC; None where absent or unreadable
    created: float | None = None
    modified: float | None = None
    problems: list[str] = field(default_factory=list)


def _epoch(year: int, month: int, day: int, hour: int, minute: int, second: int, offset_minutes: int) -> float:
    """UTC seconds; raises ValueError for a day or time that does not exist."""
    datetime(year, month, day, hour, minute, second)  # validates (month 13, 31 February, hour 25)
    return float(calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) - offset_minutes * 60)


def parse_pdf_date(text: str) -> float:
    """A PDF date string (``D:20240131123000+01'00'``, or any prefix of it down to the
    year) as UTC epoch seconds. A date without a time zone is taken as UTC (the
    standard leaves it unknown). Raises ValueError for anything else."""
    value = text.strip().rstrip("\x00").strip()
    m = _PDF_DATE.fullmatch(value)
    if m is None:
        raise ValueError(f"not a PDF date: {value[:40]!r}")
    year, month, day, hour, minute, second = (int(g) if g else d for g, d in
                                              zip(m.groups()[:6], (0, 1, 1, 0, 0, 0), strict=True))
    offset = 0
    if m.group(8):
        hours, minutes = int(m.group(9)), int(m.group(10) or 0)
        if hours > 23 or minutes > 59:
            raise ValueError(f"bad time zone in date {value[:40]!r}")
        offset = (hours * 60 + minutes) * (1 if m.group(8) == "+" else -1)
    if year < 1:
        raise ValueError(f"bad year in date {value[:40]!r}")
    return _epoch(year, month, day, hour, minute, second, offset)


def parse_iso_date(text: str) -> float:
    """An XMP (ISO 8601) date: ``2024-01-31T12:30:00+01:00``, ``2024-01-31``,
    ``2024-01`` or ``2024``; UTC when no zone is given. Raises ValueError."""
    value = text.strip()
    m = _XMP_PARTIAL.fullmatch(value)
    if m is not None:
        return _epoch(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1), 0, 0, 0, 0)
    if len(value) > 64:
        raise ValueError(f"not a date: {value[:40]!r}")
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise ValueError(f"not a date: {value[:40]!r}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _text_of(element: ET.Element) -> str:
    """A property's value: plain text, or the items of an rdf:Alt (x-default
    first), rdf:Seq or rdf:Bag, joined with "; "."""
    for container in (f"{_RDF}Alt", f"{_RDF}Seq", f"{_RDF}Bag"):
        box = element.find(container)
        if box is not None:
            items = box.findall(f"{_RDF}li")
            if container == f"{_RDF}Alt":
                default = [li for li in items if li.get(_XML_LANG) == "x-default"]
                items = default[:1] or items[:1]
            return "; ".join(t for t in ("".join(li.itertext()).strip() for li in items) if t)
    return "".join(element.itertext()).strip()


def parse_xmp(data: bytes, problems: list[str]) -> dict[str, str]:
    """The fields of an XMP packet (raw strings: dates still unparsed), or nothing
    with a problem noted when it is too big, declares a DTD or is not XML."""
    if len(data) > MAX_XMP_BYTES:
        problems.append(Problem(ProblemCode.CAP_HIT, f"XMP metadata ignored: over {MAX_XMP_BYTES // 1024} KB"))
        return {}
    if _HAS_DTD.search(data) or (b"\x00" in data and _HAS_DTD_WIDE.search(data.decode("utf-16", "replace"))):
        problems.append(Problem(ProblemCode.METADATA_DAMAGED, "XMP metadata ignored: it declares a DTD or entities"))
        return {}
    try:
        root = ET.fromstring(data)
    except (ET.ParseError, ValueError, RecursionError) as exc:
        problems.append(Problem(ProblemCode.METADATA_DAMAGED, f"XMP metadata ignored: not well-formed XML "
                                                              f"({str(exc)[:60]})"))
        return {}
    out: dict[str, str] = {}
    for description in root.iter(f"{_RDF}Description"):
        for name, key in _XMP_FIELDS.items():
            attribute = description.get(name)
            if attribute is not None and attribute.strip():
                out[key] = attribute.strip()
        for child in description:
            field_name = _XMP_FIELDS.get(child.tag)
            if field_name is not None:
                value = _text_of(child)
                if value:
                    out[field_name] = value
    return out


def merge(info: dict[str, str], xmp: dict[str, str], problems: list[str] | None = None) -> Metadata:
    """Info fields overlaid with XMP's; dates parsed, broken ones noted and dropped."""
    notes = problems if problems is not None else []
    raw: dict[str, tuple[str, str]] = {}
    for name, key in _INFO_FIELDS.items():
        value = info.get(name, "").strip()
        if value:
            raw[key] = (value, "Info")
    for key, value in xmp.items():
        raw[key] = (value, "XMP")
    meta = Metadata(producer=info.get("Producer", "").strip(), problems=notes)
    for key in ("title", "author", "subject", "keywords"):
        if key in raw:
            setattr(meta, key, raw[key][0])
    for key, label in (("created", "creation date"), ("modified", "modification date")):
        if key not in raw:
            continue
        value, where = raw[key]
        try:
            stamp = parse_iso_date(value) if where == "XMP" else parse_pdf_date(value)
        except (ValueError, OverflowError):
            notes.append(Problem(ProblemCode.METADATA_DAMAGED, f"{where} {label} ignored: cannot read {value[:40]!r}"))
            continue
        setattr(meta, key, stamp)
    return meta


def read_metadata(catalog: Any, info: dict[str, str]) -> Metadata:
    """The merged metadata of a document, given its catalog dictionary and its
    decoded Info strings. Never raises for damaged data: it becomes a problem."""
    problems: list[str] = []
    xmp: dict[str, str] = {}
    try:
        stream = resolve1(catalog.get("Metadata")) if isinstance(catalog, dict) else None
    except DAMAGE as exc:
        problems.append(Problem(ProblemCode.STREAM_DAMAGED, f"XMP metadata unreadable: {type(exc).__name__}"))
        stream = None
    if isinstance(stream, PDFStream):
        data = read_stream(stream, "XMP metadata", problems, limit=MAX_XMP_BYTES + 1, cap_name="XMP")
        if data is not None:
            xmp = parse_xmp(data, problems)
    return merge(info, xmp, problems)
