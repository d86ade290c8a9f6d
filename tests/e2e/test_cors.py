"""A front end on another origin calls Plait from a real browser (CORS).

The pages are served by a plain HTTP server on another port of 127.0.0.1 (as
a Vite or Next dev server would serve them), so every call to ``plait serve``
is cross-origin: the browser sends preflights for ``x-api-key`` and JSON
bodies and hides any answer without ``Access-Control-Allow-Origin``. One page
does what a chat front end does by hand (creates a thread, streams a run with
``fetch`` reading ``Content-Location`` for the run id, rejoins the finished
run's stream); the other is a React chat on ``useStream`` from
``@langchain/langgraph-sdk``, built with Vite from ``tests/e2e/usestream``.
"""

from __future__ import annotations

import functools
import secrets
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import REPO, SPEC_SOURCES, guarded
from tests.integration.server.harness import SPECS, Cluster, fresh_cluster

ADMIN_KEY = secrets.token_hex(32)

PAGE = """<!doctype html>
<html><body><pre id="out"></pre><script>
async function run(api, key) {
  const headers = {"x-api-key": key, "content-type": "application/json"};
  const created = await fetch(api + "/threads", {method: "POST", headers, body: "{}"});
  const thread = await created.json();
  const response = await fetch(api + "/threads/" + thread.thread_id + "/runs/stream", {
    method: "POST",
    headers,
    body: JSON.stringify({assistant_id: "summarize", input: {text: "From another origin."}}),
  });
  const body = await response.text();
  const events = [...body.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
  const runPath = response.headers.get("content-location");
  // Rejoin the finished run's stream the way the SDKs do: a GET with the key.
  const rejoin = await fetch(api + runPath + "/stream", {headers: {"x-api-key": key}});
  const replayed = [...(await rejoin.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
  return {status: response.status, runPath, events, replayed};
}
</script></body></html>
"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGE.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the page, not the server's log."""


@contextmanager
def _serving(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server of ``handler`` on a free port of 127.0.0.1: its origin URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the page, not the server's log."""


@pytest.fixture(scope="module")
def front_end() -> Iterator[str]:
    """The hand-written page's own server on another port of 127.0.0.1: its origin."""
    with _serving(_Page) as origin:
        yield origin


@pytest.fixture(scope="module")
def use_stream_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The useStream chat, built with Vite and served on another port: its origin."""
    out = tmp_path_factory.mktemp("usestream")
    npx = shutil.which("npx")
    assert npx, "npx is needed to build the useStream page (npm ci installs Vite)"
    built = subprocess.run(
        [npx, "vite", "build", "tests/e2e/usestream", "--outDir", str(out), "--emptyOutDir"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, f"the useStream page did not build:\n{built.stderr}"
    with _serving(functools.partial(_Quiet, directory=str(out))) as origin:
        yield origin


@pytest.fixture(scope="module")
def keyed_server(
    editor_dist: object, postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with keys required, on its default CORS policy."""
    with fresh_cluster(
        postgres_server_url,
        tmp_path_factory.mktemp("e2e-cors"),
        [*SPEC_SOURCES, SPECS / "chat.yaml"],
        extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
    ) as running:
        yield running


def test_a_page_on_another_port_streams_a_run(
    page: Page, front_end: str, keyed_server: Cluster
) -> None:
    assert front_end != keyed_server.url  # two origins: the calls below are cross-origin
    with guarded(page):
        page.goto(front_end + "/")
        result = page.evaluate("([api, key]) => run(api, key)", [keyed_server.url, ADMIN_KEY])
    assert result["status"] == 200
    assert result["runPath"].startswith("/threads/")
    assert result["events"][0] == "metadata"
    assert result["events"][-1] == "end"
    assert "values" in result["events"]
    assert result["replayed"] == result["events"]


def test_a_use_stream_chat_on_another_port_streams_the_conversation(
    page: Page, use_stream_app: str, keyed_server: Cluster
) -> None:
    """The docs' React example, as it runs from a dev server: useStream against Plait."""
    query = urlencode({"api": keyed_server.url, "key": ADMIN_KEY})
    with guarded(page):
        page.goto(f"{use_stream_app}/index.html?{query}")
        page.locator("#send").click()
        messages = page.locator("#messages li")
        expect(messages).to_have_count(2)
        expect(messages.nth(0)).to_have_attribute("data-type", "human")
        expect(messages.nth(1)).to_have_attribute("data-type", "ai")
        expect(messages.nth(1)).to_contain_text("Refunds up to 100 are issued at once")
        expect(page.locator("#state")).to_have_text("idle")
        expect(page.locator("#error")).to_have_count(0)
