"""`module:function` refs are looked up beside the spec file, without importing anything."""

from __future__ import annotations

from pathlib import Path

from plait.engine.spec.validate import validate_paths

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: refs, version: "1.0.0"}}
spec:
  state:
    out: {{type: any}}
  nodes:
    step:
      kind: python
      function: {ref}
      output: out
  edges:
    - {{from: START, to: step}}
    - {{from: step, to: END}}
"""


def _codes(folder: Path, ref: str) -> list[tuple[str, str, int]]:
    path = folder / "refs.yaml"
    path.write_text(SPEC.format(ref=ref), encoding="utf-8")
    return [(i.code, i.severity, i.line) for i in validate_paths([path])]


def test_a_module_beside_the_spec_is_found_without_running_it(tmp_path: Path) -> None:
    package = tmp_path / "team_steps"
    package.mkdir()
    # Importing this package would fail loudly: the check must not import it.
    (package / "__init__.py").write_text("raise RuntimeError('imported!')\n")
    (package / "shout.py").write_text("def run(state):\n    return 1\n")

    assert _codes(tmp_path, "team_steps.shout:run") == []
    assert _codes(tmp_path, "json:dumps") == []  # installed / standard library


def test_a_missing_module_is_a_warning_on_its_line(tmp_path: Path) -> None:
    (tmp_path / "team_steps").mkdir()
    (tmp_path / "team_steps" / "__init__.py").write_text("")

    assert _codes(tmp_path, "no_such_module:run") == [("unknown-module", "warning", 10)]
    assert _codes(tmp_path, "team_steps.missing:run") == [("unknown-module", "warning", 10)]
