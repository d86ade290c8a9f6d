"""The run view keeps a readable canvas: room, no overlaps, edges around cards, a clear minimap.

Every example spec in ``specs/`` (plus a generated 30-node graph with a loop)
is opened at 1440x900 and 1280x720, its run view opened and its first example
run from the Run panel. Before and after, what a person would check is
measured in the page: node boxes (``.react-flow__node``) do not intersect, no
edge's drawn path runs through a node other than its own two ends (points
sampled along each ``path.react-flow__edge-path``), every node is inside the
canvas, the minimap (when shown) covers no node, card or control, and the
canvas keeps its share of the window.

The server is this module's own (all the example specs, the generated graph),
so the other browser tests keep the specs they expect.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.e2e.conftest import guarded
from tests.e2e.helpers import connect, flow_node, open_graph, still_card
from tests.integration.server.harness import SPECS, Cluster, fresh_cluster

REPO = Path(__file__).resolve().parents[2]
SIZES = [(1440, 900, 0.60), (1280, 720, 0.50)]
#: Each example spec and the phase its first example's run settles in.
EXAMPLES = {
    "refund-approval": "waiting",  # parks on the approval
    "summarize": "success",
    "planner-team": "success",
    "research-team": "success",
    "support-subgraph": "success",
    "mcp-tools": "success",
    "a2a-expense-agent": "waiting",  # its first example is a large claim: approval
    # Calls the agent above on this same server (the example's URL is port 8000); the
    # remote's approval is not answered here, so the caller waits.
    "a2a-expense-caller": "waiting",
}
LOOP_NODES = 30

HERE = Path(__file__).resolve().parent
#: Everything the checks need, measured in the page (screen pixels).
GEOMETRY_JS = (HERE / "run_layout_geometry.js").read_text(encoding="utf-8")
#: True once every node is measured and inside the canvas (the view re-fits after a pane opens).
ALL_INSIDE_JS = (HERE / "run_layout_settled.js").read_text(encoding="utf-8")
#: What a waiting node's approval card lies on, once card and view have stopped moving.
CARD_JS = (HERE / "approval_card_geometry.js").read_text(encoding="utf-8")


def loop_spec(size: int) -> str:
    """A chain of ``size`` nodes with switches that skip ahead and a route back to ``n2``."""
    lines = [
        "apiVersion: plait/v1",
        "kind: Graph",
        "metadata: {name: loop-30, version: '1.0.0'}",
        "spec:",
        "  state:",
        "    count: {type: integer, default: 0}",
        "  nodes:",
    ]
    for i in range(size):
        lines += [
            f"    n{i}:",
            "      kind: python",
            "      function: bench_steps:step",
            "      args: {n: state.count}",
            "      writes: {count: result}",
        ]
        if i == 2:
            lines.append("      max_visits: 3")
    lines += ["  edges:", "    - {from: START, to: n0}"]
    for i in range(size - 1):
        if i % 7 == 6:
            lines += [
                f"    - from: n{i}",
                f"      switch: [{{when: 'state.count > {i}', to: n{min(i + 3, size - 1)}}}]",
                f"      default: n{i + 1}",
            ]
        else:
            lines.append(f"    - {{from: n{i}, to: n{i + 1}}}")
    lines += [
        f"    - from: n{size - 1}",
        "      route: \"state.count > 100 ? 'done' : 'again'\"",
        "      to: {done: END, again: n2}",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def layout_server(
    editor_dist: Path, postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with every example spec and the generated loop graph."""
    extra = tmp_path_factory.mktemp("run-layout-extra")
    (extra / "loop-30.yaml").write_text(loop_spec(LOOP_NODES), encoding="utf-8")
    sources = [
        *sorted(SPECS.glob("*.yaml")),
        SPECS / "plait_examples",
        REPO / "bench" / "bench_steps.py",
        extra / "loop-30.yaml",
    ]
    work_dir = tmp_path_factory.mktemp("run-layout")
    with fresh_cluster(postgres_server_url, work_dir, sources) as running:
        yield running


def geometry(page: Page, *, settle: bool = True) -> dict[str, Any]:
    """What the checks need, measured once the view settled (every node inside the canvas).

    If it never settles, what is measured then says what is wrong.
    """
    if settle:
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function(ALL_INSIDE_JS, timeout=5_000)
    measured: dict[str, Any] = page.evaluate(GEOMETRY_JS)
    return measured


def assert_readable(page: Page, when: str, *, all_in_view: bool = True) -> dict[str, Any]:
    """No overlaps, no edge through a card, all nodes in view, a minimap that covers nothing.

    ``all_in_view=False`` after a run: a waiting approval's card is brought into
    view at a readable zoom (runs/ApprovalAnchor.tsx), which may leave nodes outside.
    """
    seen = geometry(page, settle=all_in_view)
    assert seen["count"] > 2, when
    assert seen["edges"] >= seen["count"] - 1, f"{when}: {seen['edges']} edges drawn"
    assert seen["overlaps"] == [], f"{when}: nodes overlap: {seen['overlaps']}"
    assert seen["crossings"] == [], f"{when}: edges cross cards: {seen['crossings']}"
    if all_in_view:
        assert seen["outside"] == [], f"{when}: nodes outside the canvas: {seen['outside']}"
    assert seen["covered"] == [], f"{when}: the minimap covers {seen['covered']}"
    return seen


@pytest.mark.parametrize(("width", "height", "share"), SIZES, ids=["1440x900", "1280x720"])
def test_every_example_stays_readable_through_a_run(
    page: Page, layout_server: Cluster, width: int, height: int, share: float
) -> None:
    base = layout_server.url
    page.set_viewport_size({"width": width, "height": height})
    with guarded(page):
        for graph, settles in EXAMPLES.items():
            open_graph(page, base, graph, "1.0.0")
            assert_readable(page, f"{graph} at {width}x{height}, editing")

            page.get_by_test_id("toolbar-run").click()
            expect(page.get_by_test_id("side-run")).to_be_visible()
            # The run panel takes the code panes' place: the canvas keeps its share.
            expect(page.get_by_test_id("code-panes")).to_be_hidden()
            seen = assert_readable(page, f"{graph} at {width}x{height}, run view open")
            assert seen["canvasWidth"] >= share * width, (graph, seen["canvasWidth"])
            side = page.get_by_test_id("side-run").bounding_box()
            assert side is not None and side["width"] >= 380

            form = page.get_by_test_id("run-input-form")
            expect(form).to_be_visible()
            if graph == "a2a-expense-caller":
                form.locator('[name="agent_url"]').fill(f"{base}/a2a/a2a-expense-agent")
            page.get_by_test_id("run-start").click()
            phase = page.get_by_test_id("run-phase")
            expect(phase).to_have_attribute(
                "data-phase", re.compile("^(success|waiting|error)$"), timeout=30_000
            )
            assert phase.get_attribute("data-phase") == settles, graph
            if settles == "waiting" and graph != "a2a-expense-caller":
                # The approval's card shows on its node (the caller's approval is the remote's).
                expect(page.get_by_test_id("approval-card")).to_be_visible()
                # Its node's status ring shows: the card is not clipped to its cut corners.
                ring = page.locator('[data-status="waiting"][data-kind="approval"]').evaluate(
                    "el => [getComputedStyle(el).outlineStyle, getComputedStyle(el).clipPath]"
                )
                assert ring == ["solid", "none"], ring
            after = f"{graph} at {width}x{height}, after the run"
            assert_readable(page, after, all_in_view=settles != "waiting")

            # Closing the run view brings the code panes back.
            page.get_by_test_id("toolbar-run").click()
            expect(page.get_by_test_id("code-panes")).to_be_visible()


@pytest.mark.parametrize(
    ("width", "height"), [size[:2] for size in SIZES], ids=["1440x900", "1280x720"]
)
def test_the_approval_card_lies_on_no_label_and_no_node(
    page: Page, layout_server: Cluster, width: int, height: int
) -> None:
    """The refund parked on `approve`, started from the Run panel: its card sits beside the
    node, whole inside the canvas, on none of the edges' labels (which say where each
    decision leads), none of the other nodes and neither the minimap nor the controls."""
    page.set_viewport_size({"width": width, "height": height})
    with guarded(page):
        open_graph(page, layout_server.url, "refund-approval", "1.0.0")
        page.get_by_test_id("toolbar-run").click()
        form = page.get_by_test_id("run-input-form")
        form.locator('[name="order_id"]').fill("A-1002")
        form.locator('[name="amount"]').fill("180")
        page.get_by_test_id("run-start").click()
        expect(page.get_by_test_id("run-phase")).to_have_attribute(
            "data-phase", "waiting", timeout=30_000
        )
        still_card(page, "approve")
        card = page.evaluate(CARD_JS)
        assert card is not None
        where = f"{width}x{height}, card {card['side']} of approve"
        assert card["labels"] == [], f"{where}: the card lies on the labels {card['labels']}"
        assert card["nodes"] == [], f"{where}: the card lies on the nodes {card['nodes']}"
        assert card["panels"] == [], f"{where}: the card lies on {card['panels']}"
        assert card["inside"], f"{where}: the card leaves the canvas: {card}"
        assert card["beside"], f"{where}: the card is not beside its node: {card}"
        # The rest of the run view stays readable with the card shown.
        assert_readable(page, where, all_in_view=False)


def test_a_looping_graph_reads_top_to_bottom(page: Page, layout_server: Cluster) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    with guarded(page):
        open_graph(page, layout_server.url, "loop-30", "1.0.0")
        seen = assert_readable(page, "loop-30")
        boxes = seen["ids"]
        assert len(boxes) == LOOP_NODES + 2
        others = [box for node, box in boxes.items() if node not in ("START", "END")]
        assert boxes["START"]["b"] <= min(box["t"] for box in others)
        assert boxes["END"]["t"] >= max(box["b"] for box in others)
        page.get_by_test_id("toolbar-run").click()
        assert_readable(page, "loop-30, run view open")


def test_the_code_panes_toggle_and_the_view_refits(page: Page, layout_server: Cluster) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    with guarded(page):
        open_graph(page, layout_server.url, "planner-team", "1.0.0")
        panes = page.get_by_test_id("code-panes")
        toggle = page.get_by_test_id("toolbar-panes")
        expect(toggle).to_have_attribute("aria-pressed", "true")
        narrow = geometry(page)["canvasWidth"]
        toggle.click()
        expect(panes).to_be_hidden()
        expect(toggle).to_have_attribute("aria-pressed", "false")
        wide = assert_readable(page, "code panes hidden")["canvasWidth"]
        assert wide > narrow + 300
        # With the run view open the panes can come back beside it, and go again with it.
        page.get_by_test_id("toolbar-run").click()
        expect(toggle).to_have_attribute("aria-pressed", "false")
        toggle.click()
        expect(panes).to_be_visible()
        assert_readable(page, "code panes beside the run view")
        page.get_by_test_id("toolbar-run").click()
        expect(panes).to_be_hidden()  # as it was before the run view opened


def test_edges_drawn_while_editing_go_round_the_cards(page: Page, layout_server: Cluster) -> None:
    """A node added and connected by hand: nothing moves, its edges find a way round the cards."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    with guarded(page):
        open_graph(page, layout_server.url, "refund-approval", "1.0.0")
        before = flow_positions(page)
        canvas = page.get_by_test_id("canvas")
        box = canvas.bounding_box()
        assert box is not None
        page.get_by_test_id("palette-python").drag_to(
            canvas, target_position={"x": box["width"] - 160, "y": box["height"] / 2}
        )
        expect(flow_node(page, "python")).to_be_visible()
        connect(page, "refund", "python")
        expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile(r"to: python"))
        connect(page, "python", "END")
        expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile(r"from: python, to: END"))
        # Connecting near the canvas's edge pans the view: not every node need be in it.
        assert_readable(page, "refund-approval, a node added by hand", all_in_view=False)
        after = flow_positions(page)
        assert {node: after[node] for node in before} == before


def flow_positions(page: Page) -> dict[str, str]:
    """Each node's position on the canvas (React Flow's transform of it, in flow coordinates)."""
    found: dict[str, str] = page.locator(".react-flow__node").evaluate_all(
        "els => Object.fromEntries(els.map((e) => [e.dataset.id, e.style.transform]))"
    )
    return found


def test_a_saved_layout_gets_elk_routes_back_and_a_dragged_node_detours(
    page: Page, layout_server: Cluster
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    with guarded(page):
        open_graph(page, layout_server.url, "planner-team", "1.0.0")
        page.get_by_test_id("toolbar-auto-layout").click()
        page.get_by_test_id("toolbar-save").click()
        page.get_by_test_id("save-confirm").click()
        # Only the layout changed: it is saved beside the version.
        expect(page.get_by_test_id("save-confirmation")).to_contain_text("with its layout")

        # Opened afresh: the stored positions, and elk's routes found again for them.
        page.reload()
        expect(page.locator(".react-flow__node").first).to_be_visible()
        page.wait_for_function(EDGES_DRAWN_BY_JS, arg=["", "elk"])
        assert_readable(page, "planner-team reopened")

        # Drag the reviewer aside: its edges take detours round the cards, nothing else moves.
        before = flow_positions(page)
        header = flow_node(page, "reviewer").locator(".plait-node-head")
        box = header.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + 20, box["y"] + 10)
        page.mouse.down()
        page.mouse.move(box["x"] + 220, box["y"] + 10, steps=8)
        page.mouse.move(box["x"] + 320, box["y"] + 10, steps=8)
        page.mouse.up()
        page.wait_for_function(EDGES_DRAWN_BY_JS, arg=["reviewer", "detour"])
        assert_readable(page, "planner-team with the reviewer dragged", all_in_view=False)
        after = flow_positions(page)
        assert after["reviewer"] != before["reviewer"]
        del after["reviewer"], before["reviewer"]
        assert after == before


#: True once every edge touching a node whose id contains `node` ("": every edge) is drawn by `by`.
EDGES_DRAWN_BY_JS = """
([node, by]) => {
  const paths = [...document.querySelectorAll('[data-testid="canvas"] path.react-flow__edge-path')]
    .filter((p) => p.closest('.react-flow__edge').getAttribute('aria-label').includes(node));
  return paths.length > 0 && paths.every((p) => p.dataset.route === by);
}
"""
