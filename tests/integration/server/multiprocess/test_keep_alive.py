"""An idle client connection stays open longer than clients keep theirs (``--keep-alive-seconds``).

Before: ``plait serve`` closed an idle keep-alive connection after uvicorn's 5 s,
while clients keep idle connections longer (aiohttp's pool 15 s, load balancers
60 s). A request sent on a connection just as the server closed it was lost:
``bench/concurrency.py`` at 1,000 runs at once failed with aiohttp's "Cannot
write to closing transport". The side that closes an idle connection must be
the client, so the server now waits 75 s by default.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fresh_database
from tests.integration.server.harness import Cluster, cluster

pytestmark = pytest.mark.postgres

#: Longer than uvicorn's own default (5 s), shorter than Plait's (75 s).
IDLE_SECONDS = 6.0
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: plait\r\n\r\n"


@pytest.fixture
def served(postgres_server_url: str, tmp_path: Path) -> Iterator[Cluster]:
    with fresh_database(postgres_server_url) as url, cluster(url, tmp_path, []) as running:
        yield running


def _connect(cluster_url: str) -> socket.socket:
    host, port = cluster_url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _response(conn: socket.socket) -> bytes:
    """One whole HTTP response read from ``conn`` (headers and its Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        assert chunk, f"the server closed the connection mid-response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = conn.recv(4096)
        assert chunk, "the server closed the connection mid-body"
        body += chunk
    return head.split(b"\r\n", 1)[0]


def test_an_idle_connection_outlives_uvicorns_five_seconds(served: Cluster) -> None:
    with _connect(served.url) as conn:
        conn.sendall(REQUEST)
        assert _response(conn) == b"HTTP/1.1 200 OK"
        # Idle: nothing may arrive, the server's close least of all.
        conn.settimeout(IDLE_SECONDS)
        with pytest.raises(TimeoutError):
            closed = conn.recv(1)
            pytest.fail(f"the server closed the idle connection: recv gave {closed!r}")
        conn.settimeout(10)
        conn.sendall(REQUEST)
        assert _response(conn) == b"HTTP/1.1 200 OK"


def test_the_keep_alive_is_the_operators_to_set(postgres_server_url: str, tmp_path: Path) -> None:
    with (
        fresh_database(postgres_server_url) as url,
        cluster(url, tmp_path, [], extra_env={"PLAIT_KEEP_ALIVE_SECONDS": "1"}) as running,
        _connect(running.url) as conn,
    ):
        conn.sendall(REQUEST)
        assert _response(conn) == b"HTTP/1.1 200 OK"
        # Closed by the server after its 1 s, well before uvicorn's own 5 s would close it.
        conn.settimeout(4)
        assert conn.recv(1) == b""
