"""``/store`` through the LangGraph SDK against a real ``plait serve``: items per tenant,
and the same items through ``get_store()`` in a python node."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx
import psycopg
import pytest

from tests.integration.server.harness import Cluster
from tests.integration.server.platform.conftest import new_tenant, sdk

pytestmark = pytest.mark.postgres


async def test_items_put_get_search_list_delete(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    async with sdk(platform_server, await new_tenant(admin)) as client:
        await client.store.put_item(["users", "ada", "prefs"], "theme", {"color": "teal"})
        await client.store.put_item(["users", "ada", "facts"], "lang", {"name": "python"})
        await client.store.put_item(["users", "bob", "prefs"], "theme", {"color": "red"})

        item = await client.store.get_item(["users", "ada", "prefs"], "theme")
        assert item["namespace"] == ["users", "ada", "prefs"]
        assert (item["key"], item["value"]) == ("theme", {"color": "teal"})
        assert item["created_at"] and item["updated_at"]

        await client.store.put_item(["users", "ada", "prefs"], "theme", {"color": "navy"})
        replaced = await client.store.get_item(["users", "ada", "prefs"], "theme")
        assert replaced["value"] == {"color": "navy"}

        under_ada = await client.store.search_items(["users", "ada"])
        assert sorted(i["key"] for i in under_ada["items"]) == ["lang", "theme"]
        red = await client.store.search_items(["users"], filter={"color": "red"})
        assert [(i["namespace"], i["value"]) for i in red["items"]] == [
            (["users", "bob", "prefs"], {"color": "red"})
        ]

        listed = await client.store.list_namespaces(prefix=["users"])
        assert sorted(listed["namespaces"]) == [
            ["users", "ada", "facts"],
            ["users", "ada", "prefs"],
            ["users", "bob", "prefs"],
        ]
        cut = await client.store.list_namespaces(prefix=["users"], max_depth=2)
        assert sorted(cut["namespaces"]) == [["users", "ada"], ["users", "bob"]]
        prefs = await client.store.list_namespaces(suffix=["prefs"])
        assert sorted(prefs["namespaces"]) == [["users", "ada", "prefs"], ["users", "bob", "prefs"]]

        await client.store.delete_item(["users", "ada", "prefs"], "theme")
        assert await client.store.get_item(["users", "ada", "prefs"], "theme") is None


async def test_tenants_do_not_see_each_others_items(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    async with (
        sdk(platform_server, await new_tenant(admin)) as first,
        sdk(platform_server, await new_tenant(admin)) as second,
    ):
        await first.store.put_item(["shared-name"], "k", {"owner": "first"})
        assert await second.store.get_item(["shared-name"], "k") is None
        assert (await second.store.search_items([]))["items"] == []
        assert (await second.store.list_namespaces())["namespaces"] == []

        # The same namespace and key in the second tenant is another item.
        await second.store.put_item(["shared-name"], "k", {"owner": "second"})
        await second.store.delete_item(["shared-name"], "k")
        kept = await first.store.get_item(["shared-name"], "k")
        assert kept["value"] == {"owner": "first"}
        assert (await first.store.list_namespaces())["namespaces"] == [["shared-name"]]


async def test_bad_namespaces_are_refused(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    # Plain HTTP: the SDK refuses a '.' in a label itself, before sending anything.
    headers = {"x-api-key": await new_tenant(admin)}
    async with httpx.AsyncClient(base_url=platform_server.url, headers=headers) as http:
        body = {"namespace": ["a.b"], "key": "k", "value": {}}
        dotted = await http.put("/store/items", json=body)
        assert dotted.status_code == 422
        assert "contains '.'" in dotted.json()["detail"]
        empty = await http.put("/store/items", json={"namespace": [], "key": "k", "value": {}})
        assert empty.status_code == 422
        assert "namespace" in empty.json()["detail"]
        unnamed = await http.get("/store/items", params={"namespace": "a..b", "key": "k"})
        assert unnamed.status_code == 422
        assert "namespace=users.u-1" in unnamed.json()["detail"]


async def test_python_nodes_and_tools_read_and_write_their_tenants_store(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    async with (
        sdk(platform_server, await new_tenant(admin)) as first,
        sdk(platform_server, await new_tenant(admin)) as second,
    ):
        # Written through the API, read by the node (and the other way round below).
        await first.store.put_item(["notes", "ada"], "earlier", {"text": "likes tea"})

        state = await first.runs.wait(None, "store-notes", input={"user": "ada", "note": "bakes"})
        assert state["notes"] == ["likes tea", "bakes"]
        assert state["counted"] == 2  # the python tool (async) reads what the node wrote
        # Another thread of the same tenant sees the notes: the store outlives threads.
        again = await first.runs.wait(None, "store-notes", input={"user": "ada", "note": "sings"})
        assert again["notes"] == ["likes tea", "bakes", "sings"]

        # The other tenant's run starts from nothing, under the same namespace.
        theirs = await second.runs.wait(None, "store-notes", input={"user": "ada", "note": "hi"})
        assert (theirs["notes"], theirs["counted"]) == (["hi"], 1)

        written = await first.store.search_items(["notes", "ada"], limit=100)
        assert sorted(i["value"]["text"] for i in written["items"]) == [
            "bakes",
            "likes tea",
            "sings",
        ]


async def test_info_says_the_store_is_there(admin: httpx.AsyncClient) -> None:
    info = (await admin.get("/info")).json()
    assert info["flags"]["store"] is True


async def test_an_item_past_its_ttl_is_gone(
    platform_server: Cluster, admin: httpx.AsyncClient, platform_database_url: str
) -> None:
    async with sdk(platform_server, await new_tenant(admin)) as client:
        # 0.1 minutes: 6 seconds, ample for the read just after on a busy machine.
        await client.store.put_item(["tmp"], "brief", {"v": 1}, ttl=0.1)
        await client.store.put_item(["tmp"], "kept", {"v": 2})
        assert (await client.store.get_item(["tmp"], "brief"))["value"] == {"v": 1}

        async def expired() -> bool:
            return await client.store.get_item(["tmp"], "brief", refresh_ttl=False) is None

        async def swept() -> bool:
            return await stored_keys(platform_database_url, "brief") == 0

        await until(expired)
        await until(swept)
        assert (await client.store.get_item(["tmp"], "kept"))["value"] == {"v": 2}


async def until(check: Callable[[], Awaitable[bool]]) -> None:
    """Wait until ``check()`` holds: a bounded poll, as expiry and the workers' sweep
    have no event to wait on."""
    async with asyncio.timeout(30):
        while True:
            if await check():
                return
            await asyncio.sleep(0.2)


async def stored_keys(database_url: str, key: str) -> int:
    """Rows of LangGraph's ``store`` table with ``key``, any tenant (expired ones too)."""
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        cursor = await conn.execute("SELECT count(*) FROM store WHERE key = %s", (key,))
        row = await cursor.fetchone()
    return int(row[0]) if row else 0
