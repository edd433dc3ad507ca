"""URL normalization: one spelling per page, so anchors and trivial variants are one source."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit, urlunsplit

from bot.ingest.errors import FetchError, FetchFailure

ALLOWED_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str, base: str | None = None) -> str:
    """Absolute, fragment-free URL with lower-case scheme and host and no default port.

    Raises:
        FetchError: not http(s), or no host.
    """
    absolute = urljoin(base, url.strip()) if base else url.strip()
    try:
        parts = urlsplit(absolute)
        port = parts.port
    except ValueError as exc:
        raise FetchError(FetchFailure.INVALID_URL, url, str(exc)) from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise FetchError(FetchFailure.SCHEME, url, scheme or "none")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise FetchError(FetchFailure.INVALID_URL, url, "no host")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def same_site(url: str, other: str) -> bool:
    """Same host, treating `www.` as the same site (AC41: other domains are skipped)."""
    return host_of(url).removeprefix("www.") == host_of(other).removeprefix("www.")
