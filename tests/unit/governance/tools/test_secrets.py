"""Secrets reach the tools that list them and nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plait.engine.governance.retries import classify
from plait.engine.governance.secrets import (
    ENVIRONMENT,
    SECRETS_FILE_ENV,
    EnvironmentSecrets,
    SecretMissing,
    redact,
    resolve,
)
from plait.engine.protected import protect
from plait.engine.spec.models import ToolDef
from plait.engine.tools.python_tools import load_python_tool
from tests.unit.governance.tools.helpers import FIXTURES, FNS, Run, make_spec

TOKEN = "tok-5f1e2d3c4b"


async def test_values_come_from_the_environment_then_the_secrets_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "secrets.env"
    file.write_text("# comment\nA=from-file\nB = file-b\n\n")
    monkeypatch.setenv(SECRETS_FILE_ENV, str(file))
    monkeypatch.setenv("B", "from-env")
    assert await resolve(ENVIRONMENT, ["A", "B"]) == {"A": "from-file", "B": "from-env"}
    with pytest.raises(SecretMissing, match=r"secret\(s\) C not found in the environment or"):
        await resolve(ENVIRONMENT, ["A", "C"])


async def test_a_limited_source_reads_only_the_listed_variables_and_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "secrets.env"
    file.write_text("C=from-file\n")
    monkeypatch.setenv(SECRETS_FILE_ENV, str(file))
    monkeypatch.setenv("A", "listed")
    monkeypatch.setenv("B", "not-listed")
    limited = EnvironmentSecrets(frozenset({"A"}))
    assert await resolve(limited, ["A", "C"]) == {"A": "listed", "C": "from-file"}
    with pytest.raises(SecretMissing) as missing:
        await resolve(limited, ["B"])
    assert missing.value.names == ("B",)


async def test_plaits_own_settings_are_never_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    admin = "admin-key-0123456789abcdef"
    url = "postgresql://plait:pw-long-enough-1234@db.internal:5432/plait"
    monkeypatch.setenv("PLAIT_ADMIN_KEY", admin)
    monkeypatch.setenv("PLAIT_ANYTHING", "x")
    monkeypatch.setenv("COPY_OF_ADMIN", admin)
    monkeypatch.setenv("BEARER_ADMIN", f"Bearer {admin}")
    monkeypatch.setenv("DB_PASSWORD", "pw-long-enough-1234")
    monkeypatch.setenv("HARMLESS", "fine")
    protect(url)  # as open_pool does with the URL it connects to
    for name in ("PLAIT_ADMIN_KEY", "plait_anything", "PLAIT_ANYTHING"):
        with pytest.raises(SecretMissing, match="Plait's own settings"):
            await resolve(ENVIRONMENT, [name, "HARMLESS"])
    # Under another name, a value holding a setting is just missing.
    for name in ("COPY_OF_ADMIN", "BEARER_ADMIN", "DB_PASSWORD"):
        with pytest.raises(SecretMissing, match=f"secret\\(s\\) {name} not found"):
            await resolve(ENVIRONMENT, [name])
    monkeypatch.setenv("DB_URL", url)
    with pytest.raises(SecretMissing):
        await resolve(ENVIRONMENT, ["DB_URL"])
    assert await resolve(ENVIRONMENT, ["HARMLESS"]) == {"HARMLESS": "fine"}


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


@pytest.mark.parametrize(
    ("kind", "error_class"), [("503", "server_error"), ("rate_limit", "rate_limit")]
)
async def test_a_tool_with_secrets_keeps_its_error_class_and_is_retried(
    kind: str,
    error_class: str,
    monkeypatch: pytest.MonkeyPatch,
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    retry = {"max_attempts": 3, "initial_interval": 0.01, "jitter": False}
    run = Run(
        make_spec(
            {
                "secrets": ["API_TOKEN"],
                "state": {"out": {}},
                "tools": {
                    "api": {
                        "function": f"{FNS}:call_api_flaky",
                        "secrets": ["API_TOKEN"],
                        "retry": retry,
                    }
                },
                "nodes": {
                    "call": {"kind": "tool", "tool": "api", "args": {"kind": f"'{kind}'"}},
                },
                "edges": [{"from": "START", "to": "call"}, {"from": "call", "to": "END"}],
            }
        )
    )
    await run.start({})

    assert [name for name, _ in calls] == ["call_api_flaky"] * 3  # retried, then answered
    retries = [event for event in run.events if event.get("plait") == "retry"]
    assert [event["error_class"] for event in retries] == [error_class] * 2
    assert all("[redacted:API_TOKEN]" in event["error"] for event in retries)
    assert TOKEN not in json.dumps(run.events, default=str)


async def test_the_error_leads_nowhere_near_the_value(
    monkeypatch: pytest.MonkeyPatch, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    monkeypatch.setenv("API_TOKEN", TOKEN)
    tool = load_python_tool(
        "api", ToolDef(function=f"{FNS}:call_api_flaky", secrets=["API_TOKEN"]), FIXTURES
    )
    with pytest.raises(Exception) as raised:
        await tool.ainvoke({"kind": "503"})
    error = raised.value
    assert type(error).__name__ == "ServiceDown"
    assert error.status_code == 503 and error.response.status_code == 503
    assert classify(error) == "server_error"
    assert str(error) == "token [redacted:API_TOKEN]: service unavailable"
    assert error.__cause__ is None and error.__context__ is None

    seen: list[str] = [repr(error.args), repr(vars(error))]
    traceback = error.__traceback__
    while traceback is not None:  # every frame between the raise and the test
        seen.append(repr(traceback.tb_frame.f_locals))
        traceback = traceback.tb_next
    assert all(TOKEN not in text for text in seen)
