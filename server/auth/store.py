"""Tenants, API keys and daily usage in Postgres (migration 0006).

A key is ``plait_<key_id>_<secret>``: ``key_id`` is public (listings show
it), the secret is 256 random bits shown once. Only the SHA-256 of the whole
key is stored: for a random token of that size a fast hash is the right
choice (nothing to brute-force, so no salt or slow KDF; docs/decisions.md).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

from psycopg.errors import UniqueViolation

from plait.engine.store import Pool

#: The tenant of the single-user mode and of every row written before tenants existed.
DEFAULT_TENANT = "default"
#: SQL: the row is the tenant's (``%(tenant)s`` NULL: any tenant, for the workers' own reads).
OF_TENANT = "(%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)"
#: What a tenant id may be (the CHECK of ``plait_tenants.tenant_id`` in migration 0006).
TENANT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
KEY_PREFIX = "plait_"
Role = Literal["admin", "member"]
ROLES: tuple[str, ...] = ("admin", "member")
#: The tenant's limits a ``PATCH /tenants/{id}`` may set (``None`` removes one).
LIMIT_FIELDS: tuple[str, ...] = (
    "max_running_runs",
    "daily_max_steps",
    "daily_max_tokens",
    "daily_max_cost",
)
#: The limits a tenant's daily budget checks (server/auth/quota.py).
DAILY_LIMIT_FIELDS: tuple[str, ...] = LIMIT_FIELDS[1:]

_TENANT_COLUMNS = (
    "tenant_id, name, max_running_runs, daily_max_steps, daily_max_tokens, daily_max_cost, "
    "created_at, updated_at"
)
_KEY_COLUMNS = "key_id, tenant_id, role, name, created_at, revoked_at"


class TenantNotFound(LookupError):
    """No such tenant (HTTP 404)."""

    def __init__(self, tenant_id: str) -> None:
        super().__init__(f"tenant {tenant_id} not found")


class AdminKeyRefused(ValueError):
    """Admin keys manage every tenant, so only the operator's tenant has them (HTTP 422)."""

    def __init__(self, tenant_id: str) -> None:
        super().__init__(
            f"admin keys manage every tenant, so only tenant {DEFAULT_TENANT!r} may have them; "
            f"give tenant {tenant_id!r} member keys"
        )


class TenantExists(Exception):
    """A tenant with that id exists (HTTP 409)."""

    def __init__(self, tenant_id: str) -> None:
        super().__init__(f"tenant {tenant_id} already exists")


class KeyNotFound(LookupError):
    """No such key of that tenant (HTTP 404)."""

    def __init__(self, key_id: str) -> None:
        super().__init__(f"API key {key_id} not found")


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a tenant, with a role; ``key_id`` None in single-user mode."""

    tenant: str
    role: Role
    key_id: str | None = None
    #: The name the admin gave the key (shown beside its id where a person acted with it).
    key_name: str | None = None

    @property
    def is_admin(self) -> bool:
        """Whether it may manage tenants and keys."""
        return self.role == "admin"


def hash_key(key: str) -> str:
    """The stored form of a key: its SHA-256, hex."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh ``(key_id, key)``."""
    key_id = secrets.token_hex(6)
    return key_id, f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def today() -> date:
    """The usage day: UTC."""
    return datetime.now(UTC).date()


async def create_tenant(
    pool: Pool, tenant_id: str, *, name: str = "", limits: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A new tenant; raises :class:`TenantExists`."""
    values = {field: (limits or {}).get(field) for field in LIMIT_FIELDS}
    try:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                f"""
                INSERT INTO plait_tenants (tenant_id, name, {", ".join(LIMIT_FIELDS)})
                VALUES (%(tenant_id)s, %(name)s, {", ".join(f"%({f})s" for f in LIMIT_FIELDS)})
                RETURNING {_TENANT_COLUMNS}
                """.encode(),
                {"tenant_id": tenant_id, "name": name, **values},
            )
            row = await cursor.fetchone()
    except UniqueViolation:
        raise TenantExists(tenant_id) from None
    assert row is not None
    return _tenant(row)


async def get_tenant(pool: Pool, tenant_id: str) -> dict[str, Any] | None:
    """The tenant, or ``None``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_TENANT_COLUMNS} FROM plait_tenants WHERE tenant_id = %s".encode(),
            (tenant_id,),
        )
        row = await cursor.fetchone()
    return None if row is None else _tenant(row)


async def list_tenants(pool: Pool) -> list[dict[str, Any]]:
    """Every tenant, by id."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_TENANT_COLUMNS} FROM plait_tenants ORDER BY tenant_id".encode()
        )
        rows = await cursor.fetchall()
    return [_tenant(row) for row in rows]


async def update_tenant(pool: Pool, tenant_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Set ``name`` and limits given in ``changes`` (a limit set to ``None`` is removed)."""
    fields = [field for field in ("name", *LIMIT_FIELDS) if field in changes]
    assignments = "".join(f"{field} = %({field})s, " for field in fields)
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            UPDATE plait_tenants SET {assignments}updated_at = now()
            WHERE tenant_id = %(tenant_id)s RETURNING {_TENANT_COLUMNS}
            """.encode(),
            {"tenant_id": tenant_id, **{field: changes[field] for field in fields}},
        )
        row = await cursor.fetchone()
    if row is None:
        raise TenantNotFound(tenant_id)
    return _tenant(row)


async def create_key(
    pool: Pool, tenant_id: str, *, role: Role = "member", name: str = ""
) -> tuple[dict[str, Any], str]:
    """A new key of the tenant: its record and the key itself (returned this once only).

    Raises :class:`AdminKeyRefused` for an admin key of a tenant other than ``default``.
    """
    if await get_tenant(pool, tenant_id) is None:
        raise TenantNotFound(tenant_id)
    if role == "admin" and tenant_id != DEFAULT_TENANT:
        raise AdminKeyRefused(tenant_id)
    key_id, key = new_key()
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            INSERT INTO plait_api_keys (key_id, tenant_id, key_hash, role, name)
            VALUES (%s, %s, %s, %s, %s) RETURNING {_KEY_COLUMNS}
            """.encode(),
            (key_id, tenant_id, hash_key(key), role, name),
        )
        row = await cursor.fetchone()
    assert row is not None
    return _key(row), key


async def list_keys(pool: Pool, tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's keys (no secrets), oldest first."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT {_KEY_COLUMNS} FROM plait_api_keys WHERE tenant_id = %s "
            "ORDER BY created_at, key_id".encode(),
            (tenant_id,),
        )
        rows = await cursor.fetchall()
    return [_key(row) for row in rows]


async def revoke_key(pool: Pool, tenant_id: str, key_id: str) -> dict[str, Any]:
    """Revoke a key (it stops working within the auth cache's lifetime); idempotent."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"""
            UPDATE plait_api_keys SET revoked_at = COALESCE(revoked_at, now())
            WHERE tenant_id = %s AND key_id = %s RETURNING {_KEY_COLUMNS}
            """.encode(),
            (tenant_id, key_id),
        )
        row = await cursor.fetchone()
    if row is None:
        raise KeyNotFound(key_id)
    return _key(row)


async def principal_of(pool: Pool, key: str) -> Principal | None:
    """The principal of a valid (stored, not revoked) key, else ``None``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT key_id, tenant_id, role, name FROM plait_api_keys "
            "WHERE key_hash = %s AND revoked_at IS NULL",
            (hash_key(key),),
        )
        row = await cursor.fetchone()
    if row is None:
        return None
    return Principal(
        tenant=row["tenant_id"],
        role=row["role"],
        key_id=row["key_id"],
        key_name=row["name"] or None,
    )


async def keys_exist(pool: Pool) -> bool:
    """Whether a key was ever made: until then (and with no admin key) the server is single-user.

    Revoked keys count: revoking the last key must not open the server to everyone.
    """
    async with pool.connection() as conn:
        cursor = await conn.execute("SELECT EXISTS (SELECT FROM plait_api_keys) AS found")
        row = await cursor.fetchone()
    return bool(row and row["found"])


async def usage(pool: Pool, tenant_id: str, day: date | None = None) -> dict[str, Any]:
    """What the tenant spent on ``day`` (today, UTC), with its daily limits."""
    day = day or today()
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """
            SELECT t.daily_max_steps, t.daily_max_tokens, t.daily_max_cost,
                   COALESCE(u.steps, 0) AS steps,
                   COALESCE(u.input_tokens, 0) AS input_tokens,
                   COALESCE(u.output_tokens, 0) AS output_tokens,
                   COALESCE(u.cost, 0) AS cost
            FROM plait_tenants t
            LEFT JOIN plait_tenant_usage u ON u.tenant_id = t.tenant_id AND u.day = %s
            WHERE t.tenant_id = %s
            """,
            (day, tenant_id),
        )
        row = await cursor.fetchone()
    if row is None:
        raise TenantNotFound(tenant_id)
    return {
        "tenant_id": tenant_id,
        "day": day.isoformat(),
        "steps": row["steps"],
        "input_tokens": row["input_tokens"],
        "output_tokens": row["output_tokens"],
        "tokens": row["input_tokens"] + row["output_tokens"],
        "cost": round(row["cost"], 6),
        "limits": {name: row[name] for name in DAILY_LIMIT_FIELDS if row[name] is not None},
    }


async def add_usage(pool: Pool, tenant_id: str, delta: Mapping[str, float]) -> None:
    """Add ``delta`` (steps, input_tokens, output_tokens, cost) to the tenant's day."""
    async with pool.connection() as conn:
        await conn.execute(
            """
            INSERT INTO plait_tenant_usage
                (tenant_id, day, steps, input_tokens, output_tokens, cost)
            VALUES (%s, %s, %s, %s, %s, %s)
            ON CONFLICT (tenant_id, day) DO UPDATE SET
                steps = plait_tenant_usage.steps + EXCLUDED.steps,
                input_tokens = plait_tenant_usage.input_tokens + EXCLUDED.input_tokens,
                output_tokens = plait_tenant_usage.output_tokens + EXCLUDED.output_tokens,
                cost = plait_tenant_usage.cost + EXCLUDED.cost,
                updated_at = now()
            """,
            (
                tenant_id,
                today(),
                int(delta.get("steps", 0)),
                int(delta.get("input_tokens", 0)),
                int(delta.get("output_tokens", 0)),
                float(delta.get("cost", 0.0)),
            ),
        )


def _tenant(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "tenant_id": row["tenant_id"],
        "name": row["name"],
        "limits": {field: row[field] for field in LIMIT_FIELDS},
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


def _key(row: Mapping[str, Any]) -> dict[str, Any]:
    revoked = row["revoked_at"]
    return {
        "key_id": row["key_id"],
        "tenant_id": row["tenant_id"],
        "role": row["role"],
        "name": row["name"],
        "prefix": f"{KEY_PREFIX}{row['key_id']}_",
        "created_at": row["created_at"].isoformat(),
        "revoked_at": revoked.isoformat() if revoked is not None else None,
    }
