"""What the command line shows: text from files (names, titles, errors, snippets)
made safe for a terminal, and JSON that any file name can pass through.

A file name is attacker-chosen: it may hold terminal escape sequences (which can
retitle the window, move the cursor or hide lines), newlines that forge output
lines, bidirectional overrides that reorder what is read, or bytes that are not
UTF-8 (Python hands those over as lone surrogates, which cannot even be printed).
"""
from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

# C0 and C1 controls, DEL, bidirectional embeddings/overrides/isolates, line and
# paragraph separators, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with everything a terminal would act on, or could not print,
    written as a visible escape (``\\x1b``, ``\\xff`` for a non-UTF-8 byte)."""
    return _UNSAFE.sub(_escape, text)


#: The "version" of every JSON output (docs/json.md): raised when a key changes meaning.
JSON_VERSION = 1


def write_json(value: Any, out: TextIO | None = None) -> None:
    """One JSON document and a newline. Non-ASCII text stays readable; a lone
    surrogate (a non-UTF-8 file name) is written as its JSON escape, which a JSON
    reader turns back into the same string."""
    text = json.dumps(value, ensure_ascii=False)
    out = out or sys.stdout
    out.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
