"""Configuration: typed settings read once from the environment (see settings.py)."""
from .settings import Settings, SettingsError, load

__all__ = ["Settings", "SettingsError", "load"]
