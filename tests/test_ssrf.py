"""Every hostile URL is refused with a reason, before any connection is made to it."""

import ipaddress

import pytest

from bot.ingest.errors import FetchError, FetchFailure
from bot.ingest.fetch import SafeFetcher
from bot.ingest.netguard import blocked_reason, numeric_host
from tests.site import Site

# Host names an attacker controls, answering with internal addresses.
DNS = {
    "metadata.attacker.test": ["169.254.169.254"],
    "internal.attacker.test": ["10.0.0.5"],
    "router.attacker.test": ["192.168.1.1"],
    "docker.attacker.test": ["172.17.0.1"],
    "cgnat.attacker.test": ["100.64.0.1"],
    "loop6.attacker.test": ["::1"],
    "ula.attacker.test": ["fd12:3456::1"],
    "mapped.attacker.test": ["::ffff:10.0.0.1"],
    "mixed.attacker.test": ["93.184.216.34", "127.0.0.1"],  # one bad answer is enough
    "zero.attacker.test": ["0.0.0.0"],
    "localhost": ["127.0.0.1", "::1"],
}


async def fake_lookup(host: str, port: int) -> list[str]:
    if host not in DNS:
        raise OSError(f"unknown host {host}")
    return DNS[host]


HOSTILE = [
    ("http://127.0.0.1/", FetchFailure.BLOCKED),
    ("http://127.0.0.1:8080/admin", FetchFailure.BLOCKED),
    ("http://localhost/", FetchFailure.BLOCKED),
    ("http://127.1/", FetchFailure.BLOCKED),
    ("http://2130706433/", FetchFailure.BLOCKED),
    ("http://0177.0.0.1/", FetchFailure.BLOCKED),
    ("http://0x7f000001/", FetchFailure.BLOCKED),
    ("http://0x7f.0.0.1/", FetchFailure.BLOCKED),
    ("http://017700000001/", FetchFailure.BLOCKED),
    ("http://10.0.0.1/", FetchFailure.BLOCKED),
    ("http://172.16.0.1/", FetchFailure.BLOCKED),
    ("http://192.168.0.1/", FetchFailure.BLOCKED),
    ("http://169.254.169.254/latest/meta-data/", FetchFailure.BLOCKED),
    ("http://100.64.0.1/", FetchFailure.BLOCKED),
    ("http://224.0.0.1/", FetchFailure.BLOCKED),
    ("http://240.0.0.1/", FetchFailure.BLOCKED),
    ("http://0.0.0.0/", FetchFailure.BLOCKED),
    ("http://255.255.255.255/", FetchFailure.BLOCKED),
    ("http://[::1]/", FetchFailure.BLOCKED),
    ("http://[::]/", FetchFailure.BLOCKED),
    ("http://[fc00::1]/", FetchFailure.BLOCKED),
    ("http://[fe80::1]/", FetchFailure.BLOCKED),
    ("http://[::ffff:127.0.0.1]/", FetchFailure.BLOCKED),
    ("http://[::ffff:a9fe:a9fe]/", FetchFailure.BLOCKED),
    ("http://[2002:7f00:1::]/", FetchFailure.BLOCKED),
    ("http://metadata.attacker.test/", FetchFailure.BLOCKED),
    ("http://internal.attacker.test/", FetchFailure.BLOCKED),
    ("http://router.attacker.test/", FetchFailure.BLOCKED),
    ("http://docker.attacker.test/", FetchFailure.BLOCKED),
    ("http://cgnat.attacker.test/", FetchFailure.BLOCKED),
    ("http://loop6.attacker.test/", FetchFailure.BLOCKED),
    ("http://ula.attacker.test/", FetchFailure.BLOCKED),
    ("http://mapped.attacker.test/", FetchFailure.BLOCKED),
    ("http://mixed.attacker.test/", FetchFailure.BLOCKED),
    ("http://zero.attacker.test/", FetchFailure.BLOCKED),
    ("http://user:pass@127.0.0.1/", FetchFailure.BLOCKED),
    ("https://127.0.0.1:443/", FetchFailure.BLOCKED),
    ("file:///etc/passwd", FetchFailure.SCHEME),
    ("ftp://example.com/file", FetchFailure.SCHEME),
    ("gopher://127.0.0.1:25/", FetchFailure.SCHEME),
    ("javascript:alert(1)", FetchFailure.SCHEME),
    ("data:text/html,<p>x</p>", FetchFailure.SCHEME),
    ("http:///nohost", FetchFailure.INVALID_URL),
    ("http://example.com:99999/", FetchFailure.INVALID_URL),
]


@pytest.mark.parametrize(("url", "code"), HOSTILE)
async def test_hostile_url_is_refused(url: str, code: FetchFailure) -> None:
    async with SafeFetcher(lookup=fake_lookup) as fetcher:
        with pytest.raises(FetchError) as refused:
            await fetcher.fetch(url)
    assert refused.value.code is code
    if code is FetchFailure.BLOCKED:
        assert " is " in refused.value.detail  # names the address and why


def test_at_least_thirty_hostile_urls() -> None:
    assert len(HOSTILE) >= 30


async def test_redirect_to_a_private_address_is_refused(site: Site) -> None:
    allowed = [ipaddress.ip_network("127.0.0.1/32")]
    async with SafeFetcher(allowed_networks=allowed) as fetcher:
        with pytest.raises(FetchError) as refused:
            await fetcher.fetch(f"{site.base_url}/redirect-private")
    assert refused.value.code is FetchFailure.BLOCKED
    assert "10.0.0.1 is private" in refused.value.detail


async def test_rebinding_resolver_is_checked_on_every_connection(site: Site) -> None:
    """A name that answers an allowed address first and a private one next is refused the
    second time: the address is checked by the resolver the connector dials with, so there is
    no separate validation look-up for a rebinding answer to slip past."""
    port = site.base_url.rsplit(":", 1)[1]
    answers = iter([["127.0.0.1"], ["10.0.0.7"]])
    lookups: list[str] = []

    async def rebinding(host: str, _port: int) -> list[str]:
        lookups.append(host)
        return next(answers)

    allowed = [ipaddress.ip_network("127.0.0.1/32")]
    async with SafeFetcher(allowed_networks=allowed, lookup=rebinding) as fetcher:
        first = await fetcher.fetch(f"http://rebind.test:{port}/pages/a.html")
        assert first.status == 200
    async with SafeFetcher(allowed_networks=allowed, lookup=rebinding) as fetcher:
        with pytest.raises(FetchError) as refused:
            await fetcher.fetch(f"http://rebind.test:{port}/index.html")
    assert refused.value.code is FetchFailure.BLOCKED
    assert lookups == ["rebind.test", "rebind.test"]


def test_allow_list_opens_only_what_it_names() -> None:
    intranet = [ipaddress.ip_network("10.1.0.0/16")]
    assert blocked_reason(ipaddress.ip_address("10.1.2.3"), intranet) is None
    assert blocked_reason(ipaddress.ip_address("10.2.0.1"), intranet) == "private"
    assert blocked_reason(ipaddress.ip_address("93.184.216.34")) is None


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f.1", "0177.0.0.1", "[::1]"])
def test_numeric_host_forms(host: str) -> None:
    assert numeric_host(host) is not None and numeric_host(host).is_loopback  # type: ignore[union-attr]
    assert numeric_host("example.com") is None
