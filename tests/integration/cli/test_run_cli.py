"""``plait run``, ``graph`` and ``schema`` as subprocesses: completion, errors, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.cli.conftest import SPECS, PlaitRunner, plait_env

PLANNER = SPECS / "planner-team.yaml"


def test_run_completes_and_prints_every_node(plait: PlaitRunner) -> None:
    result = plait("run", PLANNER, "--json")

    assert result.code == 0, result.stderr
    events = result.events()
    started = [e["node"] for e in events if e["event"] == "node_started"]
    assert started == ["planner", "executor", "reviewer", "executor", "reviewer"]
    finished = [e for e in events if e["event"] == "node_finished"]
    assert [e["node"] for e in finished] == started
    assert all(e["summary"] for e in finished)
    (completed,) = [e for e in events if e["event"] == "completed"]
    assert completed["output"]["review"]["verdict"] == "approve"
    assert completed["output"]["revisions"] == 1
    assert "buffer" in completed["output"]["schedule"]
    # Recorded provenance: the run says which spec and digest it ran.
    (started_run,) = [e for e in events if e["event"] == "run_started"]
    assert started_run["graph"] == "planner-team" and started_run["digest"].startswith("sha256:")


def test_rich_view_shows_nodes_and_output(plait: PlaitRunner) -> None:
    result = plait("run", SPECS / "support-subgraph.yaml")

    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("▶ triage") for line in lines)
    assert any("✓ summarize > clean" in line for line in lines), result.stdout
    assert "✓ completed" in result.stdout
    assert "Our billing team will follow up within 2 hours" in result.stdout


def test_named_example_and_explicit_input(plait: PlaitRunner, tmp_path: Path) -> None:
    small = plait("run", SPECS / "refund-approval.yaml", "--example", "small_refund", "--json")
    assert small.code == 0, small.stderr
    assert not [e for e in small.events() if e["event"] == "interrupt"]

    payload = tmp_path / "input.json"
    payload.write_text(json.dumps({"order_id": "A-1003", "amount": 20, "reason": "scratch"}))
    from_file = plait("run", SPECS / "refund-approval.yaml", "--input", f"@{payload}", "--json")
    assert from_file.code == 0, from_file.stderr
    (done,) = [e for e in from_file.events() if e["event"] == "completed"]
    assert done["output"]["refund"]["order_id"] == "A-1003"


def test_unknown_input_field_is_one_message_with_a_usage_exit_code(plait: PlaitRunner) -> None:
    result = plait("run", PLANNER, "--input", '{"goal": "x", "budget": 3}')

    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "error: unknown input field budget; planner-team accepts: goal, start"
    )


def test_invalid_spec_is_refused_with_validate_errors(plait: PlaitRunner, tmp_path: Path) -> None:
    spec = tmp_path / "broken.yaml"
    routes = "to: {approve: END, revise: executor}"
    spec.write_text(PLANNER.read_text().replace(routes, "to: {approve: nowhere}"))
    result = plait("run", spec)
    assert result.code == 1
    assert f"{spec}:" in result.stderr and "error[" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_database_is_one_clear_message(plait: PlaitRunner, database_url: str) -> None:
    env = plait_env(database_url)
    env["PLAIT_DATABASE_URL"] = "postgresql://postgres:secret@127.0.0.1:1/plait"
    result = plait("run", PLANNER, env=env)
    assert result.code == 5
    assert "cannot connect to the database" in result.stderr
    assert "secret" not in result.stderr
    assert "Traceback" not in result.stderr


def test_finished_thread_reports_its_output(plait: PlaitRunner) -> None:
    first = plait("run", SPECS / "research-team.yaml", "--json")
    assert first.code == 0, first.stderr
    thread = first.events()[0]["thread_id"]

    again = plait("run", SPECS / "research-team.yaml", "--thread", thread, "--json")

    assert again.code == 0
    events = again.events()
    assert events[0]["event"] == "notice" and "already finished" in events[0]["message"]
    assert not [e for e in events if e["event"] == "node_started"]
    assert len(events[-1]["output"]["findings"]) == 3


def test_thread_of_another_spec_is_refused(plait: PlaitRunner) -> None:
    first = plait("run", SPECS / "summarize.yaml", "--json")
    assert first.code == 0, first.stderr
    thread = first.events()[0]["thread_id"]

    other = plait("run", PLANNER, "--thread", thread)

    assert other.code == 2
    assert "summarize@1.0.0" in other.stderr and "planner-team@1.0.0" in other.stderr
    assert "start a new thread" in other.stderr


def test_graph_prints_mermaid(plait: PlaitRunner) -> None:
    result = plait("graph", PLANNER)
    assert result.code == 0
    assert "executor" in result.stdout and "reviewer" in result.stdout
    assert result.stdout.lstrip().split()[0] in {"flowchart", "graph", "---"}


def test_schema_prints_the_committed_json_schema(plait: PlaitRunner) -> None:
    result = plait("schema")
    assert result.code == 0
    schema = json.loads(result.stdout)
    assert "spec" in schema["properties"]
    committed = SPECS.parent / "schemas" / "plait-v1.schema.json"
    assert json.loads(committed.read_text()) == schema
