"""Tenants' trusted MCP servers (table ``plait_mcp_trust``, migration 0025) and the runs' view.

An operator sets which MCP servers a tenant trusts (``PUT /tenants/{id}/mcp-trust``);
the tools of any other server reach the tenant's models with their name and input
schema only, never the server's own descriptions (engine/governance/mcp_trust.py,
engine/tools/untrusted_tools.py). A spec cannot widen the list: servers are named
by what they connect to, and the list lives here, not in the spec.

With no list set, ``default`` (the operator's own tenant, and the single-user
mode) trusts every server its specs declare, as before lists existed; every
other tenant trusts none (docs/decisions.md 94).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from psycopg.errors import ForeignKeyViolation

from plait.engine.governance import (
    MAX_TRUST_ENTRIES,
    TRUST_ALL,
    TrustEntryInvalid,
    TrustList,
    entry_identity,
    server_identity,
)
from plait.engine.spec import LoadedSpec, SpecIssue
from plait.engine.store import Pool
from plait.server.auth.store import DEFAULT_TENANT, TenantNotFound


def checked_entries(entries: Sequence[str]) -> list[str]:
    """``entries`` stripped, each checked, duplicates (by what they name) dropped, in order.

    Raises :class:`TrustEntryInvalid` naming the first bad entry.
    """
    if len(entries) > MAX_TRUST_ENTRIES:
        raise TrustEntryInvalid(
            f"{len(entries)} entries: a trust list holds at most {MAX_TRUST_ENTRIES}"
        )
    kept: dict[str, str] = {}
    for entry in entries:
        kept.setdefault(entry_identity(entry), entry.strip())
    return list(kept.values())


async def set_trust(pool: Pool, tenant_id: str, entries: Sequence[str]) -> dict[str, Any]:
    """Replace the tenant's list; return it (:func:`get_trust`'s shape).

    Raises :class:`TrustEntryInvalid` and :class:`TenantNotFound`.
    """
    servers = checked_entries(entries)
    try:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                """
                INSERT INTO plait_mcp_trust (tenant_id, servers) VALUES (%s, %s)
                ON CONFLICT (tenant_id) DO UPDATE
                    SET servers = EXCLUDED.servers, updated_at = now()
                RETURNING tenant_id, servers, updated_at
                """,
                (tenant_id, servers),
            )
            row = await cursor.fetchone()
    except ForeignKeyViolation:
        raise TenantNotFound(tenant_id) from None
    assert row is not None
    return _record(tenant_id, row)


async def get_trust(pool: Pool, tenant_id: str) -> dict[str, Any]:
    """``{tenant_id, servers, default, trusts_declared_servers, updated_at}``: the tenant's
    list, or its default (``default: true``, no servers; ``trusts_declared_servers`` is
    true for the ``default`` tenant, which then trusts every server its specs declare).

    Raises :class:`TenantNotFound`.
    """
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT t.tenant_id, m.servers, m.updated_at FROM plait_tenants t "
            "LEFT JOIN plait_mcp_trust m USING (tenant_id) WHERE t.tenant_id = %s",
            (tenant_id,),
        )
        row = await cursor.fetchone()
    if row is None:
        raise TenantNotFound(tenant_id)
    return _record(tenant_id, row)


async def clear_trust(pool: Pool, tenant_id: str) -> dict[str, Any]:
    """Remove the tenant's list: it has its default again. Raises :class:`TenantNotFound`."""
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM plait_mcp_trust WHERE tenant_id = %s", (tenant_id,))
    return await get_trust(pool, tenant_id)


async def trust_list(pool: Pool, tenant_id: str) -> TrustList:
    """What the tenant's runs trust now (its list, or its default)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT servers FROM plait_mcp_trust WHERE tenant_id = %s", (tenant_id,)
        )
        row = await cursor.fetchone()
    if row is None:
        return TRUST_ALL if tenant_id == DEFAULT_TENANT else TrustList()
    # Stored entries were checked when set; one that no longer parses trusts nothing.
    identities = set()
    for entry in row["servers"]:
        try:
            identities.add(entry_identity(entry))
        except TrustEntryInvalid:
            continue
    return TrustList(frozenset(identities))


#: The issue code of a spec whose agents use tools of a server its tenant does not trust.
UNTRUSTED = "mcp-server-untrusted"


async def untrusted_issues(pool: Pool, loaded: LoadedSpec, tenant: str) -> list[SpecIssue]:
    """A warning at each MCP server whose tools an agent of ``loaded`` is given and
    ``tenant`` does not trust: those tools' descriptions are withheld from its models."""
    spec = loaded.spec.spec
    given = {name for agent in spec.agents.values() for name in agent.tools}
    given |= {name for node in spec.nodes.values() if node.kind == "agent" for name in node.tools}
    used = {
        tool.server
        for name, tool in spec.tools.items()
        if name in given and tool.kind == "mcp" and tool.server in spec.mcp_servers
    }
    if not used:
        return []
    trust = await trust_list(pool, tenant)
    return [
        _untrusted(loaded, tenant, server)
        for server in sorted(used)
        if server is not None and not trust.trusts(spec.mcp_servers[server])
    ]


def _untrusted(loaded: LoadedSpec, tenant: str, server: str) -> SpecIssue:
    pointer = f"/spec/mcp_servers/{server}"
    position = loaded.source_map.locate(pointer)
    identity = server_identity(loaded.spec.spec.mcp_servers[server]).removeprefix("stdio:")
    return SpecIssue(
        file=loaded.file,
        line=position.line,
        column=position.column,
        pointer=pointer,
        message=f"MCP server `{server}` is not on tenant `{tenant}`'s trust list: models see "
        "its tools' names and input schemas, never its own descriptions",
        fix=f"if you trust it, an operator adds `{identity}` with PUT "
        f"/tenants/{tenant}/mcp-trust; or give each tool your own `description:`",
        code=UNTRUSTED,
        severity="warning",
    )


def _record(tenant_id: str, row: Mapping[str, Any]) -> dict[str, Any]:
    listed = row["servers"]
    return {
        "tenant_id": tenant_id,
        "servers": list(listed or []),
        # No list: the tenant's default, which for `default` trusts what its specs declare.
        "default": listed is None,
        "trusts_declared_servers": listed is None and tenant_id == DEFAULT_TENANT,
        "updated_at": row["updated_at"].isoformat() if listed is not None else None,
    }


@dataclass
class TenantTrust:
    """A run's :class:`~plait.engine.governance.mcp_trust.TrustSource`: its tenant's list,
    read once, when an agent first binds MCP tools (runs without MCP tools never read it)."""

    pool: Pool
    tenant: str
    _read: TrustList | None = field(default=None, init=False)

    async def trust_list(self) -> TrustList:
        """The tenant's list as the run first read it (one run keeps one view)."""
        if self._read is None:
            self._read = await trust_list(self.pool, self.tenant)
        return self._read
