"""make_chat_model: scripted replies from the spec or a fixture file, and provider errors."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from plait.engine.governance.model_access import ModelAccess, model_access
from plait.engine.governance.secrets import ENVIRONMENT, SecretMissing
from plait.engine.models.factory import NO_KEY, ModelConfigError, make_chat_model
from plait.engine.models.scripted import ScriptedChatModel
from plait.engine.spec.models import ModelDef


class _Store:
    """A secret source like a server's: values of its own, never the environment."""

    scope = "tenant:test"
    reads_environment = False

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    async def read(self, names: Sequence[str]) -> dict[str, str]:
        return {name: self.values[name] for name in names if name in self.values}

    def missing_message(self, names: Sequence[str]) -> str:
        return f"not granted: {names}"


def test_scripted_from_inline_script(tmp_path: Path) -> None:
    model = make_chat_model(
        ModelDef.model_validate(
            {"provider": "scripted", "model": "planner", "script": [{"content": "plan"}]}
        ),
        base_dir=tmp_path,
    )
    assert isinstance(model, ScriptedChatModel)
    assert model.model_name == "planner"
    assert model.invoke("go").content == "plan"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("replies.yaml", "- content: first\n- tool_calls:\n    - {name: lookup, args: {q: x}}\n"),
        (
            "replies.json",
            '[{"content": "first"}, {"tool_calls": [{"name": "lookup", "args": {"q": "x"}}]}]',
        ),
    ],
)
def test_scripted_from_fixture_relative_to_base_dir(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / name).write_text(text)
    model = make_chat_model(
        ModelDef(provider="scripted", fixture=f"fixtures/{name}"), base_dir=tmp_path
    )
    assert model.invoke("go").content == "first"
    second = model.invoke([HumanMessage("go"), model.invoke("go"), HumanMessage("again")])
    assert second.tool_calls[0]["args"] == {"q": "x"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- content: ok\n- tool_calls: nope\n", r"reply 1: tool_calls: .*list"),
        ("- {content: ok, surprise: 1}\n", r"reply 0: surprise"),
        ("{content: ok}\n", "non-empty list"),
        ("[]\n", "non-empty list"),
        ("- [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_fixture_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "replies.yaml").write_text(text)
    with pytest.raises(ModelConfigError, match=message):
        make_chat_model(ModelDef(provider="scripted", fixture="replies.yaml"), base_dir=tmp_path)


def test_missing_fixture_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match=r"cannot read scripted fixture .*missing\.yaml"):
        make_chat_model(ModelDef(provider="scripted", fixture="missing.yaml"), base_dir=tmp_path)


def test_scripted_needs_replies(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="needs `script` replies or a `fixture`"):
        make_chat_model(ModelDef(provider="scripted"), base_dir=tmp_path)


def test_scripted_takes_script_or_fixture_not_both(tmp_path: Path) -> None:
    definition = ModelDef.model_validate(
        {"provider": "scripted", "script": [{"content": "x"}], "fixture": "f.yaml"}
    )
    with pytest.raises(ModelConfigError, match="not both"):
        make_chat_model(definition, base_dir=tmp_path)


def test_missing_provider_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry makes `import langchain_anthropic` fail even where it is installed.
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)
    with pytest.raises(ModelConfigError, match=r"pip install 'plait\[anthropic\]'"):
        make_chat_model(ModelDef(provider="anthropic", model="claude"), base_dir=tmp_path)


async def test_missing_api_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_NO_SUCH_KEY", raising=False)
    definition = ModelDef(provider="openai", model="gpt", api_key_env="TEST_NO_SUCH_KEY")
    with pytest.raises(SecretMissing, match=r"TEST_NO_SUCH_KEY not found in the environment"):
        await model_access(definition, ENVIRONMENT)


async def test_the_key_comes_from_the_runs_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-env")
    definition = ModelDef(provider="openai", model="gpt", api_key_env="TEST_KEY")
    assert await model_access(definition, ENVIRONMENT) == ModelAccess("sk-env", environment=True)
    assert await model_access(definition, _Store({"TEST_KEY": "sk-tenant"})) == ModelAccess(
        "sk-tenant", environment=False
    )


def test_without_the_environment_a_provider_never_takes_its_own_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's own key for the default tenant must not reach a tenant's base_url.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-operators")
    definition = ModelDef(provider="openai", model="gpt", base_url="http://127.0.0.1:9/v1")
    model = make_chat_model(definition, base_dir=tmp_path, access=ModelAccess(environment=False))
    from langchain_openai import ChatOpenAI

    assert isinstance(model, ChatOpenAI) and model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == NO_KEY
    with pytest.raises(ModelConfigError, match="needs `api_key_env` here"):
        make_chat_model(
            ModelDef(provider="mistralai", model="m"),
            base_dir=tmp_path,
            access=ModelAccess(environment=False),
        )


def test_provider_needs_a_model_name(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="needs `model`"):
        make_chat_model(ModelDef(provider="openai"), base_dir=tmp_path)


def test_unknown_provider_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="provider 'nosuch'"):
        make_chat_model(ModelDef(provider="nosuch", model="m"), base_dir=tmp_path)


def test_provider_settings_are_passed_through(tmp_path: Path) -> None:
    model = make_chat_model(
        ModelDef(
            provider="openai",
            model="gpt-test",
            base_url="http://127.0.0.1:9/v1",
            api_key_env="TEST_KEY",
            temperature=0.25,
            max_tokens=77,
            params={"timeout": 3},
        ),
        base_dir=tmp_path,
        access=ModelAccess("sk-test"),
    )
    from langchain_openai import ChatOpenAI

    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-test"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "sk-test"
    assert (model.temperature, model.max_tokens, model.request_timeout) == (0.25, 77, 3)
