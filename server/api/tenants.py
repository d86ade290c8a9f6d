"""Tenants, their API keys, secrets and trusted MCP servers (admin only), daily usage,
and the process's breakers.

``/tenants...`` needs an admin key (403 for member keys). A secret's value is
written (``PUT``) and never read back: listings show names and times only.
``GET /mcp-trust`` is the caller's own tenant's trust list; ``/tenants/{id}/mcp-trust``
reads and sets any tenant's (admin).
``GET /usage`` is
the caller's own tenant's day; ``GET /tenants/{id}/usage`` any tenant's (admin).
``GET /breakers`` shows the circuit breakers of the process that answers
(each worker process has its own; docs/governance.md).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from plait.engine.governance import (
    MAX_TRUST_ENTRIES,
    TrustEntryInvalid,
    breaker_snapshot,
    short_secret_warning,
)
from plait.server.api.deps import Svc
from plait.server.auth import mcp_trust, store, tenant_secrets
from plait.server.auth.keys import Admin, Tenant
from plait.server.http.problems import Problem, not_found

router = APIRouter(tags=["tenants"])

TenantId = Annotated[str, Field(pattern=store.TENANT_ID_PATTERN)]


class TenantLimits(BaseModel):
    """A tenant's limits; ``null`` (or absent) means none."""

    model_config = ConfigDict(extra="forbid")

    max_running_runs: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Runs of the tenant executing at once, across all workers."
    )
    daily_max_steps: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Node steps per UTC day."
    )
    daily_max_tokens: Annotated[int, Field(ge=1)] | None = Field(
        None, description="Input plus output tokens per UTC day."
    )
    daily_max_cost: Annotated[float, Field(gt=0)] | None = Field(
        None, description="Cost per UTC day, from the models' `price`."
    )


class TenantCreate(TenantLimits):
    """Body of ``POST /tenants``."""

    tenant_id: TenantId
    name: str = ""


class TenantPatch(TenantLimits):
    """Body of ``PATCH /tenants/{id}``: only the fields sent change (``null`` removes a limit)."""

    name: str | None = None


class KeyCreate(BaseModel):
    """Body of ``POST /tenants/{id}/keys``."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["admin", "member"] = "member"
    name: str = ""


class SecretValue(BaseModel):
    """Body of ``PUT /tenants/{id}/secrets/{name}``: the value, which no API returns."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(
        min_length=1,
        max_length=tenant_secrets.MAX_VALUE_BYTES,
        description="The secret's value; stored as given, never returned.",
    )


class TrustedServers(BaseModel):
    """Body of ``PUT /tenants/{id}/mcp-trust``: the whole list, replacing the one before."""

    model_config = ConfigDict(extra="forbid")

    servers: list[str] = Field(
        max_length=MAX_TRUST_ENTRIES,
        description="MCP servers the tenant trusts: an http server's URL (origin and path, "
        "e.g. `https://mcp.example.com/mcp`) or a stdio server's command line as its specs "
        "write it (e.g. `mcp-server-time --local-timezone UTC`). An empty list trusts none.",
    )


@router.post("/tenants", summary="Create a tenant", status_code=201)
async def create_tenant(body: TenantCreate, services: Svc, _: Admin) -> dict[str, Any]:
    """A new tenant with its limits (admin only)."""
    limits = body.model_dump(include=set(store.LIMIT_FIELDS))
    try:
        return await store.create_tenant(
            services.pool, body.tenant_id, name=body.name, limits=limits
        )
    except store.TenantExists as exc:
        raise Problem(409, str(exc), kind="tenant-exists", title="Tenant exists") from None


@router.get("/tenants", summary="List tenants")
async def list_tenants(services: Svc, _: Admin) -> list[dict[str, Any]]:
    """Every tenant with its limits (admin only)."""
    return await store.list_tenants(services.pool)


@router.get("/tenants/{tenant_id}", summary="Get a tenant")
async def get_tenant(tenant_id: str, services: Svc, _: Admin) -> dict[str, Any]:
    """One tenant with its limits (admin only)."""
    found = await store.get_tenant(services.pool, tenant_id)
    if found is None:
        raise not_found(f"tenant {tenant_id}")
    return found


@router.patch("/tenants/{tenant_id}", summary="Change a tenant's name or limits")
async def patch_tenant(
    tenant_id: str, body: TenantPatch, services: Svc, _: Admin
) -> dict[str, Any]:
    """Set the fields sent; a limit sent as ``null`` is removed (admin only)."""
    changes = body.model_dump(exclude_unset=True)
    if changes.get("name", "") is None:
        del changes["name"]
    try:
        return await store.update_tenant(services.pool, tenant_id, changes)
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None


@router.post("/tenants/{tenant_id}/keys", summary="Create an API key", status_code=201)
async def create_key(tenant_id: str, body: KeyCreate, services: Svc, _: Admin) -> JSONResponse:
    """A new key of the tenant; the response holds the key itself, shown this once only."""
    try:
        record, key = await store.create_key(
            services.pool, tenant_id, role=body.role, name=body.name
        )
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None
    except store.AdminKeyRefused as exc:
        raise Problem(422, str(exc), kind="admin-key-refused", title="Admin key refused") from None
    services.auth.forget()  # the first key switches the server out of single-user mode
    return JSONResponse({**record, "key": key}, status_code=201)


@router.get("/tenants/{tenant_id}/keys", summary="List a tenant's API keys")
async def list_keys(tenant_id: str, services: Svc, _: Admin) -> list[dict[str, Any]]:
    """The tenant's keys with their ids and roles, never the keys themselves (admin only)."""
    if await store.get_tenant(services.pool, tenant_id) is None:
        raise not_found(f"tenant {tenant_id}")
    return await store.list_keys(services.pool, tenant_id)


@router.delete("/tenants/{tenant_id}/keys/{key_id}", summary="Revoke an API key")
async def revoke_key(tenant_id: str, key_id: str, services: Svc, _: Admin) -> dict[str, Any]:
    """Revoke a key: refused at once by this process, by others within the auth cache's TTL."""
    try:
        record = await store.revoke_key(services.pool, tenant_id, key_id)
    except store.KeyNotFound as exc:
        raise not_found(f"API key {key_id}", str(exc)) from None
    services.auth.forget()
    return record


@router.put(
    "/tenants/{tenant_id}/secrets/{name}",
    summary="Grant a tenant a secret",
    responses={201: {"description": "Granted"}, 200: {"description": "Replaced"}},
)
async def put_secret(
    tenant_id: str, name: str, body: SecretValue, services: Svc, _: Admin
) -> JSONResponse:
    """Set the secret ``name`` of the tenant (its specs may read it from their next call).

    Answers the secret's name and times, never its value, and a ``warning`` when the
    value is shorter than 4 characters: it is stored, but not masked in run output.
    Names starting with ``PLAIT_`` and values holding this server's database URL or
    admin key are refused (422).
    """
    try:
        record, created = await tenant_secrets.set_secret(
            services.pool, tenant_id, name, body.value
        )
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None
    except tenant_secrets.SecretRefused as exc:
        raise Problem(422, str(exc), kind="secret-refused", title="Secret refused") from None
    warning = short_secret_warning(name, body.value)
    answer = record if warning is None else {**record, "warning": warning}
    return JSONResponse(answer, status_code=201 if created else 200)


@router.get("/tenants/{tenant_id}/secrets", summary="List a tenant's secrets")
async def list_secrets(tenant_id: str, services: Svc, _: Admin) -> list[dict[str, Any]]:
    """The tenant's secrets: names and times, never values (admin only)."""
    if await store.get_tenant(services.pool, tenant_id) is None:
        raise not_found(f"tenant {tenant_id}")
    return await tenant_secrets.list_secrets(services.pool, tenant_id)


@router.delete("/tenants/{tenant_id}/secrets/{name}", summary="Take a secret away", status_code=204)
async def delete_secret(tenant_id: str, name: str, services: Svc, _: Admin) -> Response:
    """Delete the tenant's secret; a run that needs it fails from its next call."""
    try:
        await tenant_secrets.delete_secret(services.pool, tenant_id, name)
    except tenant_secrets.SecretNotFound as exc:
        raise not_found(f"secret {name} of tenant {tenant_id}", str(exc)) from None
    return Response(status_code=204)


@router.get("/tenants/{tenant_id}/mcp-trust", summary="A tenant's trusted MCP servers")
async def get_mcp_trust(tenant_id: str, services: Svc, _: Admin) -> dict[str, Any]:
    """The MCP servers whose own tool descriptions the tenant's models see (admin only).

    ``default: true``: no list is set; the ``default`` tenant then trusts every server
    its specs declare (``trusts_declared_servers``), any other tenant none.
    """
    try:
        return await mcp_trust.get_trust(services.pool, tenant_id)
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None


@router.put("/tenants/{tenant_id}/mcp-trust", summary="Set a tenant's trusted MCP servers")
async def put_mcp_trust(
    tenant_id: str, body: TrustedServers, services: Svc, _: Admin
) -> dict[str, Any]:
    """Replace the tenant's list (its runs read it when they start; admin only).

    Tools of servers not on it reach the tenant's models with their name and input
    schema only: the server's descriptions are withheld (docs/mcp.md). An entry that
    names no server (another URL scheme, a query or user info, an unbalanced quote) is
    refused (422).
    """
    try:
        return await mcp_trust.set_trust(services.pool, tenant_id, body.servers)
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None
    except TrustEntryInvalid as exc:
        raise Problem(
            422, str(exc), kind="mcp-trust-refused", title="Trusted server refused"
        ) from None


@router.delete("/tenants/{tenant_id}/mcp-trust", summary="Remove a tenant's trust list")
async def delete_mcp_trust(tenant_id: str, services: Svc, _: Admin) -> dict[str, Any]:
    """Back to the tenant's default (see ``GET``); answers what it trusts now (admin only)."""
    try:
        return await mcp_trust.clear_trust(services.pool, tenant_id)
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None


@router.get("/mcp-trust", summary="Your tenant's trusted MCP servers")
async def own_mcp_trust(services: Svc, tenant: Tenant) -> dict[str, Any]:
    """The caller's own tenant's list, as ``GET /tenants/{id}/mcp-trust`` shows it."""
    return await mcp_trust.get_trust(services.pool, tenant)


@router.get("/tenants/{tenant_id}/usage", summary="A tenant's usage of a day")
async def tenant_usage(
    tenant_id: str,
    services: Svc,
    _: Admin,
    day: Annotated[date | None, Query(description="UTC day; default today")] = None,
) -> dict[str, Any]:
    """Steps, tokens and cost the tenant spent that day, with its daily limits (admin only)."""
    try:
        return await store.usage(services.pool, tenant_id, day)
    except store.TenantNotFound as exc:
        raise not_found(f"tenant {tenant_id}", str(exc)) from None


@router.get("/usage", summary="Your tenant's usage of a day")
async def own_usage(
    services: Svc,
    tenant: Tenant,
    day: Annotated[date | None, Query(description="UTC day; default today")] = None,
) -> dict[str, Any]:
    """Steps, tokens and cost the caller's tenant spent that day, with its daily limits."""
    return await store.usage(services.pool, tenant, day)


@router.get("/breakers", summary="Circuit breakers of this server process")
async def list_breakers(_: Admin) -> dict[str, dict[str, Any]]:
    """Every breaker of the answering process by endpoint key (admin only): state, calls,
    failures, failure rate, and seconds to the next probe when open."""
    return breaker_snapshot()
