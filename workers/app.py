"""The Celery application: `celery -A workers.app worker` (or `pdfindex worker`).

Configured from ``config`` (PDFINDEX_BROKER_URL, PDFINDEX_RESULT_BACKEND, time and
memory limits). Reliability settings, each for a reason:
- ``task_acks_late`` + ``task_reject_on_worker_lost``: a task whose worker process
  dies mid-file is redelivered, not lost; index writes are idempotent by document
  hash and page, so a redelivered file is still indexed exactly once.
- ``worker_prefetch_multiplier=1``: a worker holds one file at a time, so a slow
  file does not hold back others queued behind it.
- soft and hard time limits per file; ``worker_max_memory_per_child`` and an
  address-space cap per process against decompression bombs.
- the Redis visibility timeout outlasts the hard time limit, so a long file is not
  redelivered while it is still being worked on.
- JSON only: tasks carry paths, hashes and text, never pickled objects or PDF bytes.
"""
from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import worker_process_init

import config

from .limits import limit_memory

settings = config.load()

app = Celery("pdfindex", include=["workers.tasks"])
app.conf.update(
    broker_url=settings.broker_url or "memory://",
    result_backend=settings.result_backend or None,
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    task_acks_late=True,
    # Publishing (the writer kick) waits out a broker restart instead of failing.
    task_publish_retry_policy={"max_retries": 60, "interval_start": 0.5, "interval_step": 0.5, "interval_max": 3},
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_soft_time_limit=settings.file_timeout,
    task_time_limit=settings.file_hard_timeout,
    worker_max_memory_per_child=settings.max_memory_mb * 1024 if settings.max_memory_mb else None,
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,
    broker_transport_options={"visibility_timeout": int(settings.file_hard_timeout) + 60},
    task_routes={"pdfindex.extract": {"queue": "extract"}, "pdfindex.write": {"queue": "index"}},
    task_default_queue="extract",
    worker_hijack_root_logger=False,
)


@worker_process_init.connect
def _limit_process(**_: Any) -> None:
    limit_memory(settings.max_memory_mb)
