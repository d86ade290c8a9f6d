"""The run driver: start, resume and inspect a run on Postgres, and the events it yields."""
