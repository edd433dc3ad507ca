"""Why a page could not be fetched, as a code the message layer words for the user."""

from __future__ import annotations

from enum import StrEnum

from bot.errors import IngestError


class FetchFailure(StrEnum):
    INVALID_URL = "invalid_url"
    SCHEME = "scheme"
    BLOCKED = "blocked"
    DNS = "dns"
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    HTTP_STATUS = "http_status"
    TOO_LARGE = "too_large"
    UNSUPPORTED_TYPE = "unsupported_type"
    REDIRECT_LIMIT = "redirect_limit"
    REDIRECT_OFF = "redirect_off"
    ROBOTS = "robots"
    UNSAFE = "unsafe"
    EMPTY = "empty"


class FetchError(IngestError):
    """A URL was refused or could not be fetched; `code` says why, `detail` the specifics."""

    def __init__(self, code: FetchFailure, url: str, detail: str = "") -> None:
        self.code = code
        self.url = url
        self.detail = detail
        super().__init__(f"{code.value}: {detail}" if detail else code.value)
