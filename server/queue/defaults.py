"""The queue's defaults, in a module of their own so settings and the CLI read them
without loading the queue (and LangGraph with it) at start-up."""

#: Lost attempts a run may have before it is dead-lettered, unless its spec says
#: (``spec.max_attempts``) or the worker is told otherwise (``--max-attempts``).
DEFAULT_MAX_ATTEMPTS = 3
#: A worker's lease on the runs it claims: a dead worker's runs are taken over after it.
DEFAULT_LEASE_SECONDS = 10.0
