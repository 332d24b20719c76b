"""Where a hit's file is, said briefly enough for the search page on a phone.

A base name alone does not tell ``2023/invoice.pdf`` from ``2024/invoice.pdf``, and
a full path (``/home/ann/Documents/archive/2023/tax/invoice.pdf``) fills a phone's
line before the name is reached. So the page shows the name, and under it the
folder with the home folder as ``~`` and, when long, its middle left out: the
first folders say which tree, the last ones which part of it. The whole path is
the element's title.
"""
from __future__ import annotations

import os

#: A folder longer than this (characters) loses its middle folders.
FOLDER_CHARS = 48
#: Folders kept at each end of a shortened one.
KEPT_AT_START = 2
KEPT_AT_END = 2
ELLIPSIS = "…"


def folder(path: str, home: str | None = None) -> str:
    """The folder of ``path`` as the page shows it (``~/Documents/…/2023/tax``)."""
    home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
    place = os.path.dirname(path) or "."
    if home and (place == home or place.startswith(home + "/")):
        place = "~" + place[len(home):]
    if len(place) <= FOLDER_CHARS:
        return place
    parts = place.split("/")
    start = KEPT_AT_START + (1 if parts[0] == "" else 0)  # "/srv/archive": "" "srv" "archive"
    if len(parts) <= start + KEPT_AT_END + 1:
        return place
    return "/".join([*parts[:start], ELLIPSIS, *parts[-KEPT_AT_END:]])


def where(path: str, home: str | None = None) -> str:
    """``path`` shortened as ``folder`` shortens its folder, the name kept whole."""
    return os.path.join(folder(path, home), os.path.basename(path))


def other_paths(path: str, paths: list[str]) -> list[str]:
    """The paths of identical copies besides ``path``, in the index's order."""
    return [p for p in paths if p != path]
