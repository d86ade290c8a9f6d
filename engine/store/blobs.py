"""Content-addressed blobs in Postgres (table ``plait_blobs``, migration 0007).

Large tool results live here instead of in a run's state (see
:mod:`plait.engine.tools.mcp.results`); a blob's id is ``sha256:<hex>`` of its bytes,
so storing the same content twice keeps one row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from plait.engine.store.pool import Pool


@dataclass(frozen=True)
class Blob:
    """A stored blob: its digest, media type and bytes."""

    digest: str
    media_type: str
    content: bytes


def blob_digest(content: bytes) -> str:
    """The id of ``content``: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(content).hexdigest()


async def put_blob(pool: Pool, content: bytes, media_type: str) -> str:
    """Store ``content`` (once per digest); return its digest."""
    digest = blob_digest(content)
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO plait_blobs (digest, media_type, size, content) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (digest) DO NOTHING",
            (digest, media_type, len(content), content),
        )
    return digest


async def get_blob(pool: Pool, digest: str) -> Blob | None:
    """The blob stored under ``digest``, if any."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT digest, media_type, content FROM plait_blobs WHERE digest = %s", (digest,)
        )
        row = await cursor.fetchone()
    if row is None:
        return None
    return Blob(row["digest"], row["media_type"], bytes(row["content"]))
