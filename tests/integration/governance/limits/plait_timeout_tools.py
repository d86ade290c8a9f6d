"""A tool that starts a subprocess and waits for it, as a long shell command would."""

from __future__ import annotations

import asyncio
from pathlib import Path


async def run_command(pid_file: str) -> str:
    """Run ``sleep 60``, writing its pid to ``pid_file``; kill it if cancelled.

    Cancellation (a tool or run timeout) arrives as ``CancelledError`` at the
    ``await``; the ``finally`` is what keeps the process from outliving the call.
    """
    process = await asyncio.create_subprocess_exec("sleep", "60")
    await asyncio.to_thread(Path(pid_file).write_text, str(process.pid))
    try:
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return "done"
