"""Authoring journeys: a graph from nothing, Save as, renaming, drafts, running a draft,
a broken indentation, search in the YAML."""

from __future__ import annotations

import json
import re
import secrets

from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.helpers import (
    api,
    connect,
    expect_status,
    flow_node,
    newest_thread,
    open_graph,
    yaml_text,
)
from tests.integration.server.harness import SPECS, Cluster


def go_to_line(page: Page, line: int) -> None:
    """Put the YAML cursor at the start of ``line`` (Ctrl+Alt+G), as a user does."""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+Alt+g")
    field = page.locator(".cm-gotoLine input, .cm-panel input[name=line]").first
    expect(field).to_be_visible()
    field.fill(str(line))
    field.press("Enter")
    page.keyboard.press("Home")
    page.keyboard.press("Home")  # the very start, not the first non-space


def line_number(page: Page, text: str) -> int:
    """1-based line of the YAML that is exactly ``text``."""
    return yaml_text(page).split("\n").index(text) + 1


def test_create_a_graph_from_nothing_run_it_and_save_it(
    editor: Page, plait_server: Cluster
) -> None:
    """New graph (blank) -> drop a node, connect it -> run the draft -> Save creates it."""
    page = editor
    base = plait_server.url
    name = f"fresh-{secrets.token_hex(3)}"
    page.get_by_test_id("new-graph").click()
    page.get_by_test_id("new-graph-name").fill(name)
    expect(page.get_by_test_id("new-graph-version")).to_have_value("0.1.0")
    page.get_by_test_id("new-graph-create").click()
    expect(page.get_by_test_id("graph-title")).to_contain_text(f"{name}@0.1.0")
    expect(page.get_by_test_id("new-badge")).to_be_visible()
    assert page.url.endswith(f"#/graphs/{name}/0.1.0")

    # An LLM node dropped on the canvas, wired START -> llm -> END, writing `answer`.
    canvas = page.get_by_test_id("canvas")
    box = canvas.bounding_box()
    assert box is not None
    page.get_by_test_id("palette-llm").drag_to(
        canvas, target_position={"x": box["width"] / 2, "y": box["height"] / 2}
    )
    expect(flow_node(page, "llm")).to_be_visible()
    connect(page, "START", "llm")
    connect(page, "llm", "END")
    expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile(r"from: llm, to: END"))
    flow_node(page, "llm").click()
    # Models and state fields are chosen from what the spec defines.
    expect(page.get_by_test_id("prop-model")).to_have_value("assistant")
    page.get_by_test_id("prop-output").select_option("answer")
    expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile(r"output: answer"))
    expect(page.get_by_test_id("problems-count")).to_have_text("0", timeout=10_000)

    # Nothing is written to the specs folder before Save, Auto layout included.
    page.get_by_test_id("toolbar-auto-layout").click()
    assert not (plait_server.specs_dir / f"{name}.yaml").exists()
    assert not (plait_server.specs_dir / f"{name}.layout.json").exists()

    # It runs before it is saved: the run is of the draft.
    page.get_by_test_id("toolbar-run").click()
    expect(page.get_by_test_id("run-next")).to_have_attribute("data-draft", "true")
    page.locator('[data-testid="run-input-form"] [name="text"]').fill("Hello")
    page.get_by_test_id("run-start").click()
    expect_status(page, "llm", "done")
    expect(page.get_by_test_id("run-phase")).to_have_attribute("data-phase", "success")
    expect(page.get_by_test_id("run-ran")).to_have_attribute("data-draft", "true")
    screenshot(page, "new-graph-draft-run")

    # Ctrl+S: saved with a change note, its layout beside it, and a confirmation.
    page.get_by_test_id("yaml-text").evaluate("el => el.blur()")
    flow_node(page, "llm").click()
    page.keyboard.press("Control+s")
    dialog = page.get_by_test_id("save-dialog")
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("save-version")).to_have_value("0.1.0")
    page.get_by_test_id("save-note").fill("First version: one LLM step.")
    page.get_by_test_id("save-confirm").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("save-confirmation")).to_contain_text(f"Saved {name}@0.1.0")
    expect(page.get_by_test_id("new-badge")).to_have_count(0)
    expect(page.get_by_test_id("dirty-mark")).to_have_count(0)
    saved = (plait_server.specs_dir / f"{name}.yaml").read_text(encoding="utf-8")
    assert saved == yaml_text(page)
    layout = json.loads((plait_server.specs_dir / f"{name}.layout.json").read_text())
    assert {"START", "llm", "END"} <= set(layout)
    with api(base) as http:
        [version] = http.get(f"/graphs/{name}/versions").json()
        assert version["note"] == "First version: one LLM step."
    # From now on it is a graph like any other.
    page.get_by_test_id("nav-graphs").click()
    expect(page.get_by_test_id(f"graph-row-{name}")).to_be_visible()
    expect(page.get_by_test_id("unsaved-graphs")).to_have_count(0)


def test_save_as_a_new_graph(editor: Page, plait_server: Cluster) -> None:
    page = editor
    copy = f"summary-copy-{secrets.token_hex(3)}"
    open_graph(page, plait_server.url, "summarize", "1.0.0")
    original = yaml_text(page)
    in_folder = (plait_server.specs_dir / "summarize.yaml").read_text(encoding="utf-8")
    page.get_by_test_id("toolbar-save-as").click()
    page.get_by_test_id("save-name").fill("summarize")
    expect(page.get_by_test_id("save-name-error")).to_contain_text("already a graph")
    page.get_by_test_id("save-name").fill(copy)
    # A copy starts its own history, as a new graph does.
    expect(page.get_by_test_id("save-version")).to_have_value("0.1.0")
    page.get_by_test_id("save-confirm").click()
    expect(page.get_by_test_id("graph-title")).to_contain_text(f"{copy}@0.1.0")
    assert page.url.endswith(f"#/graphs/{copy}/0.1.0")
    saved = (plait_server.specs_dir / f"{copy}.yaml").read_text(encoding="utf-8")
    assert f"name: {copy}\n" in saved and 'version: "0.1.0"' in saved
    # Only the name and version differ from the graph it was saved from, which is unchanged.
    assert saved.replace(copy, "summarize").replace('"0.1.0"', '"1.0.0"') == original
    assert (plait_server.specs_dir / "summarize.yaml").read_text(encoding="utf-8") == in_folder
    assert (plait_server.specs_dir / f"{copy}.layout.json").exists()


def test_rename_a_node_on_the_canvas_and_in_the_form(editor: Page, plait_server: Cluster) -> None:
    page = editor
    open_graph(page, plait_server.url, "refund-approval", "1.0.0")
    before = yaml_text(page)
    box = flow_node(page, "decline").bounding_box()
    assert box is not None

    flow_node(page, "decline").dblclick()
    field = page.get_by_test_id("rename-node-input")
    field.fill("assess")  # taken: refused in words, nothing changes
    field.press("Enter")
    expect(page.get_by_test_id("rename-node-problem")).to_contain_text("already a node assess")
    field.fill("turn_down")
    field.press("Enter")
    expect(flow_node(page, "turn_down")).to_be_visible()
    after = yaml_text(page)
    # Its key, the route target and the edge from it follow; the route's label stays.
    assert "    turn_down:\n" in after and "reject: turn_down" in after
    assert "{from: turn_down, to: END}" in after
    assert "    decline:" not in after and "reject: decline" not in after
    # Only those lines changed; comments kept; the node stays where it was.
    changed = [(a, b) for a, b in zip(before.split("\n"), after.split("\n"), strict=True) if a != b]
    assert all("decline" in a and "turn_down" in b for a, b in changed)
    assert len(changed) == 3
    moved = flow_node(page, "turn_down").bounding_box()
    assert moved is not None and abs(moved["x"] - box["x"]) < 1 and abs(moved["y"] - box["y"]) < 1

    # In the form: the Id field.
    flow_node(page, "refund").click()
    page.get_by_test_id("prop-id").fill("pay_out")
    page.get_by_test_id("prop-id").press("Enter")
    expect(flow_node(page, "pay_out")).to_be_visible()
    assert "approve: pay_out, edit: pay_out" in yaml_text(page)
    expect(page.get_by_test_id("properties-panel")).to_have_attribute("data-node", "pay_out")


def test_a_version_taken_by_other_content_is_refused_in_sight(
    editor: Page, plait_server: Cluster
) -> None:
    """The server's 409 shows at the top of the save dialog, not below the diff out of view."""
    page = editor
    page.set_viewport_size({"width": 1280, "height": 720})
    # A graph of its own, with 1.1.0 already taken by other content.
    name, taken = f"summary-taken-{secrets.token_hex(3)}", "1.1.0"
    with api(plait_server.url) as http:
        summarize = http.get("/graphs/summarize/versions/1.0.0").text.replace(
            "name: summarize\n", f"name: {name}\n"
        )
        other = summarize.replace('version: "1.0.0"', f'version: "{taken}"').replace(
            "one sentence", "a single sentence"
        )
        for text in (summarize, other):
            assert http.post("/graphs", json={"yaml": text}).status_code == 201
    open_graph(page, plait_server.url, name, "1.0.0")
    flow_node(page, "clean").click()
    page.get_by_test_id("prop-description").fill("Strip signatures first.")
    page.keyboard.press("Control+s")
    # The dialog suggests the next free version once it has read them; a person
    # replaces the suggestion, not an empty field the suggestion then lands in.
    expect(page.get_by_test_id("save-version")).to_have_value("1.0.1")
    page.get_by_test_id("save-version").fill(taken)
    page.get_by_test_id("save-confirm").click()

    refused = page.get_by_test_id("save-error")
    expect(refused).to_contain_text(f"{name}@{taken} is already registered with other content")
    expect(refused).to_be_in_viewport()
    # Above the diff, however long the diff is.
    error_box, diff_box = refused.bounding_box(), page.get_by_test_id("save-diff").bounding_box()
    assert error_box is not None and diff_box is not None
    assert error_box["y"] + error_box["height"] <= diff_box["y"]
    screenshot(page, "save-version-taken-1280x720")


def test_unsaved_edits_survive_a_reload(editor: Page, plait_server: Cluster) -> None:
    page = editor
    open_graph(page, plait_server.url, "summarize", "1.0.0")
    flow_node(page, "clean").click()
    page.get_by_test_id("prop-description").fill("Strip signatures first.")
    expect(page.get_by_test_id("yaml-text")).to_have_value(re.compile("Strip signatures first"))
    edited = yaml_text(page)
    expect(page.get_by_test_id("dirty-mark")).to_be_visible()

    # Leaving asks first (staying keeps the page open).
    with page.expect_event("dialog") as asked:
        page.close(run_before_unload=True)
    assert asked.value.type == "beforeunload"
    asked.value.dismiss()

    # A new page of the same browser (its storage) gets the edits back, with a banner.
    again = page.context.new_page()
    open_graph(again, plait_server.url, "summarize", "1.0.0")
    expect(again.get_by_test_id("restored-banner")).to_be_visible()
    assert yaml_text(again) == edited
    expect(again.get_by_test_id("dirty-mark")).to_be_visible()
    again.reload()
    expect(again.get_by_test_id("restored-banner")).to_be_visible()
    assert yaml_text(again) == edited
    # Discarding them brings the saved text back, and it stays back.
    again.get_by_test_id("restored-discard").click()
    expect(again.get_by_test_id("restored-banner")).to_have_count(0)
    expect(again.get_by_test_id("dirty-mark")).to_have_count(0)
    assert "Strip signatures first" not in yaml_text(again)
    again.reload()
    expect(again.locator(".react-flow__node").first).to_be_visible()
    expect(again.get_by_test_id("restored-banner")).to_have_count(0)
    again.close()


def test_run_a_draft_and_see_its_nodes_run(editor: Page, plait_server: Cluster) -> None:
    page = editor
    open_graph(page, plait_server.url, "summarize", "1.0.0")
    flow_node(page, "clean").dblclick()
    page.get_by_test_id("rename-node-input").fill("scrub")
    page.get_by_test_id("rename-node-input").press("Enter")
    expect(flow_node(page, "scrub")).to_be_visible()

    page.get_by_test_id("toolbar-run").click()
    expect(page.get_by_test_id("run-next")).to_have_attribute("data-draft", "true")
    page.get_by_test_id("run-start").click()
    # The draft's own node runs (the saved version has no `scrub`).
    expect_status(page, "scrub", "done")
    expect_status(page, "summarize", "done")
    expect(page.get_by_test_id("run-ran")).to_contain_text("unsaved draft")
    thread = newest_thread(plait_server.url, "summarize")
    with api(plait_server.url) as http:
        [run] = http.get(f"/threads/{thread['thread_id']}/runs").json()
        assert run["metadata"]["plait_draft"]["version"] == "1.0.0"
        # Nothing was published: summarize still has the versions it had.
        versions = [v["version"] for v in http.get("/graphs/summarize/versions").json()]
        assert all("draft" not in v for v in versions)


def test_a_broken_indentation_is_one_problem_with_a_fix(
    editor: Page, plait_server: Cluster
) -> None:
    page = editor
    open_graph(page, plait_server.url, "summarize", "1.0.0")
    before = yaml_text(page)
    line = line_number(page, "      kind: python")
    go_to_line(page, line)
    page.keyboard.press("Delete")  # one space less before `kind`
    expect(page.get_by_test_id("problems-count")).to_have_text("1")
    problem = page.get_by_test_id("problem-row")
    expect(problem).to_have_attribute("data-line", str(line))
    expect(problem).to_contain_text("`kind`")
    expect(problem).to_contain_text("Fix: indent it to column 7")
    banner = page.get_by_test_id("canvas-yaml-broken")
    expect(banner).to_contain_text("The YAML does not parse")
    expect(banner).to_contain_text(f"line {line}, column 6")
    screenshot(page, "yaml-broken")
    page.get_by_test_id("canvas-yaml-quick-fix").click()
    expect(banner).to_have_count(0)
    assert yaml_text(page) == before


def test_search_and_replace_in_the_yaml(editor: Page, plait_server: Cluster) -> None:
    page = editor
    open_graph(page, plait_server.url, "summarize", "1.0.0")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+f")
    search = page.locator(".cm-search input[name=search]")
    expect(search).to_be_focused()
    search.fill("summarizer")
    search.press("Enter")
    expect(page.locator(".cm-searchMatch")).not_to_have_count(0)
    page.locator(".cm-search input[name=replace]").fill("writer")
    page.locator(".cm-search button[name=replaceAll]").click()
    text = yaml_text(page)
    assert "summarizer" not in text
    assert "    writer:\n" in text and "model: writer" in text
    # The canvas follows the text.
    expect(flow_node(page, "summarize")).to_contain_text("model: writer")


def test_a_graph_registered_after_the_page_opened_is_offered_as_a_subgraph(
    editor: Page, plait_server: Cluster
) -> None:
    """The ref choice of a subgraph node lists what is registered now, not what was when the
    page first showed one (a version registered meanwhile read "(not defined)")."""
    page = editor
    base = plait_server.url
    with api(base) as http:
        parent = (SPECS / "support-subgraph.yaml").read_text(encoding="utf-8")
        answer = http.post("/graphs", json={"yaml": parent})
        assert answer.status_code in (201, 409), answer.text  # 409: registered already
    open_graph(page, base, "support-subgraph", "1.0.0")
    flow_node(page, "summarize").click()
    choice = page.get_by_test_id("prop-ref")
    expect(choice.locator("option", has_text="summarize@1.0.0")).to_have_count(1)

    name = f"e2e-child-{secrets.token_hex(3)}"
    child = (SPECS / "summarize.yaml").read_text(encoding="utf-8")
    child = child.replace("name: summarize\n", f"name: {name}\n", 1)
    with api(base) as http:
        answer = http.post("/graphs", json={"yaml": child})
        assert answer.status_code == 201, answer.text

    # Shown again (another node, then this one): the new graph is a choice, and choosing it
    # writes the ref without calling it undefined.
    flow_node(page, "triage").click()
    flow_node(page, "summarize").click()
    expect(choice.locator("option", has_text=f"{name}@1.0.0")).to_have_count(1)
    choice.select_option(f"{name}@1.0.0")
    expect(choice.locator("option:checked")).to_have_text(f"{name}@1.0.0")
    assert f"ref: {name}@1.0.0" in yaml_text(page)
    screenshot(page, "subgraph-ref-choice")
