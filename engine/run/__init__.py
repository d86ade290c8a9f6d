"""The run driver: a run's context and drive loop (the server's workers use them too), and
``plait run``'s start, resume and inspect of a thread on Postgres, with the events it yields.
"""
