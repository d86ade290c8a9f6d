"""The approvals inbox and the approval card, as a reviewer uses them.

A refund parked on its approval: the top bar counts it, the inbox lists it
(filters, sort, requested-at), its link opens the editor on that graph,
version and thread with the card beside the waiting node (also after a
reload), the card is inside the canvas and clear of the minimap and panes
and holds still while it is used (unless the view pushes it out of sight),
arguments are edited through a form that shows the change, and the decision
is followed to the run it resumed; the decided tab says who, what and when.
"""

from __future__ import annotations

import itertools
import re
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import api, flow_node, park_refund, still_card
from tests.integration.server.harness import Cluster

#: Three of the badge's polls (editor/src/approvals/pendingCount.ts polls every 5 s).
BADGE_POLLS_MS = 15_000

#: Rectangles of the card, the canvas and everything that may cover the canvas.
_GEOMETRY_JS = """
() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const anchor = document.querySelector('[data-testid="approval-anchor"]');
  const canvas = document.querySelector('.react-flow');
  if (!anchor || !canvas) return null;
  const covers = [...document.querySelectorAll('.react-flow__panel')].map(
    (el) => ({name: el.className, box: box(el)}));
  // Every pane of the workspace beside the canvas (YAML, properties, run panel, palette).
  for (const el of document.querySelectorAll('.plait-workspace > *'))
    if (!el.contains(canvas)) covers.push({name: el.className, box: box(el)});
  for (const el of document.querySelectorAll('[data-overlays-canvas]'))
    covers.push({name: el.className, box: box(el)});
  // The graph's other nodes: the card should leave them in sight.
  const own = anchor.querySelector('[data-testid="approval-card"]')?.dataset.node;
  const nodes = [...document.querySelectorAll('.react-flow__node')]
    .filter((el) => el.dataset.id !== own)
    .map((el) => ({name: `node ${el.dataset.id}`, box: box(el)}));
  return {card: box(anchor), canvas: box(canvas), covers, nodes,
          window: {right: window.innerWidth, bottom: window.innerHeight}};
}
"""


def _placed_well(geometry: dict[str, Any] | None, nodes_clear: bool) -> list[str]:
    """What is wrong with where the card is (nothing: an empty list); with ``nodes_clear``,
    a node of the graph it hides is wrong too."""
    if geometry is None:
        return ["no approval card on the canvas"]
    card, canvas = geometry["card"], geometry["canvas"]
    problems = []
    for side in ("left", "top"):
        if card[side] < canvas[side] - 0.5:
            problems.append(f"card sticks out of the canvas on the {side}")
    for side in ("right", "bottom"):
        if card[side] > min(canvas[side], geometry["window"][side]) + 0.5:
            problems.append(f"card sticks out of the canvas on the {side}")
    for cover in geometry["covers"] + (geometry["nodes"] if nodes_clear else []):
        other = cover["box"]
        if (
            card["left"] < other["right"]
            and other["left"] < card["right"]
            and card["top"] < other["bottom"]
            and other["top"] < card["bottom"]
        ):
            problems.append(f"card overlaps {cover['name']}")
    return problems


def expect_card_in_view(page: Page, *, nodes_clear: bool = False) -> None:
    """The card settles fully inside the canvas, clear of the minimap, controls and panes
    (and, with ``nodes_clear``, of the graph's other nodes)."""
    check = f"() => {{ const g = ({_GEOMETRY_JS})(); return g !== null; }}"
    page.wait_for_function(check)
    # Placement may pan the view (animated): wait for it to settle, then say what is wrong.
    with suppress(PlaywrightTimeout):
        page.wait_for_function(
            f"""() => {{
              const g = ({_GEOMETRY_JS})();
              if (!g) return false;
              const c = g.card, v = g.canvas;
              const inside = c.left >= v.left - 0.5 && c.top >= v.top - 0.5
                && c.right <= Math.min(v.right, g.window.right) + 0.5
                && c.bottom <= Math.min(v.bottom, g.window.bottom) + 0.5;
              const clear = g.covers.concat({"g.nodes" if nodes_clear else "[]"})
                .every(({{box: o}}) => !(c.left < o.right && o.left < c.right
                && c.top < o.bottom && o.top < c.bottom));
              return inside && clear;
            }}""",
            timeout=5_000,
        )
    assert _placed_well(page.evaluate(_GEOMETRY_JS), nodes_clear) == []


def _pending_count(base: str) -> int:
    with api(base) as http:
        return len(http.get("/approvals", params={"status": "pending"}).json())


def _approval(base: str, approval_id: str) -> dict[str, Any]:
    with api(base) as http:
        found: dict[str, Any] = http.get(f"/approvals/{approval_id}").json()
    return found


def test_inbox_counts_lists_filters_and_sorts(editor: Page, plait_server: Cluster) -> None:
    """The badge counts pending approvals; the inbox lists them with requested-at,
    filtered and sorted."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1440, "height": 900})
    park_refund(base, "inbox first")
    park_refund(base, "inbox second")
    editor.goto(f"{base}/#/approvals")
    badge = editor.get_by_test_id("approvals-badge")
    expect(badge).to_have_text(str(_pending_count(base)))
    # Parked elsewhere while the page is open: the badge follows at its next poll
    # (every 5 s), so the wait covers a few polls on a busy machine.
    park_refund(base, "inbox third")
    expect(badge).to_have_text(str(_pending_count(base)), timeout=BADGE_POLLS_MS)

    cards = editor.get_by_test_id("inbox-pending").get_by_test_id("approval-card")
    first = cards.filter(has_text="inbox first")
    expect(first).to_be_visible()
    expect(first.get_by_test_id("approval-requested")).to_contain_text(
        re.compile(r"just now|\d+ min ago")
    )
    screenshot(editor, "approvals")

    def order() -> list[str]:
        texts = cards.all_inner_texts()
        return [
            name
            for text in texts
            for name in ("inbox first", "inbox second", "inbox third")
            if name in text
        ]

    expect(cards.filter(has_text="inbox third")).to_be_visible()
    assert order() == ["inbox first", "inbox second", "inbox third"]
    # Sorting keeps the cards on screen while the server's order is read: a person
    # never sees the inbox emptied to "Loading…" (records every moment it has no cards).
    editor.evaluate(
        """() => {
          window.__inboxEmptied = false;
          new MutationObserver(() => {
            if (!document.querySelector('[data-testid=inbox-pending] [data-testid=approval-card]'))
              window.__inboxEmptied = true;
          }).observe(document.body, {childList: true, subtree: true});
        }"""
    )
    with editor.expect_response(lambda response: "order=newest" in response.url):
        editor.get_by_test_id("inbox-sort").select_option("newest")
    expect(cards.first).to_contain_text("inbox third")
    assert order() == ["inbox third", "inbox second", "inbox first"]
    assert editor.evaluate("() => window.__inboxEmptied") is False

    graph = editor.get_by_test_id("inbox-filter-graph")
    graph.select_option("refund-approval")
    expect(first).to_be_visible()
    age = editor.get_by_test_id("inbox-filter-age")
    age.select_option("over-hour")
    expect(cards).to_have_count(0)
    expect(editor.get_by_test_id("approvals-empty")).to_contain_text("No approval matches")
    age.select_option("hour")
    expect(first).to_be_visible()
    # Pending is pending: the status filter is for decided approvals.
    expect(editor.get_by_test_id("inbox-filter-status")).to_be_disabled()


def test_the_badge_does_not_make_the_header_taller(editor: Page, plait_server: Cluster) -> None:
    """A badge that appears must not grow the header: the canvas below would shrink and every
    open graph refit under the person's eyes (and cut short a pan of its approval card)."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1280, "height": 720})
    park_refund(base, "header height")
    editor.goto(f"{base}/#/graphs/refund-approval/1.0.0")
    expect(editor.get_by_test_id("approvals-badge")).to_be_visible(timeout=BADGE_POLLS_MS)
    with_badge, without = editor.evaluate(
        """() => {
          const header = document.querySelector('[data-testid="app-header"]');
          const badge = header.querySelector('[data-testid="approvals-badge"]');
          const shown = header.getBoundingClientRect().height;
          badge.style.display = "none";
          const hidden = header.getBoundingClientRect().height;
          badge.style.display = "";
          return [shown, hidden];
        }"""
    )
    assert with_badge == without, f"the header is {with_badge} px with the badge, {without} without"


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_link_opens_the_waiting_run_with_its_card(
    editor: Page, plait_server: Cluster, size: tuple[int, int]
) -> None:
    """The inbox link names graph, version and thread; the editor opens that run
    with its card in view, also after a reload."""
    base = plait_server.url
    width, height = size
    editor.set_viewport_size({"width": width, "height": height})
    reason = f"link at {width}x{height}"
    thread_id, _ = park_refund(base, reason)
    editor.goto(f"{base}/#/approvals")
    link = (
        editor.get_by_test_id("approval-card")
        .filter(has_text=reason)
        .get_by_test_id("approval-open-run")
    )
    expect(link).to_have_attribute("href", f"#/graphs/refund-approval/1.0.0?thread={thread_id}")
    link.click()

    for opened in ("from the inbox", "after a reload"):
        expect(editor.get_by_test_id("graph-title")).to_contain_text("refund-approval@1.0.0")
        assert editor.url.endswith(f"#/graphs/refund-approval/1.0.0?thread={thread_id}"), opened
        expect(editor.get_by_test_id("run-phase")).to_have_attribute("data-phase", "waiting")
        expect(editor.get_by_test_id("run-phase")).to_contain_text(thread_id[:8])
        # Started by a client that streamed only values: its checkpoints tell its steps.
        steps = editor.get_by_test_id("timeline-step")
        expect(steps).to_have_count(2)
        expect(steps.nth(0)).to_have_attribute("data-node", "assess")
        expect(steps.nth(0)).to_have_attribute("data-status", "done")
        expect(steps.nth(1)).to_have_attribute("data-node", "approve")
        expect(steps.nth(1)).to_have_attribute("data-status", "waiting")
        expect(editor.get_by_test_id("run-outcome")).not_to_contain_text("0 steps")
        card = editor.locator('[data-testid="approval-card"][data-node="approve"]')
        expect(card).to_contain_text(reason)
        expect(card.get_by_test_id("approval-edit")).to_be_visible()
        expect_card_in_view(editor, nodes_clear=True)
        if opened == "from the inbox":
            if width == 1440:
                screenshot(editor, "run-approval")
            editor.reload()


#: The edges' labels the card covers, and the side it is on.
_LABELS_UNDER_CARD_JS = """
() => {
  const anchor = document.querySelector('[data-testid="approval-anchor"]');
  const c = anchor.getBoundingClientRect();
  const covered = [...document.querySelectorAll('.react-flow__edge-textwrapper')].filter((el) => {
    const r = el.getBoundingClientRect();
    return c.left < r.right && r.left < c.right && c.top < r.bottom && r.top < c.bottom;
  }).map((el) => el.textContent);
  return {side: anchor.dataset.side, covered};
}
"""


def test_the_card_leaves_the_edges_labels_in_sight_where_a_short_pan_allows(
    editor: Page, plait_server: Cluster
) -> None:
    """At 1440x900 a short pan puts the refund's card right of `approve`, clear of the
    labels that say where each decision leads; it keeps that side while the pan moves
    the view, and after it."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1440, "height": 900})
    thread_id, _ = park_refund(base, "labels in sight")
    editor.goto(f"{base}/#/graphs/refund-approval/1.0.0?thread={thread_id}")
    expect(editor.locator('[data-testid="approval-card"][data-node="approve"]')).to_contain_text(
        "labels in sight"
    )
    expect_card_in_view(editor, nodes_clear=True)
    expect(editor.get_by_test_id("approval-anchor")).to_have_attribute("data-side", "right")
    assert editor.evaluate(_LABELS_UNDER_CARD_JS) == {"side": "right", "covered": []}
    # Growing (the edit form) places it again: still clear of labels and nodes.
    editor.get_by_test_id("approval-edit").click()
    expect_card_in_view(editor, nodes_clear=True)
    assert editor.evaluate(_LABELS_UNDER_CARD_JS)["covered"] == []


def test_fit_view_places_the_card_again(editor: Page, plait_server: Cluster) -> None:
    """**Fit view** moves the view: the card is placed again for it once it stands still,
    clear of the labels, as it was before (a click on the button is not the person moving
    the view, whose moves the card only follows)."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1440, "height": 900})
    thread_id, _ = park_refund(base, "fit view")
    editor.goto(f"{base}/#/graphs/refund-approval/1.0.0?thread={thread_id}")
    still_card(editor, "approve")
    placed = editor.evaluate(_LABELS_UNDER_CARD_JS)
    editor.get_by_test_id("toolbar-fit").click()
    still_card(editor, "approve")
    expect_card_in_view(editor, nodes_clear=True)
    assert editor.evaluate(_LABELS_UNDER_CARD_JS) == placed == {"side": "right", "covered": []}


_CARD_MOVES_JS = (Path(__file__).with_name("approval_card_moves.js")).read_text(encoding="utf-8")
#: How long a fit's placement would take to show: it comes 250 ms after the view stands still,
#: and its pan lasts 200 ms (editor/src/runs/ApprovalAnchor.tsx SETTLE_MS, PAN_MS).
_FIT_PLACEMENT_MS = 1_000


_VIEW_JS = "() => document.querySelector('.react-flow__viewport').style.transform"


def _resize_and_refit(page: Page, width: int, height: int) -> str:
    """Sets the window's size, waits for the refit it brings and for the time a placement
    it asks for would take to show; returns the view before it."""
    fitted_from: str = page.evaluate(_VIEW_JS)
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(
        "(from) => document.querySelector('.react-flow__viewport').style.transform !== from",
        arg=fitted_from,
    )
    fitted_at = page.evaluate("() => performance.now()")
    page.wait_for_function(
        "([since, ms]) => performance.now() - since > ms",
        arg=[fitted_at, _FIT_PLACEMENT_MS],
        polling="raf",
    )
    return fitted_from


def _card_moves(page: Page, *, reset: bool = False) -> list[list[Any]]:
    """What approval_card_moves.js recorded (then, with ``reset``, it starts afresh from the
    card as it is)."""
    moves: list[list[Any]] = page.evaluate(
        "(reset) => { const m = [...window.__cardMoves]; if (reset) window.__cardMoves.length = 0;"
        " return m; }",
        reset,
    )
    return moves


def _assert_held_still(moves: list[list[Any]], fitted_from: str) -> None:
    """Held, the card keeps its side and follows its node through the refit from
    ``fitted_from``; nothing else moves it or the view while it is in sight. Out of sight, it
    is placed (its side, the view's pan): that plays out over the moment after a frame in
    which it was out of sight."""
    assert moves and moves[0][1] == fitted_from, f"no refit from {fitted_from}: {moves}"
    refit = True
    hidden_until = None  # when the card was last seen out of sight
    for before, after in itertools.pairwise(moves):
        if not before[4]:
            hidden_until = after[0]
        if hidden_until is not None and after[0] - hidden_until <= _FIT_PLACEMENT_MS:
            continue  # placed as it is out of sight, and the view's pan for it
        if refit and after[1] != before[1]:
            refit = False
            assert after[3] == before[3], f"the card changed sides in sight: {before} -> {after}"
            continue
        assert after[1:4] == before[1:4], (
            f"the card or the view moved, in sight: {before} -> {after}"
        )


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_the_card_holds_still_while_it_is_used(
    editor: Page, plait_server: Cluster, size: tuple[int, int]
) -> None:
    """With the pointer on the card and the edit form open, nothing moves the card or the
    view but the person while the card is in sight: not the form growing as it opens and as
    they type, not the placement a refit asks for. A smaller window whose refit pushes the
    card out of sight (under the run pane) has it placed at once, though held: wholly in
    sight and clear of the pane, what they typed and the focus kept, and it holds still again
    as they go on typing. Once they leave it, it is placed again, clear of labels and nodes;
    the form and what they typed stay (the card is the same element throughout)."""
    base = plait_server.url
    width, height = size
    editor.set_viewport_size({"width": width, "height": height})
    thread_id, _ = park_refund(base, "held still")
    editor.goto(f"{base}/#/graphs/refund-approval/1.0.0?thread={thread_id}")
    card = still_card(editor, "approve")
    expect(card).to_contain_text("held still")
    editor.evaluate(_CARD_MOVES_JS)
    editor.evaluate(
        "() => { window.__heldCard = document.querySelector('[data-testid=approval-card]'); }"
    )

    card.hover()
    card.get_by_test_id("approval-edit").click()
    form = card.get_by_test_id("approval-arguments-editor")
    amount = form.locator('input[name="arg-amount"]')
    amount.click()
    amount.press("Control+a")
    amount.press_sequentially("90")
    expect(card.get_by_test_id("approval-diff").locator(".diff-added")).to_have_text("90")
    # The form opened and grew as they typed: nothing moved.
    moves = _card_moves(editor, reset=True)
    assert len(moves) == 1, f"the card moved as it grew: {moves}"
    assert moves[0][4], f"the card is out of sight: {moves}"

    # A narrower and shorter window: at both sizes its refit leaves the card where it holds
    # still half under the run pane (where it stayed, fields and button cut off, before a
    # held card yielded). It is placed at once, though still held: in sight, clear of the
    # pane, the value typed and the focus where they were.
    _resize_and_refit(editor, width - 160, height - 100)
    expect_card_in_view(editor)
    expect(amount).to_be_focused()
    expect(amount).to_have_value("90")
    # Still held (nothing owed): typing on moves nothing.
    _card_moves(editor, reset=True)
    amount.press("End")
    amount.press_sequentially("5")
    expect(card.get_by_test_id("approval-diff").locator(".diff-added")).to_have_text("905")
    editor.wait_for_timeout(_FIT_PLACEMENT_MS)
    moves = _card_moves(editor, reset=True)
    assert len(moves) == 1, f"the card moved as they typed: {moves}"
    assert moves[0][4], f"the card is out of sight: {moves}"

    # The window back to its size: the card follows its node through the refit, nothing more,
    # while in sight (at 1280x720 the refit leaves it past the run pane's edge, and it is
    # placed again, the view panned); it ends in sight, still held.
    fitted_from = _resize_and_refit(editor, width, height)
    _assert_held_still(_card_moves(editor), fitted_from)
    expect_card_in_view(editor)
    expect(amount).to_be_focused()

    # The person leaves the card (and its focus, with a click elsewhere): placed for the new view.
    editor.get_by_test_id("graph-title").click()
    expect_card_in_view(editor, nodes_clear=True)
    assert editor.evaluate(_LABELS_UNDER_CARD_JS)["covered"] == []
    expect(amount).to_have_value("905")
    assert editor.evaluate(
        "() => window.__heldCard === document.querySelector('[data-testid=approval-card]')"
    ), "the card was mounted again"


def test_edit_through_the_form_then_follow_the_decision(
    editor: Page, plait_server: Cluster
) -> None:
    """Edit the amount in the form, see old → new, approve; the note names the
    resumed run and its end; the decided tab says who, what and when."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1440, "height": 900})
    thread_id, approval_id = park_refund(base, "edit through the form")
    editor.goto(f"{base}/#/graphs/refund-approval/1.0.0?thread={thread_id}")
    card = editor.locator('[data-testid="approval-card"][data-node="approve"]')
    expect(card).to_contain_text("edit through the form")

    still_card(editor, "approve").get_by_test_id("approval-edit").click()
    form = card.get_by_test_id("approval-arguments-editor")
    # The button that had focus is gone: focus moves into the form, and back, not to the page.
    expect(form.locator('input[name="arg-order_id"]')).to_be_focused()
    card.get_by_role("button", name="Cancel edit").click()
    expect(card.get_by_test_id("approval-edit")).to_be_focused()
    card.get_by_test_id("approval-edit").press("Enter")
    amount = form.locator('input[name="arg-amount"]')
    expect(amount).to_have_value("180")
    expect(form.locator('input[name="arg-order_id"]')).to_have_value("A-1002")
    expect(card.get_by_test_id("approval-send-edit")).to_be_disabled()  # nothing changed yet
    amount.fill("")  # emptied: not a number
    expect(form.locator("[data-field=amount] .argument-error")).to_have_text("not a number")
    expect(card.get_by_test_id("approval-send-edit")).to_be_disabled()
    amount.fill("90")
    diff = card.get_by_test_id("approval-diff")
    row = diff.locator("tr[data-field=amount]")
    expect(row.locator(".diff-removed")).to_have_text("180")
    expect(row.locator(".diff-added")).to_have_text("90")
    expect(diff.locator("tr[data-field]")).to_have_count(1)
    # The JSON view holds the same arguments, and is checked too.
    card.get_by_test_id("arguments-mode-json").click()
    json_box = card.get_by_test_id("approval-arguments-json")
    expect(json_box).to_have_value(re.compile(r'"amount": 90'))
    json_box.fill('{"order_id": "A-1002", "amount": 90')
    expect(card.locator(".argument-error")).to_be_visible()
    expect(card.get_by_test_id("approval-send-edit")).to_be_disabled()
    json_box.fill('{"order_id": "A-1002", "amount": 90}')
    expect_card_in_view(editor)
    card.get_by_test_id("approval-actor").fill("Dana Reviewer")
    card.get_by_test_id("approval-comment").fill("half is fair")
    card.get_by_test_id("approval-send-edit").click()

    note = editor.get_by_test_id("app-header").get_by_test_id("decision-note")
    expect(note).to_have_attribute("data-status", "success", timeout=30_000)
    decided = _decided(base, approval_id)
    expect(note).to_contain_text("Approved with edits issue_refund")
    expect(note).to_contain_text(f"resumed run {decided['resume_run_id'][:8]}")
    # Plait's words, as the run view says them, not the Agent Server status.
    expect(note.get_by_test_id("decision-run-status")).to_have_text("succeeded")
    expect(note.get_by_test_id("decision-open-run")).to_have_attribute(
        "href", f"#/graphs/refund-approval/1.0.0?thread={thread_id}"
    )
    expect(editor.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    with api(base) as http:
        state = http.get(f"/threads/{thread_id}/state").json()
    assert state["values"]["outcome"].startswith("refunded 90")
    # The resume streamed what the parked run did (values only): once it ended, its steps
    # were read from its checkpoints, and the refund's node says what it did in this run.
    steps = editor.get_by_test_id("timeline-step")
    expect(steps).to_have_count(3)
    expect(steps.nth(1)).to_have_attribute("data-node", "approve")
    expect(steps.nth(1)).to_have_attribute("data-status", "done")
    expect(steps.nth(2)).to_have_attribute("data-node", "refund")
    flow_node(editor, "refund").click()
    inspector = editor.get_by_test_id("node-inspector")
    expect(inspector.get_by_test_id("node-not-run")).to_have_count(0)
    expect(inspector.get_by_test_id("step-output")).to_contain_text('"amount": 90')

    # Settled, and the person moves on: the top bar lets the note go, the inbox keeps it.
    editor.get_by_test_id("nav-graphs").click()
    expect(editor.get_by_test_id("graphs-page")).to_be_visible()
    expect(editor.get_by_test_id("app-header").get_by_test_id("decision-note")).to_have_count(0)
    editor.get_by_test_id("nav-approvals").click()
    kept = editor.get_by_test_id("inbox-outcomes").get_by_test_id("decision-note")
    expect(kept).to_contain_text("Approved with edits issue_refund")

    # The decided tab: who, what, when, and the run it resumed.
    editor.goto(f"{base}/#/approvals")
    editor.get_by_test_id("inbox-tab-decided").click()
    row = editor.locator(f'[data-testid="decided-row"][data-approval="{approval_id}"]')
    expect(row.get_by_test_id("decided-by")).to_have_text("Dana Reviewer")
    expect(row.get_by_test_id("decided-what")).to_contain_text("approved with edits")
    expect(row.get_by_test_id("decided-what")).to_contain_text("half is fair")
    expect(row.locator(".diff-added")).to_have_text("90")
    expect(row.get_by_test_id("decided-at")).not_to_have_text("—")
    expect(row.get_by_test_id("decided-run")).to_have_attribute("data-status", "success")
    status = editor.get_by_test_id("inbox-filter-status")
    status.select_option("edited")
    expect(row).to_be_visible()
    status.select_option("rejected")
    expect(row).to_have_count(0)


def test_deciding_in_the_inbox_says_which_run_resumed(editor: Page, plait_server: Cluster) -> None:
    """Rejecting in the inbox: the note names the resumed run and how it ended,
    with a link to it."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1440, "height": 900})
    thread_id, approval_id = park_refund(base, "reject in the inbox")
    editor.goto(f"{base}/#/approvals")
    card = editor.get_by_test_id("approval-card").filter(has_text="reject in the inbox")
    card.get_by_test_id("approval-reject").click()
    expect(card).to_have_count(0)
    note = editor.get_by_test_id("inbox-outcomes").get_by_test_id("decision-note").first
    expect(note).to_have_attribute("data-status", "success", timeout=30_000)
    decided = _decided(base, approval_id)
    expect(note).to_have_attribute("data-run", decided["resume_run_id"])
    resumed = decided["resume_run_id"]
    expect(note).to_contain_text(f"Rejected issue_refund — resumed run {resumed[:8]}")
    expect(note).to_have_attribute("data-status", "success")
    note.get_by_test_id("decision-open-run").click()
    expect(editor.get_by_test_id("graph-title")).to_contain_text("refund-approval@1.0.0")
    expect(editor.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    expect(editor.get_by_test_id("run-phase")).to_contain_text(thread_id[:8])


def _decided(base: str, approval_id: str) -> dict[str, Any]:
    """The approval as the server has it, decided and resumed."""
    decided = _approval(base, approval_id)
    assert decided["status"] != "pending" and decided["resume_run_id"], repr(decided)
    return decided


def test_the_url_names_the_run_on_screen(editor: Page, plait_server: Cluster) -> None:
    """Starting a run writes its thread into the URL; closing the run panel takes it out."""
    base = plait_server.url
    editor.set_viewport_size({"width": 1440, "height": 900})
    editor.goto(f"{base}/#/graphs/refund-approval/1.0.0")
    expect(editor.get_by_test_id("graph-title")).to_contain_text("refund-approval@1.0.0")
    editor.get_by_test_id("toolbar-run").click()
    form = editor.get_by_test_id("run-input-form")
    form.locator('input[name="reason"]').fill("url follows the run")
    editor.get_by_test_id("run-start").click()
    phase = editor.get_by_test_id("run-phase")
    expect(phase).to_have_attribute("data-phase", "waiting")
    expect(editor).to_have_url(
        re.compile(r"#/graphs/refund-approval/1\.0\.0\?thread=[0-9a-f-]{36}$")
    )
    thread_id = editor.url.rsplit("=", 1)[1]
    expect(phase).to_contain_text(thread_id[:8])
    editor.get_by_test_id("toolbar-run").click()
    expect(editor).to_have_url(re.compile(r"#/graphs/refund-approval/1\.0\.0$"))
