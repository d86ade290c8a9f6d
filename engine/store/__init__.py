"""Postgres storage: connection URL (or the embedded server), pools, checkpoints, migrations."""

from engine.store.checkpointer import new_checkpointer
from engine.store.database import database_url
from engine.store.migrate import migrate
from engine.store.pool import Pool, open_pool

__all__ = ["Pool", "database_url", "migrate", "new_checkpointer", "open_pool"]
