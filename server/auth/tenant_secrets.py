"""Tenants' secrets (table ``plait_tenant_secrets``, migration 0010) and the runs' source of them.

An operator grants a tenant a secret (``plait tenants secrets set``, ``PUT
/tenants/{id}/secrets/{name}``); no API ever returns a value. A worker gives
each run a :class:`TenantSecrets` bound to the run's tenant
(``configurable["plait_secrets"]``), so a spec resolves only its tenant's
secrets, at call time. The ``default`` tenant (the operator's own, and the
single-user mode) also reads the environment variables the operator lists in
``PLAIT_ENV_SECRETS`` and the entries of ``PLAIT_SECRETS_FILE``; no other
tenant reads the server's environment or files at all. Plait's own settings
are refused whatever the tenant (engine/governance/secrets.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg.errors import ForeignKeyViolation

from plait.engine.governance import EnvironmentSecrets
from plait.engine.protected import is_protected
from plait.engine.spec import RESERVED_PREFIX, LoadedSpec, SpecIssue, is_reserved, secret_refs
from plait.engine.store import Pool
from plait.server.auth.store import DEFAULT_TENANT, TenantNotFound

#: Environment variables the ``default`` tenant's specs may read as secrets (tenant_secrets.py).
ENV_SECRETS_ENV = "PLAIT_ENV_SECRETS"

#: What a secret's name may be (the CHECK of ``plait_tenant_secrets.name``).
SECRET_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
#: The largest value stored (a key, a token, a certificate: not a file).
MAX_VALUE_BYTES = 65536
#: The issue code of an upload naming a secret its tenant was not granted.
NOT_GRANTED = "secret-not-granted"


class SecretNotFound(LookupError):
    """The tenant has no secret of that name (HTTP 404)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"secret {name} not found")


class SecretRefused(ValueError):
    """A name or value that cannot be a secret (HTTP 422)."""


def not_granted(tenant: str, names: Sequence[str]) -> str:
    """The one error for secrets ``tenant`` does not have: it names them and nothing else
    (not whether the server's environment or another tenant has one of that name)."""
    listed = ", ".join(f"`{name}`" for name in names)
    return f"secret {listed} is not granted to tenant `{tenant}`; {how_to_grant(tenant, names)}"


def how_to_grant(tenant: str, names: Sequence[str]) -> str:
    """How an operator grants ``names`` to ``tenant``."""
    first = names[0] if names else "NAME"
    return (
        f"an operator grants it with `plait tenants secrets set {tenant} {first}` "
        f"or PUT /tenants/{tenant}/secrets/{first}"
    )


def check_secret(name: str, value: str) -> None:
    """Raise :class:`SecretRefused` for a name or value that cannot be a tenant's secret."""
    if not re.fullmatch(SECRET_NAME_PATTERN, name):
        raise SecretRefused(
            f"invalid secret name {name!r}: use letters, digits and _, not starting with a "
            "digit, at most 128 characters"
        )
    if is_reserved(name):
        raise SecretRefused(
            f"{name}: names starting with {RESERVED_PREFIX} are Plait's own settings, "
            "never a secret"
        )
    if not value:
        raise SecretRefused(f"secret {name}: the value is empty")
    if len(value.encode()) > MAX_VALUE_BYTES:
        raise SecretRefused(f"secret {name}: the value is over {MAX_VALUE_BYTES} bytes")
    if is_protected(value):
        raise SecretRefused(
            f"secret {name}: the value holds one of this server's own settings (its database "
            "URL or admin key), which no spec may read"
        )


async def set_secret(
    pool: Pool, tenant_id: str, name: str, value: str
) -> tuple[dict[str, Any], bool]:
    """Grant (or replace) the tenant's secret; return its record (no value) and whether it is new.

    Raises :class:`SecretRefused` and :class:`TenantNotFound`.
    """
    check_secret(name, value)
    try:
        async with pool.connection() as conn:
            cursor = await conn.execute(
                """
                INSERT INTO plait_tenant_secrets (tenant_id, name, value) VALUES (%s, %s, %s)
                ON CONFLICT (tenant_id, name) DO UPDATE
                    SET value = EXCLUDED.value, updated_at = now()
                RETURNING name, created_at, updated_at, (xmax = 0) AS created
                """,
                (tenant_id, name, value),
            )
            row = await cursor.fetchone()
    except ForeignKeyViolation:
        raise TenantNotFound(tenant_id) from None
    assert row is not None
    return _record(row), bool(row["created"])


async def list_secrets(pool: Pool, tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's secrets by name: names and times, never values."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT name, created_at, updated_at FROM plait_tenant_secrets "
            "WHERE tenant_id = %s ORDER BY name",
            (tenant_id,),
        )
        rows = await cursor.fetchall()
    return [_record(row) for row in rows]


async def delete_secret(pool: Pool, tenant_id: str, name: str) -> None:
    """Take the secret away; runs that need it fail from their next call. Raises
    :class:`SecretNotFound`."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "DELETE FROM plait_tenant_secrets WHERE tenant_id = %s AND name = %s RETURNING name",
            (tenant_id, name),
        )
        if await cursor.fetchone() is None:
            raise SecretNotFound(name)


async def secret_values(pool: Pool, tenant_id: str, names: Sequence[str]) -> dict[str, str]:
    """The values of those of ``names`` the tenant was granted."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT name, value FROM plait_tenant_secrets WHERE tenant_id = %s AND name = ANY(%s)",
            (tenant_id, list(names)),
        )
        rows = await cursor.fetchall()
    return {row["name"]: row["value"] for row in rows}


def _record(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": row["name"],
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


def env_secret_names(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """The environment variables ``default`` may read (``PLAIT_ENV_SECRETS``, comma-separated)."""
    raw = (os.environ if env is None else env).get(ENV_SECRETS_ENV, "")
    return frozenset(name.strip() for name in raw.split(",") if name.strip())


@dataclass(frozen=True)
class TenantSecrets:
    """A run's :class:`~plait.engine.governance.secrets.SecretSource`: its tenant's granted secrets.

    ``fallback`` (``default`` only) is asked for the names the store lacks.
    """

    pool: Pool
    tenant: str
    fallback: EnvironmentSecrets | None = None

    @property
    def scope(self) -> str:
        """Sessions holding these values belong to the tenant."""
        return f"tenant:{self.tenant}"

    @property
    def reads_environment(self) -> bool:
        """Never: libraries must not pick a key from the server's environment."""
        return False

    async def read(self, names: Sequence[str]) -> dict[str, str]:
        """The tenant's values of ``names`` (the store first, then the fallback)."""
        found = await secret_values(self.pool, self.tenant, names)
        missing = [name for name in names if name not in found]
        if missing and self.fallback is not None:
            found.update(self.fallback.read_now(missing))
        return found

    def missing_message(self, names: Sequence[str]) -> str:
        """See :func:`not_granted`."""
        return not_granted(self.tenant, names)


@dataclass(frozen=True)
class SecretSources:
    """Makes each run's :class:`TenantSecrets`; ``env_names``: what ``default`` reads of the
    environment (:func:`env_secret_names`)."""

    pool: Pool
    env_names: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, pool: Pool) -> SecretSources:
        """Sources with ``default``'s environment variables from ``PLAIT_ENV_SECRETS``."""
        return cls(pool, env_secret_names())

    def of(self, tenant: str) -> TenantSecrets:
        """The source of ``tenant``'s runs."""
        fallback = EnvironmentSecrets(self.env_names) if tenant == DEFAULT_TENANT else None
        return TenantSecrets(self.pool, tenant, fallback)

    async def ungranted(self, loaded: LoadedSpec, tenant: str) -> list[SpecIssue]:
        """One issue per secret ``loaded`` names that ``tenant`` was not granted, at its first
        mention (``spec.secrets`` first); reserved names are lint's (``secret-reserved``)."""
        first: dict[str, str] = {}
        for ref in secret_refs(loaded.spec.spec):
            if not is_reserved(ref.name):
                first.setdefault(ref.name, ref.pointer)
        if not first:
            return []
        found = await self.of(tenant).read(list(first))
        missing = [name for name in first if name not in found or is_protected(found[name])]
        return [_issue(loaded, first[name], tenant, name) for name in missing]


def _issue(loaded: LoadedSpec, where: str, tenant: str, name: str) -> SpecIssue:
    position = loaded.source_map.locate(where)
    return SpecIssue(
        file=loaded.file,
        line=position.line,
        column=position.column,
        pointer=where,
        message=f"secret `{name}` is not granted to tenant `{tenant}`",
        fix=f"{how_to_grant(tenant, [name])}; then upload again",
        code=NOT_GRANTED,
        severity="error",
    )
