"""Errors of the ingestion layer that the command line reports as one line.

They carry a message for the user; the broker's and the file system's own
exceptions are turned into these where they happen, so callers need not import
redis, kombu or billiard to report them.
"""
from __future__ import annotations


class IngestError(Exception):
    """Base class: an ingest, worker or status command cannot go on."""


class BrokerError(IngestError):
    """The broker (Redis) is unreachable, refuses us, or is misconfigured."""


class OutsideRoots(IngestError):
    """A file lies outside every configured root (PDFINDEX_ROOTS), or its real
    path leaves them through a symlink: it is not read."""
