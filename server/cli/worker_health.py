"""``plait worker --health-port``: a liveness endpoint for a process that has no HTTP API.

``GET /healthz`` answers 200 while the worker's event loop turns (a task on it
ticks every second; the lease heartbeats, the claims and the runs all run on
that loop) and 503 once the ticks stop for ``stale_after`` seconds. It says
nothing about the database on purpose: a restart does not fix an unreachable
database, and a worker that cannot heartbeat loses its leases to the others
anyway.

The server runs in a thread of the standard library's ``ThreadingHTTPServer``,
so it still answers (503) when the loop is stuck instead of timing out.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: How often the loop ticks, and after how long without a tick the worker is unhealthy.
TICK_SECONDS = 1.0
STALE_AFTER_SECONDS = 10.0


class WorkerHealth:
    """The liveness state of one worker process, served over HTTP by :meth:`serve`."""

    def __init__(self, stale_after: float = STALE_AFTER_SECONDS) -> None:
        self.stale_after = stale_after
        self._last_tick = time.monotonic()
        self._server: ThreadingHTTPServer | None = None

    def status(self) -> tuple[HTTPStatus, dict[str, object]]:
        """The answer to ``GET /healthz`` now."""
        silent = time.monotonic() - self._last_tick
        if silent > self.stale_after:
            return HTTPStatus.SERVICE_UNAVAILABLE, {
                "status": "stuck",
                "detail": f"the worker's event loop has not turned for {silent:.1f}s",
            }
        return HTTPStatus.OK, {"status": "ok"}

    async def tick_forever(self) -> None:
        """Record that the event loop turns, every ``TICK_SECONDS``, until cancelled."""
        while True:
            self._last_tick = time.monotonic()
            await asyncio.sleep(TICK_SECONDS)

    def serve(self, host: str, port: int) -> int:
        """Serve ``/healthz`` on ``host:port`` from a daemon thread; return the bound port."""
        health = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] != "/healthz":
                    self.send_error(HTTPStatus.NOT_FOUND, "only /healthz is served here")
                    return
                code, body = health.status()
                payload = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a probe every few seconds is not worth a log line

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        thread = threading.Thread(
            target=self._server.serve_forever, name="plait worker health", daemon=True
        )
        thread.start()
        return int(self._server.server_address[1])

    def close(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
