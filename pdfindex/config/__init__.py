"""Configuration: typed settings read once from the environment (see settings.py)."""
if __name__ != "pdfindex.config":  # the top-level config/ is a link for people, not a second name
    raise ImportError(f"import pdfindex.config, not {__name__} (README, Layout)")
from pdfindex.contract.limits import MAX_SHARDS  # PDFINDEX_SHARDS's bound is the index's

from .settings import BROKER_SCHEMES, ENGINES, Settings, SettingsError, index_engine, load, redact_url

__all__ = ["BROKER_SCHEMES", "ENGINES", "MAX_SHARDS", "Settings", "SettingsError", "index_engine", "load", "redact_url"]
