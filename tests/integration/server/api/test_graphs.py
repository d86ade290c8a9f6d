"""The graph registry API: upload, versions, YAML, diff, and the refusals that write nothing."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx

from plait.engine.spec.validate import validate_text
from tests.integration.server.api.conftest import REPO, assert_problem

SUMMARIZE = (REPO / "specs" / "summarize.yaml").read_text(encoding="utf-8")


def renamed(name: str, version: str = "1.0.0") -> str:
    """The summarize example as graph ``name`` at ``version``."""
    text = SUMMARIZE.replace("name: summarize\n", f"name: {name}\n", 1)
    return text.replace('version: "1.0.0"', f'version: "{version}"', 1)


async def test_upload_versions_yaml_and_diff(client: httpx.AsyncClient, specs_dir: Path) -> None:
    name = f"upload-{secrets.token_hex(3)}"
    first = await client.post(
        "/graphs", content=renamed(name), headers={"content-type": "application/yaml"}
    )
    assert first.status_code == 201, first.text
    assert first.json()["version"] == "1.0.0"
    assert first.headers["Location"] == f"/graphs/{name}/versions/1.0.0"
    assert (specs_dir / f"{name}.yaml").read_text(encoding="utf-8") == renamed(name)

    changed = (
        renamed(name, "1.1.0")
        .replace("    clean:\n", "    scrub:\n")
        .replace("{from: START, to: clean}", "{from: START, to: scrub}")
        .replace("{from: clean, to: summarize}", "{from: scrub, to: summarize}")
    )
    second = await client.post("/graphs", json={"yaml": changed})
    assert second.status_code == 201, second.text
    # The newest version replaces the file: the change shows in `git diff`.
    assert (specs_dir / f"{name}.yaml").read_text(encoding="utf-8") == changed

    again = await client.post("/graphs", json={"yaml": changed})
    assert again.status_code == 200
    assert again.json()["digest"] == second.json()["digest"]

    versions = (await client.get(f"/graphs/{name}/versions")).json()
    assert [item["version"] for item in versions] == ["1.0.0", "1.1.0"]
    listed = {item["name"]: item for item in (await client.get("/graphs")).json()}
    assert listed[name]["versions"] == ["1.0.0", "1.1.0"]
    assert listed[name]["latest"]["version"] == "1.1.0"

    yaml = await client.get(f"/graphs/{name}/versions/1.0.0")
    assert yaml.headers["content-type"].startswith("application/yaml")
    assert yaml.text == renamed(name)

    diff = (
        await client.get(f"/graphs/{name}/diff", params={"from": "1.0.0", "to": "1.1.0"})
    ).json()
    assert diff["nodes"] == {"added": ["scrub"], "removed": ["clean"], "changed": []}
    assert f"--- {name}@1.0.0" in diff["unified"]
    assert "+    scrub:" in diff["unified"]

    # A new version is a new assistant; the bare graph name means the newest.
    assistant = (await client.get(f"/assistants/{name}")).json()
    assert assistant["metadata"]["plait_version"] == "1.1.0"
    assert assistant["version"] == 2


async def test_same_version_other_content_is_refused_and_writes_nothing(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"conflict-{secrets.token_hex(3)}"
    original = renamed(name)
    assert (await client.post("/graphs", json={"yaml": original})).status_code == 201
    edited = original.replace("Summarise the message", "Summarise the text")
    body = assert_problem(await client.post("/graphs", json={"yaml": edited}), 409)
    assert "bump metadata.version" in body["detail"]
    assert (specs_dir / f"{name}.yaml").read_text(encoding="utf-8") == original
    assert (await client.get(f"/graphs/{name}/versions/1.0.0")).text == original
    assert len((await client.get(f"/graphs/{name}/versions")).json()) == 1


async def test_invalid_spec_gets_validate_issues(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"broken-{secrets.token_hex(3)}"
    broken = renamed(name).replace("{from: clean, to: summarize}", "{from: clean, to: nowhere}")
    response = await client.post(
        "/graphs", content=broken, headers={"content-type": "application/yaml"}
    )
    body = assert_problem(response, 422)
    expected = [issue.to_dict() for issue in validate_text(broken, "<upload>")]
    assert body["errors"] == expected
    assert any(error["severity"] == "error" for error in body["errors"])
    for error in body["errors"]:
        assert {"file", "line", "column", "pointer", "message", "fix"} <= set(error)
    assert not (specs_dir / f"{name}.yaml").exists()
    assert_problem(await client.get(f"/graphs/{name}/versions"), 404)

    not_yaml = await client.post(
        "/graphs", content=b"\xff\xfe", headers={"content-type": "text/yaml"}
    )
    assert_problem(not_yaml, 422)
    bad_json = await client.post("/graphs", json={"spec": "x"})
    assert "yaml" in assert_problem(bad_json, 422)["detail"]
    wrong_type = await client.post("/graphs", content=b"x", headers={"content-type": "image/png"})
    assert_problem(wrong_type, 415)


async def test_unknown_graph_and_version_are_404(client: httpx.AsyncClient) -> None:
    assert_problem(await client.get("/graphs/no-such-graph/versions"), 404)
    body = assert_problem(await client.get("/graphs/summarize/versions/9.9.9"), 404)
    assert "1.0.0" in body["detail"]
    diff = await client.get("/graphs/summarize/diff", params={"from": "1.0.0", "to": "2.0.0"})
    assert_problem(diff, 404)
    assert_problem(await client.get("/graphs/summarize/diff", params={"from": "1.0.0"}), 422)


async def test_validate_returns_issues_without_saving(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"draft-{secrets.token_hex(3)}"
    broken = renamed(name).replace("{from: clean, to: summarize}", "{from: clean, to: nowhere}")

    response = await client.post("/graphs/validate", json={"yaml": broken})

    assert response.status_code == 200
    issues = response.json()["issues"]
    assert [issue["code"] for issue in issues] == [
        issue.code for issue in validate_text(broken, "<upload>")
    ]
    assert any(issue["code"] == "unknown-node" and issue["line"] > 1 for issue in issues)
    clean = await client.post(
        "/graphs/validate", content=renamed(name), headers={"content-type": "application/yaml"}
    )
    assert clean.json() == {"issues": []}
    assert not (specs_dir / f"{name}.yaml").exists()
    assert (await client.get(f"/graphs/{name}/versions")).status_code == 404


async def test_layout_is_a_sidecar_outside_the_spec(
    client: httpx.AsyncClient, specs_dir: Path
) -> None:
    name = f"laid-{secrets.token_hex(3)}"
    created = await client.post("/graphs", json={"yaml": renamed(name)})
    digest = created.json()["digest"]
    assert (await client.get(f"/graphs/{name}/layout")).json() == {}

    saved = await client.put(f"/graphs/{name}/layout", json={"clean": {"x": 10, "y": 20.5}})

    assert saved.status_code == 200
    assert (await client.get(f"/graphs/{name}/layout")).json() == {"clean": {"x": 10.0, "y": 20.5}}
    assert (specs_dir / f"{name}.layout.json").is_file()
    versions = (await client.get(f"/graphs/{name}/versions")).json()
    assert [v["digest"] for v in versions] == [digest]
    bad = await client.put(f"/graphs/{name}/layout", json={"clean": {"x": "left"}})
    assert_problem(bad, 422)
    assert_problem(await client.put("/graphs/no-such-graph/layout", json={}), 404)
