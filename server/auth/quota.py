"""Tenants' daily budgets, kept in ``plait_tenant_usage`` (the engine's ``TenantQuota``).

The executor attaches a :class:`PostgresQuota` to each run's config
(:func:`attach_quota`); the engine then admits every step and model call
against the tenant's totals of the day (UTC) and charges what each spent.
Every tenant but ``default`` is metered; ``default`` only once it has a daily
limit, so the single-user mode costs nothing extra. Parallel runs of one
tenant may each pass the check just before the limit, so a day's total can
end slightly above it (by the steps and calls already admitted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plait.engine.governance import QuotaExceeded, with_quota
from plait.engine.store import Pool
from plait.server.auth.store import DEFAULT_TENANT, add_usage, get_tenant, usage

#: Daily limit -> the usage figure it bounds.
_MEASURES = {"daily_max_steps": "steps", "daily_max_tokens": "tokens", "daily_max_cost": "cost"}


class PostgresQuota:
    """One tenant's daily budget: checks read today's row, charges add to it."""

    def __init__(self, pool: Pool, tenant: str, limits: Mapping[str, Any]) -> None:
        self.pool = pool
        self.tenant = tenant
        self.limits = {
            name: float(limits[name]) for name in _MEASURES if limits.get(name) is not None
        }

    async def admit(self, node: str) -> None:
        """Raise :class:`QuotaExceeded` when a daily limit is reached (usage at or above it)."""
        if not self.limits:
            return
        today = await usage(self.pool, self.tenant)
        for name, value in self.limits.items():
            used = float(today[_MEASURES[name]])
            if used >= value:
                raise QuotaExceeded(node, self.tenant, name, value, used)

    async def charge(self, delta: Mapping[str, float]) -> None:
        """Add ``delta`` to the tenant's day."""
        await add_usage(self.pool, self.tenant, delta)


async def attach_quota(
    config: dict[str, Any], pool: Pool, tenant: str, limits: Mapping[str, Any] | None = None
) -> None:
    """Meter the run of ``config`` against ``tenant``'s daily budget (see module doc).

    ``limits`` are the tenant's limits when the caller has read them (a worker's
    claim does); otherwise they are read here.
    """
    if limits is None:
        row = await get_tenant(pool, tenant)
        limits = row["limits"] if row is not None else {}
    if tenant == DEFAULT_TENANT and not any(limits.get(name) for name in _MEASURES):
        return
    with_quota(config, PostgresQuota(pool, tenant, limits))
