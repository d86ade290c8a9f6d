"""Rendering of run events: the rich view for people, JSON lines for tools."""

from __future__ import annotations

import io
import json

from plait.engine.run.events import (
    Completed,
    Custom,
    Failed,
    Interrupted,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunStarted,
    Token,
)
from plait.server.cli.console import JsonView, RichView
from plait.server.cli.output import make_console

APPROVAL = Interrupted(
    node="approve",
    interrupt_id="abc123",
    payload={
        "kind": "approval",
        "node": "approve",
        "action": "issue_refund",
        "arguments": {"order_id": "A-1", "amount": 150},
        "reason": "high risk [amount]",
        "expires_at": "2026-12-01T10:00:00+00:00",
        "on_expire": "reject",
    },
)


def rich_view(*, tokens: bool = False) -> tuple[RichView, io.StringIO]:
    out = io.StringIO()
    console = make_console(out)
    console.width = 120
    return RichView(console, stream_tokens=tokens), out


def test_node_lines_are_indented_by_subgraph_depth() -> None:
    view, out = rich_view()
    view.show(NodeStarted(node="triage", task_id="t1"))
    view.show(NodeFinished(node="clean", task_id="t2", update={}, summary="x=1", path=["summ"]))
    view.show(NodeFailed(node="boom", task_id="t3", error="ValueError: bad"))

    assert out.getvalue().splitlines() == [
        "▶ triage  started",
        "  ✓ summ > clean  x=1",
        "✗ boom  ValueError: bad",
    ]


def test_tokens_stream_on_one_line_and_end_before_the_next_event() -> None:
    view, out = rich_view(tokens=True)
    view.show(NodeStarted(node="llm", task_id="t"))
    view.show(Token(node="llm", text="Hello "))
    view.show(Token(node="llm", text="world"))
    view.show(NodeFinished(node="llm", task_id="t", update={"a": 1}, summary="a=1"))

    assert out.getvalue().splitlines() == ["▶ llm  started", "  … Hello world", "✓ llm  a=1"]


def test_tokens_are_hidden_when_not_streaming() -> None:
    view, out = rich_view(tokens=False)
    view.show(Token(node="llm", text="secret-ish"))
    assert out.getvalue() == ""


def test_approval_panel_shows_action_arguments_reason_and_expiry() -> None:
    view, out = rich_view()
    view.show(APPROVAL)
    text = out.getvalue()
    for expected in (
        "Approval needed",
        "issue_refund",
        '"amount": 150',
        "high risk [amount]",  # user text is not read as rich markup
        "2026-12-01T10:00:00+00:00 (then: reject)",
        "abc123",
    ):
        assert expected in text


def test_run_outcomes() -> None:
    view, out = rich_view()
    view.show(
        RunStarted(
            run_id="r", thread_id="th-1", graph="g", version="1.0.0", digest="d", mode="resume"
        )
    )
    view.show(Completed(output={"answer": 42}))
    view.show(Failed(error="took too long", node="slow", kind="timeout"))
    lines = out.getvalue().splitlines()
    assert lines[0] == "● g@1.0.0 resumed on thread th-1"
    assert "✓ completed" in lines
    assert json.loads("\n".join(lines[2:-1])) == {"answer": 42}
    assert lines[-1] == "✗ run timed out at node slow: took too long"


def test_map_progress_is_a_line_per_item() -> None:
    view, out = rich_view()
    view.show(
        Custom(
            node="research", data={"plait": "map_item", "node": "research", "index": 3, "ok": False}
        )
    )
    view.show(Custom(node=None, data={"progress": 0.5}))
    assert out.getvalue().splitlines() == [
        "· research  item 3 failed",
        '·   {"progress": 0.5}',
    ]


def test_tool_calls_are_a_line_when_they_start_and_when_they_end() -> None:
    view, out = rich_view()
    call = {"plait": "tool_call", "node": "pay", "tool": "charge", "args": {"order": "o-1"}}
    view.show(Custom(node="pay", data={**call, "status": "started", "reused": False}))
    view.show(Custom(node="pay", data={**call, "status": "error", "reused": False, "error": "E"}))
    view.show(Custom(node="pay", data={**call, "status": "ok", "reused": True}))
    assert out.getvalue().splitlines() == [
        '⚙ pay  charge {"order": "o-1"}',
        "⚙ pay  charge failed: E",
        "⚙ pay  charge ok (recorded result reused)",
    ]


def test_waiting_prints_the_resume_command_on_its_own_line() -> None:
    view, out = rich_view()
    view.waiting(APPROVAL, "th-1", "plait run specs/x.yaml --thread th-1 --decision approve")
    assert (
        "  plait run specs/x.yaml --thread th-1 --decision approve" in out.getvalue().splitlines()
    )


def test_json_view_prints_one_object_per_line() -> None:
    out = io.StringIO()
    view = JsonView(out)
    view.show(APPROVAL)
    view.notice("hello", thread_id="t")
    view.waiting(APPROVAL, "t", "plait run x --thread t --decision approve")
    view.error("bad", 2, issues=[])

    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["interrupt", "notice", "waiting", "error"]
    assert events[0]["payload"]["action"] == "issue_refund"
    assert events[1] == {"event": "notice", "message": "hello", "thread_id": "t"}
    assert events[2]["resume_command"].endswith("--decision approve")
    assert events[3] == {"event": "error", "message": "bad", "exit_code": 2, "issues": []}
