"""Text from files (names, titles, errors, snippets) made safe to show: on a
terminal by the CLI, and in the search page's HTML by the server, by one rule.

A file name is attacker-chosen: it may hold terminal escape sequences (which can
retitle the window, move the cursor or hide lines), newlines that forge output
lines, bidirectional overrides that reorder what is read, or bytes that are not
UTF-8 (Python hands those over as lone surrogates, which cannot even be printed).
"""
from __future__ import annotations

import re

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
