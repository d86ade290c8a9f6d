"""The work every benchmark node does, shared by the hand-written and compiled graphs."""

from plait.engine.compiler.nodes.python import inline


# Marked inline: a server worker calls it on its event loop, as the in-process contender
# and the hand-written graph do, instead of paying a thread hop per step for an addition.
@inline
def step(n: int) -> int:
    """One unit of trivial work, so the benchmark measures the framework, not the node."""
    return n + 1
