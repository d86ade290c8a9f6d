"""Lint of `reconcile` and of non-idempotent tools in map items (read from source, nothing runs)."""

from __future__ import annotations

from pathlib import Path

from plait.engine.spec.code_refs import code_refs
from plait.engine.spec.loader import load_spec
from plait.engine.spec.validate import validate_paths

SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {{name: doubt, version: "1.0.0"}}
spec:
  state:
    out: {{type: any}}
  tools:
    send:
      function: "doubt_tools:send"
      idempotent: {idempotent}
      reconcile: "{reconcile}"
  nodes:
    step:
      kind: tool
      tool: send
      output: out
  edges:
    - {{from: START, to: step}}
    - {{from: step, to: END}}
"""

TOOLS = """\
import json


def send():
    return 1


def sent(args, key):
    return {"happened": False}


async def sent_async(args, key, *, extra=None):
    return {"happened": False}


def sent_varargs(*parts):
    return {"happened": False}


def sent_alone(args):
    return {"happened": False}


def sent_keyword(args, key, *, must):
    return {"happened": False}


dumps = json.dumps
"""


def _issues(
    folder: Path, reconcile: str, *, idempotent: str = "false"
) -> list[tuple[str, str, int, str]]:
    (folder / "doubt_tools.py").write_text(TOOLS, encoding="utf-8")
    path = folder / "doubt.yaml"
    path.write_text(SPEC.format(reconcile=reconcile, idempotent=idempotent), encoding="utf-8")
    return [(i.code, i.severity, i.line, i.message) for i in validate_paths([path])]


def test_functions_that_take_args_and_key_pass(tmp_path: Path) -> None:
    for name in ("sent", "sent_async", "sent_varargs", "dumps"):
        assert _issues(tmp_path, f"doubt_tools:{name}") == [], name


def test_a_function_of_the_wrong_shape_is_an_error_on_its_line(tmp_path: Path) -> None:
    for name in ("sent_alone", "sent_keyword"):
        ((code, severity, line, message),) = _issues(tmp_path, f"doubt_tools:{name}")
        assert (code, severity, line) == ("reconcile-signature", "error", 11)
        assert "must take two positional arguments, (args, key)" in message


def test_a_function_the_module_does_not_define_is_an_error(tmp_path: Path) -> None:
    ((code, _, line, message),) = _issues(tmp_path, "doubt_tools:nowhere")
    assert (code, line) == ("reconcile-signature", 11)
    assert "is not defined in module `doubt_tools` (doubt_tools.py)" in message


def test_reconcile_on_an_idempotent_tool_is_a_warning(tmp_path: Path) -> None:
    ((code, severity, line, _),) = _issues(tmp_path, "doubt_tools:sent", idempotent="true")
    assert (code, severity, line) == ("reconcile-unused", "warning", 11)


def test_a_missing_module_is_left_to_unknown_module(tmp_path: Path) -> None:
    found = _issues(tmp_path, "elsewhere:sent")
    assert [(code, severity) for code, severity, _, _ in found] == [("unknown-module", "warning")]


def test_reconcile_is_a_code_ref_for_the_tenant_code_policy(tmp_path: Path) -> None:
    _issues(tmp_path, "doubt_tools:sent")
    loaded = load_spec(tmp_path / "doubt.yaml")
    refs = {(ref.pointer, ref.kind, ref.value) for ref in code_refs(loaded.spec.spec)}
    assert ("/spec/tools/send/reconcile", "function", "doubt_tools:sent") in refs


MAP_SPEC = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: doubt-map, version: "1.0.0"}
spec:
  state:
    orders: {type: list}
    out: {type: any}
  tools:
    send: {function: "doubt_tools:send", idempotent: false}
    safe: {function: "doubt_tools:send", idempotent: false, reconcile: "doubt_tools:sent"}
  nodes:
    each:
      kind: map
      items: state.orders
      do: {kind: tool, tool: send, args: {}}
      output: out
    again:
      kind: map
      items: state.orders
      do: {kind: tool, tool: safe, args: {}}
      output: out
  edges:
    - {from: START, to: each}
    - {from: each, to: again}
    - {from: again, to: END}
"""


def test_a_non_idempotent_tool_without_reconcile_in_a_map_item_is_a_warning(
    tmp_path: Path,
) -> None:
    (tmp_path / "doubt_tools.py").write_text(TOOLS, encoding="utf-8")
    path = tmp_path / "doubt-map.yaml"
    path.write_text(MAP_SPEC, encoding="utf-8")
    found = [(i.code, i.severity, i.line, i.pointer) for i in validate_paths([path])]
    assert found == [("in-doubt-in-map", "warning", 15, "/spec/nodes/each/do/tool")]


def test_a_tenant_may_not_reconcile_with_code_the_operator_did_not_allow(tmp_path: Path) -> None:
    from plait.server.auth.code_policy import refused_code

    _issues(tmp_path, "os:system")
    loaded = load_spec(tmp_path / "doubt.yaml")
    (refusal,) = [i for i in refused_code(loaded, frozenset({"doubt_tools"}))]
    assert (refusal.code, refusal.pointer, refusal.line) == (
        "tenant-code-refused",
        "/spec/tools/send/reconcile",
        11,
    )
    assert refused_code(loaded, frozenset({"doubt_tools", "os"})) == []
