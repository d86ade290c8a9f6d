"""``plait tenants``, its ``secrets`` and ``mcp-trust``, and ``plait keys``, on the database
directly.

For bootstrapping and operations on a machine that has the database URL (no
server or admin key needed); the HTTP admin API (``/tenants``) does the same.
A secret's value is read from stdin (or a hidden prompt), never from the
command line, where it would land in the shell's history and ``ps``. Each
command imports the auth layer and asyncio when it runs: ``plait --help``
imports this module, and must stay quick.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Annotated, Any

import typer

from plait.server.cli.database import connected_pool
from plait.server.cli.exits import CliError, ExitCode

tenants_app = typer.Typer(
    help="Create, list and change tenants (their run caps, daily budgets and secrets).",
    no_args_is_help=True,
)
keys_app = typer.Typer(help="Create, list and revoke API keys of a tenant.", no_args_is_help=True)
secrets_app = typer.Typer(
    help="Grant, list and delete a tenant's secrets (the values its specs may read).",
    no_args_is_help=True,
)
tenants_app.add_typer(secrets_app, name="secrets")
trust_app = typer.Typer(
    help="Show, set and clear the MCP servers a tenant trusts (their tool descriptions reach "
    "its models; other servers' are withheld).",
    no_args_is_help=True,
)
tenants_app.add_typer(trust_app, name="mcp-trust")

MaxRunning = Annotated[
    int | None, typer.Option("--max-running-runs", min=1, help="Runs at once, all workers.")
]
DailySteps = Annotated[int | None, typer.Option("--daily-max-steps", min=1, help="Steps a day.")]
DailyTokens = Annotated[int | None, typer.Option("--daily-max-tokens", min=1, help="Tokens a day.")]
DailyCost = Annotated[float | None, typer.Option("--daily-max-cost", help="Cost a day (above 0).")]


def _print(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


def _limits(**given: Any) -> dict[str, Any]:
    """The limits given on the command line; the database refuses a cost of 0 or less."""
    cost = given.get("daily_max_cost")
    if cost is not None and cost <= 0:
        raise CliError(f"--daily-max-cost must be above 0, not {cost:g}", ExitCode.USAGE)
    return {name: value for name, value in given.items() if value is not None}


@tenants_app.command("create")
def create_tenant(
    tenant_id: Annotated[str, typer.Argument(help="Lower case letters, digits, - and _.")],
    name: Annotated[str, typer.Option(help="A readable name.")] = "",
    max_running_runs: MaxRunning = None,
    daily_max_steps: DailySteps = None,
    daily_max_tokens: DailyTokens = None,
    daily_max_cost: DailyCost = None,
) -> None:
    """Create a tenant."""
    import asyncio

    from plait.server.auth import store

    if not re.fullmatch(store.TENANT_ID_PATTERN, tenant_id):
        raise CliError(
            f"invalid tenant id {tenant_id!r}: use 1 to 63 lower case letters, digits, "
            "- and _, starting with a letter or digit",
            ExitCode.USAGE,
        )
    limits = _limits(
        max_running_runs=max_running_runs,
        daily_max_steps=daily_max_steps,
        daily_max_tokens=daily_max_tokens,
        daily_max_cost=daily_max_cost,
    )

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await store.create_tenant(pool, tenant_id, name=name, limits=limits)
            except store.TenantExists as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    _print(asyncio.run(work()))


@tenants_app.command("list")
def list_tenants() -> None:
    """List tenants with their limits."""
    import asyncio

    from plait.server.auth import store

    async def work() -> list[dict[str, Any]]:
        async with connected_pool() as pool:
            return await store.list_tenants(pool)

    _print(asyncio.run(work()))


@tenants_app.command("set")
def set_limits(
    tenant_id: str,
    max_running_runs: MaxRunning = None,
    daily_max_steps: DailySteps = None,
    daily_max_tokens: DailyTokens = None,
    daily_max_cost: DailyCost = None,
    clear: Annotated[
        list[str] | None, typer.Option("--clear", help="Remove a limit (repeatable).")
    ] = None,
) -> None:
    """Set (or ``--clear``) a tenant's limits."""
    import asyncio

    from plait.server.auth import store

    changes: dict[str, Any] = _limits(
        max_running_runs=max_running_runs,
        daily_max_steps=daily_max_steps,
        daily_max_tokens=daily_max_tokens,
        daily_max_cost=daily_max_cost,
    )
    for name in clear or []:
        field = name.replace("-", "_")
        if field not in store.LIMIT_FIELDS:
            raise CliError(
                f"unknown limit {name!r}; use one of {', '.join(store.LIMIT_FIELDS)}",
                ExitCode.USAGE,
            )
        changes[field] = None

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await store.update_tenant(pool, tenant_id, changes)
            except store.TenantNotFound as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    _print(asyncio.run(work()))


@keys_app.command("create")
def create_key(
    tenant_id: str,
    role: Annotated[str, typer.Option(help="admin or member.")] = "member",
    name: Annotated[str, typer.Option(help="What the key is for.")] = "",
) -> None:
    """Create a key; it is printed this once (only its hash is stored)."""
    import asyncio

    from plait.server.auth import store

    if role not in store.ROLES:
        raise CliError(f"unknown role {role!r}; use admin or member", ExitCode.USAGE)

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                record, key = await store.create_key(
                    pool, tenant_id, role="admin" if role == "admin" else "member", name=name
                )
            except (store.TenantNotFound, store.AdminKeyRefused) as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None
        return {**record, "key": key}

    _print(asyncio.run(work()))


@keys_app.command("list")
def list_keys(tenant_id: str) -> None:
    """List a tenant's keys (never the keys themselves)."""
    import asyncio

    from plait.server.auth import store

    async def work() -> list[dict[str, Any]]:
        async with connected_pool() as pool:
            # An unknown tenant is a mistake to say, not an empty list (as over HTTP).
            if await store.get_tenant(pool, tenant_id) is None:
                raise CliError(str(store.TenantNotFound(tenant_id)), ExitCode.USAGE)
            return await store.list_keys(pool, tenant_id)

    _print(asyncio.run(work()))


@keys_app.command("revoke")
def revoke_key(tenant_id: str, key_id: str) -> None:
    """Revoke a key (servers refuse it within their auth cache's lifetime)."""
    import asyncio

    from plait.server.auth import store

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await store.revoke_key(pool, tenant_id, key_id)
            except store.KeyNotFound as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    _print(asyncio.run(work()))


def _secret_value(name: str) -> str:
    """The value: piped in on stdin (one trailing newline dropped), else asked for unseen."""
    if sys.stdin.isatty():
        value: str = typer.prompt(f"Value of {name}", hide_input=True)
        return value
    value = sys.stdin.read()
    return value[:-1] if value.endswith("\n") else value


@secrets_app.command("set")
def set_secret(
    tenant_id: str,
    name: Annotated[str, typer.Argument(help="The name specs use (letters, digits, _).")],
) -> None:
    """Grant the tenant a secret; the value comes from stdin or a hidden prompt.

    Example: ``printf %s "$TOKEN" | plait tenants secrets set acme GITHUB_TOKEN``.
    Prints the name and times, never the value. A value shorter than 4 characters is
    stored, with a warning: it is not masked in run output.
    """
    import asyncio

    from plait.engine.governance import short_secret_warning
    from plait.server.auth import store, tenant_secrets

    value = _secret_value(name)

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                record, _created = await tenant_secrets.set_secret(pool, tenant_id, name, value)
            except (store.TenantNotFound, tenant_secrets.SecretRefused) as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None
            return record

    _print(asyncio.run(work()))
    warning = short_secret_warning(name, value)
    if warning is not None:
        typer.echo(f"warning: {warning}", err=True)


@secrets_app.command("list")
def list_secrets(tenant_id: str) -> None:
    """List a tenant's secrets: names and times, never values."""
    import asyncio

    from plait.server.auth import store, tenant_secrets

    async def work() -> list[dict[str, Any]]:
        async with connected_pool() as pool:
            if await store.get_tenant(pool, tenant_id) is None:
                raise CliError(str(store.TenantNotFound(tenant_id)), ExitCode.USAGE)
            return await tenant_secrets.list_secrets(pool, tenant_id)

    _print(asyncio.run(work()))


@secrets_app.command("delete")
def delete_secret(tenant_id: str, name: str) -> None:
    """Take a secret away; runs that need it fail from their next call."""
    import asyncio

    from plait.server.auth import tenant_secrets

    async def work() -> None:
        async with connected_pool() as pool:
            try:
                await tenant_secrets.delete_secret(pool, tenant_id, name)
            except tenant_secrets.SecretNotFound as exc:
                raise CliError(f"{exc} (tenant {tenant_id})", ExitCode.USAGE) from None

    asyncio.run(work())
    _print({"deleted": name, "tenant_id": tenant_id})


@trust_app.command("show")
def show_trust(tenant_id: str) -> None:
    """The tenant's trusted MCP servers, or its default when none are set."""
    import asyncio

    from plait.server.auth import mcp_trust, store

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await mcp_trust.get_trust(pool, tenant_id)
            except store.TenantNotFound as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    _print(asyncio.run(work()))


@trust_app.command("set")
def set_trust(
    tenant_id: str,
    servers: Annotated[
        list[str] | None,
        typer.Argument(
            help="Each server: an http server's URL, or a stdio server's command line in "
            "quotes. None: the tenant trusts no server."
        ),
    ] = None,
) -> None:
    """Replace the tenant's list.

    Example: ``plait tenants mcp-trust set acme https://mcp.example.com/mcp
    "mcp-server-time --local-timezone UTC"``.
    """
    import asyncio

    from plait.engine.governance import TrustEntryInvalid
    from plait.server.auth import mcp_trust, store

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await mcp_trust.set_trust(pool, tenant_id, servers or [])
            except (store.TenantNotFound, TrustEntryInvalid) as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    _print(asyncio.run(work()))


@trust_app.command("clear")
def clear_trust(tenant_id: str) -> None:
    """Remove the tenant's list: ``default`` trusts its specs' servers again, others none."""
    import asyncio

    from plait.server.auth import mcp_trust, store

    async def work() -> dict[str, Any]:
        async with connected_pool() as pool:
            try:
                return await mcp_trust.clear_trust(pool, tenant_id)
            except store.TenantNotFound as exc:
                raise CliError(str(exc), ExitCode.USAGE) from None

    _print(asyncio.run(work()))
