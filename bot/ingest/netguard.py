"""SSRF guard: which addresses the bot may connect to, checked at connection time.

The check lives in the resolver the HTTP connector uses, so the address that was checked is
the address connected to: a second DNS answer (rebinding) cannot swap it. Numeric host
tricks (decimal `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`) are parsed
the way the C library would, then checked like any address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence

from aiohttp.abc import AbstractResolver, ResolveResult

from bot.ingest.errors import FetchError, FetchFailure

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Lookup = Callable[[str, int], Awaitable[list[str]]]

# Not covered by `is_global` in every Python version, named so the reason is plain.
CGNAT = ipaddress.ip_network("100.64.0.0/10")


def blocked_reason(address: IPAddress, allowed: Sequence[IPNetwork] = ()) -> str | None:
    """Why connecting to `address` is refused, or None when it is a public address (or on
    the admin's allow-list)."""
    if any(address in network for network in allowed):
        return None
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:
            reason = blocked_reason(embedded, allowed)
            return f"IPv4-mapped {reason}" if reason else None
    checks = (
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local (cloud metadata)"),
        (address.is_multicast, "multicast"),
        (address.is_unspecified, "unspecified"),
        (address in CGNAT if address.version == 4 else False, "carrier-grade NAT"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "not globally routable"),
    )
    return next((reason for hit, reason in checks if hit), None)


def numeric_host(host: str) -> IPAddress | None:
    """The address a numeric host spells, in any form the C resolver accepts."""
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


async def system_lookup(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that refuses non-public addresses (unless allow-listed)."""

    def __init__(self, allowed: Sequence[IPNetwork] = (), lookup: Lookup = system_lookup) -> None:
        self._allowed = tuple(allowed)
        self._lookup = lookup

    def check_literal(self, host: str) -> None:
        """Refuse a host written as an address: aiohttp connects to IP literals without
        asking the resolver, so they are checked here, before each request."""
        literal = numeric_host(host)
        if literal is not None:
            self._check(host, literal)

    def _check(self, host: str, address: IPAddress) -> None:
        reason = blocked_reason(address, self._allowed)
        if reason:
            raise FetchError(FetchFailure.BLOCKED, host, f"{address} is {reason}")

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        literal = numeric_host(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = await self._lookup(host, port)
            except OSError as exc:
                raise FetchError(FetchFailure.DNS, host, str(exc)) from exc
        if not addresses:
            raise FetchError(FetchFailure.DNS, host, "no address")
        results: list[ResolveResult] = []
        for text in addresses:
            address = ipaddress.ip_address(text)
            self._check(host, address)
            results.append(
                ResolveResult(
                    hostname=host,
                    host=str(address),
                    port=port,
                    family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                    proto=0,
                    flags=socket.AI_NUMERICHOST,
                )
            )
        return results

    async def close(self) -> None:
        return None


def parse_networks(entries: Sequence[str]) -> list[IPNetwork]:
    """`10.0.0.0/8`, `192.168.1.5` … as networks (a bare address is a /32 or /128)."""
    return [ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip()]
