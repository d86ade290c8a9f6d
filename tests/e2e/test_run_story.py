"""The run's story in the editor: outcome, timeline, node inspector, skipped
nodes, past runs on the version that ran, the checkpoint tree and a fork with
an edited state. Real Chromium, real ``plait serve``, real Postgres."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import (
    api,
    assert_badge_matches_server,
    expect_status,
    flow_node,
    newest_thread,
    open_graph,
    still_card,
)
from tests.integration.server.harness import Cluster

SPECS = Path(__file__).resolve().parents[2] / "specs"
PLANNER = "planner-team"
REFUND = "refund-approval"
#: planner, then executor and reviewer twice (the reviewer asks for one revision).
PLANNER_STEPS = ["planner", "executor", "reviewer", "executor", "reviewer"]
DURATION = re.compile(r"^\d+(\.\d)? (ms|s)$|^\d+ min \d\d s$")


def upload_planner(base: str) -> None:
    """planner-team 1.0.0 and a 1.1.0 that differs in its description (uploaded once per server)."""
    text = (SPECS / f"{PLANNER}.yaml").read_text()
    newer = text.replace('version: "1.0.0"', 'version: "1.1.0"').replace(
        "revising until the reviewer approves.", "revising until approved."
    )
    with api(base) as http:
        for yaml in (text, newer):
            answer = http.post("/graphs", json={"yaml": yaml})
            assert answer.status_code in (200, 201, 409), answer.text


def show_run_panel(page: Page) -> None:
    """Open the run panel (the toolbar's Run toggles it; it may still be open from before)."""
    if not page.get_by_test_id("run-panel").is_visible():
        page.get_by_test_id("toolbar-run").click()
    expect(page.get_by_test_id("run-panel")).to_be_visible()


def run_from_editor(page: Page) -> None:
    """Open the run panel and start a run with the spec's first example."""
    show_run_panel(page)
    page.get_by_test_id("run-start").click()


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_planner_team_tells_its_story(
    editor: Page, plait_server: Cluster, size: tuple[int, int]
) -> None:
    page = editor
    page.set_viewport_size({"width": size[0], "height": size[1]})
    base = plait_server.url
    upload_planner(base)
    open_graph(page, base, PLANNER, "1.0.0")
    run_from_editor(page)

    # The outcome first: status, then the spec's output fields with their values.
    outcome = page.get_by_test_id("run-outcome")
    expect(outcome).to_have_attribute("data-phase", "success", timeout=20_000)
    expect(outcome).to_contain_text("Succeeded")
    fields = outcome.get_by_test_id("outcome-field")
    expect(fields).to_have_count(4)
    assert fields.evaluate_all("els => els.map(e => e.dataset.field)") == [
        "plan",
        "schedule",
        "review",
        "revisions",
    ]
    expect(outcome.locator('[data-field="schedule"]')).to_contain_text("2 buffer days")
    expect(outcome.locator('[data-field="review"]')).to_contain_text('"verdict": "approve"')

    # The timeline: every step, in order, each with a duration; loops counted.
    steps = page.get_by_test_id("timeline-step")
    expect(steps).to_have_count(len(PLANNER_STEPS))
    assert steps.evaluate_all("els => els.map(e => e.dataset.node)") == PLANNER_STEPS
    for duration in page.get_by_test_id("timeline-duration").all_inner_texts():
        assert DURATION.match(duration), duration
    expect(steps.nth(3)).to_contain_text("executor #2")
    expect(steps.nth(1)).to_contain_text("2 tools")
    expect(steps.nth(1)).to_contain_text("tok")
    if size == (1440, 900):
        screenshot(page, "run-timeline")

    # A step's detail: its tool calls with their arguments and results.
    steps.nth(1).click()
    detail = page.get_by_test_id("timeline").get_by_test_id("step-detail")
    expect(detail.get_by_test_id("tool-call")).to_have_count(2)
    expect(detail.get_by_test_id("tool-call").first).to_contain_text("estimate_tasks · ok")
    expect(detail.get_by_test_id("tool-result")).to_have_count(2)
    expect(detail.get_by_test_id("tool-result").first).to_contain_text("total_hours")

    # Selecting a node: what it did in this run, visit by visit.
    flow_node(page, "executor").click()
    inspector = page.get_by_test_id("node-inspector")
    expect(inspector).to_have_attribute("data-node", "executor")
    expect(inspector.get_by_test_id("node-visit")).to_have_count(2)
    expect(inspector.get_by_test_id("step-input")).to_contain_text(
        '"goal": "Ship the CSV export feature"'
    )
    expect(inspector.get_by_test_id("step-output")).to_contain_text(
        '"schedule": "11.6 hours of work'
    )
    expect(inspector.get_by_test_id("step-duration")).to_have_text(DURATION)
    inspector.get_by_test_id("node-visit").nth(1).click()
    expect(inspector.get_by_test_id("step-input")).to_contain_text("Add a buffer of 2 days")
    expect(inspector.get_by_test_id("step-output")).to_contain_text("Revised: 11.6 hours")
    # Cards stay one line: the inspector, not the card, holds the model's text.
    for status in ("planner", "executor", "reviewer"):
        expect_status(page, status, "done")
    expect(page.get_by_test_id("node-tokens")).to_have_count(0)


def test_past_run_opens_on_the_version_that_ran(editor: Page, plait_server: Cluster) -> None:
    page = editor
    base = plait_server.url
    upload_planner(base)
    open_graph(page, base, PLANNER, "1.0.0")
    run_from_editor(page)
    expect(page.get_by_test_id("run-outcome")).to_have_attribute(
        "data-phase", "success", timeout=20_000
    )
    thread = newest_thread(base, PLANNER)

    # On the newer version, the past run says how it ended and which version ran it.
    open_graph(page, base, PLANNER, "1.1.0")
    show_run_panel(page)
    page.get_by_test_id("run-tab-past").click()
    row = page.locator(f'[data-testid="past-run"][data-thread="{thread["thread_id"]}"]')
    expect(row.get_by_test_id("past-status")).to_have_text("succeeded")
    expect(row.get_by_test_id("past-version")).to_contain_text("1.0.0")

    # Opening it shows it on 1.0.0: that version's editor, with the run's story.
    row.get_by_test_id("open-past-run").click()
    expect(page.get_by_test_id("graph-title")).to_contain_text(f"{PLANNER}@1.0.0")
    hash = f"#/graphs/{PLANNER}/1.0.0?thread={thread['thread_id']}"
    expect(page).to_have_url(re.compile(re.escape(hash) + "$"))
    expect(page.get_by_test_id("timeline-step")).to_have_count(len(PLANNER_STEPS))
    expect(page.get_by_test_id("run-outcome")).to_have_attribute("data-phase", "success")


def test_refund_story_skipped_nodes_steps_and_an_edited_fork(
    editor: Page, plait_server: Cluster
) -> None:
    page = editor
    base = plait_server.url
    open_graph(page, base, REFUND, "1.0.0")
    run_from_editor(page)
    expect_status(page, "approve", "waiting")
    # The top bar counts the new approval as soon as the card shows it.
    assert_badge_matches_server(page, base, within_s=2.0)
    # A run that waits has not ended: nodes it has not reached are still pending.
    expect(page.get_by_test_id("node-decline")).to_have_attribute("data-status", "pending")
    # The waiting step has written nothing yet: its inspector shows what it read, no output.
    flow_node(page, "approve").click()
    inspector = page.get_by_test_id("node-inspector")
    expect(inspector.get_by_test_id("step-input")).to_be_visible()
    expect(inspector.get_by_test_id("step-output")).to_have_count(0)
    still_card(page, "approve").get_by_test_id("approval-approve").click()
    expect(page.get_by_test_id("run-outcome")).to_have_attribute(
        "data-phase", "success", timeout=20_000
    )
    expect(page.get_by_test_id("run-outcome").locator('[data-field="outcome"]')).to_contain_text(
        "refunded 180"
    )
    # The ended thread saves as the recording `plait replay` runs again.
    with page.expect_download() as saved:
        page.get_by_test_id("save-recording").click()
    assert saved.value.suggested_filename.startswith(f"{REFUND}-")
    recording = json.loads(Path(saved.value.path()).read_text(encoding="utf-8"))
    assert recording["format"] == "plait-recording/v1"
    assert recording["expected"]["steps"] == ["assess", "approve", "refund"]
    assert recording["decisions"] == [{"decision": "approve"}]

    # The path not taken reads skipped once the run ended.
    expect_status(page, "refund", "done")
    expect(page.get_by_test_id("node-decline")).to_have_attribute("data-status", "skipped")
    flow_node(page, "decline").click()
    expect(page.get_by_test_id("node-not-run")).to_contain_text("Skipped")

    # The timeline: the approval asked, the decision, every step once.
    steps = page.get_by_test_id("timeline-step")
    assert steps.evaluate_all("els => els.map(e => e.dataset.node)") == [
        "assess",
        "approve",
        "refund",
    ]
    notes = page.get_by_test_id("timeline-note")
    assert notes.evaluate_all("els => els.map(e => e.dataset.type)") == ["approval", "decision"]
    expect(notes.nth(1)).to_contain_text("approve")
    flow_node(page, "approve").click()
    expect(page.get_by_test_id("node-inspector").get_by_test_id("step-decision")).to_have_text(
        "approve"
    )

    # The input, then the state after each step, labelled by the node that wrote it and
    # numbered as the heading counts steps.
    page.get_by_test_id("run-tab-steps").click()
    labels = page.get_by_test_id("step-inspector").locator(".step-list button").all_inner_texts()
    assert labels == [
        "Input",
        "Step 1 · after assess",
        "Step 2 · after approve",
        "Step 3 · after refund",
    ]

    # Time travel: checkpoints in words, no engine internals.
    page.get_by_test_id("run-tab-history").click()
    checkpoints = page.get_by_test_id("checkpoint")
    expect(checkpoints.first).to_have_text("input")
    texts = checkpoints.all_inner_texts()
    assert not any("__start__" in text or "step -1" in text for text in texts), texts
    assert [text.split(" · ")[0] for text in texts] == [
        "input",
        "after assess",
        "after approve",
        "after refund",
    ]

    # A diff between two checkpoints.
    checkpoints.filter(has_text="after approve").click()
    page.get_by_test_id("compare-with").select_option(label="input")
    diff = page.get_by_test_id("state-diff")
    expect(diff.locator('[data-field="assessment"]')).to_be_visible()
    expect(diff.locator('[data-field="decision"]')).to_contain_text('"decision": "approve"')

    # Edit the state before refund runs (half the amount), then run from it: a new branch.
    page.get_by_test_id("edit-state").click()
    draft = page.get_by_test_id("state-draft")
    values = json.loads(draft.input_value())
    assert values["approved_amount"] == 180
    draft.fill(json.dumps({**values, "approved_amount": 90}, indent=2))
    page.get_by_test_id("fork-edited").click()
    # The tree is read again once the fork's run ended: the edit and the run after it, on a branch.
    edited = page.locator('[data-testid="checkpoint-tree"] li', has_text="edited state")
    expect(edited).to_have_count(1, timeout=20_000)
    expect(edited).to_have_attribute("data-depth", "1")
    branch_end = page.locator(
        '[data-testid="checkpoint-tree"] li[data-depth="1"]', has_text="after refund"
    )
    expect(branch_end).to_have_count(1, timeout=20_000)
    expect(page.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    thread = newest_thread(base, REFUND)
    with api(base) as http:
        state = http.get(f"/threads/{thread['thread_id']}/state").json()
    assert state["values"]["refund"]["amount"] == 90
    assert state["values"]["outcome"] == "refunded 90 to grace@example.com"


def test_what_the_model_saw_and_said_from_the_audit(editor: Page, plait_server: Cluster) -> None:
    page = editor
    with api(plait_server.url) as http:  # support-triage audits its model calls
        text = (SPECS / "support-triage.yaml").read_text()
        answer = http.post("/graphs", json={"yaml": text})
        assert answer.status_code in (200, 201), answer.text
    open_graph(page, plait_server.url, "support-triage", "1.0.0")
    run_from_editor(page)
    expect(page.get_by_test_id("run-outcome")).to_have_attribute(
        "data-phase", "success", timeout=20_000
    )
    flow_node(page, "answer").click()
    calls = page.get_by_test_id("model-calls")
    calls.locator("summary").click()

    expect(calls.locator("summary")).to_have_text("What the model saw and said (1 call)")
    call = calls.get_by_test_id("model-call")
    expect(call).to_contain_text("small")  # the routed model that answered
    expect(call).to_contain_text("You answer customer support messages politely and precisely.")
    expect(call).to_contain_text("How do I change my delivery address?")
    expect(call).to_contain_text("You can change your delivery address under Orders > Edit")
    screenshot(page, "model-calls")
