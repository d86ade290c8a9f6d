"""The ``plait`` app in-process: help, exit codes, and no traceback for any bad input."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from plait.server.cli import app as app_module
from plait.server.cli.app import app
from plait.server.cli.exits import ExitCode

SPECS = Path(__file__).resolve().parents[3] / "specs"
runner = CliRunner()


def test_help_lists_commands_and_exit_codes() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for word in ("validate", "run", "graph", "schema", "Exit codes:", "4    the run waits"):
        assert word in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "{bad"], "is not valid JSON"),
        (["--input", "[]"], "must be a JSON object"),
        (["--input", '{"goal": "x", "nope": 1}'], "unknown input field nope"),
        (["--example", "missing"], "no example 'missing'"),
        (["--decision", "edit"], "edit needs the new arguments"),
        (["--arguments", "{}"], "--arguments and --comment go with --decision"),
        (["--input", "{}", "--example", "csv_export"], "not both"),
    ],
)
def test_run_usage_errors_exit_2_before_touching_the_database(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An unreachable database proves these fail before connecting.
    monkeypatch.setenv("PLAIT_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    result = runner.invoke(app, ["run", str(SPECS / "planner-team.yaml"), *args])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert message in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_unknown_decision_value_is_rejected_by_the_parser() -> None:
    result = runner.invoke(app, ["run", str(SPECS / "planner-team.yaml"), "--decision", "maybe"])
    assert result.exit_code == 2
    assert "maybe" in result.output


def test_graph_of_an_invalid_spec_prints_issues_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("apiVersion: plait/v1\nkind: Graph\n")
    monkeypatch.setattr("sys.argv", ["plait", "graph", str(spec)])
    with pytest.raises(SystemExit) as exited:
        app_module.main()
    assert exited.value.code == ExitCode.INVALID_SPEC
    err = capsys.readouterr().err
    assert f"{spec}:" in err and "error[" in err
    assert "Traceback" not in err


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(alphabet=string.printable + "äß€{}[]:-#&*!|>'\"%@`", max_size=300))
def test_validate_never_crashes_on_random_text(tmp_path: Path, text: str) -> None:
    spec = tmp_path / "random.yaml"
    spec.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["validate", "--format", "json", str(spec)])
    assert result.exit_code in (0, 1)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


def test_validate_says_how_many_spec_files_it_checked(tmp_path: Path) -> None:
    for name in ("one", "two"):
        spec = (SPECS / "summarize.yaml").read_text(encoding="utf-8")
        (tmp_path / f"{name}.yaml").write_text(spec.replace("name: summarize", f"name: {name}"))
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == ExitCode.OK, result.output
    assert "✓ 2 spec files valid" in result.output
    (tmp_path / "two.yaml").write_text("apiVersion: plait/v1\nkind: Graph\n")
    result = runner.invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == ExitCode.INVALID_SPEC
    assert "in 2 spec files" in result.output


def test_run_json_reports_an_invalid_spec_as_one_error_event(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("apiVersion: plait/v1\nkind: Graph\nmetadata: {name: bad}\n")
    result = runner.invoke(app, ["run", str(spec), "--json"])
    assert result.exit_code == ExitCode.INVALID_SPEC
    (line,) = result.stdout.splitlines()
    event = json.loads(line)
    assert event["event"] == "error" and event["exit_code"] == ExitCode.INVALID_SPEC
    assert {issue["file"] for issue in event["issues"]} == {str(spec)}


def test_serve_refuses_a_cors_policy_that_cannot_work(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.argv", ["plait", "serve", "--cors-origin", "*", "--cors-credentials"])
    with pytest.raises(SystemExit) as exited:
        app_module.main()
    assert exited.value.code == ExitCode.USAGE
    assert "list the front ends' origins" in capsys.readouterr().err
    monkeypatch.setenv("PLAIT_CORS_ORIGINS", "https://app.example.com/")
    monkeypatch.setattr("sys.argv", ["plait", "serve"])
    with pytest.raises(SystemExit) as exited:
        app_module.main()
    assert exited.value.code == ExitCode.USAGE
    assert "is not an origin" in capsys.readouterr().err
