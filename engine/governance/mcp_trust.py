"""Which MCP servers a run's tenant trusts: their tools' own words reach its models.

An operator grants each tenant a trust list (on a server: ``server/auth/mcp_trust.py``).
A server is named on it by what it connects to, never by the spec's name for it (a
spec names its servers as it likes, so a name could not keep a spec from widening
the list):

- ``http``: the URL's origin and path (scheme and host compared case-insensitively,
  a default port written or not, a trailing ``/`` ignored; query and fragment are
  not part of it);
- ``stdio``: the command line, ``command`` then ``args`` as the spec writes them,
  compared word by word (the entry is split like a shell line, ``shlex``); a
  per-run argument ``{expr: X}`` is the word ``{X}``, as in the server's breaker key.

A run carries its tenant's :class:`TrustSource` in ``configurable["plait_mcp_trust"]``
(:mod:`plait.engine.run.context`); a run without one (``plait run``: the operator's
own machine) trusts every server its spec declares.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from plait.engine.spec.models import McpServerDef

#: ``configurable`` key of the run's :class:`TrustSource` (set by the run context only).
TRUST_KEY = "plait_mcp_trust"
#: The most entries one list may hold (an allowlist, not a directory).
MAX_TRUST_ENTRIES = 200
#: The longest entry (a URL or a command line).
MAX_ENTRY_LENGTH = 2048
_DEFAULT_PORTS = {"http": 80, "https": 443}


class TrustEntryInvalid(ValueError):
    """Text that names no MCP server (HTTP 422 on the API)."""


@dataclass(frozen=True)
class TrustList:
    """The servers a tenant trusts, as normalised identities; ``everything``: all of them."""

    identities: frozenset[str] = frozenset()
    everything: bool = False

    def trusts(self, server: McpServerDef) -> bool:
        """Whether the tools of ``server`` may show their own descriptions to models."""
        return self.everything or server_identity(server) in self.identities

    def untrusted(self, servers: Mapping[str, McpServerDef]) -> frozenset[str]:
        """The keys of ``servers`` (a tool's name -> its server) whose server is not trusted."""
        if self.everything:
            return frozenset()
        return frozenset(name for name, server in servers.items() if not self.trusts(server))

    @classmethod
    def of(cls, entries: Iterable[str]) -> TrustList:
        """The list of ``entries`` (each checked: :func:`entry_identity`)."""
        return cls(frozenset(entry_identity(entry) for entry in entries))


#: What a run without a trust source sees: every server of its spec trusted.
TRUST_ALL = TrustList(everything=True)


class TrustSource(Protocol):
    """Where a run reads its tenant's trust list (read when an agent first binds MCP tools)."""

    async def trust_list(self) -> TrustList:
        """The tenant's list now."""
        ...


async def trust_of(config: Mapping[str, Any]) -> TrustList:
    """The trust list of the run with ``config``: its source's, or :data:`TRUST_ALL`."""
    source = (config.get("configurable") or {}).get(TRUST_KEY)
    if source is None:
        return TRUST_ALL
    found: TrustList = await source.trust_list()
    return found


def server_identity(server: McpServerDef) -> str:
    """What names ``server`` on a trust list (see the module docstring)."""
    if server.transport == "http":
        assert server.url is not None  # the model's validator
        return _url_identity(server.url)
    words = [str(server.command)]
    words += [arg if isinstance(arg, str) else f"{{{arg.expr}}}" for arg in server.args]
    return "stdio:" + shlex.join(words)


def entry_identity(entry: str) -> str:
    """The identity an operator's ``entry`` names; :class:`TrustEntryInvalid` if none.

    An ``http://`` or ``https://`` URL names an http server; any other text is a
    stdio command line.
    """
    text = entry.strip()
    if not text:
        raise TrustEntryInvalid("an entry is empty: give a server's URL or its command line")
    if len(text) > MAX_ENTRY_LENGTH:
        raise TrustEntryInvalid(f"an entry is over {MAX_ENTRY_LENGTH} characters: {text[:40]}...")
    if "://" in text:
        scheme = text.split("://", 1)[0].lower()
        if scheme not in _DEFAULT_PORTS:
            raise TrustEntryInvalid(
                f"{text!r}: only http:// and https:// URLs name MCP servers "
                "(a stdio server is named by its command line, without a scheme)"
            )
        parts = urlsplit(text)
        if parts.query or parts.fragment or parts.username or parts.password:
            raise TrustEntryInvalid(
                f"{text!r}: a server is named by its URL's origin and path; "
                "leave out user info, query and fragment"
            )
        return _url_identity(text)
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise TrustEntryInvalid(f"{text!r} is not a command line: {exc}") from None
    return "stdio:" + shlex.join(words)


def _url_identity(url: str) -> str:
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        raise TrustEntryInvalid(f"{url!r}: the port is not a number from 0 to 65535") from None
    host = (parts.hostname or "").lower()
    if not host:
        raise TrustEntryInvalid(f"{url!r} has no host")
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/') or '/'}"
