"""A tiny OTLP/HTTP trace receiver: accepts ``POST /v1/traces`` and decodes the protobuf.

What a collector does on the wire, minus everything else: the spans it
received are kept as plain :class:`ReceivedSpan` objects for assertions.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    status_code: int
    service: str
    start_ns: int
    links: list[tuple[str, str]] = field(default_factory=list)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def _attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items if isinstance(item, KeyValue)}


class Receiver:
    """The spans received so far (thread-safe), with a way to wait for some."""

    def __init__(self) -> None:
        self._spans: list[ReceivedSpan] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.requests = 0
        self.url = ""

    def add(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        received: list[ReceivedSpan] = []
        for resource_spans in request.resource_spans:
            service = str(_attributes(resource_spans.resource.attributes).get("service.name"))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        ReceivedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            attributes=_attributes(span.attributes),
                            status_code=span.status.code,
                            service=service,
                            start_ns=span.start_time_unix_nano,
                            links=[
                                (link.trace_id.hex(), link.span_id.hex()) for link in span.links
                            ],
                        )
                    )
        with self._changed:
            self.requests += 1
            self._spans.extend(received)
            self._changed.notify_all()

    def spans(self, trace_id: str | None = None) -> list[ReceivedSpan]:
        """What arrived (of one trace), in arrival order."""
        with self._lock:
            return [s for s in self._spans if trace_id is None or s.trace_id == trace_id]

    def wait_for(
        self, done: Callable[[list[ReceivedSpan]], bool], trace_id: str, timeout: float = 20.0
    ) -> list[ReceivedSpan]:
        """The trace's spans once ``done(spans)`` holds; fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [s for s in self._spans if s.trace_id == trace_id]
                if done(found):
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    names = sorted(s.name for s in found)
                    raise AssertionError(f"trace {trace_id} incomplete after {timeout}s: {names}")
                self._changed.wait(left)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    """A receiver listening on a free port of 127.0.0.1 (``receiver.url``) while in the block."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            receiver.add(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: pytest shows the server logs instead

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="otlp receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
