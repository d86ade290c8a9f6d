"""Build a LangChain chat model from a spec's model definition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from plait.engine.governance.model_access import ModelAccess
from plait.engine.models.scripted import ScriptedChatModel
from plait.engine.spec.errors import validation_problems
from plait.engine.spec.models import ModelDef, ScriptedResponse

# Providers Plait ships an extra for: `pip install 'plait[<extra>]'`.
_EXTRAS = {"openai": "openai", "anthropic": "anthropic", "ollama": "ollama"}
#: Providers that take no API key.
_KEYLESS = frozenset({"ollama"})
#: Providers whose SDK reads its key from the environment unless given one: given
#: this instead where the environment is not the run's (a server; keyless
#: OpenAI-compatible endpoints accept any key).
_KEY_FROM_ENVIRONMENT = frozenset({"openai", "anthropic"})
NO_KEY = "plait-no-key"


class ModelConfigError(ValueError):
    """A model definition that cannot be turned into a working chat model."""


def make_chat_model(
    definition: ModelDef, *, base_dir: Path, access: ModelAccess | None = None
) -> BaseChatModel:
    """The chat model ``definition`` describes.

    ``provider: scripted`` replays ``script`` or the ``fixture`` file (relative
    to ``base_dir``, the spec's folder); any other provider goes through
    ``langchain.chat_models.init_chat_model`` with ``access`` (the key of its
    ``api_key_env``, from ``plait.engine.governance.model_access``; with ``environment`` False the
    provider's SDK never takes a key from the process's environment). Raises
    ``ModelConfigError`` with a fix when a package, an API key or a fixture is
    missing.
    """
    if definition.provider == "scripted":
        return ScriptedChatModel(
            script=_scripted_replies(definition, base_dir),
            model_name=definition.model or "scripted",
        )
    return _provider_model(definition, access or ModelAccess())


def _scripted_replies(definition: ModelDef, base_dir: Path) -> list[ScriptedResponse]:
    if definition.fixture is None:
        if not definition.script:
            raise ModelConfigError("a scripted model needs `script` replies or a `fixture` file")
        return definition.script
    if definition.script:
        raise ModelConfigError("a scripted model takes `script` or `fixture`, not both")
    return load_fixture(base_dir / definition.fixture)


def load_fixture(path: Path) -> list[ScriptedResponse]:
    """Scripted replies from a YAML or JSON file holding a list of them."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ModelConfigError(f"cannot read scripted fixture {path}: {error.strerror}") from None
    except YAMLError as error:
        raise ModelConfigError(f"scripted fixture {path} is not valid YAML/JSON: {error}") from None
    if not isinstance(data, list) or not data:
        raise ModelConfigError(f"scripted fixture {path} must hold a non-empty list of replies")
    replies: list[ScriptedResponse] = []
    for index, entry in enumerate(data):
        try:
            replies.append(ScriptedResponse.model_validate(entry))
        except ValidationError as error:
            problems = validation_problems(error, "reply")
            raise ModelConfigError(f"{path}: reply {index}: {problems}") from None
    return replies


def _provider_model(definition: ModelDef, access: ModelAccess) -> BaseChatModel:
    provider = definition.provider
    if not definition.model:
        raise ModelConfigError(f"provider {provider!r} needs `model` (the provider's model name)")
    kwargs: dict[str, Any] = dict(definition.params)
    if definition.api_key_env is not None:
        if not access.api_key:
            raise ModelConfigError(
                f"secret {definition.api_key_env} (the model's api_key_env) is empty; "
                "set it to the API key"
            )
        kwargs["api_key"] = access.api_key
    elif not access.environment and not any("api_key" in name for name in kwargs):
        if provider in _KEY_FROM_ENVIRONMENT:
            kwargs["api_key"] = NO_KEY
        elif provider not in _KEYLESS:
            raise ModelConfigError(
                f"provider {provider!r} needs `api_key_env` here: without one its SDK "
                "would read a key from the server's environment; name a secret of yours"
            )
    for name in ("base_url", "temperature", "max_tokens"):
        value = getattr(definition, name)
        if value is not None:
            kwargs[name] = value
    try:
        return init_chat_model(definition.model, model_provider=provider, **kwargs)
    except ImportError as error:
        extra = _EXTRAS.get(provider)
        if extra is None:
            raise ModelConfigError(f"provider {provider!r}: {error}") from None
        raise ModelConfigError(
            f"provider {provider!r} needs its package: pip install 'plait[{extra}]'"
        ) from None
    except ValueError as error:  # unknown provider, or arguments the provider rejects
        raise ModelConfigError(f"provider {provider!r}: {error}") from error
