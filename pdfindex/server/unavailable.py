"""A document none of whose paths still holds its indexed content, and what mends it.

The index outlives the files: one may be deleted or moved (``pdfindex remove PATH``
takes it off the index; ``ingest --prune`` of a folder left empty refuses, taking it
for an unmounted share), or rewritten in place (``pdfindex ingest PATH`` indexes the
new content). ``FileUnavailable`` names each path's fate and the commands, for the
JSON API and for the HTML page a browser gets when it follows the search page's
link (``wants_html``: the request's Accept header prefers HTML, as a browser's
navigation does and an API client's ``Accept: application/json`` or ``*/*`` does not).
"""
from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from starlette.exceptions import HTTPException
from starlette.requests import Request

Fate = Literal["gone", "changed", "unreadable"]
GONE_REASON = "gone (moved or deleted since it was indexed)"
CHANGED_REASON = "changed since it was indexed"


@dataclass(frozen=True, slots=True)
class PathProblem:
    path: str
    fate: Fate
    reason: str


@dataclass(frozen=True, slots=True)
class Mend:
    """A command that mends some of the paths, and what it does."""

    does: str
    command: str


class FileUnavailable(HTTPException):
    """404 when every path is gone, else 409; the detail names each path's problem
    and the commands that mend them."""

    def __init__(self, problems: Sequence[PathProblem], index_dir: Path | None = None) -> None:
        self.problems = list(problems)
        self.mends = mends(self.problems, index_dir)
        status = 404 if all(p.fate == "gone" for p in self.problems) else 409
        detail = "; ".join(f"{p.path}: {p.reason}" for p in self.problems)
        if self.mends:
            detail += "".join(f". {m.does.capitalize()}: {m.command}" for m in self.mends)
        super().__init__(status, detail)

    @property
    def fates(self) -> set[Fate]:
        return {p.fate for p in self.problems}


def mends(problems: Sequence[PathProblem], index_dir: Path | None = None) -> list[Mend]:
    """``pdfindex remove`` for the gone paths, ``pdfindex ingest`` for the changed
    ones, each path quoted for a shell; ``--index DIR`` when the index served is
    not the default one."""
    index = f" --index {shlex.quote(str(index_dir))}" if index_dir is not None else ""
    out = []
    for fate, verb, does in (("gone", "remove", "to take it off the index"),
                             ("changed", "ingest", "to index its new content")):
        paths = [p.path for p in problems if p.fate == fate]
        if paths:
            out.append(Mend(does, f"pdfindex {verb}{index} " + " ".join(shlex.quote(p) for p in paths)))
    return out


def is_gone(path: str) -> bool:
    """Nothing at ``path`` that could be the file: missing, a dangling link, a folder."""
    try:
        return not os.path.isfile(path)
    except ValueError:  # a NUL in the path
        return True


def wants_html(request: Request) -> bool:
    """Whether the client ranks ``text/html`` above JSON in its Accept header (a
    browser following a link does; ``*/*`` alone, as curl and httpx send, does not)."""
    html = json = 0.0
    for item in request.headers.get("accept", "").split(","):
        kind, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if kind.lower() in ("text/html", "application/xhtml+xml"):
            html = max(html, quality)
        elif kind.lower() == "application/json":
            json = max(json, quality)
    return html > 0 and html > json
