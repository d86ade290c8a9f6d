"""The committed JSON Schema is current, and it accepts the fixtures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema

from plait.engine.spec.loader import parse_spec
from plait.engine.spec.schema import SCHEMA_PATH, json_schema, schema_text, write_schema
from tests.unit.spec.helpers import fixture_text


def test_committed_schema_is_current() -> None:
    assert SCHEMA_PATH.is_file(), "schemas/plait-v1.schema.json is missing"
    assert SCHEMA_PATH.read_text() == schema_text(), (
        "schemas/plait-v1.schema.json is stale: regenerate it with `plait schema --write` "
        "(or `python -m plait.engine.spec.schema`) and commit it"
    )


def test_schema_envelope() -> None:
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("plait-v1.schema.json")
    assert "plait/v1" in schema["title"]
    assert {"apiVersion", "kind", "metadata", "spec"} <= set(schema["properties"])
    jsonschema.Draft202012Validator.check_schema(schema)


def test_fixtures_validate_against_the_schema() -> None:
    validator = jsonschema.Draft202012Validator(json_schema())
    for name in ("minimal", "team"):
        data = parse_spec(fixture_text(name)).data
        assert list(validator.iter_errors(data)) == [], name


def test_write_schema(tmp_path: Path) -> None:
    target = write_schema(tmp_path / "out" / "schema.json")
    assert json.loads(target.read_text()) == json_schema()


def test_module_entry_point_writes_the_schema(tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    result = subprocess.run(
        [sys.executable, "-m", "plait.engine.spec.schema", str(target)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert str(target) in result.stderr
    assert target.read_text() == schema_text()


def test_module_entry_point_help_explains_and_writes_nothing(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "plait.engine.spec.schema", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert "Write the JSON Schema of plait/v1 specs" in result.stdout
    assert list(tmp_path.iterdir()) == []
