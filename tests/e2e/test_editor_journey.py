"""A user's whole journey on one graph: edit on the canvas, save a version, run it, approve, fork.

One test on purpose: each step starts from what the previous one left (the
saved version is what runs; the finished run is what is forked).
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import (
    api,
    connect,
    expect_status,
    flow_node,
    newest_thread,
    node_ids,
    open_graph,
    statuses_seen,
    still_card,
    watch_statuses,
    yaml_text,
)
from tests.integration.server.harness import Cluster

GRAPH = "refund-approval"
HEADER_COMMENT = "# Refunds: small ones are issued directly; a high-risk refund waits for a"
FUNCTION = "plait_examples.support:clean_text"


def test_edit_save_run_approve_fork(editor: Page, plait_server: Cluster) -> None:
    """Open, add + connect + configure a node, save 1.0.1, run it, approve on the card, fork."""
    page = editor
    base = plait_server.url
    open_graph(page, base, GRAPH, "1.0.0")
    before = node_ids(page)
    assert {"START", "assess", "approve", "refund", "decline", "END"} <= before

    # Add a python node by dragging it from the palette onto empty canvas.
    canvas = page.get_by_test_id("canvas")
    box = canvas.bounding_box()
    assert box is not None
    page.get_by_test_id("palette-python").drag_to(
        canvas, target_position={"x": box["width"] - 160, "y": box["height"] / 2}
    )
    expect(flow_node(page, "python")).to_be_visible()
    assert node_ids(page) - before == {"python"}

    # Connect refund -> python -> END with the handles.
    connect(page, "refund", "python")
    expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile(r"from: refund, to: python"))
    connect(page, "python", "END")
    expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile(r"from: python, to: END"))

    # Change its properties in the form.
    flow_node(page, "python").click()
    expect(page.get_by_test_id("properties-panel")).to_have_attribute("data-node", "python")
    page.get_by_test_id("prop-function").fill(FUNCTION)
    args = page.get_by_test_id("prop-args")
    args.fill("{text: state.outcome}")
    args.blur()  # YAML fields commit when the user leaves them

    # The YAML shows every change, and the file's comments survived the canvas edits.
    expect(page.get_by_test_id("yaml-text")).to_have_value(
        re.compile(re.escape(f"function: {FUNCTION}")), timeout=5_000
    )
    text = yaml_text(page)
    assert HEADER_COMMENT in text
    assert "# yaml-language-server: $schema=../schemas/plait-v1.schema.json" in text
    assert "from: refund" in text and "to: python" in text
    assert "from: python" in text
    assert "text: state.outcome" in text
    screenshot(page, "editor")

    # Save: diff against 1.0.0, version 1.0.1 proposed, stored on the server.
    page.get_by_test_id("toolbar-save").click()
    dialog = page.get_by_test_id("save-dialog")
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("save-version")).to_have_value("1.0.1")
    diff = page.get_by_test_id("save-diff")
    expect(diff.locator(".diff-added", has_text=FUNCTION)).to_have_count(1)
    expect(diff.locator(".diff-removed", has_text='version: "1.0.0"')).to_have_count(1)
    expect(diff.locator(".diff-added", has_text='version: "1.0.1"')).to_have_count(1)
    page.get_by_test_id("save-confirm").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("graph-title")).to_contain_text(f"{GRAPH}@1.0.1")
    with api(base) as http:
        stored = http.get(f"/graphs/{GRAPH}/versions/1.0.1")
        assert stored.status_code == 200, stored.text
        assert HEADER_COMMENT in stored.text
        assert f"function: {FUNCTION}" in stored.text
    assert (plait_server.specs_dir / "refund-approval.yaml").exists()

    # Run 1.0.1 with the first example (a high-risk refund): nodes change state live.
    page.get_by_test_id("toolbar-run").click()
    form = page.get_by_test_id("run-input-form")
    expect(form).to_be_visible()
    expect(form.locator('input[name="order_id"]')).to_have_value("A-1002")
    watch_statuses(page)
    page.get_by_test_id("run-start").click()
    expect_status(page, "assess", "done")
    expect_status(page, "approve", "waiting")
    expect(page.get_by_test_id("node-refund")).to_have_attribute("data-status", "pending")

    # The approval card sits on the waiting node, with what is to be approved.
    card = page.locator('[data-testid="approval-card"][data-node="approve"]')
    expect(card).to_be_visible()
    expect(card).to_contain_text("issue_refund")
    expect(card.get_by_test_id("approval-arguments")).to_contain_text('"amount": 180')
    expect(card).to_contain_text("high risk")
    expect(card.get_by_test_id("approval-budget")).to_be_visible()
    expect(card.get_by_test_id("approval-expiry")).not_to_have_text("never")
    screenshot(page, "journey-approval")

    # Approve on the card: the run resumes and finishes.
    still_card(page, "approve").get_by_test_id("approval-approve").click()
    expect_status(page, "refund", "done")
    expect_status(page, "python", "done")
    expect(page.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    expect_status(page, "approve", "done")
    assert statuses_seen(page, "approve")[:1] == ["pending"]
    assert "waiting" in statuses_seen(page, "approve")
    assert statuses_seen(page, "refund")[0] == "pending"
    assert statuses_seen(page, "refund")[-1] == "done"

    thread = newest_thread(base, GRAPH)
    with api(base) as http:
        state = http.get(f"/threads/{thread['thread_id']}/state").json()
        assert state["values"]["outcome"].startswith("refunded 180")
        assert state["values"]["decision"]["decision"] == "approve"
        runs_before = len(http.get(f"/threads/{thread['thread_id']}/runs").json())
    assert runs_before == 2  # the first run (parked on the approval) and its resume

    # Time travel: the checkpoint before `refund` ran; its state; fork a new run from it.
    page.get_by_test_id("run-tab-history").click()
    checkpoint = page.get_by_test_id("checkpoint").filter(has_text=re.compile(r"^after approve$"))
    expect(checkpoint).to_have_count(1)
    checkpoint.click()
    expect(page.get_by_test_id("checkpoint-state")).to_contain_text('"approved_amount": 180')
    page.get_by_test_id("fork-run").click()
    expect(page.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    expect_status(page, "refund", "done")
    with api(base) as http:
        runs = http.get(f"/threads/{thread['thread_id']}/runs").json()
        assert len(runs) == runs_before + 1
        assert all(run["status"] == "success" for run in runs)
        history = http.post(f"/threads/{thread['thread_id']}/history", json={"limit": 100}).json()
    # The fork wrote a second branch after the picked checkpoint: two children of it
    # (the original run's step and the fork's own checkpoint).
    picked_parent = [
        h for h in history if h["next"] == ["refund"] and h["metadata"]["source"] == "loop"
    ]
    assert picked_parent, "the checkpoint before refund is in the history"
    parent_id = picked_parent[0]["checkpoint"]["checkpoint_id"]
    children = [
        h for h in history if (h.get("parent_checkpoint") or {}).get("checkpoint_id") == parent_id
    ]
    assert sorted(child["metadata"]["source"] for child in children) == ["fork", "loop"]
