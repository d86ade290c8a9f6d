"""The approvals page across runs, and the version history's graph and text diff."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import api, open_graph, park_refund, still_card
from tests.integration.server.harness import Cluster


def _finished_state(base: str, thread_id: str) -> dict[str, Any]:
    """Join the thread's newest run and return the thread's state."""
    with api(base) as http:
        runs = http.get(f"/threads/{thread_id}/runs").json()
        newest = max(runs, key=lambda run: run["created_at"])
        joined = http.get(f"/threads/{thread_id}/runs/{newest['run_id']}/join")
        assert joined.status_code == 200, joined.text
        state: dict[str, Any] = http.get(f"/threads/{thread_id}/state").json()
    return state


def test_approvals_page_lists_and_decides(editor: Page, plait_server: Cluster) -> None:
    """Pending approvals of two runs show as cards; rejecting one finishes its run."""
    base = plait_server.url
    first, _ = park_refund(base, "e2e approvals one")
    second, _ = park_refund(base, "e2e approvals two")

    editor.goto(f"{base}/#/approvals")
    page_root = editor.get_by_test_id("approvals-page")
    one = page_root.get_by_test_id("approval-card").filter(has_text="e2e approvals one")
    two = page_root.get_by_test_id("approval-card").filter(has_text="e2e approvals two")
    expect(one).to_be_visible()
    expect(two).to_be_visible()
    expect(one).to_contain_text("issue_refund")
    expect(one.get_by_test_id("approval-open-run")).to_have_attribute(
        "href", f"#/graphs/refund-approval/1.0.0?thread={first}"
    )

    # Edit the arguments of the second (a smaller refund), reject the first.
    two.get_by_test_id("approval-edit").click()
    two.get_by_test_id("arguments-mode-json").click()
    two.get_by_test_id("approval-arguments-json").fill('{"order_id": "A-1002", "amount": 90}')
    two.get_by_test_id("approval-send-edit").click()
    expect(two).to_have_count(0)
    one.get_by_test_id("approval-reject").click()
    expect(one).to_have_count(0)

    rejected = _finished_state(base, first)
    assert rejected["values"]["decision"]["decision"] == "reject"
    assert "refunded" not in rejected["values"]["outcome"]
    edited = _finished_state(base, second)
    assert edited["values"]["decision"]["decision"] == "edit"
    assert edited["values"]["outcome"].startswith("refunded 90")


def test_approval_link_opens_the_waiting_run(editor: Page, plait_server: Cluster) -> None:
    """The card's link opens the graph with the waiting run on the canvas, decidable there."""
    base = plait_server.url
    thread_id, _ = park_refund(base, "e2e link to run")
    editor.goto(f"{base}/#/approvals")
    card = editor.get_by_test_id("approval-card").filter(has_text="e2e link to run")
    card.get_by_test_id("approval-open-run").click()
    expect(editor.get_by_test_id("graph-title")).to_contain_text("refund-approval@1.0.0")
    node_card = editor.locator('[data-testid="approval-card"][data-node="approve"]')
    expect(node_card).to_contain_text("e2e link to run")
    still_card(editor, "approve").get_by_test_id("approval-approve").click()
    expect(editor.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    assert _finished_state(base, thread_id)["values"]["outcome"].startswith("refunded 180")


def test_version_history_diff(editor: Page, plait_server: Cluster) -> None:
    """Two versions compared: the changed node marked on both canvases, and the text diff."""
    base = plait_server.url
    with api(base) as http:
        original = http.get("/graphs/summarize/versions/1.0.0").text
        changed = original.replace('version: "1.0.0"', 'version: "1.1.0"').replace(
            "system: Summarise the message in one sentence and list its key points.",
            "system: Summarise the message in two sentences and list its key points.",
        )
        assert changed != original
        uploaded = http.post("/graphs", json={"yaml": changed})
        assert uploaded.status_code in (200, 201), uploaded.text
        # Refused: same version, other content (the dialog shows such errors; the API must refuse).
        clash = http.post("/graphs", json={"yaml": changed.replace("two sentences", "three")})
        assert clash.status_code == 409, clash.text

    open_graph(editor, base, "summarize", "1.1.0")
    editor.get_by_test_id("toolbar-history").click()
    history = editor.get_by_test_id("version-history")
    expect(history.get_by_test_id("version-row")).to_have_count(2)
    expect(editor.get_by_test_id("diff-from")).to_have_value("1.0.0")
    expect(editor.get_by_test_id("diff-to")).to_have_value("1.1.0")
    editor.get_by_test_id("diff-compare").click()
    changes = editor.get_by_test_id("diff-changes")
    marked = changes.locator("li[data-mark]")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("data-node", "summarize")
    expect(marked).to_have_attribute("data-mark", "changed")
    # What changed in the node: its `system` prompt, before and after.
    fields = editor.get_by_test_id("diff-node-fields")
    expect(fields).to_have_attribute("data-node", "summarize")
    row = fields.locator("tr[data-field=system]")
    expect(row.locator(".diff-removed")).to_contain_text("one sentence")
    expect(row.locator(".diff-added")).to_contain_text("two sentences")
    expect(fields.locator("tr[data-field]")).to_have_count(1)
    # Marked on the editor's canvas and on the diff canvas.
    expect(editor.get_by_test_id("canvas").get_by_test_id("node-summarize")).to_have_attribute(
        "data-diff", "changed"
    )
    diff_graph = editor.get_by_test_id("diff-graph")
    expect(diff_graph.get_by_test_id("node-summarize")).to_have_attribute("data-diff", "changed")
    expect(diff_graph.get_by_test_id("node-clean")).to_have_attribute("data-diff", "")
    screenshot(editor, "version-diff")
    editor.get_by_test_id("diff-tab-text").click()
    text = editor.get_by_test_id("version-text-diff")
    expect(text.locator(".diff-added", has_text="two sentences")).to_have_count(1)
    expect(text.locator(".diff-removed", has_text="one sentence")).to_have_count(1)


def test_run_streams_model_output(editor: Page, plait_server: Cluster) -> None:
    """A model node's reply streams into its panel; the state after each step can be inspected."""
    base = plait_server.url
    open_graph(editor, base, "summarize", "1.0.0")
    editor.get_by_test_id("toolbar-run").click()
    form = editor.get_by_test_id("run-input-form")
    form.locator('[name="text"]').fill("Hello, I was charged twice for the November invoice.")
    started = time.monotonic()
    editor.get_by_test_id("run-start").click()
    expect(editor.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    assert time.monotonic() - started < 20
    tokens = editor.get_by_test_id("token-stream").locator('section[data-node="summarize"]')
    # The scripted model's structured reply, streamed as the node's message.
    expect(tokens).to_contain_text('"summary":')
    expect(tokens).to_contain_text('"key_points":')
    editor.get_by_test_id("run-tab-steps").click()
    steps = editor.get_by_test_id("step-inspector").locator(".step-list button")
    assert steps.count() >= 2
    steps.first.click()
    expect(editor.get_by_test_id("step-state")).not_to_contain_text('"summary": "The customer')
    steps.last.click()
    expect(editor.get_by_test_id("step-state")).to_contain_text('"summary": "The customer')
