"""The node kinds and reducers the examples leave out, compiled and ejected, run side by side.

No database: both run on an in-memory checkpointer, the compiled graph as
``compile_spec`` gives it, the ejected one from the module ``eject`` wrote.
"""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from plait.engine.compiler import compile_spec
from plait.engine.eject import NotEjectable, eject
from plait.engine.spec.loader import parse_spec
from tests.unit.compiler.helpers import FIXTURES

SPEC = """\
# yaml-language-server: $schema=../schemas/plait-v1.schema.json
#
# Every kind the examples leave out, and every reducer.
apiVersion: plait/v1
kind: Graph
metadata: {name: eject-kinds, version: "1.0.0", description: Kinds and reducers.}
spec:
  state:
    x: {type: integer, default: 3, description: The number to start from.}
    sum: {type: integer}
    notes: {type: list, reducer: extend}
    seen: {type: list, reducer: union}
    info: {type: object, reducer: merge}
    best: {type: integer, reducer: max}
    least: {type: integer, reducer: min}
    log: {type: list, reducer: append}
    total: {type: integer, reducer: sum}
    size: {type: string}
    count: {type: integer}
    meaning: {type: string}
  input: [x]
  models:
    m:
      provider: scripted
      script:
        - data: {word: plait}
  tools:
    lookup: {function: "plait_compiler_fns:lookup"}
  nodes:
    # Adds one to x (a literal argument).
    add:
      kind: python
      description: Add one.
      function: plait_compiler_fns:add
      args: {a: state.x, b: {value: 1}}
      output: sum
    fan: {kind: parallel, branches: [left, right], join: join}
    left:
      kind: python
      function: plait_compiler_fns:collect
      args: {n: state.sum}
      writes:
        notes: "[result.n]"
        seen: "['a', 'b']"
        info: "{'left': result.n}"
        best: result.n
        least: result.n
        log: "'left'"
        total: "1"
    right:
      kind: python
      function: plait_compiler_fns:async_echo
      args: {value: "state.sum * 2"}
      writes:
        notes: result
        seen: "['b', 'c']"
        info: "{'right': result}"
        best: result
        least: result
        log: "'right'"
        total: "2"
    join: {kind: python, function: "plait_compiler_fns:count_fields", output: count}
    size:
      kind: router
      label: "state.best > 5 ? 'big' : 'small'"
      labels: [big, small]
      output: size
    word:
      kind: llm
      model: m
      prompt: "Best is {{ state.best }}"
      schema: {type: object, properties: {word: {type: string}}, required: [word]}
      max_visits: 2
      output: meaning
    look:
      kind: tool
      tool: lookup
      args: {query: state.meaning.word}
      output: meaning
  edges:
    - {from: START, to: add}
    - {from: add, to: fan}
    - {from: join, to: size}
    - from: size
      route: result
      to: {big: word, small: END}
    - from: word
      switch: [{when: "state.total == 3", to: look}]
      default: END
    - {from: look, to: END}
"""


def _loaded(text: str = SPEC) -> Any:
    return parse_spec(text, "eject-kinds.yaml", FIXTURES / "eject-kinds.yaml")


def _module(tmp_path: Path, text: str = SPEC) -> Any:
    target = tmp_path / "eject_kinds.py"
    target.write_text(eject(_loaded(text), None, target=target))
    spec = importlib.util.spec_from_file_location(f"ejected_{uuid.uuid4().hex}", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _run(graph: Any, given: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    config: Any = {"configurable": {"thread_id": "t"}}
    started = [
        chunk["name"]
        async for chunk in graph.astream(given, config, stream_mode="tasks")
        if "input" in chunk
    ]
    values = (await graph.aget_state(config)).values
    return started, {k: v for k, v in values.items() if not k.startswith("_")}


@pytest.mark.parametrize("x", [5, 1])
async def test_router_parallel_llm_tool_and_every_reducer_run_as_compiled(
    x: int, tmp_path: Path
) -> None:
    module = _module(tmp_path)
    compiled = compile_spec(_loaded()).bind(InMemorySaver())

    expected = await _run(compiled, {"x": x})
    ejected = await _run(module.build_graph(InMemorySaver()), module.initial_state({"x": x}))

    assert ejected == expected
    if x == 5:  # the long way: every node, the tool last
        assert ejected[0] == ["add", "fan", "left", "right", "join", "size", "word", "look"]
        assert ejected[1]["meaning"] == "a braid"
        assert ejected[1]["notes"] == [6, 12] and ejected[1]["total"] == 3


def test_the_module_keeps_the_specs_words(tmp_path: Path) -> None:
    source = eject(_loaded(), None, target=tmp_path / "m.py")
    assert "Every kind the examples leave out, and every reducer." in source
    assert "# Adds one to x (a literal argument)." in source
    assert '"""Add one."""' in source
    assert "x: int  # The number to start from." in source
    assert "notes: Annotated[list[Any], extend]" in source
    assert "best: Annotated[int | None, highest]" in source
    assert 'result = await plait.call(add_function, a=state["x"], b=1)' in source


def test_a_default_on_an_append_field_is_refused(tmp_path: Path) -> None:
    text = SPEC.replace(
        "{type: list, reducer: append}", "{type: list, reducer: append, default: [0]}"
    )
    with pytest.raises(NotEjectable, match=r"spec.state.log: a default on an `append` field"):
        eject(_loaded(text), None, target=tmp_path / "m.py")


PLAIN = """\
apiVersion: plait/v1
kind: Graph
metadata: {name: plain-model, version: "1.0.0"}
spec:
  state:
    question: {type: string}
    answer: {type: string}
  models:
    gpt: {provider: openai, model: gpt-4o-mini, api_key_env: PLAIT_TEST_KEY, temperature: 0.2}
  nodes:
    answer:
      kind: llm
      model: gpt
      system: Answer briefly.
      prompt: "Q: {{ state.question }}"
      output: answer
  edges:
    - {from: START, to: answer}
    - {from: answer, to: END}
"""


async def test_a_model_without_governance_is_called_through_langchain_directly(
    tmp_path: Path,
) -> None:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    source = eject(_loaded(PLAIN), None, target=tmp_path / "m.py")
    assert "init_chat_model(" in source and 'api_key=os.environ["PLAIT_TEST_KEY"]' in source
    assert "plait.llm(" not in source

    module = _module(tmp_path, PLAIN)
    seen: list[Any] = []

    class Recording(GenericFakeChatModel):
        async def ainvoke(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            seen.append([(m.type, m.content) for m in messages])
            return await super().ainvoke(messages, *args, **kwargs)

    # The provider's package is an optional extra: the model is made on first use, so
    # a stand-in can take its place.
    module.gpt_model = lambda: Recording(messages=iter([AIMessage("Forty-two.")]))
    graph = module.build_graph()
    output = await graph.ainvoke(module.initial_state({"question": "What is six times seven?"}))
    assert output["answer"] == "Forty-two."
    assert seen == [[("system", "Answer briefly."), ("human", "Q: What is six times seven?")]]


def test_these_modules_pass_ruff(tmp_path: Path) -> None:
    import subprocess
    import sys

    for name, text in (("kinds", SPEC), ("plain", PLAIN)):
        (tmp_path / f"{name}.py").write_text(eject(_loaded(text), None, target=tmp_path / "x.py"))
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--line-length=100",
            "--select=E,F,W,I,B,UP,SIM,RUF,ASYNC",
            ".",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stdout


async def test_subgraphs_used_twice_and_in_two_versions_are_each_written_once(
    tmp_path: Path,
) -> None:
    from plait.engine.spec.registry import SpecRegistry
    from tests.unit.compiler.helpers import make_spec

    def child(version: str, add: int) -> Any:
        nodes = {
            "inc": {
                "kind": "python",
                "function": "plait_compiler_fns:add",
                "args": {"a": "state.n", "b": add},
                "output": "n",
            }
        }
        edges = [{"from": "START", "to": "inc"}, {"from": "inc", "to": "END"}]
        return make_spec(nodes, edges, {"n": {"type": "integer"}}, name="inc", version=version)

    registry = SpecRegistry([child("1.0.0", 1), child("2.0.0", 10)])
    parent = make_spec(
        {
            "one": {"kind": "subgraph", "ref": "inc@1.0.0", "writes": {"n": "result.n"}},
            "again": {"kind": "subgraph", "ref": "inc@1.0.0", "writes": {"n": "result.n"}},
            "ten": {"kind": "subgraph", "ref": "inc@2.0.0", "writes": {"n": "result.n"}},
        },
        [
            {"from": "START", "to": "one"},
            {"from": "one", "to": "again"},
            {"from": "again", "to": "ten"},
            {"from": "ten", "to": "END"},
        ],
        {"n": {"type": "integer"}},
        name="twice",
    )
    target = tmp_path / "twice.py"
    source = eject(parent, registry, target=target)
    assert source.count("def inc_build_graph(") == 1
    assert source.count("def inc_v2_0_0_build_graph(") == 1
    target.write_text(source)
    spec = importlib.util.spec_from_file_location("ejected_twice", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    compiled = compile_spec(parent, registry).bind(InMemorySaver())
    expected = await _run(compiled, {"n": 1})
    assert await _run(module.build_graph(InMemorySaver()), module.initial_state({"n": 1})) == (
        expected
    )
    assert expected[1]["n"] == 13


async def test_a_reducer_input_with_its_empty_default_runs_as_compiled(tmp_path: Path) -> None:
    text = SPEC.replace("input: [x]", "input: [x, total]").replace(
        "total: {type: integer, reducer: sum}", "total: {type: integer, reducer: sum, default: 0}"
    )
    module = _module(tmp_path, text)
    compiled = compile_spec(_loaded(text)).bind(InMemorySaver())
    given = {"x": 5, "total": 4}

    expected = await _run(compiled, given)
    assert await _run(module.build_graph(InMemorySaver()), module.initial_state(given)) == expected
    assert expected[1]["total"] == 7

    other = text.replace("reducer: sum, default: 0}", "reducer: sum, default: 5}")
    with pytest.raises(NotEjectable, match=r"spec\.state\.total: a default on a reducer field"):
        eject(_loaded(other), None, target=tmp_path / "m.py")
