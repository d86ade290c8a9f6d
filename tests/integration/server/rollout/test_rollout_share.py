"""A canary rollout across processes (decision 90): ``plait serve --no-workers`` and two
``plait worker`` processes on a database of their own, ``rollout-demo`` at 1.0.0
(stable) and 1.1.0 (canary, 25%).

What a person rolling out a version checks: about a quarter of new threads ran
the canary (measured over 400 threads), each run ran the version its thread is
pinned to (its reply names the version that answered, and the run row records
it), both workers ran them; after a roll back (CLI) new threads all start on
the stable version while threads that started on the canary, parked ones
included, stay on it; after a promote (API) new threads all start on the new
stable version while older threads stay on theirs.

Tolerance: the canary's part of n = 400 independent thread ids is binomial
with p = 0.25, sd = sqrt(p(1-p)/n) = 2.17 points; 25 ± 7 points is 3.2 sd,
so a correct rollout fails this bound about once in 800 runs of the test.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from plait.server.graphs.rollouts import canary_bucket
from tests.conftest import fresh_database
from tests.integration.server.harness import PLAIT, REPO, Cluster, cluster
from tests.integration.server.rollout.metrics_text import samples

pytestmark = pytest.mark.postgres

HERE = Path(__file__).parent
GRAPH = "rollout-demo"
NEWER = (HERE / "versions" / "rollout-demo-1.1.0.yaml").read_text(encoding="utf-8")
THREADS = 400
SHARE = 25
TOLERANCE_POINTS = 7
#: Runs in flight at once from this client.
IN_FLIGHT = 16


@pytest.fixture(scope="module")
def served(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Cluster, str]]:
    """The API and two workers on a fresh database: ``(cluster, database_url)``."""
    with (
        fresh_database(postgres_server_url) as url,
        cluster(
            url,
            tmp_path_factory.mktemp("rollout"),
            [HERE / "specs" / "rollout-demo.yaml"],
            serve_args=["--no-workers"],
            workers=2,
        ) as running,
    ):
        yield running, url


async def _start(http: httpx.AsyncClient, thread: str, *, park: bool = False) -> dict[str, Any]:
    """The first run of a new thread, by the graph's bare name, to its end: its values."""
    response = await http.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": GRAPH, "input": {"park": park}, "if_not_exists": "create"},
    )
    assert response.status_code == 200, response.text
    values: dict[str, Any] = response.json()
    return values


def _answered(values: dict[str, Any]) -> str:
    """The version whose scripted reply this is (each version names itself)."""
    reply = values["reply"]
    assert isinstance(reply, str) and reply.startswith("answered by "), values
    return reply.removeprefix("answered by ")


async def _versions_of_new_threads(http: httpx.AsyncClient, count: int) -> dict[str, str]:
    """``count`` new threads, one run each: thread id -> the version that answered."""
    limit = asyncio.Semaphore(IN_FLIGHT)

    async def one(thread: str) -> tuple[str, str]:
        async with limit:
            return thread, _answered(await _start(http, thread))

    return dict(await asyncio.gather(*(one(str(uuid.uuid4())) for _ in range(count))))


async def _again(http: httpx.AsyncClient, thread: str) -> str:
    """A second run on ``thread`` by the bare name: the version that answered."""
    response = await http.post(
        f"/threads/{thread}/runs/wait", json={"assistant_id": GRAPH, "input": {"park": False}}
    )
    assert response.status_code == 200, response.text
    return _answered(response.json())


async def _resume(http: httpx.AsyncClient, thread: str, interrupt: str) -> dict[str, Any]:
    response = await http.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": GRAPH, "command": {"resume": {interrupt: {"decision": "approve"}}}},
    )
    assert response.status_code == 200, response.text
    values: dict[str, Any] = response.json()
    return values


def _recorded(database_url: str, threads: list[str]) -> dict[str, set[str]]:
    """Per thread, the versions its runs recorded and the version it is pinned to."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT r.thread_id, r.version, t.version FROM plait_runs r "
            "JOIN plait_threads t USING (thread_id) WHERE r.thread_id = ANY(%s)",
            (threads,),
        ).fetchall()
    found: dict[str, set[str]] = {}
    for thread, ran, pinned in rows:
        found.setdefault(thread, set()).update({ran, f"pinned {pinned}"})
    return found


def _workers_that_ran(database_url: str, threads: list[str]) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(DISTINCT lease_owner) FROM plait_runs WHERE thread_id = ANY(%s)",
            (threads,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _cli(running: Cluster, *args: str, exit_code: int = 0) -> str:
    """``plait rollout ARGS`` on the cluster's database: its output (stderr on a failure)."""
    done = subprocess.run(
        [*PLAIT, "rollout", *args],
        cwd=REPO,
        env=running.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == exit_code, done.stderr
    return done.stdout if exit_code == 0 else done.stderr


def _thread_in(bucket_below: bool) -> str:
    """A new thread id whose hash puts it on the canary (``True``) or the stable version."""
    while True:
        thread = str(uuid.uuid4())
        if (canary_bucket(thread) < SHARE) == bucket_below:
            return thread


async def test_canary_share_pinning_rollback_and_promote(served: tuple[Cluster, str]) -> None:
    running, database_url = served
    async with httpx.AsyncClient(base_url=running.url, timeout=60.0) as http:
        published = await http.post(
            "/graphs", content=NEWER, headers={"content-type": "application/yaml"}
        )
        assert published.status_code == 201, published.text
        started = await http.put(
            f"/graphs/{GRAPH}/rollout", json={"stable": "1.0.0", "canary": "1.1.0", "share": SHARE}
        )
        assert started.status_code == 200, started.text

        # A thread parked on each version before anything changes.
        parked = {}
        for on_canary, version in ((True, "1.1.0"), (False, "1.0.0")):
            thread = _thread_in(on_canary)
            values = await _start(http, thread, park=True)
            assert _answered(values) == version
            parked[version] = (thread, values["__interrupt__"][0]["id"])

        ran = await _versions_of_new_threads(http, THREADS)
        on_canary = sorted(thread for thread, version in ran.items() if version == "1.1.0")
        share = 100 * len(on_canary) / THREADS
        print(f"canary share over {THREADS} new threads: {share:.2f}% (set {SHARE}%)")
        assert abs(share - SHARE) <= TOLERANCE_POINTS
        assert set(ran.values()) == {"1.0.0", "1.1.0"}
        # The same thread always gets the same answer: the hash of its id.
        assert all((canary_bucket(t) < SHARE) == (v == "1.1.0") for t, v in ran.items())
        # Each run ran, and recorded, the version its thread is pinned to.
        recorded = _recorded(database_url, list(ran))
        assert recorded == {thread: {v, f"pinned {v}"} for thread, v in ran.items()}
        assert _workers_that_ran(database_url, list(ran)) == 2

        shown = (await http.get(f"/graphs/{GRAPH}/rollout")).json()
        counted = {item["version"]: (item["role"], item["threads"]) for item in shown["versions"]}
        assert counted == {
            "1.1.0": ("canary", len(on_canary) + 1),
            "1.0.0": ("stable", THREADS - len(on_canary) + 1),
        }

        # Roll back (CLI): new threads start on 1.0.0; canary threads stay on 1.1.0.
        assert '"canary": null' in _cli(running, "rollback", GRAPH)
        after_rollback = await _versions_of_new_threads(http, 40)
        assert set(after_rollback.values()) == {"1.0.0"}
        assert await _again(http, on_canary[0]) == "1.1.0"
        thread, interrupt = parked["1.1.0"]
        resumed = await _resume(http, thread, interrupt)
        assert (_answered(resumed), resumed["decision"]["decision"]) == ("1.1.0", "approve")
        assert _recorded(database_url, [thread]) == {thread: {"1.1.0", "pinned 1.1.0"}}

        # Canary again, then promote (API): every new thread starts on 1.1.0;
        # threads on 1.0.0, parked ones included, stay on it.
        again = await http.put(f"/graphs/{GRAPH}/rollout", json={"canary": "1.1.0", "share": 50})
        assert again.json()["stable"] == "1.0.0"
        promoted = await http.post(f"/graphs/{GRAPH}/rollout/promote")
        assert promoted.json() | {"updated_at": None} == {
            "graph": GRAPH,
            "stable": "1.1.0",
            "canary": None,
            "share": 0,
            "updated_at": None,
        }
        after_promote = await _versions_of_new_threads(http, 40)
        assert set(after_promote.values()) == {"1.1.0"}
        on_stable = next(t for t, v in ran.items() if v == "1.0.0")
        assert await _again(http, on_stable) == "1.0.0"
        thread, interrupt = parked["1.0.0"]
        resumed = await _resume(http, thread, interrupt)
        assert (_answered(resumed), resumed["decision"]["decision"]) == ("1.0.0", "approve")

        text = (await http.get("/metrics")).text
        assert samples(text, "plait_rollout_canary_share", graph=GRAPH) == [
            ({"tenant": "default", "graph": GRAPH, "stable": "1.1.0", "canary": ""}, 0.0)
        ]
        # Runs the rollout started on the canary: the parked thread's and the measured ones.
        assert samples(
            text, "plait_runs_started_total", graph=GRAPH, version="1.1.0", rollout="canary"
        ) == [({"graph": GRAPH, "version": "1.1.0", "rollout": "canary"}, len(on_canary) + 1.0)]
        shown = _cli(running, "show", GRAPH)
        assert '"stable": "1.1.0"' in shown
        refused = _cli(running, "set", GRAPH, "--canary", "1.1.0", "--share", "5", exit_code=2)
        assert "the canary and the stable version are both 1.1.0" in refused
        assert "no canary to promote" in _cli(running, "promote", GRAPH, exit_code=2)
