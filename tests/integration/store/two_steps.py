"""A two-node LangGraph graph (a, then b) whose state lists the steps taken."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class Steps(TypedDict):
    steps: Annotated[list[str], operator.add]


def two_steps() -> StateGraph[Steps]:
    """``a`` then ``b``, each adding its name to ``steps``."""
    graph = StateGraph(Steps)
    graph.add_node("a", lambda state: {"steps": ["a"]})
    graph.add_node("b", lambda state: {"steps": ["b"]})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    return graph
