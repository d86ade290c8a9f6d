"""An approval stops ``plait run`` with no terminal; another process resumes the thread."""

from __future__ import annotations

import json

from plait.server.cli.exits import ExitCode
from tests.integration.cli.conftest import SPECS, PlaitRunner, command_args

REFUND = SPECS / "refund-approval.yaml"
HIGH_RISK = json.dumps({"order_id": "A-1002", "amount": 150, "reason": "broken"})


def test_stop_without_terminal_then_resume_in_another_process(plait: PlaitRunner) -> None:
    stopped = plait("run", REFUND, "--input", HIGH_RISK)

    assert stopped.code == ExitCode.WAITING
    assert "Approval needed" in stopped.stdout
    assert "issue_refund" in stopped.stdout
    assert "expires" in stopped.stdout
    command = next(
        line.strip() for line in stopped.stdout.splitlines() if line.strip().startswith("plait run")
    )
    assert command.endswith("--decision approve")

    resumed = plait(*command_args(command), "--json")

    assert resumed.code == 0, resumed.stderr
    events = resumed.events()
    (run_started,) = [e for e in events if e["event"] == "run_started"]
    assert run_started["mode"] == "resume"
    started = [e["node"] for e in events if e["event"] == "node_started"]
    assert "assess" not in started  # done before the stop, not run again
    assert started == ["approve", "refund"]
    output = events[-1]["output"]
    assert output["decision"]["decision"] == "approve"
    assert output["refund"] == {
        "refund_id": output["refund"]["refund_id"],
        "order_id": "A-1002",
        "customer": "grace@example.com",
        "amount": 150.0,
        "status": "issued",
    }


def test_json_stop_then_reject_with_comment(plait: PlaitRunner) -> None:
    stopped = plait("run", REFUND, "--input", HIGH_RISK, "--json")
    assert stopped.code == ExitCode.WAITING
    waiting = stopped.events()[-1]
    assert waiting["event"] == "waiting"
    interrupt = next(e for e in stopped.events() if e["event"] == "interrupt")
    assert interrupt["payload"]["arguments"] == {"order_id": "A-1002", "amount": 150}
    assert interrupt["interrupt_id"] == waiting["interrupt_id"]

    thread = waiting["thread_id"]
    still = plait("run", REFUND, "--thread", thread, "--json")
    assert still.code == ExitCode.WAITING  # asking again without a decision parks again

    rejected = plait(
        "run", REFUND, "--thread", thread, "--decision", "reject", "--comment", "too late", "--json"
    )
    assert rejected.code == 0, rejected.stderr
    output = rejected.events()[-1]["output"]
    assert output["refund"]["status"] == "declined"
    assert output["outcome"] == "Your refund for order A-1002 was declined: too late."


def test_edit_decision_changes_the_arguments(plait: PlaitRunner) -> None:
    stopped = plait("run", REFUND, "--input", HIGH_RISK, "--json")
    thread = stopped.events()[-1]["thread_id"]

    edited = plait(
        "run",
        REFUND,
        "--thread",
        thread,
        "--decision",
        "edit",
        "--arguments",
        '{"order_id": "A-1002", "amount": 60}',
        "--json",
    )

    assert edited.code == 0, edited.stderr
    assert edited.events()[-1]["output"]["refund"]["amount"] == 60.0


def test_example_decisions_answer_the_approval(plait: PlaitRunner) -> None:
    result = plait("run", REFUND, "--example", "large_refund_rejected", "--json")
    assert result.code == 0, result.stderr
    notices = [e["message"] for e in result.events() if e["event"] == "notice"]
    assert "decision from example 'large_refund_rejected': reject" in notices
    assert result.events()[-1]["output"]["refund"]["status"] == "declined"
