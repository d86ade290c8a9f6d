"""Which ``webhook`` addresses a run may name: public ones, unless the operator allows more.

A webhook is a request the server makes on a client's behalf, so an address
inside the server's network (loopback, private ranges, link-local such as a
cloud's metadata service) would let any API key reach what only the server
can. Such addresses are refused when the run is created, unless the server
allows private addresses (``--webhook-allow-private``) or lists their
networks (``PLAIT_WEBHOOK_ALLOW_CIDRS``), and checked again before each call
(a name may point elsewhere by then).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

ALLOW_PRIVATE_ENV = "PLAIT_WEBHOOK_ALLOW_PRIVATE"
ALLOW_CIDRS_ENV = "PLAIT_WEBHOOK_ALLOW_CIDRS"
#: How long resolving a webhook's host name may take at run creation.
RESOLVE_SECONDS = 5.0

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class WebhookRefused(ValueError):
    """A ``webhook`` the server will not call; the message says why and what to do."""


@dataclass(frozen=True)
class WebhookPolicy:
    """Which addresses beyond the public internet webhooks may reach."""

    allow_private: bool = False
    allowed_networks: tuple[Network, ...] = ()

    @classmethod
    def from_env(cls) -> WebhookPolicy:
        """The policy of ``PLAIT_WEBHOOK_ALLOW_PRIVATE`` and ``PLAIT_WEBHOOK_ALLOW_CIDRS``."""
        flag = os.environ.get(ALLOW_PRIVATE_ENV, "").strip().lower()
        cidrs = os.environ.get(ALLOW_CIDRS_ENV, "")
        return cls(
            allow_private=flag in ("1", "true", "yes", "on"),
            allowed_networks=tuple(
                ipaddress.ip_network(cidr.strip(), strict=False)
                for cidr in cidrs.split(",")
                if cidr.strip()
            ),
        )

    def to_env(self) -> dict[str, str]:
        """The variables :meth:`from_env` reads back (for child worker processes)."""
        return {
            ALLOW_PRIVATE_ENV: "1" if self.allow_private else "",
            ALLOW_CIDRS_ENV: ",".join(str(network) for network in self.allowed_networks),
        }

    def allows(self, address: Address) -> bool:
        """Whether a webhook may reach ``address``."""
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in self.allowed_networks):
            return True
        if address.is_multicast or address.is_unspecified:
            return False
        return address.is_global or self.allow_private


async def check_webhook_url(url: str, policy: WebhookPolicy) -> None:
    """Raise :class:`WebhookRefused` unless ``url`` is http(s) and every address of its host
    is one ``policy`` allows (names are resolved now)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookRefused(f"webhook {url!r} is not an http:// or https:// URL with a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise WebhookRefused(f"webhook {url!r} has an invalid port") from None
    try:
        async with asyncio.timeout(RESOLVE_SECONDS):
            found = await asyncio.get_running_loop().getaddrinfo(
                parts.hostname, port, type=socket.SOCK_STREAM
            )
    except (OSError, TimeoutError):
        raise WebhookRefused(
            f"webhook host {parts.hostname!r} cannot be resolved: send a URL the server can reach"
        ) from None
    for *_, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if not policy.allows(address):
            raise WebhookRefused(
                f"webhook {url!r} reaches {address}, a private, loopback or link-local "
                "address: the server refuses those unless its operator allows them "
                f"(plait serve --webhook-allow-private, or {ALLOW_CIDRS_ENV})"
            )
