"""How ``plait`` shows things: a rich terminal view, or one JSON object per line.

Both views take the runner's events (``plait.engine.run.events``) plus a few
CLI-level messages (notices, the "waiting for a decision" stop, errors), so
``plait run`` drives either without knowing which it has.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from rich.console import Console
from rich.json import JSON
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from plait.engine.run import (
    Completed,
    Custom,
    Failed,
    Interrupted,
    NodeFailed,
    NodeFinished,
    NodeStarted,
    RunEvent,
    RunStarted,
    Token,
)
from plait.server.cli.output import make_console


class RunView(Protocol):
    """What ``plait run`` reports to; see :class:`RichView` and :class:`JsonView`."""

    def show(self, event: RunEvent) -> None:
        """Render one runner event."""

    def notice(self, message: str, **data: Any) -> None:
        """An informational line (what the CLI is about to do and why)."""

    def waiting(self, interrupt: Interrupted, thread_id: str, command: str) -> None:
        """The run stops on an approval nobody can answer now; say how to resume."""

    def error(self, message: str, code: int, **data: Any) -> None:
        """A failure that ends the command."""


class JsonView:
    """One JSON object per line on stdout: events, plus ``notice``, ``waiting``, ``error``."""

    def __init__(self, file: TextIO | None = None) -> None:
        self._file = file

    def _emit(self, data: dict[str, Any]) -> None:
        out = self._file or sys.stdout
        out.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
        out.flush()

    def show(self, event: RunEvent) -> None:
        """Print the event's ``to_dict()``."""
        self._emit(event.to_dict())

    def notice(self, message: str, **data: Any) -> None:
        """``{"event": "notice", "message": ..., ...data}``."""
        self._emit({"event": "notice", "message": message, **data})

    def waiting(self, interrupt: Interrupted, thread_id: str, command: str) -> None:
        """``{"event": "waiting", "thread_id", "interrupt_id", "resume_command"}``."""
        self._emit(
            {
                "event": "waiting",
                "thread_id": thread_id,
                "interrupt_id": interrupt.interrupt_id,
                "resume_command": command,
            }
        )

    def error(self, message: str, code: int, **data: Any) -> None:
        """``{"event": "error", "message", "exit_code", ...data}``."""
        self._emit({"event": "error", "message": message, "exit_code": int(code), **data})


class RichView:
    """Node-by-node progress for people; streams tokens when ``stream_tokens`` is on."""

    def __init__(self, console: Console, *, stream_tokens: bool) -> None:
        self.console = console
        self.errors = make_console(stderr=True)
        self.stream_tokens = stream_tokens
        # The node whose tokens are being printed on the current line, if any.
        self._streaming: tuple[str, ...] | None = None

    def show(self, event: RunEvent) -> None:
        """Render one event (tokens inline, everything else on its own line)."""
        if isinstance(event, Token):
            self._token(event)
            return
        self._end_tokens()
        if isinstance(event, RunStarted):
            verb = {"start": "started", "resume": "resumed", "continue": "continued"}[event.mode]
            line = Text.assemble(
                ("● ", "bold"),
                (f"{event.graph}@{event.version}", "bold"),
                f" {verb} on thread ",
                (event.thread_id, "cyan"),
            )
            self.console.print(line)
        elif isinstance(event, NodeStarted):
            self.console.print(_node_line("▶", "blue", event.path, event.node, "started"))
        elif isinstance(event, NodeFinished):
            self.console.print(_node_line("✓", "green", event.path, event.node, event.summary))
        elif isinstance(event, NodeFailed):
            self.console.print(_node_line("✗", "red", event.path, event.node, event.error))
        elif isinstance(event, Custom):
            self._custom(event)
        elif isinstance(event, Interrupted):
            self.console.print(approval_panel(event))
        elif isinstance(event, Completed):
            if event.state == "succeeded":
                self.console.print(Text("✓ completed", style="bold green"))
            else:  # a map lost items: say how many
                self.console.print(Text(f"◐ completed, {event.label}", style="bold yellow"))
            self.console.print(JSON.from_data(event.output, ensure_ascii=False))
        elif isinstance(event, Failed):
            # Node errors already start with "node 'x':"; say the node only when they do not.
            named = event.node is None or event.error.startswith(f"node {event.node!r}")
            where = "" if named else f" at node {event.node}"
            label = "timed out" if event.kind == "timeout" else "failed"
            self.console.print(Text(f"✗ run {label}{where}: {event.error}", style="bold red"))

    def notice(self, message: str, **data: Any) -> None:
        """A dim informational line."""
        self._end_tokens()
        self.console.print(Text(message, style="yellow"))

    def waiting(self, interrupt: Interrupted, thread_id: str, command: str) -> None:
        """Say the run is parked and print the exact resume command."""
        self._end_tokens()
        self.console.print(
            Text(
                f"Waiting for a decision on thread {thread_id} "
                "(no terminal to ask on, and no --decision given). Resume with:",
                style="yellow",
            )
        )
        self.console.print(Text(f"  {command}", style="bold"))
        self.console.print(
            Text("(or --decision reject, or --decision edit --arguments JSON)", style="dim")
        )

    def error(self, message: str, code: int, **data: Any) -> None:
        """``error: message`` in red (on stderr)."""
        self._end_tokens()
        self.errors.print(Text(f"error: {message}", style="bold red"))

    def _token(self, event: Token) -> None:
        if not self.stream_tokens:
            return
        key = (*event.path, event.node)
        if self._streaming != key:
            self._end_tokens()
            self.console.print(Text("  " * (len(event.path) + 1) + "… ", style="dim"), end="")
            self._streaming = key
        self.console.print(Text(event.text, style="dim"), end="")

    def _end_tokens(self) -> None:
        if self._streaming is not None:
            self.console.print()
            self._streaming = None

    def _custom(self, event: Custom) -> None:
        data = event.data
        if isinstance(data, dict) and data.get("plait") == "map_item":
            status = "done" if data.get("ok") else "failed"
            detail = f"item {data.get('index')} {status}"
            node = str(data.get("node") or event.node or "")
            style = "dim" if data.get("ok") else "yellow"
            self.console.print(_node_line("·", style, event.path, node, detail))
            return
        if isinstance(data, dict) and data.get("plait") == "tool_call":
            self._tool_call(event, data)
            return
        limit = _limit_line(data) if isinstance(data, dict) else None
        if limit is not None:
            node = str(data.get("node") or event.node or "")
            self.console.print(_node_line("⧗", limit[1], event.path, node, limit[0]))
            return
        text = json.dumps(data, ensure_ascii=False, default=str)
        self.console.print(_node_line("·", "dim", event.path, event.node or "", text))

    def _tool_call(self, event: Custom, data: dict[str, Any]) -> None:
        # One line when a call starts, one when it ends; a reused call only ends.
        status = data.get("status")
        if status == "started":
            args = json.dumps(data.get("args"), ensure_ascii=False, default=str)
            detail, style = f"{data.get('tool')} {args}", "dim"
        elif status == "error":
            detail, style = f"{data.get('tool')} failed: {data.get('error')}", "yellow"
        else:
            reused = " (recorded result reused)" if data.get("reused") else ""
            detail, style = f"{data.get('tool')} ok{reused}", "dim"
        node = str(data.get("node") or event.node or "")
        self.console.print(_node_line("⚙", style, event.path, node, detail))


def _limit_line(data: dict[str, Any]) -> tuple[str, str] | None:
    """``(text, style)`` of a budget, retry, breaker or loop event (docs/governance.md)."""
    kind = data.get("plait")
    if kind == "budget":
        usage = data.get("usage") or {}
        if data.get("exceeded"):
            text = f"budget {data['exceeded']}={data.get('limit')} reached: {data.get('action')}"
            return text, "yellow"
        text = (
            f"budget: {usage.get('steps')} steps, {usage.get('tokens')} tokens, "
            f"cost {usage.get('cost')}, {usage.get('wall_time')}s"
        )
        return text, "dim"
    if kind == "retry":
        text = (
            f"retry {data.get('target')} after attempt {data.get('attempt')} "
            f"({data.get('error_class')}), waiting {data.get('delay')}s"
        )
        return text, "yellow"
    if kind == "breaker":
        style = "green" if data.get("state") == "closed" else "yellow"
        return f"breaker {data.get('target')} {data.get('state')}", style
    if kind == "tool_waiting":
        return _waiting_text(data), "yellow"
    if kind == "loop":
        count, limit = data.get("count"), data.get("limit")
        return f"loop: {data.get('tool')} called {count} times (max {limit})", "red"
    return None


def _waiting_text(data: dict[str, Any]) -> str:
    """What a call of a limited tool waits for (docs/governance.md, "Tool limits")."""
    tool, limit = data.get("tool"), data.get("limit") or {}
    if data.get("reason") == "concurrency":
        return f"waiting for a slot of tool {tool} ({limit.get('concurrency')} at once, all runs)"
    if data.get("reason") == "rate":
        return f"waiting for a turn of tool {tool} (rate {limit.get('rate')}, all runs)"
    return f"waiting: tool {tool} is paused for {data.get('retry_in')}s more"


def _node_line(mark: str, style: str, path: Sequence[str], node: str, detail: str) -> Text:
    """``  ✓ parent > node  detail``, indented by nesting depth."""
    name = " > ".join([*path, node])
    return Text.assemble(
        "  " * len(path), (f"{mark} ", style), (name, "bold"), "  ", (detail, "default")
    )


def approval_panel(event: Interrupted) -> Panel:
    """The approval a person is asked for: action, arguments, reason, expiry."""
    payload = event.payload if isinstance(event.payload, dict) else {"value": event.payload}
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    # Values are Text, not str: str cells are read as rich markup ("[x]" would vanish).
    table.add_row("action", Text(str(payload.get("action", "?"))))
    arguments = json.dumps(payload.get("arguments"), ensure_ascii=False, indent=2, default=str)
    table.add_row("arguments", Text(arguments))
    if payload.get("reason"):
        table.add_row("reason", Text(str(payload["reason"])))
    if payload.get("expires_at"):
        on_expire = payload.get("on_expire")
        suffix = f" (then: {on_expire})" if on_expire else ""
        table.add_row("expires", Text(f"{payload['expires_at']}{suffix}"))
    table.add_row("node", Text(str(event.node or payload.get("node", "?"))))
    table.add_row("id", Text(event.interrupt_id))
    if set(payload) - {"kind", "node", "action", "arguments", "reason", "expires_at", "on_expire"}:
        table.add_row("payload", Text(json.dumps(payload, ensure_ascii=False, default=str)))
    return Panel(table, title="Approval needed", border_style="yellow", expand=False)
