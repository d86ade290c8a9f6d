"""The approvals inbox: its table and what it holds (``records``).

Deciding an approval resumes a thread, which is the queue's work (``plait.server.queue.decisions``).
"""
