"""Python nodes of the platform-test specs."""

from __future__ import annotations

import uuid

from langgraph.config import get_store


def remember(user: str, note: str) -> list[str]:
    """Keep ``note`` under ``("notes", user)``; return every note kept there, oldest first.

    Sync on purpose: workers run sync nodes in a thread, where the store's sync
    methods work.
    """
    store = get_store()
    store.put(("notes", user), uuid.uuid4().hex, {"text": note})
    kept = store.search(("notes", user), limit=100)
    return [item.value["text"] for item in sorted(kept, key=lambda item: item.created_at)]


async def count_notes(user: str) -> int:
    """A python tool: how many notes ``("notes", user)`` holds (async code uses ``asearch``)."""
    return len(await get_store().asearch(("notes", user), limit=100))
