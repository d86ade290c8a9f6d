"""Graphs served as A2A agents (docs/a2a.md): cards, the executor, the task store, the routes."""
