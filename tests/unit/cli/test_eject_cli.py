"""``plait eject``: where the module goes, what it refuses, and that it reads as LangGraph."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plait.server.cli import app as app_module
from plait.server.cli.app import app
from plait.server.cli.exits import ExitCode

SPECS = Path(__file__).resolve().parents[3] / "specs"
runner = CliRunner()


def plait(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """Run the console script in-process: its exit code and what it printed on stderr."""
    monkeypatch.setattr("sys.argv", ["plait", *args])
    with pytest.raises(SystemExit) as exited:
        app_module.main()
    code = exited.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().err


def test_eject_prints_a_langgraph_module_with_the_specs_nodes_edges_and_comments() -> None:
    result = runner.invoke(app, ["eject", str(SPECS / "planner-team.yaml")])
    assert result.exit_code == 0, result.output
    source = result.stdout
    tree = ast.parse(source)
    functions = {n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef)}
    assert {"planner", "executor", "reviewer", "after_reviewer", "build_graph"} <= functions
    assert "class State(TypedDict):" in source
    assert "revisions: Annotated[int, operator.add]" in source
    assert "goal: str  # What to plan." in source  # a field's description
    assert "a reviewer approves the schedule or sends it back once." in source  # the header
    # On a revision the prompt carries the reviewer's feedback (a comment in the models).
    assert 'builder.add_conditional_edges("reviewer", after_reviewer, [END, "executor"])' in source
    assert "from plait.runtime import Runtime" in source


def test_eject_writes_into_a_folder_and_never_overwrites_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(SPECS / "summarize.yaml")
    first = runner.invoke(app, ["eject", spec, "-o", str(tmp_path)])
    assert first.exit_code == 0, first.output
    written = tmp_path / "summarize.py"
    assert "def build_graph(" in written.read_text()

    code, err = plait(["eject", spec, "-o", str(written)], monkeypatch, capsys)
    assert code == ExitCode.USAGE
    assert "exists; pass --force" in err
    assert runner.invoke(app, ["eject", spec, "-o", str(written), "--force"]).exit_code == 0


@pytest.mark.parametrize(
    ("path", "message"), [("missing/x.py", "no such folder"), ("x.txt", "must end in .py")]
)
def test_eject_refuses_bad_output_paths(
    path: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["eject", str(SPECS / "summarize.yaml"), "-o", str(tmp_path / path)]
    code, err = plait(args, monkeypatch, capsys)
    assert code == ExitCode.USAGE
    assert message in err


def test_eject_lists_what_does_not_map_and_ejects_it_only_with_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(SPECS / "mcp-tools.yaml")
    code, err = plait(["eject", spec], monkeypatch, capsys)
    assert code == ExitCode.USAGE
    assert "spec.nodes.help: MCP tools (lookup_order, open_ticket)" in err
    assert "spec.tools.open_ticket: non-idempotent calls" in err
    assert "--partial" in err

    target = tmp_path / "mcp.py"
    partial = runner.invoke(app, ["eject", spec, "--partial", "-o", str(target)])
    assert partial.exit_code == 0, partial.output
    source = target.read_text()
    assert "NOT EJECTED" in source and "non-idempotent calls" in source
    assert "raise NotImplementedError(" in source


def test_eject_of_an_invalid_spec_prints_its_issues(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: plait/v1\nkind: Graph\n")
    result = runner.invoke(app, ["eject", str(bad)])
    assert result.exit_code == ExitCode.INVALID_SPEC
