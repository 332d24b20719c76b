"""What the command line writes besides text lines: JSON that any file name can
pass through, and bold only where a terminal shows it."""
from __future__ import annotations

import os
import sys
from typing import Any, TextIO

from pdfindex.contract.shapes import json_text


def write_json(value: Any, out: TextIO | None = None) -> None:
    """One JSON document (``shapes.json_text``) and a newline."""
    (out or sys.stdout).write(json_text(value) + "\n")


def use_color() -> bool:
    """Bold only on a terminal, and not when NO_COLOR is set (https://no-color.org:
    present and not empty)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
