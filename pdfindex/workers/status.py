"""What the broker adds to what clients report, asked in one place: the queues'
depths and the index the writer announced, for ``pdfindex status`` and ``GET
/api/status`` alike (shaped by ``contract.shapes.status_json``), and whether the
index a client reads is the writer's. Redis is imported only when a broker is
configured: ``status``, ``search`` and ``list`` start without it.
"""
from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pdfindex.contract.records import WriterIndex
from pdfindex.contract.shapes import status_json

if TYPE_CHECKING:
    from pdfindex.config import Settings
    from pdfindex.indexer import PageIndex

    from .identity import Announcement


def status_report(index: PageIndex, settings: Settings) -> dict[str, Any]:
    """The report of ``index``, in the shape of docs/json.md (``status --json``)."""
    stats = index.stats()
    documents = list(index.documents())
    queues, writer = broker_state(settings)
    return status_json(stats, documents, index_id=index.identity(), language=index.language,
                       engine=index.engine, queues=queues, writer=writer)


def broker_state(settings: Settings) -> tuple[dict[str, int] | None, WriterIndex | None]:
    """The queues' depths and the announced writer index; (None, None) in embedded
    mode. BrokerError when the broker cannot be reached."""
    if not settings.broker_url:
        return None, None
    handoff, identity = _broker()
    depths: dict[str, int] = handoff.queue_depths(settings)
    announced, running = identity.look(settings)
    writer = None if announced is None else WriterIndex(announced.id, announced.path, announced.host, running)
    return depths, writer


def which_index(root: Path, index_id: str | None, settings: Settings) -> tuple[Announcement | None, str | None]:
    """For a client reading the index at ``root`` in distributed mode: the index the
    writer announced (None: none yet) and, when the client's is another, the
    sentence saying so. BrokerError when the broker cannot be asked."""
    _, identity = _broker()
    current: Announcement | None = identity.look(settings)[0]
    problem: str | None = identity.client_problem(root, index_id, current)
    return current, problem


def _broker() -> tuple[ModuleType, ModuleType]:
    """The modules that ask the broker: ``handoff`` (lanes) and ``identity``."""
    from . import handoff, identity  # noqa: PLC0415 - Redis, only when a broker is configured

    return handoff, identity
