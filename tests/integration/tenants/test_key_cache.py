"""The key cache: a key revoked by another process stops working within the cache's TTL."""

from __future__ import annotations

import asyncio
import time
from typing import cast

import pytest

from plait.engine.store.migrator import migrate
from plait.engine.store.pool import Pool, open_pool
from plait.server.auth import store
from plait.server.auth.keys import Authenticator, Unauthenticated
from tests.conftest import fresh_database
from tests.counting_pool import CountingPool
from tests.integration.tenants.conftest import unique
from tests.polling import until

pytestmark = pytest.mark.postgres

TTL = 0.5


async def test_a_key_revoked_elsewhere_stops_working_within_the_ttl(tpool: Pool) -> None:
    tenant = unique("cache")
    await store.create_tenant(tpool, tenant)
    record, key = await store.create_key(tpool, tenant)
    auth = Authenticator(ttl=TTL)
    assert (await auth.principal(tpool, key)).tenant == tenant

    # Another process revokes it: this one's cache does not hear of it.
    await store.revoke_key(tpool, tenant, record["key_id"])
    revoked_at = time.monotonic()

    async def refused() -> bool:
        try:
            await auth.principal(tpool, key)
        except Unauthenticated:
            return True
        return False

    await until(refused, "the revoked key to be refused", limit=TTL + 5)
    assert time.monotonic() - revoked_at <= TTL + 1.0


async def test_single_user_mode_until_a_key_is_made(postgres_server_url: str) -> None:
    """No key ever made and no admin key: everyone is `default`, whatever header they send;
    the first key ends that, and revoking it does not bring it back."""
    with fresh_database(postgres_server_url) as url:
        async with await open_pool(url) as pool:
            await migrate(pool)
            auth = Authenticator(ttl=0)
            principal = await auth.principal(pool, "plait_some_key_from_the_environment")
            assert principal == store.Principal(tenant=store.DEFAULT_TENANT, role="admin")
            assert await auth.principal(pool, None) == principal

            record, key = await store.create_key(pool, store.DEFAULT_TENANT)
            assert (await auth.principal(pool, key)).key_id == record["key_id"]
            await store.revoke_key(pool, store.DEFAULT_TENANT, record["key_id"])
            for sent in (None, key):
                with pytest.raises(Unauthenticated):
                    await auth.principal(pool, sent)


async def test_an_admin_key_switches_keys_on(tpool: Pool) -> None:
    auth = Authenticator(admin_key="s3cret")
    admin = await auth.principal(tpool, "s3cret")
    assert admin.is_admin and admin.tenant == store.DEFAULT_TENANT
    with pytest.raises(Unauthenticated):
        await auth.principal(tpool, None)


async def test_requests_arriving_together_share_one_lookup(tpool: Pool) -> None:
    # When the cache is cold or has just expired, every request that came before the first
    # lookup returned sent its own, each on a pooled connection: 780 lookups for 2,000 runs
    # at 1,000 at once (bench/statements.py --levels), a stampede that can drain the pool.
    tenant = unique("herd")
    await store.create_tenant(tpool, tenant)
    _, key = await store.create_key(tpool, tenant)
    counting = CountingPool(tpool)
    auth = Authenticator(ttl=60)

    principals = await asyncio.gather(
        *(auth.principal(cast(Pool, counting), key) for _ in range(50))
    )

    assert {principal.tenant for principal in principals} == {tenant}
    # One lookup of whether keys exist, one of this key.
    assert counting.taken == 2
