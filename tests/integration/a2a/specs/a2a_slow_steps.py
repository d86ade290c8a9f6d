"""Steps of the A2A test graphs."""

from __future__ import annotations

import asyncio
from typing import Any


async def linger(request: str, seconds: float) -> dict[str, Any]:
    """Take ``seconds`` (a remote that is still working when the caller is cancelled)."""
    await asyncio.sleep(seconds)
    return {"echo": request}
