"""Configuration: typed settings read once from the environment (see settings.py)."""
from .settings import BROKER_SCHEMES, MAX_SHARDS, Settings, SettingsError, load, redact_url

__all__ = ["BROKER_SCHEMES", "MAX_SHARDS", "Settings", "SettingsError", "load", "redact_url"]
