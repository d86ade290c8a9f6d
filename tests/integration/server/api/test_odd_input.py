"""Odd input gets a clear 4xx in Plait's words, at the edge (issue 14, items 4, 5 and 7).

Before: NaN, Infinity and NUL characters reached Postgres and came back as its
raw text (``invalid input syntax for type json DETAIL: Token "NaN" is
invalid``, ``unnamed portal parameter $2``); an empty ``Idempotency-Key`` was
stored as a key; ``checkpoint_id``, ``interrupt_before`` and ``after_seconds``
were accepted and ignored; ``Last-Event-ID`` past the end of a run's journal
answered nothing (a finished run) or nothing for 7 s (a live one); no body
was too large.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from plait.engine.store.pool import open_pool
from tests.integration.server.api.conftest import (
    REFUND_HIGH,
    SUMMARY_INPUT,
    assert_problem,
    new_thread,
    parse_sse,
)

POSTGRES_WORDS = ("invalid input syntax", "portal parameter", "DETAIL", "jsonb")


def plain_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """A problem in Plait's words: no text of Postgres in it."""
    body = assert_problem(response, status)
    assert not any(word in body["detail"] for word in POSTGRES_WORDS), body["detail"]
    return body


def raw(client: httpx.AsyncClient, path: str, body: bytes) -> Any:
    """POST ``body`` as JSON bytes exactly as given (json.dumps would refuse or alter it)."""
    return client.post(path, content=body, headers={"content-type": "application/json"})


# --------------------------------------------------------------------------- JSON bodies


@pytest.mark.parametrize(
    ("literal", "words"),
    [("NaN", "NaN is not a JSON number"), ("-Infinity", "-Infinity"), ("1e999", "too large")],
)
async def test_numbers_json_has_not_are_refused_naming_the_field(
    client: httpx.AsyncClient, literal: str, words: str
) -> None:
    thread_id = await new_thread(client)
    body = b'{"assistant_id": "summarize", "input": {"text": ' + literal.encode() + b"}}"
    problem = plain_problem(await raw(client, f"/threads/{thread_id}/runs", body), 422)
    assert "/input/text" in problem["detail"] and words in problem["detail"]
    assert problem["errors"][0]["pointer"] == "/input/text"


async def test_nul_characters_are_refused_naming_the_field(client: httpx.AsyncClient) -> None:
    problem = plain_problem(await raw(client, "/threads", b'{"metadata": {"k": "a\\u0000b"}}'), 422)
    assert "/metadata/k" in problem["detail"] and "NUL" in problem["detail"]
    in_key = await raw(client, "/threads", b'{"metadata": {"a\\u0000": 1}}')
    assert "/metadata/a" in plain_problem(in_key, 422)["detail"]
    # An escaped backslash before `u0000` is no NUL.
    fine = await raw(client, "/threads", b'{"metadata": {"k": "a\\\\u0000b"}}')
    assert fine.status_code == 200, fine.text


async def test_nul_in_the_url_is_refused(client: httpx.AsyncClient) -> None:
    assert "NUL" in plain_problem(await client.get("/threads/a%00b"), 422)["detail"]
    assert "NUL" in plain_problem(await client.get("/threads/x/runs?status=%00"), 422)["detail"]


async def test_unpaired_surrogates_and_invalid_json_are_refused(client: httpx.AsyncClient) -> None:
    surrogate = await raw(client, "/threads", b'{"metadata": {"k": "\\ud800"}}')
    assert "surrogate" in plain_problem(surrogate, 422)["detail"]
    broken = await raw(client, "/threads", b'{"metadata": ')
    assert "not valid JSON" in plain_problem(broken, 422)["detail"]


async def test_json_nested_too_deeply_is_refused(client: httpx.AsyncClient) -> None:
    deep = b'{"metadata": {"k": ' + b"[" * 150 + b"]" * 150 + b"}}"
    assert "100 levels" in plain_problem(await raw(client, "/threads", deep), 422)["detail"]
    deeper = b"[" * 5000 + b"]" * 5000  # past orjson's own limit too
    assert "levels" in plain_problem(await raw(client, "/threads", deeper), 422)["detail"]


async def test_a_body_over_the_limit_is_413_with_or_without_a_length(
    client: httpx.AsyncClient,
) -> None:
    big = b'{"metadata": {"k": "' + b"x" * (3 * 1024 * 1024) + b'"}}'
    problem = plain_problem(await raw(client, "/threads", big), 413)
    assert "PLAIT_MAX_BODY_BYTES" in problem["detail"]

    async def chunks() -> Any:
        for _ in range(48):
            yield b"x" * 65536

    chunked = await client.post("/graphs/validate", content=chunks())
    plain_problem(chunked, 413)


# --------------------------------------------------------------------------- Idempotency-Key


@pytest.mark.parametrize(
    ("key", "words"), [("", "is empty"), (" ", "is empty"), ("k" * 256, "256 characters")]
)
async def test_bad_idempotency_keys_are_refused(
    idle_client: httpx.AsyncClient, key: str, words: str
) -> None:
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT}
    response = await idle_client.post("/runs", json=body, headers={"Idempotency-Key": key})
    assert words in plain_problem(response, 422)["detail"]


async def test_an_empty_key_never_becomes_a_key(idle_client: httpx.AsyncClient) -> None:
    """Before: after one stateless run with an empty key, every later one got "already used"."""
    for text in ("first", "second"):
        body = {"assistant_id": "summarize", "input": {"text": text}}
        response = await idle_client.post("/runs", json=body, headers={"Idempotency-Key": ""})
        assert "Idempotency-Key" in plain_problem(response, 422)["detail"]
    keyed = {"assistant_id": "summarize", "input": {"text": "third"}}
    key = {"Idempotency-Key": f"k-{uuid.uuid4()}"}
    assert (await idle_client.post("/runs", json=keyed, headers=key)).status_code == 200


# --------------------------------------------------------------------------- run options


async def test_input_of_another_type_is_refused_before_a_run_exists(
    idle_client: httpx.AsyncClient,
) -> None:
    thread_id = await new_thread(idle_client)
    body = {"assistant_id": "refund-approval", "input": {**REFUND_HIGH, "amount": "lots"}}
    refused = await idle_client.post(f"/threads/{thread_id}/runs/wait", json=body)
    detail = plain_problem(refused, 422)["detail"]
    assert detail == (
        "input field amount is a string ('lots'); refund-approval's state declares it a number"
    )
    runs = await idle_client.get(f"/threads/{thread_id}/runs")
    assert runs.json() == []


async def test_interrupt_names_must_be_nodes_of_the_graph(idle_client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(idle_client)
    base = {"assistant_id": "summarize", "input": SUMMARY_INPUT}
    for field in ("interrupt_before", "interrupt_after"):
        refused = await idle_client.post(
            f"/threads/{thread_id}/runs", json={**base, field: ["nope", "summarize"]}
        )
        detail = plain_problem(refused, 422)["detail"]
        assert field in detail and "'nope'" in detail and "clean, summarize" in detail
    stateless = await idle_client.post("/runs", json={**base, "interrupt_before": ["nope"]})
    plain_problem(stateless, 422)
    for names in (["summarize"], "*"):
        accepted = await idle_client.post(
            f"/threads/{thread_id}/runs",
            json={**base, "interrupt_after": names, "multitask_strategy": "enqueue"},
        )
        assert accepted.status_code == 200, accepted.text


async def test_interrupt_before_is_honoured(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT, "interrupt_before": ["summarize"]}
    assert (await client.post(f"/threads/{thread_id}/runs/wait", json=body)).status_code == 200
    state = (await client.get(f"/threads/{thread_id}/state")).json()
    assert state["next"] == ["summarize"]


async def test_checkpoint_id_must_exist_on_the_thread(client: httpx.AsyncClient) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT}
    assert (await client.post(f"/threads/{thread_id}/runs/wait", json=body)).status_code == 200
    for field in ({"checkpoint_id": "garbage"}, {"checkpoint": {"checkpoint_id": "garbage"}}):
        refused = await client.post(f"/threads/{thread_id}/runs", json={**body, **field})
        detail = plain_problem(refused, 422)["detail"]
        assert "'garbage'" in detail and "history" in detail
    stateless = await client.post("/runs", json={**body, "checkpoint_id": "garbage"})
    assert "stateless" in plain_problem(stateless, 422)["detail"]
    history = (await client.post(f"/threads/{thread_id}/history", json={"limit": 5})).json()
    known = history[-1]["checkpoint"]["checkpoint_id"]
    again = await client.post(f"/threads/{thread_id}/runs", json={**body, "checkpoint_id": known})
    assert again.status_code == 200, again.text


async def test_after_seconds_delays_the_run(client: httpx.AsyncClient, database_url: str) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT, "after_seconds": 1.5}
    run = (await client.post(f"/threads/{thread_id}/runs", json=body)).json()
    joined = await client.get(f"/threads/{thread_id}/runs/{run['run_id']}/join")
    assert joined.status_code == 200 and "summary" in joined.json()
    async with await open_pool(database_url, max_size=1) as pool, pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT extract(epoch FROM started_at - created_at) AS waited "
            "FROM plait_runs WHERE run_id = %s",
            (run["run_id"],),
        )
        row = await cursor.fetchone()
    assert row is not None and float(row["waited"]) >= 1.5


# --------------------------------------------------------------------------- Last-Event-ID


async def test_last_event_id_past_a_finished_runs_end_answers_end(
    client: httpx.AsyncClient,
) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": "summarize", "input": SUMMARY_INPUT}
    frames, _ = parse_sse((await client.post(f"/threads/{thread_id}/runs/stream", json=body)).text)
    run_id, last = frames[0].data["run_id"], int(frames[-1].id or 0)
    for after in (last, last + 1, 10_000):
        rejoined = await client.get(
            f"/threads/{thread_id}/runs/{run_id}/stream", headers={"Last-Event-ID": str(after)}
        )
        again, _ = parse_sse(rejoined.text)
        assert [(frame.event, frame.id) for frame in again] == [("end", str(last))]


async def test_last_event_id_past_a_live_runs_journal_streams_what_comes_next(
    client: httpx.AsyncClient,
) -> None:
    thread_id = await new_thread(client)
    body = {"assistant_id": "refund-approval", "input": REFUND_HIGH, "after_seconds": 1.0}
    run = (await client.post(f"/threads/{thread_id}/runs", json=body)).json()
    stream = f"/threads/{thread_id}/runs/{run['run_id']}/stream"
    # Only its `metadata` (seq 1) exists while it waits; 500 is far past it.
    rejoined = await asyncio.wait_for(client.get(stream, headers={"Last-Event-ID": "500"}), 60)
    frames, _ = parse_sse(rejoined.text)
    assert frames[-1].event == "end"
    assert [int(frame.id or 0) for frame in frames] == list(range(2, len(frames) + 2))
    assert any(frame.event == "values" for frame in frames)
