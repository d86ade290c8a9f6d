"""One real ``plait serve`` with API keys, for the platform tests (store, webhooks).

Keys are required (``PLAIT_ADMIN_KEY``), so each test makes tenants of its own
through the admin API and acts for them with the LangGraph SDK.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster

SPECS_DIR = Path(__file__).parent / "specs"
SPEC_SOURCES = [SPECS_DIR / "store-notes.yaml", SPECS_DIR / "platform_steps.py"]
ADMIN_KEY = "admin-" + uuid.uuid4().hex


@pytest.fixture(scope="package")
def platform_database_url(postgres_server_url: str) -> Iterator[str]:
    """The server's own database (the tests read its tables directly)."""
    with fresh_database(postgres_server_url) as url:
        yield url


@pytest.fixture(scope="package")
def platform_server(
    platform_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with an admin key and in-process workers."""
    with cluster(
        platform_database_url,
        tmp_path_factory.mktemp("platform-server"),
        SPEC_SOURCES,
        extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
    ) as running:
        yield running


@pytest.fixture
async def admin(platform_server: Cluster) -> AsyncIterator[httpx.AsyncClient]:
    """Plain HTTP with the admin key; prints the server's log of the test at teardown."""
    offsets = platform_server.log_sizes()
    async with httpx.AsyncClient(
        base_url=platform_server.url, headers={"x-api-key": ADMIN_KEY}, timeout=30.0
    ) as http:
        yield http
    platform_server.print_logs(since=offsets)


async def new_tenant(admin: httpx.AsyncClient) -> str:
    """A fresh tenant with one member key; returns the key."""
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    created = await admin.post("/tenants", json={"tenant_id": tenant})
    assert created.status_code == 201, created.text
    key = await admin.post(f"/tenants/{tenant}/keys", json={"role": "member"})
    assert key.status_code == 201, key.text
    return str(key.json()["key"])


def sdk(server: Cluster, key: str) -> LangGraphClient:
    """The LangGraph SDK acting with ``key``."""
    return get_client(url=server.url, api_key=key, timeout=60.0)
