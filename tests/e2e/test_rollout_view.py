"""Where a person looks for a rollout (decision 90): the graphs list marks the stable and
canary versions with their share; the version history says where new threads go and
counts each version's runs of the last day."""

from __future__ import annotations

import uuid

from playwright.sync_api import Page, expect

from tests.e2e.helpers import api, open_graph
from tests.integration.server.harness import Cluster

GRAPH = "rollout-view"


def _spec(text: str, version: str) -> str:
    """The summarize example as graph ``rollout-view`` at ``version``."""
    renamed = text.replace("name: summarize\n", f"name: {GRAPH}\n", 1)
    return renamed.replace('version: "1.0.0"', f'version: "{version}"', 1)


def test_graphs_list_and_history_show_the_rollout(editor: Page, plait_server: Cluster) -> None:
    base = plait_server.url
    with api(base) as http:
        summarize = http.get("/graphs/summarize/versions/1.0.0").text
        for version in ("1.0.0", "1.1.0"):
            published = http.post("/graphs", json={"yaml": _spec(summarize, version)})
            assert published.status_code in (200, 201), published.text
        started = http.put(f"/graphs/{GRAPH}/rollout", json={"canary": "1.1.0", "share": 20})
        assert started.status_code == 200, started.text
        ran = http.post(
            f"/threads/{uuid.uuid4()}/runs/wait",
            json={
                "assistant_id": f"{GRAPH}@1.0.0",
                "input": {"text": "Hello there. Bye."},
                "if_not_exists": "create",
            },
        )
        assert ran.status_code == 200, ran.text

    editor.reload()
    expect(editor.get_by_test_id(f"graph-rollout-{GRAPH}-1.1.0")).to_have_text("canary · 20%")
    expect(editor.get_by_test_id(f"graph-rollout-{GRAPH}-1.0.0")).to_have_text("stable · 80%")

    open_graph(editor, base, GRAPH, "1.1.0")
    editor.get_by_test_id("toolbar-history").click()
    summary = editor.get_by_test_id("rollout-summary")
    expect(summary).to_contain_text(
        "20% of new threads start on the canary 1.1.0, 80% on the stable 1.0.0."
    )
    rows = editor.get_by_test_id("version-history").get_by_test_id("version-row")
    stable = rows.filter(has_text="stable · 80%")
    expect(stable).to_have_attribute("data-version", "1.0.0")
    expect(stable.get_by_test_id("version-runs")).to_have_text("1 run on 1 thread in 24 h")
    canary = rows.filter(has_text="canary · 20%")
    expect(canary).to_have_attribute("data-version", "1.1.0")
    expect(canary.get_by_test_id("version-runs")).to_have_text("no runs in 24 h")

    with api(base) as http:
        assert http.post(f"/graphs/{GRAPH}/rollout/promote").status_code == 200
    editor.get_by_test_id("toolbar-history").click()  # closes the panel
    editor.get_by_test_id("toolbar-history").click()  # and reads it again
    expect(summary).to_contain_text("New threads start on 1.1.0 (stable; no canary).")
    expect(rows.filter(has_text="canary")).to_have_count(0)


def test_the_rollout_changes_from_the_version_history(editor: Page, plait_server: Cluster) -> None:
    base = plait_server.url
    graph = f"{GRAPH}-controls"
    with api(base) as http:
        summarize = http.get("/graphs/summarize/versions/1.0.0").text
        for version in ("1.0.0", "1.1.0"):
            text = _spec(summarize, version).replace(f"name: {GRAPH}\n", f"name: {graph}\n", 1)
            published = http.post("/graphs", json={"yaml": text})
            assert published.status_code in (200, 201), published.text
    open_graph(editor, base, graph, "1.1.0")
    editor.get_by_test_id("toolbar-history").click()
    summary = editor.get_by_test_id("rollout-summary")
    expect(summary).to_contain_text("No rollout: new threads start on the newest version.")

    editor.get_by_test_id("rollout-canary-share").fill("30")
    editor.get_by_test_id("rollout-start").click()  # the canary 1.0.0 (the only other one)
    expect(summary).to_contain_text("30% of new threads start on the canary 1.0.0, 70% on")
    editor.get_by_test_id("rollout-share").fill("101")
    expect(editor.get_by_test_id("rollout-set-share")).to_be_disabled()
    editor.get_by_test_id("rollout-share").fill("60")
    editor.get_by_test_id("rollout-set-share").click()
    expect(summary).to_contain_text("60% of new threads start on the canary 1.0.0")
    with api(base) as http:
        stored = http.get(f"/graphs/{graph}/rollout").json()
    assert (stored["canary"], stored["share"], stored["stable"]) == ("1.0.0", 60, "1.1.0")

    editor.get_by_test_id("rollout-promote").click()
    expect(summary).to_contain_text("New threads start on 1.0.0 (stable; no canary).")
    editor.get_by_test_id("rollout-end").click()
    expect(summary).to_contain_text("No rollout: new threads start on the newest version.")
    with api(base) as http:
        assert http.get(f"/graphs/{graph}/rollout").json()["stable"] is None
