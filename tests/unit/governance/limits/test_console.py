"""The CLI shows budget, retry, breaker and loop events as one readable line each."""

from __future__ import annotations

import io

from plait.engine.run.events import Custom
from plait.server.cli.console import RichView
from plait.server.cli.output import make_console


def test_limit_events_are_one_line_each() -> None:
    out = io.StringIO()
    console = make_console(out)
    console.width = 120
    view = RichView(console, stream_tokens=False)
    usage = {"steps": 2, "tokens": 3000, "cost": 0.004, "wall_time": 0.5}
    events = [
        {"plait": "budget", "node": "b", "usage": usage, "limits": {"max_steps": 5}},
        {
            "plait": "budget",
            "node": "c",
            "exceeded": "max_cost",
            "limit": 0.003,
            "action": "return",
        },
        {
            "plait": "retry",
            "target": "model:m",
            "attempt": 1,
            "error_class": "rate_limit",
            "delay": 0.25,
        },
        {"plait": "breaker", "target": "tool:t", "key": "tool:f:g", "state": "open"},
        {"plait": "loop", "node": "agent", "tool": "echo", "count": 4, "limit": 3},
    ]
    for data in events:
        view.show(Custom(node=str(data.get("node", "n")), data=data))
    assert out.getvalue().splitlines() == [
        "⧗ b  budget: 2 steps, 3000 tokens, cost 0.004, 0.5s",
        "⧗ c  budget max_cost=0.003 reached: return",
        "⧗ n  retry model:m after attempt 1 (rate_limit), waiting 0.25s",
        "⧗ n  breaker tool:t open",
        "⧗ agent  loop: echo called 4 times (max 3)",
    ]
