"""A run whose tool call waits under the tool's ``limits`` says so where a person looks.

The tool is paused by hand (``POST /tool-limits/pause``, as a 429's Retry-After
would pause it); a run started in the editor then shows ``waits: lookup paused``
on the node's card and the whole reason in the step's detail, and finishes once
the tool is resumed.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.helpers import api, flow_node, open_graph
from tests.integration.server.harness import Cluster

GRAPH = "limited-lookup"
KEY = "tool:plait_examples.research:lookup_topic"
SPEC = f"""apiVersion: plait/v1
kind: Graph
metadata: {{name: {GRAPH}, version: "1.0.0"}}
spec:
  state:
    topic: {{type: string}}
    found: {{type: object}}
  input: [topic]
  tools:
    lookup:
      function: plait_examples.research:lookup_topic
      limits: {{concurrency: 2, wait: 60s}}
  nodes:
    look:
      kind: tool
      tool: lookup
      args: {{topic: state.topic}}
      output: found
  edges:
    - {{from: START, to: look}}
    - {{from: look, to: END}}
  examples:
    - name: solar
      input: {{topic: solar power}}
"""


def test_a_waiting_tool_call_shows_on_its_card_and_in_its_step(
    editor: Page, plait_server: Cluster
) -> None:
    page, base = editor, plait_server.url
    with api(base) as http:
        answer = http.post("/graphs", json={"yaml": SPEC})
        assert answer.status_code in (200, 201, 409), answer.text
        # A first call makes the key known; then a person pauses the tool.
        done = http.post(
            "/runs/wait", json={"assistant_id": GRAPH, "input": {"topic": "wind power"}}
        )
        assert done.json()["found"]["topic"] == "wind power", done.text
        paused = http.post("/tool-limits/pause", json={"key": KEY, "seconds": 60})
        assert paused.status_code == 200, paused.text

    open_graph(page, base, GRAPH, "1.0.0")
    if not page.get_by_test_id("run-panel").is_visible():
        page.get_by_test_id("toolbar-run").click()
    page.get_by_test_id("run-start").click()

    card = flow_node(page, "look")
    expect(card.get_by_test_id("node-tokens")).to_have_text("waits: lookup paused")
    page.get_by_test_id("timeline").get_by_test_id("timeline-step").first.click()
    expect(page.get_by_test_id("step-waiting")).to_contain_text(
        "1 tool call waited for its turn under the tool's limits: "
        "waiting: tool lookup is paused for"
    )

    with api(base) as http:
        assert http.post("/tool-limits/resume", json={"key": KEY}).status_code == 200
    expect(page.get_by_test_id("run-outcome")).to_have_attribute("data-phase", "success")
    expect(card.get_by_test_id("node-tokens")).to_have_count(0)
