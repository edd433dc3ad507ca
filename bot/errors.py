"""The ShioriError tree: every failure a user can cause or meet, translated at the edges."""


class ShioriError(Exception):
    """Base class: its message is safe to show to a user."""


class ProviderError(ShioriError):
    """An outside service (embedding server, LLM) failed or is not installed."""


class IngestError(ShioriError):
    """A document could not be read or taken in; the message names it and the cause."""


class CommandError(ShioriError):
    """A command was malformed; the message says the right form."""
