"""Browser steps shared by the e2e tests: React Flow nodes, handles, status watching."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from playwright.sync_api import Locator, Page, expect


def flow_node(page: Page, node_id: str) -> Locator:
    """The React Flow wrapper of a canvas node."""
    return page.locator(f'.react-flow__node[data-id="{node_id}"]')


def open_graph(page: Page, base_url: str, name: str, version: str) -> None:
    """Open ``name@version`` in the editor and wait until its nodes are measured and shown."""
    page.goto(f"{base_url}/#/graphs/{name}/{version}")
    # Unmeasured React Flow nodes are hidden: visible means laid out.
    expect(page.locator(".react-flow__node").first).to_be_visible()
    expect(page.get_by_test_id("graph-title")).to_contain_text(f"{name}@{version}")


def node_ids(page: Page) -> set[str]:
    """Ids of every node on the canvas."""
    ids = page.locator(".react-flow__node").evaluate_all("els => els.map(e => e.dataset.id)")
    return set(ids)


def _center(locator: Locator) -> tuple[float, float]:
    box = locator.bounding_box()
    assert box is not None, f"{locator} has no box (not visible?)"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def connect(page: Page, source: str, target: str) -> None:
    """Drag from ``source``'s output handle to ``target``'s input handle, as a user does."""
    start = flow_node(page, source).locator(".react-flow__handle.source")
    end = flow_node(page, target).locator(".react-flow__handle.target")
    expect(start).to_be_visible()
    expect(end).to_be_visible()
    x0, y0 = _center(start)
    x1, y1 = _center(end)
    page.mouse.move(x0, y0)
    page.mouse.down()
    # In steps: React Flow tracks the pointer to find the handle under it.
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=10)
    page.mouse.move(x1, y1, steps=10)
    page.mouse.up()


def yaml_text(page: Page) -> str:
    """The spec text in the editor (the YAML pane's mirror of the store)."""
    return page.get_by_test_id("yaml-text").input_value()


WATCH_STATUS_JS = """
() => {
  window.__statusLog = [];
  const record = (el) => {
    const id = (el.dataset.testid || "").replace(/^node-/, "");
    const status = el.dataset.status;
    if (!status) return;
    const log = window.__statusLog;
    const last = [...log].reverse().find((entry) => entry[0] === id);
    if (!last || last[1] !== status) log.push([id, status]);
  };
  document.querySelectorAll("[data-status][data-testid^='node-']").forEach(record);
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      if (m.type === "attributes" && m.target.dataset && m.target.dataset.testid) record(m.target);
      for (const added of m.addedNodes || []) {
        if (!added.querySelectorAll) continue;
        added.querySelectorAll("[data-status][data-testid^='node-']").forEach(record);
      }
    }
  }).observe(document.body, {
    attributes: true, attributeFilter: ["data-status"], subtree: true, childList: true,
  });
}
"""


def watch_statuses(page: Page) -> None:
    """Start recording every node status change the page shows."""
    page.evaluate(WATCH_STATUS_JS)


def statuses_seen(page: Page, node_id: str) -> list[str]:
    """The statuses ``node_id`` showed since ``watch_statuses``, in order."""
    log: list[list[str]] = page.evaluate("() => window.__statusLog")
    return [status for node, status in log if node == node_id]


def expect_status(page: Page, node_id: str, status: str, timeout: float = 20_000) -> None:
    """Wait until the node shows ``status``."""
    expect(page.get_by_test_id(f"node-{node_id}")).to_have_attribute(
        "data-status", status, timeout=timeout
    )


def api(base_url: str, key: str | None = None) -> httpx.Client:
    """A plain HTTP client on the server (for setup and checks beside the browser).

    With ``key``, every request carries it as ``x-api-key``.
    """
    headers = {"x-api-key": key} if key is not None else None
    return httpx.Client(base_url=base_url, headers=headers, timeout=30.0)


def newest_thread(base_url: str, graph: str, key: str | None = None) -> dict[str, Any]:
    """The most recently created thread tagged with ``graph`` (of ``key``'s tenant, if given)."""
    with api(base_url, key) as http:
        found = http.post(
            "/threads/search",
            json={
                "metadata": {"graph_id": graph},
                "limit": 1,
                "sort_by": "created_at",
                "sort_order": "desc",
            },
        )
        assert found.status_code == 200, found.text
        threads: list[dict[str, Any]] = found.json()
    assert threads, f"no thread of {graph} for this client"
    return threads[0]


#: A refund large enough to need a person's approval (refund-approval's risk rule).
REFUND_INPUT = {"order_id": "A-1002", "amount": 180.0}


def park_refund(base_url: str, reason: str) -> tuple[str, str]:
    """A high-risk refund started through the API and parked on its approval.

    Returns (thread id, approval id).
    """
    with api(base_url) as http:
        thread = http.post("/threads", json={"metadata": {"graph_id": "refund-approval"}}).json()
        run = http.post(
            f"/threads/{thread['thread_id']}/runs/wait",
            json={
                "assistant_id": "refund-approval@1.0.0",
                "input": {**REFUND_INPUT, "reason": reason},
            },
        )
        assert run.status_code == 200, run.text
        assert http.get(f"/threads/{thread['thread_id']}").json()["status"] == "interrupted"
        [approval] = [
            item
            for item in http.get("/approvals", params={"status": "pending"}).json()
            if item["thread_id"] == thread["thread_id"]
        ]
    return str(thread["thread_id"]), str(approval["approval_id"])


WATCH_RUN_WORDS_JS = """
() => {
  window.__runWords = [];
  // The element's own text, without its children's (the line's thread id, the heading's facts).
  const own = (el) => [...el.childNodes]
    .filter((n) => n.nodeType === Node.TEXT_NODE)
    .map((n) => n.textContent)
    .join("");
  const places = {
    line: () => document.querySelector("[data-testid='run-phase']"),
    heading: () => document.querySelector("[data-testid='run-outcome'] h3"),
    detail: () => document.querySelector("[data-testid='run-state-label']"),
  };
  const record = () => {
    for (const [place, find] of Object.entries(places)) {
      const el = find();
      if (!el) continue;
      const text = place === "detail" ? el.textContent : own(el);
      const last = [...window.__runWords].reverse().find((entry) => entry[0] === place);
      if (!last || last[1] !== text) window.__runWords.push([place, text]);
    }
  };
  record();
  // Delivered after each DOM change and before the next paint: every text a person could see.
  new MutationObserver(record).observe(document.body, {
    subtree: true, childList: true, characterData: true,
  });
}
"""


def watch_run_words(page: Page) -> None:
    """Start recording every text the run view's state words show: line, heading and detail."""
    page.evaluate(WATCH_RUN_WORDS_JS)


def run_words_seen(page: Page, place: str) -> list[str]:
    """The texts ``place`` (``line``, ``heading``, ``detail``) showed since ``watch_run_words``."""
    log: list[list[str]] = page.evaluate("() => window.__runWords")
    return [text for where, text in log if where == place]


class Relay:
    """A TCP relay in front of the server that a test can cut, as a network or a restart does.

    The page talks to the server through it (open the editor at ``relay.url``). ``cut()``
    drops every connection through it mid-stream and refuses new ones (they are closed at
    once) until ``restore()``.
    """

    def __init__(self, server_url: str) -> None:
        self._target = ("127.0.0.1", int(server_url.rsplit(":", 1)[1]))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Drop every open connection, and refuse new ones until :meth:`restore`."""
        with self._lock:
            self._cut = True
            dropped, self._sockets = self._sockets, set()
        for sock in dropped:
            _close(sock)

    def restore(self) -> None:
        """Let connections through again."""
        with self._lock:
            self._cut = False

    def close(self) -> None:
        """Stop relaying (and drop what is open)."""
        self._closed = True
        self.cut()
        _close(self._listener)

    def __enter__(self) -> Relay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refused = self._cut
            if refused:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self._target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._sockets.update((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            with contextlib.suppress(OSError):
                while chunk := source.recv(65536):
                    sink.sendall(chunk)
        finally:
            _close(source)
            _close(sink)
            with self._lock:
                self._sockets.discard(source)
                self._sockets.discard(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def assert_badge_matches_server(page: Page, base: str, *, within_s: float) -> None:
    """The top bar's approvals count equals the server's pending count within ``within_s``."""
    badge = page.get_by_test_id("approvals-badge")
    deadline = time.monotonic() + within_s
    with api(base) as http:
        while True:
            listed = http.get("/approvals", params={"status": "pending"})
            assert listed.status_code == 200, listed.text
            server = len(listed.json())
            shown = int(badge.get_attribute("data-count") or 0) if badge.count() else 0
            if shown == server:
                return
            assert time.monotonic() < deadline, f"the badge says {shown}, the server {server}"
            page.wait_for_timeout(100)


#: Resolves true once the approval card and the canvas view have stood still for 0.5 s.
_CARD_STILL_JS = (Path(__file__).with_name("approval_card_still.js")).read_text(encoding="utf-8")


def still_card(page: Page, node_id: str) -> Locator:
    """``node_id``'s approval card once it and the view stand still, as a person sees it
    before reaching for its buttons: its placement may pan or zoom the view as it appears,
    and again after a fit."""
    card = page.locator(f'[data-testid="approval-card"][data-node="{node_id}"]')
    expect(card).to_be_visible()
    assert page.evaluate(_CARD_STILL_JS), f"the approval card of {node_id} kept moving"
    return card
