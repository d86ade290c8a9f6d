"""``@langchain/langgraph-sdk`` 1.15 (a devDependency) from node: the store and crons,
as two tenants, against a real ``plait serve`` (``js/platform_client.mjs``)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.server.harness import REPO, Cluster
from tests.integration.server.platform.conftest import new_tenant

pytestmark = pytest.mark.postgres

SCRIPT = Path(__file__).resolve().parent / "js" / "platform_client.mjs"


async def js_results(server: Cluster, admin: httpx.AsyncClient) -> dict[str, Any]:
    """What the script printed (it fails the test with its stderr when it fails)."""
    node = shutil.which("node")
    assert node, "node is not on PATH"
    assert (REPO / "node_modules" / "@langchain" / "langgraph-sdk").is_dir(), "run npm ci"
    keys = [await new_tenant(admin), await new_tenant(admin)]
    script = await asyncio.create_subprocess_exec(
        node,
        str(SCRIPT),
        server.url,
        *keys,
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(120):
        out, err = await script.communicate()
    assert script.returncode == 0, err.decode()
    results: dict[str, Any] = json.loads(out)
    return results


async def test_the_js_sdk_uses_the_store_and_crons_per_tenant(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    results = await js_results(platform_server, admin)

    item = results["item"]
    assert (item["namespace"], item["key"], item["value"]) == (
        ["users", "ada", "prefs"],
        "theme",
        {"color": "teal"},
    )
    assert [i["namespace"] for i in results["red"]["items"]] == [["users", "bob", "prefs"]]
    assert sorted(results["namespaces"]["namespaces"]) == [["users", "ada"], ["users", "bob"]]
    assert results["theirItem"] is None
    assert results["theirSearch"]["items"] == []
    assert results["deleted"] is None

    crons = results["crons"]
    assert crons["daily"]["thread_id"] is None
    assert crons["daily"]["next_run_date"].endswith("T09:00:00+00:00")
    assert crons["onThread"]["thread_id"] == crons["threadId"]
    assert [c["cron_id"] for c in results["found"]] == [crons["daily"]["cron_id"]]
    assert results["count"] == 1
    assert (results["updated"]["schedule"], results["updated"]["enabled"]) == ("15 10 * * *", False)
    assert results["theirCount"] == 0
    assert [c["cron_id"] for c in results["left"]] == [crons["onThread"]["cron_id"]]
