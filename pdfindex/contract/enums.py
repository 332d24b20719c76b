"""The closed sets of values the layers and the user share: a file's status and the
orders of hits. Apart from the records (``records``), whose dataclasses cost every
command a dozen milliseconds to create: the parser of the command line names these
values without them."""
from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args


class Status(StrEnum):
    INDEXED = "indexed"
    FAILED = "failed"
    ENCRYPTED = "encrypted"
    EMPTY = "empty"


#: The orders of hits (``search --sort``, the API's ``sort``): relevance, date
#: (newest first) or path. A Literal, so that the API's OpenAPI description lists
#: the values where the parameter is.
SortOrder = Literal["score", "date", "path"]
SORT_ORDERS: tuple[SortOrder, ...] = get_args(SortOrder)

#: Which pages are OCR'd (PDFINDEX_OCR, ``--ocr``), the default first: OCRmyPDF's
#: modes, which users know. auto: pages without a usable text layer; off; force: all.
OCR_MODES = ("auto", "off", "force")
#: Where a page's text comes from: its text layer, OCR, or the text layer and then
#: OCR of its images without text (``source:ocr`` in a query).
TEXT_SOURCES = ("text", "ocr", "text+ocr")
