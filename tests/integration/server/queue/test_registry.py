"""The graph registry: specs folder <-> plait_graph_versions, on real Postgres."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from plait.engine.spec.errors import SpecError
from plait.engine.spec.validate import validate_text
from plait.engine.store.pool import Pool
from plait.server.graphs.versions import (
    VersionConflict,
    assistant_id,
    by_assistant_id,
    get_version,
    latest,
    list_graphs,
    save_version,
    sync_folder,
    version_key,
)
from tests.integration.server.queue.conftest import spec_text, unique

pytestmark = pytest.mark.postgres


def _parent(name: str, child_ref: str) -> str:
    return f"""\
apiVersion: plait/v1
kind: Graph
metadata:
  name: {name}
  version: "1.0.0"
spec:
  state:
    text: {{type: string}}
    result: {{type: object}}
  nodes:
    child:
      kind: subgraph
      ref: {child_ref}
      input: {{text: state.text}}
      output: result
  edges:
    - {{from: START, to: child}}
    - {{from: child, to: END}}
"""


def test_version_key_follows_semver_precedence() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11"]
    ordered += ["1.0.0-rc.1", "1.0.0", "1.2.0", "1.10.0", "2.0.0+build.5"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert version_key("1.0.0+a") == version_key("1.0.0+b")


async def test_save_stores_a_version_with_a_stable_assistant_id(pool: Pool) -> None:
    name = unique("g")
    text = spec_text(name)

    saved = await save_version(pool, text, file="upload.yaml")

    assert (saved.name, saved.version, saved.yaml) == (name, "1.0.0", text)
    assert saved.assistant_id == assistant_id(name, "1.0.0")
    assert uuid.UUID(saved.assistant_id).version == 5
    assert assistant_id(name, "1.0.1") != saved.assistant_id
    assert saved.loaded.digest == saved.digest
    assert await get_version(pool, name, "1.0.0") == saved
    assert saved in await list_graphs(pool)


async def test_same_content_again_is_the_same_version(pool: Pool) -> None:
    name = unique("g")
    first = await save_version(pool, spec_text(name))
    # Formatting and comments do not change the digest.
    again = await save_version(pool, "# a comment\n" + spec_text(name))
    assert again.created_at == first.created_at
    assert again.yaml == first.yaml


async def test_same_version_with_other_content_is_refused(pool: Pool) -> None:
    name = unique("g")
    first = await save_version(pool, spec_text(name, reply="one"))

    with pytest.raises(VersionConflict, match=rf"{name}@1\.0\.0 is already registered"):
        await save_version(pool, spec_text(name, reply="two"))

    assert await get_version(pool, name, "1.0.0") == first


async def test_concurrent_uploads_of_one_version_agree(pool: Pool) -> None:
    name = unique("g")
    results = await asyncio.gather(
        *(save_version(pool, spec_text(name)) for _ in range(5)), return_exceptions=True
    )
    assert all(not isinstance(r, BaseException) for r in results), results
    assert len({r.created_at for r in results if not isinstance(r, BaseException)}) == 1


async def test_invalid_spec_raises_the_validator_issues(pool: Pool) -> None:
    name = unique("g")
    text = spec_text(name).replace("to: END}", "to: nowhere}")

    with pytest.raises(SpecError) as caught:
        await save_version(pool, text, file="bad.yaml")

    assert caught.value.issues == validate_text(text, "bad.yaml")
    assert await get_version(pool, name, "1.0.0") is None


async def test_subgraph_refs_resolve_against_stored_versions(pool: Pool, tmp_path: Path) -> None:
    child = await save_version(pool, spec_text(unique("child")))
    parent_name = unique("parent")

    with pytest.raises(SpecError, match="no-such"):
        await save_version(pool, _parent(parent_name, "no-such@1.0.0"))
    parent = await save_version(pool, _parent(parent_name, child.ref), specs_dir=tmp_path)

    assert parent.ref == f"{parent_name}@1.0.0"
    assert (tmp_path / f"{parent_name}.yaml").read_text() == parent.yaml


async def test_folder_holds_the_newest_version(pool: Pool, tmp_path: Path) -> None:
    name = unique("g")
    # The graph lives in a file not named after it: saving keeps using that file.
    (tmp_path / "team.yaml").write_text(spec_text(name, "1.1.0"))
    assert await sync_folder(pool, tmp_path) == []

    older = await save_version(pool, spec_text(name, "1.0.0"), specs_dir=tmp_path)
    assert (tmp_path / "team.yaml").read_text() == spec_text(name, "1.1.0")
    assert older.file is None
    newer = await save_version(pool, spec_text(name, "1.10.0"), specs_dir=tmp_path)

    assert (tmp_path / "team.yaml").read_text() == newer.yaml
    assert await asyncio.to_thread(lambda: sorted(p.name for p in tmp_path.iterdir())) == [
        "team.yaml"
    ]
    assert newer.file == "team.yaml"
    assert [v.version for v in await list_graphs(pool) if v.name == name] == [
        "1.0.0",
        "1.1.0",
        "1.10.0",
    ]
    newest = await latest(pool, name, specs_dir=tmp_path)
    assert newest is not None and newest.version == "1.10.0"
    # A version read from the table resolves python refs against the folder.
    assert newest.loaded.base_dir == tmp_path


async def test_new_graph_is_written_as_name_yaml(pool: Pool, tmp_path: Path) -> None:
    name = unique("g")
    saved = await save_version(pool, spec_text(name), specs_dir=tmp_path)
    assert saved.file == f"{name}.yaml"
    assert (tmp_path / f"{name}.yaml").read_text() == saved.yaml


async def test_sync_folder_stores_valid_specs_and_reports_the_rest(
    pool: Pool, tmp_path: Path
) -> None:
    good, bad, clash = unique("good"), unique("bad"), unique("clash")
    stored = await save_version(pool, spec_text(clash, reply="published"))
    (tmp_path / "good.yaml").write_text(spec_text(good))
    (tmp_path / "bad.yaml").write_text(spec_text(bad).replace("model: echo", "model: nope"))
    (tmp_path / "clash.yaml").write_text(spec_text(clash, reply="edited in place"))
    (tmp_path / "notes.txt").write_text("not a spec")

    issues = await sync_folder(pool, tmp_path)

    by_file = {(Path(i.file).name, i.code) for i in issues}
    assert ("clash.yaml", "version-conflict") in by_file
    assert {name for name, _ in by_file} == {"bad.yaml", "clash.yaml"}
    assert await get_version(pool, good, "1.0.0") is not None
    assert await get_version(pool, bad, "1.0.0") is None
    assert await get_version(pool, clash, "1.0.0") == stored
    # Syncing again changes nothing and reports the same problems.
    assert await sync_folder(pool, tmp_path) == issues


async def test_duplicate_versions_in_the_folder_are_reported(pool: Pool, tmp_path: Path) -> None:
    name = unique("g")
    (tmp_path / "a.yaml").write_text(spec_text(name, reply="a"))
    (tmp_path / "b.yaml").write_text(spec_text(name, reply="b"))

    issues = await sync_folder(pool, tmp_path)

    assert [(Path(i.file).name, i.code) for i in issues] == [("b.yaml", "duplicate-spec")]
    stored = await get_version(pool, name, "1.0.0")
    assert stored is not None and 'content: "a"' in stored.yaml


async def test_assistant_ids_resolve(pool: Pool) -> None:
    name = unique("g")
    one = await save_version(pool, spec_text(name, "1.0.0"))
    two = await save_version(pool, spec_text(name, "2.0.0"))
    await save_version(pool, spec_text(name, "2.0.0-rc.1"))

    assert await by_assistant_id(pool, one.assistant_id) == one
    assert await by_assistant_id(pool, one.assistant_id.upper()) == one
    assert await by_assistant_id(pool, name) == two
    assert await by_assistant_id(pool, f"{name}@1.0.0") == one
    assert await by_assistant_id(pool, str(uuid.uuid4())) is None
    assert await by_assistant_id(pool, unique("missing")) is None


async def test_every_version_reads_back_its_own_text(pool: Pool) -> None:
    name = unique("g")
    texts = {
        version: f"# {name} {version}: comments are kept\n{spec_text(name, version)}"
        for version in ("1.0.0", "1.1.0", "2.0.0")
    }
    for text in texts.values():
        await save_version(pool, text)

    for _ in range(2):  # the second round reads the texts it read before
        newest = await latest(pool, name)
        assert newest is not None and newest.yaml == texts["2.0.0"]
        listed = [version for version in await list_graphs(pool) if version.name == name]
        assert [version.yaml for version in listed] == list(texts.values())
        for version, text in texts.items():
            found = await get_version(pool, name, version)
            assert found is not None and found.yaml == text
