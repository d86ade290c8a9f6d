"""The work every benchmark node does, shared by the hand-written and compiled graphs."""


def step(n: int) -> int:
    """One unit of trivial work, so the benchmark measures the framework, not the node."""
    return n + 1
