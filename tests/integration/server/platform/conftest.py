"""Servers for the platform tests (store, webhooks, crons).

``platform_server``: one ``plait serve`` with API keys (``PLAIT_ADMIN_KEY``);
each test makes tenants of its own through the admin API and acts for them
with the LangGraph SDK. ``senders``: an API-only ``plait serve`` and two
``plait worker`` processes per test, allowed to call a :class:`Receiver` on
127.0.0.1, whose workers a test may kill.
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
from tests.integration.server.platform.receiver import Receiver

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


SECRET = "whsec-" + uuid.uuid4().hex
#: A sender's call times out after this long; its claim lasts 2x + 1 s
#: (server/workers/webhook_sender.py).
SEND_TIMEOUT_SECONDS = 4


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """The webhook receiver, listening."""
    opened = Receiver(SECRET)
    opened.start()
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def senders(postgres_server_url: str, tmp_path: Path) -> Iterator[tuple[Cluster, str]]:
    """An API-only ``plait serve`` and two ``plait worker`` processes that may call
    127.0.0.1, on a database of their own: ``(cluster, database_url)``."""
    env = {
        "PLAIT_WEBHOOK_ALLOW_PRIVATE": "1",
        "PLAIT_WEBHOOK_SECRET": SECRET,
        "PLAIT_WEBHOOK_TIMEOUT_SECONDS": str(SEND_TIMEOUT_SECONDS),
    }
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url, tmp_path, SPEC_SOURCES, serve_args=["--no-workers"], workers=2, extra_env=env
        ) as running,
    ):
        yield running, url


@pytest.fixture
async def client(senders: tuple[Cluster, str]) -> AsyncIterator[LangGraphClient]:
    """The SDK on the API process (single-user: no keys)."""
    async with get_client(url=senders[0].url, api_key=None, timeout=60.0) as opened:
        yield opened
