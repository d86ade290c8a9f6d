"""Scores in the editor: a graded run's past-runs row shows its graders' mean score, and why
on hover. Real Chromium, real ``plait serve`` (its workers grade), real Postgres."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import api, open_graph
from tests.e2e.test_run_story import show_run_panel
from tests.integration.server.harness import Cluster
from tests.polling import DEADLINE_SECONDS, POLL_SECONDS

#: A low-risk refund of refund-approval: issued without a person, graded by its spec's
#: `refund_as_agreed` grader (plait_examples.refunds:grade_refund).
SMALL_REFUND = {"order_id": "A-1001", "amount": 12.5, "reason": "Late delivery"}


def _scored(scores: list[dict[str, Any]]) -> bool:
    return bool(scores) and scores[0]["status"] == "scored"


def _graded_run(base: str) -> str:
    """Run the small refund to its end; wait until its grader scored it; its thread id."""
    with api(base) as http:
        thread_id: str = http.post("/threads", json={}).json()["thread_id"]
        done = http.post(
            f"/threads/{thread_id}/runs/wait",
            json={"assistant_id": "refund-approval", "input": SMALL_REFUND},
        )
        assert done.status_code == 200, done.text
        run_id = http.get(f"/threads/{thread_id}/runs").json()[0]["run_id"]

        # Polled with a deadline: a worker grades the run after its end, off the run's path.
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not _scored(http.get(f"/runs/{run_id}/scores").json()["scores"]):
            assert time.monotonic() < deadline, f"run {run_id} was not graded in time"
            time.sleep(POLL_SECONDS)
    return thread_id


def test_past_runs_show_a_runs_score_and_its_reason(editor: Page, plait_server: Cluster) -> None:
    page = editor
    base = plait_server.url
    thread_id = _graded_run(base)

    open_graph(page, base, "refund-approval", "1.0.0")
    show_run_panel(page)
    page.get_by_test_id("run-tab-past").click()
    row = page.locator(f'[data-testid="past-run"][data-thread="{thread_id}"]')
    badge = row.get_by_test_id("past-score")
    expect(badge).to_have_text("1.00")
    expect(badge).to_have_attribute("data-tone", "good")
    expect(badge).to_have_attribute("title", "refund_as_agreed: 1.00: refunded 12.50 as agreed")
    screenshot(page, "past-runs-scores")
