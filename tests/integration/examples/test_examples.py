"""Every example spec, end to end on real Postgres, checked the way a user would."""

from __future__ import annotations

from pathlib import Path

from plait.engine.governance.secrets import ENVIRONMENT
from plait.engine.run.events import Custom, NodeFinished, NodeStarted, RunStarted
from plait.engine.run.graders import Score, grade
from plait.engine.store.pool import Pool
from plait.server.queue.direct_runs import list_runs
from tests.conftest import fresh_database
from tests.integration.examples.conftest import SPECS, Runner, compiled
from tests.integration.server.harness import cluster


async def test_planner_team_revises_once_then_approves(run_example: Runner) -> None:
    outcome = await run_example("planner-team")

    assert outcome.started == ["planner", "executor", "reviewer", "executor", "reviewer"]
    output = outcome.output
    assert output["plan"]["steps"][0] == "Design the CSV export format"
    assert output["review"]["verdict"] == "approve"
    assert output["revisions"] == 1
    # The revised schedule includes the buffer the first review asked for.
    assert "2 buffer days" in output["schedule"]
    reviews = [
        e.update["review"]["verdict"]
        for e in outcome.events
        if isinstance(e, NodeFinished) and e.node == "reviewer"
    ]
    assert reviews == ["revise", "approve"]


async def test_research_team_finishes_with_partial_results(run_example: Runner) -> None:
    outcome = await run_example("research-team")

    output = outcome.output
    assert [f["topic"] for f in output["findings"]] == [
        "solar power",
        "wind power",
        "battery storage",
    ]
    failures = {f["item"]: f["error"] for f in output["failures"]}
    assert failures == {
        "quantum gravity": "timed out after 2s",
        "tidal power": "LookupError: no sources cover 'tidal power'",
    }
    summary = output["summary"]
    assert summary["complete"] is False
    assert summary["covered"] == ["solar power", "wind power", "battery storage"]
    assert "Not covered: quantum gravity (timed out after 2s)" in summary["text"]
    custom = [e.data for e in outcome.events if isinstance(e, Custom)]
    items = [d for d in custom if d["plait"] == "map_item"]
    assert sorted((d["index"], d["ok"]) for d in items) == [
        (0, True),
        (1, False),
        (2, True),
        (3, False),
        (4, True),
    ]


async def test_research_team_fails_below_min_success(run_example: Runner) -> None:
    outcome = await run_example(
        "research-team",
        input={"question": "q", "topics": ["solar power", "quantum gravity", "fusion"]},
    )

    failure = outcome.failure
    assert failure.node == "research"
    assert "only 1 of 3 items succeeded (min_success=3)" in failure.error
    assert "summarize" not in outcome.started


async def test_refund_approved(run_example: Runner, pool: Pool) -> None:
    outcome = await run_example("refund-approval", example="large_refund_approved")

    (interrupt,) = outcome.interrupts
    payload = interrupt.payload
    assert payload["action"] == "issue_refund"
    assert payload["arguments"] == {"order_id": "A-1002", "amount": 180.0}
    assert "high risk" in payload["reason"] and payload["expires_at"]
    assert outcome.started == ["assess", "approve", "approve", "refund"]
    output = outcome.output
    assert output["decision"]["decision"] == "approve"
    assert output["refund"]["status"] == "issued" and output["refund"]["amount"] == 180.0
    assert output["outcome"] == "refunded 180 to grace@example.com"
    runs = await list_runs(pool, outcome.thread_id)
    # As the Agent Server records it: the parked run ended `success`; Plait's state says
    # it waited for a person, settled once the decision resumed the thread.
    assert [r.status for r in runs] == ["success", "success"]
    assert [r.state for r in runs] == ["succeeded", "succeeded"]


async def test_refund_rejected(run_example: Runner) -> None:
    outcome = await run_example("refund-approval", example="large_refund_rejected")

    assert outcome.started == ["assess", "approve", "approve", "decline"]
    output = outcome.output
    assert output["decision"]["decision"] == "reject"
    assert output["refund"]["status"] == "declined"
    assert output["outcome"].endswith("declined: the item was returned after 90 days.")


async def test_refund_edited_pays_the_new_amount(run_example: Runner) -> None:
    outcome = await run_example("refund-approval", example="large_refund_edited")
    assert outcome.output["refund"]["amount"] == 90.0


async def test_small_refund_needs_no_approval(run_example: Runner) -> None:
    outcome = await run_example("refund-approval", example="small_refund")
    assert outcome.interrupts == []
    assert outcome.started == ["assess", "refund"]
    assert outcome.output["decision"] is None


async def test_refund_approvals_grader_scores_its_examples(run_example: Runner) -> None:
    spec = compiled("refund-approval").loaded
    found = {}
    for example in ("small_refund", "large_refund_approved", "large_refund_rejected"):
        outcome = await run_example("refund-approval", example=example)
        # The grader reads a trajectory's `output`: the run's output fields.
        trajectory = {"run_id": example, "output": outcome.output, "steps": []}
        found[example] = await grade(spec, "refund_as_agreed", trajectory, secrets=ENVIRONMENT)
    assert found == {
        "small_refund": Score(1.0, "refunded 12.50 as agreed"),
        "large_refund_approved": Score(1.0, "refunded 180.00 as agreed"),
        "large_refund_rejected": Score(1.0, "declined"),
    }
    broken = {
        "run_id": "x",
        "output": {"refund": {"status": "issued", "amount": 50.0}, "assessment": {"amount": 180.0}},
        "steps": [],
    }
    assert await grade(spec, "refund_as_agreed", broken, secrets=ENVIRONMENT) == Score(
        0.5, "refunded 50.00, agreed 180.00"
    )


async def test_support_uses_the_summarize_subgraph(run_example: Runner) -> None:
    outcome = await run_example("support-subgraph")

    nested = [
        (tuple(e.path), e.node) for e in outcome.events if isinstance(e, NodeStarted) and e.path
    ]
    assert nested == [(("summarize",), "clean"), (("summarize",), "summarize")]
    output = outcome.output
    assert output["triage"] == {
        "category": "billing",
        "priority": "high",
        "signals": ["asap", "twice"],
    }
    assert output["summary"].startswith("The customer was charged twice")
    assert output["key_points"] == ["duplicate charge", "November invoice", "refund requested"]
    assert "Our billing team will follow up within 2 hours." in output["reply"]


async def test_support_triage_routes_high_risk_to_the_strong_model_and_audits_it(
    run_example: Runner, pool: Pool
) -> None:
    routine = await run_example("support-triage", example="routine")
    assert routine.output["risk"] == "low"
    assert routine.output["answer"].startswith("You can change your delivery address")
    assert not [
        e for e in routine.events if isinstance(e, Custom) and e.data.get("plait") == "model_route"
    ]

    risky = await run_example("support-triage", example="chargeback_threat")
    assert risky.output["risk"] == "high"
    assert risky.output["answer"].startswith("I am sorry about the double charge")
    [route] = [
        e.data
        for e in risky.events
        if isinstance(e, Custom) and e.data.get("plait") == "model_route"
    ]
    assert (route["node"], route["model"]) == ("answer", "strong")
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT node, actor, detail FROM plait_audit "
            "WHERE thread_id = %s AND kind = 'model_call' ORDER BY id",
            (risky.thread_id,),
        )
        calls = await cursor.fetchall()
    assert [(c["node"], c["actor"], c["detail"]["model"]) for c in calls] == [
        ("rate", "node:rate", "classifier"),
        ("answer", "agent:support", "strong"),
    ]
    assert "chargeback" in calls[1]["detail"]["messages"][-1]["content"]


async def test_summarize_runs_on_its_own(run_example: Runner) -> None:
    outcome = await run_example("summarize")
    assert outcome.output["key_points"][0] == "duplicate charge"
    (started,) = [e for e in outcome.events if isinstance(e, RunStarted)]
    assert started.graph == "summarize" and started.mode == "start"


async def test_mcp_tools_calls_the_demo_server_and_waits_for_its_task(
    run_example: Runner,
) -> None:
    outcome = await run_example("mcp-tools")
    assert outcome.started == ["help", "report"]
    calls = [
        (e.data["tool"], e.data["status"])
        for e in outcome.events
        if isinstance(e, Custom) and e.data.get("plait") == "tool_call"
    ]
    assert calls == [
        ("lookup_order", "started"),
        ("lookup_order", "ok"),
        ("open_ticket", "started"),
        ("open_ticket", "ok"),
        ("slow_report", "started"),
        ("slow_report", "ok"),
    ]
    assert outcome.output["answer"].startswith("Order A-1002 (grace@example.com)")
    assert outcome.output["report"]["report"] == "All quiet on order A-1002."
    # The agent's conversation is in the state, for a chat front end.
    [finished] = [e for e in outcome.events if isinstance(e, NodeFinished) and e.node == "help"]
    kinds = [message["type"] for message in finished.update["messages"]]
    assert kinds[0] == "human" and kinds[-1] == "ai"
    assert "tool" in kinds


async def test_chat_answers_from_the_conversation(run_example: Runner) -> None:
    outcome = await run_example("chat", example="refund_question")
    said = [(m["type"], m["content"]) for m in outcome.output["messages"]]
    assert said[0] == ("human", "How do refunds work?")
    assert said[1][0] == "ai"
    assert said[1][1].startswith("Refunds up to 100 are issued at once")


async def test_a2a_expense_agent_asks_for_large_claims(run_example: Runner) -> None:
    outcome = await run_example("a2a-expense-agent")
    # The approval node runs again when the decision resumes it.
    assert outcome.started == ["read", "approve", "approve", "settle"]
    assert outcome.output["settlement"] == {
        "verdict": "paid",
        "amount": 750.0,
        "comment": "offsite dinner",
    }
    small = await run_example("a2a-expense-agent", example="small_claim")
    assert small.started == ["read", "settle"]


async def test_a2a_expense_caller_talks_to_a_served_agent(
    run_example: Runner, postgres_server_url: str, tmp_path: Path
) -> None:
    # The caller needs its agent served: a real `plait serve` on 127.0.0.1 serves
    # a2a-expense-agent, and the example runs as `plait run` would run it.
    sources = [SPECS / "a2a-expense-agent.yaml", SPECS / "plait_examples"]
    with fresh_database(postgres_server_url) as url, cluster(url, tmp_path, sources) as server:
        agent_url = f"{server.url}/a2a/a2a-expense-agent"
        outcome = await run_example(
            "a2a-expense-caller",
            input={"agent_url": agent_url, "request": "Team dinner 750"},
            decisions=[{"decision": "approve"}],
        )
    (asked,) = outcome.interrupts
    assert asked.payload["action"] == f"reply to {agent_url}"
    assert outcome.output["report"].startswith("claim paid (remote task ")
    assert outcome.output["remote"]["data"]["settlement"]["amount"] == 750.0


def test_every_example_spec_is_covered() -> None:
    names = {path.stem for path in SPECS.glob("*.yaml")}
    assert names == {
        "planner-team",
        "research-team",
        "refund-approval",
        "support-subgraph",
        "summarize",
        "mcp-tools",
        "a2a-expense-agent",
        "a2a-expense-caller",
        "chat",
        "support-triage",
    }
