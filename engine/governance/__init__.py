"""What a run is held to: budgets, loops, breakers, retries, limits, secrets, audit.

Everything here acts during a run (through LangGraph's config and context
variables); it imports the spec, the store and observability, never the
compiler or the run driver.
"""
