"""Running a draft: unsaved spec text runs as its own assistant without publishing a version."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

import httpx

from tests.integration.server.api.conftest import (
    REFUND_HIGH,
    REPO,
    SUMMARY_INPUT,
    assert_problem,
    new_thread,
)

SUMMARIZE = (REPO / "specs" / "summarize.yaml").read_text(encoding="utf-8")
REFUND = (REPO / "specs" / "refund-approval.yaml").read_text(encoding="utf-8")
DRAFT_SUMMARY = "A draft that was never saved."


def draft_of_summarize(name: str = "summarize") -> str:
    """summarize with another scripted reply: a run shows which text ran."""
    text = SUMMARIZE.replace("name: summarize\n", f"name: {name}\n", 1)
    return text.replace(
        "summary: The customer reports a problem and asks for help.",
        f"summary: {DRAFT_SUMMARY}",
        1,
    )


async def test_a_draft_runs_without_becoming_a_version(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    folder_before = (specs_dir / "summarize.yaml").read_text(encoding="utf-8")
    versions_before = (await client.get("/graphs/summarize/versions")).json()

    created = await client.post("/drafts", json={"yaml": draft_of_summarize()})

    assert created.status_code == 201, created.text
    draft = created.json()
    assert draft["draft"] is True
    assert draft["name"] == "summarize"
    assert draft["spec_version"] == "1.0.0"
    assert re.fullmatch(r"1\.0\.0\+draft\.[0-9a-f]{12}", draft["version"])
    assert draft["version"].endswith(draft["digest"].removeprefix("sha256:")[:12])
    again = await client.post("/drafts", json={"yaml": draft_of_summarize()})
    assert again.status_code == 200
    assert again.json()["assistant_id"] == draft["assistant_id"]

    # Not published: not a version, not an assistant in the search, not in the folder.
    assert (await client.get("/graphs/summarize/versions")).json() == versions_before
    listed = {item["name"]: item for item in (await client.get("/graphs")).json()}
    assert draft["version"] not in listed["summarize"]["versions"]
    assert listed["summarize"]["latest"]["version"] == "1.0.0"
    searched = (await client.post("/assistants/search", json={"graph_id": "summarize"})).json()
    assert draft["assistant_id"] not in {item["assistant_id"] for item in searched}
    assert (specs_dir / "summarize.yaml").read_text(encoding="utf-8") == folder_before
    assistant = (await client.get(f"/assistants/{draft['assistant_id']}")).json()
    assert assistant["metadata"]["plait_draft"] is True

    # It runs the draft's text, and the run says so.
    thread_id = await new_thread(client)
    values = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": draft["assistant_id"], "input": {"text": "Where is my parcel?"}},
    )
    assert values.status_code == 200, values.text
    assert values.json()["summary"] == DRAFT_SUMMARY
    [run] = (await client.get(f"/threads/{thread_id}/runs")).json()
    assert run["assistant_id"] == draft["assistant_id"]
    assert run["metadata"]["plait_draft"] == {"digest": draft["digest"], "version": "1.0.0"}

    # The published version still runs its own text, and says nothing of drafts.
    published = await new_thread(client)
    saved = await client.post(
        f"/threads/{published}/runs/wait",
        json={"assistant_id": "summarize", "input": {"text": "Where is my parcel?"}},
    )
    assert saved.json()["summary"] == "The customer reports a problem and asks for help."
    [saved_run] = (await client.get(f"/threads/{published}/runs")).json()
    assert "plait_draft" not in saved_run["metadata"]


async def test_a_new_graph_runs_as_a_draft_before_its_first_save(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"unsaved-{secrets.token_hex(3)}"
    created = await client.post("/drafts", json={"yaml": draft_of_summarize(name)})
    assert created.status_code == 201, created.text

    values = await client.post(
        "/runs/wait", json={"assistant_id": created.json()["assistant_id"], "input": SUMMARY_INPUT}
    )

    assert values.json()["summary"].startswith("The customer was charged twice")
    assert_problem(await client.get(f"/graphs/{name}/versions"), 404)
    assert not (specs_dir / f"{name}.yaml").exists()


async def test_an_invalid_draft_gets_the_uploads_issues_and_stores_nothing(
    client: httpx.AsyncClient,
) -> None:
    broken = draft_of_summarize().replace("model: summarizer", "model: summariser", 1)
    body = assert_problem(await client.post("/drafts", json={"yaml": broken}), 422)
    assert any("summariser" in error["message"] for error in body["errors"])
    upload = assert_problem(await client.post("/graphs", json={"yaml": broken}), 422)
    same = [{**error, "file": None} for error in body["errors"]]
    assert same == [{**error, "file": None} for error in upload["errors"]]
    assert_problem(
        await client.post("/drafts", content="a: [1", headers={"content-type": "application/yaml"}),
        422,
    )


async def test_a_draft_parked_on_an_approval_resumes_on_the_draft(
    client: httpx.AsyncClient,
) -> None:
    text = REFUND.replace(
        "outcome: \"'refunded ' + string(result.amount) + ' to ' + result.customer\"",
        "outcome: \"'draft refunded ' + string(result.amount)\"",
        1,
    )
    assert text != REFUND
    draft = (await client.post("/drafts", json={"yaml": text})).json()
    thread_id = await new_thread(client)
    parked = await client.post(
        f"/threads/{thread_id}/runs/wait",
        json={"assistant_id": draft["assistant_id"], "input": REFUND_HIGH},
    )
    assert parked.json()["__interrupt__"]
    inbox = (await client.get("/approvals", params={"status": "pending"})).json()
    [approval] = [item for item in inbox if item["thread_id"] == thread_id]
    assert approval["version"] == draft["version"]

    decided = await client.post(
        f"/approvals/{approval['approval_id']}/decision", json={"decision": "approve"}
    )

    assert decided.status_code == 200, decided.text
    resumed = decided.json()["run"]
    assert resumed["metadata"]["plait_draft"]["digest"] == draft["digest"]
    joined = await client.get(f"/threads/{thread_id}/runs/{resumed['run_id']}/join")
    assert joined.json()["outcome"] == "draft refunded 180"


async def test_a_client_cannot_mark_a_run_as_a_draft(client: httpx.AsyncClient) -> None:
    forged = await client.post(
        "/runs/wait",
        json={
            "assistant_id": "summarize",
            "input": SUMMARY_INPUT,
            "metadata": {"plait_draft": {"digest": "sha256:0"}},
        },
    )
    assert "plait_draft" in assert_problem(forged, 422)["detail"]
