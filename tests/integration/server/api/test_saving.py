"""What Save sends with a version: a change note, and the layout that travels with it."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import httpx

from tests.integration.server.api.conftest import REPO, assert_problem

SUMMARIZE = (REPO / "specs" / "summarize.yaml").read_text(encoding="utf-8")


def named(name: str, version: str = "0.1.0") -> str:
    text = SUMMARIZE.replace("name: summarize\n", f"name: {name}\n", 1)
    return text.replace('version: "1.0.0"', f'version: "{version}"', 1)


async def test_a_first_save_creates_the_graph_with_its_note_and_layout(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"fresh-{secrets.token_hex(3)}"
    layout = {"START": {"x": 0, "y": 0}, "clean": {"x": 10.4, "y": 120}}

    saved = await client.post(
        "/graphs", json={"yaml": named(name), "note": "  First cut.  ", "layout": layout}
    )

    assert saved.status_code == 201, saved.text
    assert saved.json()["note"] == "First cut."
    assert saved.json()["layout_saved"] is True
    assert (specs_dir / f"{name}.yaml").read_text(encoding="utf-8") == named(name)
    written = json.loads((specs_dir / f"{name}.layout.json").read_text(encoding="utf-8"))
    assert written == {"START": {"x": 0.0, "y": 0.0}, "clean": {"x": 10.4, "y": 120.0}}
    [version] = (await client.get(f"/graphs/{name}/versions")).json()
    assert version["note"] == "First cut."

    # The next version: its own note; a save without a layout leaves the file alone.
    second = await client.post("/graphs", json={"yaml": named(name, "0.2.0"), "note": "Second."})
    assert second.json()["layout_saved"] is False
    notes = [v["note"] for v in (await client.get(f"/graphs/{name}/versions")).json()]
    assert notes == ["First cut.", "Second."]
    assert json.loads((specs_dir / f"{name}.layout.json").read_text(encoding="utf-8")) == written


async def test_a_bad_note_or_layout_refuses_the_save_and_writes_nothing(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"refused-{secrets.token_hex(3)}"
    bad_layout = await client.post(
        "/graphs", json={"yaml": named(name), "layout": {"clean": {"x": "left"}}}
    )
    assert "layout" in assert_problem(bad_layout, 422)["detail"]
    long_note = await client.post("/graphs", json={"yaml": named(name), "note": "x" * 2001})
    assert "2000" in assert_problem(long_note, 422)["detail"]
    not_text = await client.post("/graphs", json={"yaml": named(name), "note": 3})
    assert "note" in assert_problem(not_text, 422)["detail"]
    assert_problem(await client.get(f"/graphs/{name}/versions"), 404)
    assert not (specs_dir / f"{name}.yaml").exists()
    assert not (specs_dir / f"{name}.layout.json").exists()
