"""Secrets reach the tools that list them and nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.runtime.secrets import SECRETS_FILE_ENV, SecretMissing, read_secrets, redact
from engine.spec.models import ToolDef
from engine.tools.python_tools import load_python_tool
from tests.unit.governance.tools.helpers import FIXTURES, FNS, Run, make_spec

TOKEN = "tok-5f1e2d3c4b"


def test_values_come_from_the_environment_then_the_secrets_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "secrets.env"
    file.write_text("# comment\nA=from-file\nB = file-b\n\n")
    monkeypatch.setenv(SECRETS_FILE_ENV, str(file))
    monkeypatch.setenv("B", "from-env")
    assert read_secrets(["A", "B"]) == {"A": "from-file", "B": "from-env"}
    with pytest.raises(SecretMissing, match=r"secret\(s\) C not found in the environment or"):
        read_secrets(["A", "C"])


def test_redaction_reaches_nested_values() -> None:
    value = {"k": [f"x{TOKEN}y", 3, {TOKEN: None}]}
    assert redact(value, {"T": TOKEN}) == {"k": ["x[redacted:T]y", 3, {"[redacted:T]": None}]}


def test_the_model_never_sees_the_secrets_parameter() -> None:
    tool = load_python_tool(
        "call_api", ToolDef(function=f"{FNS}:call_api", secrets=["API_TOKEN"]), FIXTURES
    )
    assert set(tool.args) == {"query"}
    with pytest.raises(ValueError, match="takes no `secrets` argument"):
        load_python_tool("r", ToolDef(function=f"{FNS}:refund", secrets=["X"]), FIXTURES)


def _spec(function: str) -> Any:
    script = [
        {"tool_calls": [{"name": "api", "args": {"query": "bob"}, "id": "c1"}]},
        {"content": "done"},
    ]
    return make_spec(
        {
            "secrets": ["API_TOKEN"],
            "state": {"answer": {}},
            "models": {"m": {"provider": "scripted", "script": script}},
            "tools": {"api": {"function": f"{FNS}:{function}", "secrets": ["API_TOKEN"]}},
            "nodes": {
                "agent": {
                    "kind": "agent",
                    "model": "m",
                    "tools": ["api"],
                    "prompt": "Greet bob",
                    "output": "answer",
                }
            },
            "edges": [{"from": "START", "to": "agent"}, {"from": "agent", "to": "END"}],
        }
    )


async def test_a_tool_gets_the_secret_and_the_model_gets_it_redacted(
    monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    run = Run(_spec("call_api"))
    await run.start({})

    assert calls == [("call_api", {"query": "bob", "token_length": len(TOKEN)})]
    seen = json.dumps([[m.model_dump() for m in inputs] for inputs in run.models.inputs])
    assert "used token [redacted:API_TOKEN]" in seen
    assert TOKEN not in seen
    assert TOKEN not in json.dumps(run.events, default=str)
    assert TOKEN not in json.dumps([r.to_dict() for r in run.audit.records])
    assert TOKEN not in json.dumps([r.value for r in run.results.records.values()])


async def test_an_error_message_is_redacted_too(
    monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    run = Run(_spec("call_api_failing"))
    await run.start({})

    seen = json.dumps([[m.model_dump() for m in inputs] for inputs in run.models.inputs])
    assert "PermissionError: token [redacted:API_TOKEN] refused" in seen
    assert TOKEN not in seen
    assert TOKEN not in json.dumps(run.events, default=str)
