"""A webhook receiver on 127.0.0.1 for the tests: records every call, checks signatures.

The path of a webhook URL says how to answer: ``/ok/...`` answers 200;
``/fail-once/...`` answers 503 to a delivery's first attempt and 200 after;
``/hold/...`` never answers a delivery's first attempt (until :meth:`close`),
so a test can kill the sender mid-call; ``/slow/...`` answers 200 after
:data:`SLOW_SECONDS`, so a test can stop the sender mid-call.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from plait.server.workers.webhook_sender import (
    ATTEMPT_HEADER,
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    signature,
)

#: How long ``/slow/...`` takes to answer.
SLOW_SECONDS = 2.0


@dataclass(frozen=True)
class Call:
    """One request the receiver got."""

    path: str
    delivery_id: str
    attempt: int
    signed: bool
    body: dict[str, Any]


@dataclass
class Receiver:
    """The receiver's record; :meth:`wait_for` blocks until it holds what a test needs."""

    secret: str
    calls: list[Call] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    released: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    _server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        """The webhook URL of ``path`` on this receiver."""
        return f"http://127.0.0.1:{self.port}{path}"

    def record(self, call: Call) -> None:
        with self.changed:
            self.calls.append(call)
            self.changed.notify_all()

    def wait_for(self, path: str, count: int, timeout: float = 60.0) -> list[Call]:
        """The calls to ``path`` once there are ``count`` of them (TimeoutError otherwise)."""
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.of(path)) >= count, timeout):
                raise TimeoutError(f"{path}: {len(self.of(path))} calls, not {count}: {self.calls}")
            return self.of(path)

    def wait_for_deliveries(self, path: str, count: int, timeout: float = 60.0) -> set[str]:
        """The delivery ids sent to ``path`` once there are ``count`` (repeats count once)."""
        with self.changed:

            def ids() -> set[str]:
                return {call.delivery_id for call in self.of(path)}

            if not self.changed.wait_for(lambda: len(ids()) >= count, timeout):
                raise TimeoutError(f"{path}: {len(ids())} deliveries, not {count}: {self.calls}")
            return ids()

    def of(self, path: str) -> list[Call]:
        """The calls to ``path`` so far."""
        return [call for call in self.calls if call.path == path]

    def start(self) -> None:
        """Listen on a free port of 127.0.0.1, in a thread."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                sent = self.headers.get(SIGNATURE_HEADER, "")
                timestamp = int(sent.split(",")[0].removeprefix("t=")) if sent else 0
                call = Call(
                    path=self.path,
                    delivery_id=self.headers[DELIVERY_HEADER],
                    attempt=int(self.headers[ATTEMPT_HEADER]),
                    signed=sent == signature(receiver.secret, timestamp, raw),
                    body=json.loads(raw),
                )
                receiver.record(call)
                first = call.attempt == 1
                if self.path.startswith("/hold/") and first:
                    receiver.released.wait()
                    return  # the sender is gone: nobody reads an answer
                if self.path.startswith("/slow/"):
                    receiver.released.wait(SLOW_SECONDS)  # a slow receiver, on purpose
                status = 503 if self.path.startswith("/fail-once/") and first else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test prints what it needs."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Let held calls go and stop listening."""
        self.released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
