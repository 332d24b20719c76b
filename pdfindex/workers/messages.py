"""What a client may send through the broker, parsed and validated: the arguments of
a ``pdfindex.extract`` message, and the items of the hand-off lists.

Nothing read from Redis is trusted: anyone who can reach the broker can push to
these lists. Every item is validated (shape, types, sizes, hashes, run id, the
outcome's path under the writer's ``PDFINDEX_ROOTS``; its signature when signing is
configured); an invalid one raises ``BadMessage`` saying what was wrong, so that the
writer can log and drop it: it can neither run code, nor write outside the roots,
nor block the items behind it.
"""
from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pdfindex.indexer import Status

from .outcome import Outcome

#: A hand-off item larger than this is dropped (a 10,000-page book of dense text is
#: about 60 MB); it bounds what one forged item can make the writer hold in memory.
MAX_ITEM_BYTES = 256 * 1024 * 1024
MAX_PATH_CHARS = 4096
MAX_PAGES = 1_000_000
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX32 = re.compile(r"[0-9a-f]{32}")

#: verify(signed bytes) -> the bytes signed, or BadMessage (message signing); sign is its inverse.
Verify = Callable[[bytes], bytes]
Sign = Callable[[bytes], bytes]


class BadMessage(ValueError):
    """A task message or hand-off item we refuse; the text says what was wrong."""


@dataclass(frozen=True, slots=True)
class ExtractJob:
    """The arguments of one ``pdfindex.extract`` message, validated."""

    path: str
    doc_hash: str
    run_id: str


def _check_path(path: Any, what: str) -> str:
    if not isinstance(path, str):
        raise BadMessage(f"{what} is a {type(path).__name__}, not a string")
    if not path or len(path) > MAX_PATH_CHARS:
        raise BadMessage(f"{what} is {len(path)} characters long")
    if "\0" in path:
        raise BadMessage(f"{what} contains a NUL character")
    if not os.path.isabs(path):
        raise BadMessage(f"{what} {path[:200]!r} is not absolute")
    return path


def _check_hex(value: Any, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise BadMessage(f"{what} {str(value)[:80]!r} is not {pattern.pattern}")
    return value


def check_hash(value: Any, what: str = "the document hash") -> str:
    return _check_hex(value, _HEX64, what)


def check_run_id(value: Any) -> str:
    return _check_hex(value, _HEX32, "the run id")


def parse_extract(args: Sequence[Any], kwargs: dict[str, Any]) -> ExtractJob:
    """``pdfindex.extract(path, doc_hash, run_id)``: exactly these three, nothing else
    (an older client's index directory or password file is refused, not ignored)."""
    names = ("path", "doc_hash", "run_id")
    if not isinstance(args, (list, tuple)) or not isinstance(kwargs, dict):
        raise BadMessage("arguments are not a list and a mapping")
    if len(args) > len(names) or set(kwargs) - set(names[len(args):]):
        extra = len(args) - len(names) if len(args) > len(names) else sorted(set(kwargs) - set(names[len(args):]))
        raise BadMessage(f"unexpected arguments ({extra!r}); the message carries only path, doc_hash, run_id")
    values = dict(zip(names, args, strict=False)) | kwargs
    missing = [n for n in names if n not in values]
    if missing:
        raise BadMessage(f"missing {', '.join(missing)}")
    return ExtractJob(_check_path(values["path"], "the path"), check_hash(values["doc_hash"]),
                      check_run_id(values["run_id"]))


def under_roots(path: str, roots: Sequence[Path]) -> bool:
    """Lexically (the writer may not see the files): ``path`` normalized lies in one
    of the roots. The extraction worker has already checked the real path."""
    norm = os.path.normpath(path)
    for root in roots:
        base = os.path.normpath(str(root))
        if norm == base or norm.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def handoff_item(run_id: str, job_hash: str, outcome_json: str, pages: int) -> dict[str, Any]:
    """What an extraction task hands to the writer: no index directory, no path of
    its own (the path is the outcome's, checked against the writer's roots)."""
    return {"run": run_id, "job": job_hash, "pages": pages, "outcome": outcome_json}


@dataclass(frozen=True, slots=True)
class HandOff:
    """A validated hand-off item."""

    run_id: str
    job_hash: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Release:
    """A shard writer's word to another shard's writer: document ``owner`` (in the
    sender's shard) now holds ``path``, so documents of this shard must let it go.
    It is acted on only if the index shows ``owner`` holding ``path``: a forged or
    stale one changes nothing."""

    path: str
    owner: str


def release_item(path: str, owner: str) -> dict[str, str]:
    return {"release": path, "owner": owner}


#: What a hand-off list holds, validated.
Item = HandOff | Release


def _check_number(value: object, what: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise BadMessage(f"{what} is not finite")
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value < 2**63:
        raise BadMessage(f"{what}={value} is out of range")


def _load(raw: bytes | str, verify: Verify | None) -> Any:
    """An item's JSON, within the size limit and with its signature checked."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > MAX_ITEM_BYTES:
        raise BadMessage(f"item of {len(data)} bytes is over the limit of {MAX_ITEM_BYTES}")
    if verify is not None:
        data = verify(data)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise BadMessage(f"not JSON: {str(exc)[:100]}") from None


def parse_item(raw: bytes | str, roots: Sequence[Path], verify: Verify | None = None) -> Item:
    """Validate one item from a hand-off list: its size, its signature (``verify``,
    when signing is configured), its JSON shape and every field's type
    (``Outcome.from_json``); hashes and run id in their shapes, the record's path
    absolute and under ``roots``, numbers finite and in range, pages numbered 1..n.
    A release (``release_item``) has a path under ``roots`` and an owner's hash.
    Raises BadMessage naming the first problem."""
    item = _load(raw, verify)
    if isinstance(item, dict) and set(item) == {"release", "owner"}:
        return _release(item, roots)
    return _handoff(item, roots)


def _release(item: dict[str, Any], roots: Sequence[Path]) -> Release:
    path = _check_path(item["release"], "the released path")
    if not under_roots(path, roots):
        raise BadMessage(f"the released path {path[:200]!r} is outside the writer's PDFINDEX_ROOTS")
    return Release(path, check_hash(item["owner"], "the owner's hash"))


def _handoff(item: Any, roots: Sequence[Path]) -> HandOff:
    if not isinstance(item, dict) or set(item) != {"run", "job", "pages", "outcome"}:
        keys = sorted(item)[:8] if isinstance(item, dict) else type(item).__name__
        raise BadMessage(f"not a hand-off item (run, job, pages, outcome): {keys}")
    run_id, job_hash = check_run_id(item["run"]), check_hash(item["job"], "the job hash")
    if not isinstance(item["outcome"], str):
        raise BadMessage("the outcome is not a JSON string")
    try:
        outcome = Outcome.from_json(item["outcome"])
    except (ValueError, TypeError, RecursionError) as exc:
        raise BadMessage(str(exc)[:200]) from None
    _check_record(outcome, job_hash, roots)
    _check_pages(outcome, item["pages"])
    return HandOff(run_id, job_hash, outcome)


def _check_record(outcome: Outcome, job_hash: str, roots: Sequence[Path]) -> None:
    """The outcome's file record: its hash, its job's, its path under ``roots``, its
    numbers, and no paths but its own."""
    doc = outcome.doc
    check_hash(doc.doc_hash, "the record's hash")
    if outcome.job_hash != job_hash:
        raise BadMessage(f"the outcome's job hash {outcome.job_hash[:70]!r} is not the item's")
    path = _check_path(doc.path, "the record's path")
    if not under_roots(path, roots):
        raise BadMessage(f"the record's path {path[:200]!r} is outside the writer's PDFINDEX_ROOTS")
    for name in ("page_count", "size", "mtime", "ingested", "attempts", "mean_coverage", "created", "modified"):
        _check_number(getattr(doc, name), f"record.{name}")
    if doc.paths not in ([], [doc.path]):  # other copies are the writer's own knowledge, never a message's
        raise BadMessage("the record's paths are not just its path")


def _check_pages(outcome: Outcome, count: object) -> None:
    """The outcome's pages: at most MAX_PAGES, numbered 1..n, numbers in range, as
    many as the item says, and none for a file that failed."""
    if len(outcome.pages) > MAX_PAGES:
        raise BadMessage(f"{len(outcome.pages)} pages")
    for n, page in enumerate(outcome.pages, 1):
        if page.number != n:
            raise BadMessage(f"page {n} is numbered {page.number}")
        for name in ("coverage", "glyphs", "unresolved"):
            _check_number(getattr(page, name), f"page {n} {name}")
    if isinstance(count, bool) or not isinstance(count, int) or count != len(outcome.pages):
        raise BadMessage(f"pages={str(count)[:20]} but the outcome has {len(outcome.pages)} pages")
    doc = outcome.doc
    if doc.status in (Status.FAILED, Status.ENCRYPTED) and outcome.pages:
        raise BadMessage(f"a {doc.status} record with pages")


def route_hash(raw: bytes | str, verify: Verify | None = None) -> str:
    """The hash a hand-off item is routed by (its job's), read without validating
    the outcome: the shard writer validates it all, and forwards an item whose
    document's own hash lives in another shard (a file rewritten after planning)."""
    item = _load(raw, verify)
    if not isinstance(item, dict) or "job" not in item:
        raise BadMessage("not a hand-off item (run, job, pages, outcome)")
    return check_hash(item["job"], "the job hash")


def encode(item: dict[str, Any], sign: Sign | None = None) -> bytes:
    data = json.dumps(item, ensure_ascii=True).encode()
    return sign(data) if sign is not None else data
