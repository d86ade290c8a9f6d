"""Resolving ``x-api-key`` to a tenant: one FastAPI dependency, cached briefly.

Modes:

- **Single-user** (no key ever made and no ``PLAIT_ADMIN_KEY``): every
  request acts for the tenant ``default`` as admin; no header is needed and
  any header sent is ignored (SDKs send keys from the environment on their own).
- **Keys**: once a key was made (revoked ones count, so revoking the last key
  never opens the server) or ``PLAIT_ADMIN_KEY`` is set, every request to a
  protected route needs a valid ``x-api-key``, else 401 problem JSON.

Lookups are cached for ``ttl`` seconds (``PLAIT_AUTH_CACHE_SECONDS``, default
5): a key revoked through another process stops working within that time; in
the process that revoked it, at once. Requests that need the same lookup while
it is under way share it (async-lru), so a cold or just expired cache under load
costs one query, not one per request waiting for a pooled connection.

Health routes (``/ok``, ``/healthz``, ``/readyz``, ``/info``), ``/metrics``,
``/docs``, ``/openapi.json`` and the editor's static files are not protected
(``server/app.py`` adds this dependency to every other router).
"""

from __future__ import annotations

import hmac
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Annotated

from async_lru import alru_cache
from fastapi import Depends, Request
from fastapi.security import APIKeyHeader

from plait.engine.store import Pool
from plait.server.auth.store import DEFAULT_TENANT, Principal, hash_key, keys_exist, principal_of

API_KEY_HEADER = "x-api-key"
#: The key id reported for the environment's admin key.
ENV_ADMIN_KEY_ID = "env"
_SINGLE_USER = Principal(tenant=DEFAULT_TENANT, role="admin", key_id=None)

#: The header as an OpenAPI security scheme (Swagger UI's "Authorize" button).
api_key_header = APIKeyHeader(
    name=API_KEY_HEADER,
    auto_error=False,
    description="An API key of a tenant (`plait_...`); not needed in single-user mode.",
)


class Unauthenticated(Exception):
    """No key, or a key that is unknown or revoked (HTTP 401)."""


class Forbidden(Exception):
    """A key whose role may not do what it asked (HTTP 403)."""


def _by_digest(pool: Pool, key: str) -> Hashable:
    """A key's cache entry is named by its database and digest, not by the secret itself."""
    return pool, hash_key(key)


@dataclass
class Authenticator:
    """Resolves keys to principals for one server process, with a short cache."""

    admin_key: str | None = None
    ttl: float = 5.0

    def __post_init__(self) -> None:
        self._keys_exist = alru_cache(maxsize=1, ttl=self.ttl)(keys_exist)
        # Bounded: random keys sent by anyone must not grow it.
        self._principal_of = alru_cache(maxsize=10_000, ttl=self.ttl, key=_by_digest)(principal_of)

    def forget(self) -> None:
        """Drop every cached answer (after this process changed keys)."""
        self._keys_exist.cache_clear()
        self._principal_of.cache_clear()

    async def enabled(self, pool: Pool) -> bool:
        """Whether requests need a key (an admin key is configured, or a key was ever made)."""
        if self.admin_key:
            return True
        return await self._keys_exist(pool)

    async def principal(self, pool: Pool, key: str | None) -> Principal:
        """Who ``key`` acts for; raises :class:`Unauthenticated` for a missing or bad key."""
        if not await self.enabled(pool):
            return _SINGLE_USER
        if not key:
            raise Unauthenticated(
                f"this server needs an API key: send it in the {API_KEY_HEADER} header"
            )
        if self.admin_key and hmac.compare_digest(key.encode(), self.admin_key.encode()):
            return Principal(tenant=DEFAULT_TENANT, role="admin", key_id=ENV_ADMIN_KEY_ID)
        found = await self._principal_of(pool, key)
        if found is None:
            raise Unauthenticated("the API key is unknown or revoked; ask an admin for a new one")
        return found


async def authenticate(
    request: Request, key: Annotated[str | None, Depends(api_key_header)] = None
) -> Principal:
    """The request's principal (FastAPI caches it per request, so routes may ask again)."""
    services = request.app.state.services
    principal: Principal = await services.auth.principal(services.pool, key)
    return principal


async def current_tenant(principal: Annotated[Principal, Depends(authenticate)]) -> str:
    """The tenant the request acts for."""
    return principal.tenant


async def require_admin(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    """The principal, if it may manage tenants and keys; else :class:`Forbidden`."""
    if not principal.is_admin:
        raise Forbidden(
            f"managing tenants and keys needs an admin key; this key's role is {principal.role!r}"
        )
    return principal


#: Route parameter: the tenant of the request.
Tenant = Annotated[str, Depends(current_tenant)]
#: Route parameter: an admin principal (403 for members).
Admin = Annotated[Principal, Depends(require_admin)]
