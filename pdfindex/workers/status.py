"""What ``pdfindex status`` and ``GET /api/status`` report, gathered in one place:
the index's counts and failures and, when a broker is configured, the queues' depths
and the index its writer announced. ``contract.shapes.status_json`` shapes it; this
module only asks the index and the broker.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pdfindex.contract.records import WriterIndex
from pdfindex.contract.shapes import status_json

if TYPE_CHECKING:
    from pdfindex.config import Settings
    from pdfindex.indexer import PageIndex


def status_report(index: PageIndex, settings: Settings) -> dict[str, Any]:
    """The report of ``index``, in the shape of docs/json.md (``status --json``)."""
    stats = index.stats()
    documents = list(index.documents())
    queues, writer = broker_state(settings)
    return status_json(stats, documents, index_id=index.identity(), language=index.language, queues=queues,
                       writer=writer)


def broker_state(settings: Settings) -> tuple[dict[str, int] | None, WriterIndex | None]:
    """The queues' depths and the announced writer index; (None, None) in embedded
    mode. BrokerError when the broker cannot be reached."""
    if not settings.broker_url:
        return None, None
    from . import handoff, identity  # noqa: PLC0415 - Redis only when a broker is configured (status starts without it)

    depths = handoff.queue_depths(settings)
    announced, running = identity.look(settings)
    writer = None if announced is None else WriterIndex(announced.id, announced.path, announced.host, running)
    return depths, writer
