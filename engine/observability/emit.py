"""Governance events on LangGraph's custom stream, from anywhere in a run."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer


def emit(event: dict[str, Any]) -> None:
    """Send ``event`` to the run's custom stream; outside a run (a plain call) it is dropped."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer(event)
