"""Run webhooks against real ``plait serve`` / ``plait worker`` processes: each run's end
reaches a receiver on 127.0.0.1, signed, retried after a failure, and sent again with
the same delivery id when the worker sending it is killed mid-call (at least once)."""

from __future__ import annotations

import asyncio

import httpx
import psycopg
import pytest
from langgraph_sdk.client import LangGraphClient

from tests.integration.server.harness import Cluster
from tests.integration.server.platform.conftest import new_tenant, sdk
from tests.integration.server.platform.receiver import Call, Receiver

pytestmark = pytest.mark.postgres


def sender_of(running: Cluster, database_url: str, delivery_id: str) -> int:
    """The pid of the worker that holds ``delivery_id`` now (worker ids are host:pid:random)."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT lease_owner FROM plait_webhook_deliveries WHERE delivery_id = %s",
            (delivery_id,),
        ).fetchone()
    assert row is not None and row[0], f"delivery {delivery_id} is not held by a sender"
    pid = int(str(row[0]).split(":")[1])
    assert pid in [worker.pid for worker in running.workers], (row, running.workers)
    return pid


def one_delivery(calls: list[Call]) -> Call:
    """The one delivery behind ``calls`` (a receiver dedupes on the delivery id)."""
    assert len({call.delivery_id for call in calls}) == 1, calls
    assert all(call.signed for call in calls), "a call's X-Plait-Signature does not verify"
    return calls[-1]


async def test_each_run_end_arrives_once_per_delivery_even_when_its_sender_dies(
    senders: tuple[Cluster, str], client: LangGraphClient, receiver: Receiver
) -> None:
    running, database_url = senders
    thread = await client.threads.create()

    # 1. The first call of this run's webhook is held; its sender is killed mid-call.
    held = await client.runs.wait(
        thread["thread_id"],
        "store-notes",
        input={"user": "ada", "note": "held"},
        webhook=receiver.url("/hold/a"),
    )
    assert held["notes"] == ["held"]
    [first] = await asyncio.to_thread(receiver.wait_for, "/hold/a", 1)
    victim = next(
        worker
        for worker in running.workers
        if worker.pid == sender_of(running, database_url, first.delivery_id)
    )
    victim.kill()
    # Killed mid-call: it had recorded no outcome of that attempt (no timeout, no failure).
    assert first.delivery_id not in victim.log()
    # The other worker takes it once the dead sender's claim expires: the same delivery.
    again = await asyncio.to_thread(receiver.wait_for, "/hold/a", 2, 60.0)
    delivered = one_delivery(again)
    assert [call.attempt for call in again] == [1, 2]

    # 2. A receiver that fails once gets the same delivery again, after a back-off.
    # 3. A plain one gets it once.
    failing = await client.runs.create(
        None,
        "store-notes",
        input={"user": "bob", "note": "retried"},
        webhook=receiver.url("/fail-once/b"),
    )
    plain = await client.runs.create(
        thread["thread_id"],
        "store-notes",
        input={"user": "cy", "note": "plain"},
        webhook=receiver.url("/ok/c"),
    )
    retried = one_delivery(await asyncio.to_thread(receiver.wait_for, "/fail-once/b", 2))
    assert [call.attempt for call in receiver.of("/fail-once/b")] == [1, 2]
    once = one_delivery(await asyncio.to_thread(receiver.wait_for, "/ok/c", 1))

    # The body is the run as it ended, with the thread's values.
    assert delivered.body["thread_id"] == thread["thread_id"]
    assert delivered.body["status"] == "success"
    assert delivered.body["values"]["notes"] == ["held"]
    assert delivered.body["webhook_sent_at"]
    assert retried.body["run_id"] == failing["run_id"]
    assert retried.body["values"]["notes"] == ["retried"]
    assert (once.body["run_id"], once.body["status"]) == (plain["run_id"], "success")
    assert once.body["values"]["notes"] == ["plain"]
    # In the order the API gives a run (the delivery keeps it: jsonb put `error` first).
    assert list(once.body)[:3] == ["run_id", "thread_id", "assistant_id"]
    # Three runs, three deliveries, each recorded as delivered.
    ids = {delivered.delivery_id, retried.delivery_id, once.delivery_id}
    assert len(ids) == 3
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT delivery_id::text, attempts, delivered_at IS NOT NULL "
            "FROM plait_webhook_deliveries ORDER BY created_at"
        ).fetchall()
    assert {row[0] for row in rows} == ids and all(row[2] for row in rows), rows


async def test_private_addresses_are_refused(
    platform_server: Cluster, admin: httpx.AsyncClient
) -> None:
    key = await new_tenant(admin)
    async with (
        sdk(platform_server, key) as client,
        httpx.AsyncClient(base_url=platform_server.url, headers={"x-api-key": key}) as http,
    ):
        thread = await client.threads.create()
        cases = {
            "http://127.0.0.1:9/hook": "--webhook-allow-private",
            "http://10.1.2.3/hook": "--webhook-allow-private",
            "http://169.254.169.254/latest/meta-data": "--webhook-allow-private",
            "http://[::1]/hook": "--webhook-allow-private",
            "http://[::ffff:127.0.0.1]/hook": "--webhook-allow-private",
            "ftp://93.184.216.34/hook": "not an http:// or https:// URL",
        }
        for url, reason in cases.items():
            refused = await http.post(
                f"/threads/{thread['thread_id']}/runs",
                json={"assistant_id": "store-notes", "input": {}, "webhook": url},
            )
            assert refused.status_code == 422, (url, refused.text)
            assert reason in refused.json()["detail"], refused.json()
            assert refused.json()["errors"][0]["loc"] == ["body", "webhook"]
        # Nothing was queued for them.
        assert await client.runs.list(thread["thread_id"]) == []


async def test_a_worker_stopped_mid_call_records_the_answer_before_it_exits(
    senders: tuple[Cluster, str], client: LangGraphClient, receiver: Receiver
) -> None:
    running, database_url = senders
    await client.runs.wait(
        None, "store-notes", input={"user": "ada", "note": "slow"}, webhook=receiver.url("/slow/s")
    )
    [call] = await asyncio.to_thread(receiver.wait_for, "/slow/s", 1)
    sender = next(
        worker
        for worker in running.workers
        if worker.pid == sender_of(running, database_url, call.delivery_id)
    )
    await asyncio.to_thread(sender.stop)  # SIGTERM while the receiver takes its time
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT attempts, delivered_at IS NOT NULL, lease_owner FROM plait_webhook_deliveries "
            "WHERE delivery_id = %s",
            (call.delivery_id,),
        ).fetchone()
    # Delivered once: nothing is left for another worker to send again.
    assert row == (1, True, None), row
