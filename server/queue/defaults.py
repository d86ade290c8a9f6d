"""The queue's defaults, in a module of their own so settings and the CLI read them
without loading the queue (and LangGraph with it) at start-up."""

#: Lost attempts a run may have before it is dead-lettered, unless its spec says
#: (``spec.max_attempts``) or the worker is told otherwise (``--max-attempts``).
DEFAULT_MAX_ATTEMPTS = 3
#: A worker's lease on the runs it claims: a dead worker's runs are taken over after it.
DEFAULT_LEASE_SECONDS = 10.0


def run_connections(concurrency: int) -> int:
    """Pooled connections for the runs of a worker executing ``concurrency`` at once.

    A run needs a connection only for moments (a checkpoint, a tool result), so
    two per run are plenty for a few runs, and past a few dozen more connections
    only add PostgreSQL backends competing for the same cores: measured with
    1,000 runs of two model calls at once in one process, a cap of 30 to 60
    connections served 18 to 20 runs/s where 2,000 (the pool's attempt at two
    per run, past PostgreSQL's own limit) served 16. Runs beyond it wait their
    turn in the pool.
    """
    return min(2 * concurrency, MAX_RUN_CONNECTIONS)


#: The most pooled connections a worker's runs share (:func:`run_connections`).
MAX_RUN_CONNECTIONS = 40

#: How long a tool call's slot under `limits` is held without its worker renewing it
#: (engine/governance/tool_limits.py; default 30 s): a killed worker's slots free
#: themselves after it.
TOOL_LEASE_SECONDS_ENV = "PLAIT_TOOL_LEASE_SECONDS"
