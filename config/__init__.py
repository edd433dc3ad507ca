"""Typed settings read from the environment and `.env`."""

from config.settings import Settings, SettingsError, load_settings

__all__ = ["Settings", "SettingsError", "load_settings"]
