"""Whether ``task: true`` MCP tools park their run (no MCP SDK import).

A worker whose process polls MCP tasks (``server/workers/worker.py`` runs the poller)
marks the runs it executes with ``configurable["plait_park_mcp_tasks"]``;
elsewhere (``plait run``, tests driving a graph directly) a task tool waits for
its task in place. A per-run flag, not a process-wide switch, so a graph run
in-process beside a worker never parks with no poller to resume it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

#: ``configurable`` key a worker sets on the runs it executes.
PARK_TASKS_KEY = "plait_park_mcp_tasks"


def parking_enabled(config: RunnableConfig | dict[str, Any]) -> bool:
    """Whether task tools of the run with ``config`` park it instead of polling in place."""
    return bool((config.get("configurable") or {}).get(PARK_TASKS_KEY))
