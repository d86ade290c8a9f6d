"""Postgres storage: connection URL (or the embedded server), pools, checkpoints, migrations."""

from plait.engine.store.checkpointer import new_checkpointer
from plait.engine.store.database import database_url
from plait.engine.store.migrate import migrate
from plait.engine.store.pool import Pool, open_pool

__all__ = ["Pool", "database_url", "migrate", "new_checkpointer", "open_pool"]
