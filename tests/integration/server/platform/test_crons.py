"""Crons against real ``plait serve`` / ``plait worker`` processes: the API through the
LangGraph SDK, per tenant; a schedule fired once per time by two workers, and again
after every worker was replaced."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError

from tests.integration.server.harness import Cluster
from tests.integration.server.platform.conftest import new_tenant, sdk
from tests.integration.server.platform.receiver import Receiver

pytestmark = pytest.mark.postgres

NOTE = {"user": "cron", "note": "tick"}


async def test_crons_are_created_found_changed_and_deleted_per_tenant(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    async with (
        sdk(platform_server, await new_tenant(admin)) as mine,
        sdk(platform_server, await new_tenant(admin)) as theirs,
    ):
        thread = await mine.threads.create()
        daily = await mine.crons.create(
            "store-notes", schedule="0 9 * * *", input=NOTE, metadata={"team": "ops"}
        )
        assert daily["thread_id"] is None and daily["enabled"] is True
        assert daily["payload"]["input"] == NOTE
        assert daily["next_run_date"].endswith("T09:00:00+00:00")
        on_thread = await mine.crons.create_for_thread(
            thread["thread_id"],
            "store-notes",
            schedule="30 8 * * 1-5",
            timezone="Europe/Paris",
            input=NOTE,
        )
        assert on_thread["thread_id"] == thread["thread_id"]
        assert on_thread["timezone"] == "Europe/Paris"

        assert await mine.crons.count() == 2
        assert await mine.crons.count(thread_id=thread["thread_id"]) == 1
        found = await mine.crons.search(metadata={"team": "ops"})
        assert [cron["cron_id"] for cron in found] == [daily["cron_id"]]
        # Read back as sent: jsonb would have put `note` first.
        assert list(found[0]["payload"]["input"]) == ["user", "note"]

        changed = await mine.crons.update(daily["cron_id"], schedule="15 10 * * *", enabled=False)
        assert (changed["schedule"], changed["enabled"]) == ("15 10 * * *", False)
        assert changed["next_run_date"].endswith("T10:15:00+00:00")
        assert changed["payload"]["input"] == NOTE  # what was not sent stays
        enabled = await mine.crons.search(enabled=True)
        assert [cron["cron_id"] for cron in enabled] == [on_thread["cron_id"]]

        # Another tenant sees none of them, and cannot change or delete them.
        assert await theirs.crons.count() == 0
        assert await theirs.crons.search() == []
        with pytest.raises(NotFoundError):
            await theirs.crons.update(daily["cron_id"], enabled=True)
        with pytest.raises(NotFoundError):
            await theirs.crons.delete(daily["cron_id"])

        await mine.crons.delete(daily["cron_id"])
        with pytest.raises(NotFoundError):
            await mine.crons.delete(daily["cron_id"])
        assert [cron["cron_id"] for cron in await mine.crons.search()] == [on_thread["cron_id"]]

        # A deleted thread takes its crons along.
        await mine.threads.delete(thread["thread_id"])
        assert await mine.crons.count() == 0


async def test_bad_crons_are_refused(platform_server: Cluster, admin: httpx.AsyncClient) -> None:
    async with sdk(platform_server, await new_tenant(admin)) as client:
        with pytest.raises(UnprocessableEntityError, match="not a cron expression"):
            await client.crons.create("store-notes", schedule="every day")
        with pytest.raises(UnprocessableEntityError, match="not an IANA time zone"):
            await client.crons.create("store-notes", schedule="0 9 * * *", timezone="Mars/Olympus")
        with pytest.raises(NotFoundError):
            await client.crons.create("no-such-graph", schedule="0 9 * * *")
        with pytest.raises(NotFoundError):
            await client.crons.create_for_thread(
                "no-such-thread", "store-notes", schedule="* * * * *"
            )
        assert await client.crons.count() == 0


async def test_a_cron_takes_a_priority_and_expires_in_but_not_one_expires_at(
    admin: httpx.AsyncClient,
) -> None:
    body = {"assistant_id": "store-notes", "schedule": "0 9 * * *", "input": NOTE}
    refused = await admin.post("/runs/crons", json={**body, "expires_at": "2099-01-01T00:00:00Z"})
    assert refused.status_code == 422
    assert "give expires_in" in refused.json()["detail"]
    created = await admin.post("/runs/crons", json={**body, "priority": 7, "expires_in": "5m"})
    assert created.status_code == 200, created.text
    cron = created.json()
    assert (cron["payload"]["priority"], cron["payload"]["expires_in"]) == (7, 300.0)
    assert (await admin.delete(f"/runs/crons/{cron['cron_id']}")).status_code in (200, 204)


async def test_info_says_crons_are_there(admin: httpx.AsyncClient) -> None:
    assert (await admin.get("/info")).json()["flags"]["crons"] is True


async def test_two_workers_fire_each_time_once_and_a_restart_keeps_the_schedule(
    senders: tuple[Cluster, str], client: LangGraphClient, receiver: Receiver
) -> None:
    running, _ = senders
    thread = await client.threads.create()
    # Every 2 seconds (six fields: seconds last); each run's end is reported to the receiver.
    cron = await client.crons.create_for_thread(
        thread["thread_id"],
        "store-notes",
        schedule="* * * * * */2",
        input=NOTE,
        webhook=receiver.url("/ok/cron"),
    )
    await asyncio.to_thread(receiver.wait_for_deliveries, "/ok/cron", 3)

    # Every worker is replaced: the schedule lives in Postgres, and goes on.
    for worker in running.workers:
        worker.stop()
    running.start("worker-3", "worker", "--specs", str(running.specs_dir))
    before = len({call.delivery_id for call in receiver.of("/ok/cron")})
    await asyncio.to_thread(receiver.wait_for_deliveries, "/ok/cron", before + 2)
    await client.crons.delete(cron["cron_id"])

    runs = await client.runs.list(thread["thread_id"], limit=200)
    times = Counter(run["metadata"]["plait_cron"]["scheduled_at"] for run in runs)
    assert len(runs) >= 5
    assert [time for time, fired in times.items() if fired > 1] == [], "a time fired twice"
    assert {run["metadata"]["plait_cron"]["cron_id"] for run in runs} == {cron["cron_id"]}
    # Each run's end once per delivery (a worker stopped mid-call may have sent one twice).
    calls = receiver.of("/ok/cron")
    assert {call.body["status"] for call in calls} == {"success"}
    deliveries = {call.delivery_id: call.body["run_id"] for call in calls}
    assert len(set(deliveries.values())) == len(deliveries)


async def gone(client: LangGraphClient, thread_id: str) -> None:
    """Wait until the thread is deleted (a worker sweeps every few seconds)."""
    async with asyncio.timeout(30):
        while True:
            try:
                await client.threads.get(thread_id)
            except NotFoundError:
                return
            await asyncio.sleep(0.2)  # a bounded poll: deletion has no event to wait on


async def test_a_cron_without_a_thread_deletes_each_runs_thread_unless_kept(
    senders: tuple[Cluster, str], client: LangGraphClient, receiver: Receiver
) -> None:
    kept = await client.crons.create(
        "store-notes",
        schedule="* * * * * */2",
        input=NOTE,
        webhook=receiver.url("/ok/kept"),
        on_run_completed="keep",
    )
    [kept_id] = await asyncio.to_thread(receiver.wait_for_deliveries, "/ok/kept", 1)
    await client.crons.delete(kept["cron_id"])
    kept_thread = next(
        call.body["thread_id"] for call in receiver.of("/ok/kept") if call.delivery_id == kept_id
    )
    # Started after the kept run ended: a sweep that deletes its thread saw the kept one too.
    dropped = await client.crons.create(
        "store-notes", schedule="* * * * * */2", input=NOTE, webhook=receiver.url("/ok/dropped")
    )
    [dropped_id] = await asyncio.to_thread(receiver.wait_for_deliveries, "/ok/dropped", 1)
    await client.crons.delete(dropped["cron_id"])
    first = next(call for call in receiver.of("/ok/dropped") if call.delivery_id == dropped_id)
    assert first.body["status"] == "success"

    await gone(client, first.body["thread_id"])
    still = await client.threads.get(kept_thread)
    assert still["metadata"]["plait_cron"] == {
        "cron_id": kept["cron_id"],
        "on_run_completed": "keep",
    }
