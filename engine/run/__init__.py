"""The run driver: a run's context and drive loop (the server's workers use them too), and
``plait run``'s start, resume and inspect of a thread, with the events it yields (made from
the driver's stream items) and the record keeper it is given (``records.RunLog``).
"""
