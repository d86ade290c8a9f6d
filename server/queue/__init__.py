"""The durable run queue on Postgres: threads and runs (the run row is the queue entry)."""
