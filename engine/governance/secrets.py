"""Secrets: resolved per run from the run's source, given to what lists them, hidden elsewhere.

``spec.secrets`` names the secrets a graph uses; a python tool lists the ones
it needs (``tools.<name>.secrets``) and its function receives them as the
keyword argument ``secrets`` (a dict); MCP servers and ``a2a`` nodes send
them as headers (or a stdio server's environment); a model's ``api_key_env``
names the secret holding its key.

Where values come from is the run's :class:`SecretSource`, carried in
``config["configurable"]["plait_secrets"]``: a server puts one there bound to
the run's tenant. Without one (``plait run`` on the operator's machine) values
come from the environment, else from the file ``PLAIT_SECRETS_FILE``
(``KEY=VALUE`` lines) — :class:`EnvironmentSecrets`. Values are read at call
time, so a rotated secret needs no restart.

Whatever the source, Plait's own settings are never a secret: a name starting
with ``PLAIT_`` is refused, and so is a value that equals or contains the
database URL or the admin key (or equals the database password), so a copy
under another name does not get out either.

The ``secrets`` parameter is removed from a tool's signature, so it is not in
the argument schema a model sees and a model cannot pass it. Each value is
replaced by ``[redacted:NAME]`` in the tool's result and in its error before
anything else sees them, so the value never reaches the model, the recorded
tool results, events, checkpoints, the audit trail or logs. A value shorter than
:data:`MIN_MASKED_LENGTH` characters is not masked (it would garble all text
holding those characters); a warning names the secret once per process. The error keeps
its class and the attributes the retry rules read (``status_code``,
``retry_after``), so a rate limit is still retried.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config

from plait.engine.protected import is_protected
from plait.engine.spec.models import GraphBody
from plait.engine.spec.secret_refs import RESERVED_PREFIX, is_reserved, secret_refs

#: Where a run's config carries its :class:`SecretSource`.
SECRETS_KEY = "plait_secrets"
#: Environment variable naming the secrets file.
SECRETS_FILE_ENV = "PLAIT_SECRETS_FILE"
#: The keyword argument a tool function receives its secrets in.
PARAMETER = "secrets"


class SecretMissing(LookupError):
    """Secrets the run may not read; the message names them and says nothing else."""

    def __init__(self, names: Sequence[str], message: str) -> None:
        super().__init__(message)
        self.names = tuple(names)


class SecretSource(Protocol):
    """Where a run's secrets come from (the environment, a tenant's store)."""

    @property
    def scope(self) -> str:
        """Whose values these are (``environment``, ``tenant:acme``).

        What holds values past one call (an MCP session) is kept apart by it.
        """
        ...

    @property
    def reads_environment(self) -> bool:
        """Whether libraries may fall back on the process's environment (``plait run``)."""
        ...

    async def read(self, names: Sequence[str]) -> dict[str, str]:
        """The values of ``names`` this source has (absent names are missing)."""
        ...

    def missing_message(self, names: Sequence[str]) -> str:
        """The error for ``names`` this source does not give: names them, reveals nothing else."""
        ...


def reserved_message(names: Iterable[str]) -> str:
    """Why reserved ``names`` are refused (the same for every source and tenant)."""
    listed = ", ".join(f"`{name}`" for name in names)
    return (
        f"secret {listed}: names starting with {RESERVED_PREFIX} are Plait's own settings, "
        "which no spec can read"
    )


async def resolve(source: SecretSource, names: Iterable[str]) -> dict[str, str]:
    """The values of ``names`` from ``source``; raises :class:`SecretMissing` for any it lacks.

    Reserved names are refused before the source is asked; a value holding one
    of Plait's settings counts as missing, with the same error.
    """
    wanted = list(dict.fromkeys(names))
    reserved = [name for name in wanted if is_reserved(name)]
    if reserved:
        raise SecretMissing(reserved, reserved_message(reserved))
    if not wanted:
        return {}
    found = await source.read(wanted)
    missing = [name for name in wanted if name not in found or is_protected(found[name])]
    if missing:
        raise SecretMissing(missing, source.missing_message(missing))
    return {name: found[name] for name in wanted}


def _from_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


@dataclass(frozen=True)
class EnvironmentSecrets:
    """Secrets from the environment, then from ``PLAIT_SECRETS_FILE``.

    ``names`` limits the environment variables that may be read (``None``:
    any, as ``plait run`` does on the operator's machine); the file's entries
    are all readable, since the operator wrote that file for specs.
    """

    names: frozenset[str] | None = None
    scope: str = "environment"
    reads_environment: bool = True

    async def read(self, names: Sequence[str]) -> dict[str, str]:
        """See :meth:`SecretSource.read`."""
        return self.read_now(names)

    def read_now(self, names: Sequence[str]) -> dict[str, str]:
        """:meth:`read` for sync callers."""
        allowed = [name for name in names if self.names is None or name in self.names]
        found = {name: os.environ[name] for name in allowed if name in os.environ}
        missing = [name for name in names if name not in found]
        file = os.environ.get(SECRETS_FILE_ENV)
        if missing and file:
            stored = _from_file(Path(file))
            found.update({name: stored[name] for name in missing if name in stored})
        return found

    def missing_message(self, names: Sequence[str]) -> str:
        """See :meth:`SecretSource.missing_message`."""
        file = os.environ.get(SECRETS_FILE_ENV)
        where = f"the environment or {file}" if file else "the environment"
        return f"secret(s) {', '.join(names)} not found in {where}"


#: The source of runs whose config names none: ``plait run``, tests driving a graph.
ENVIRONMENT = EnvironmentSecrets()


def source_of(config: RunnableConfig | Mapping[str, Any] | None) -> SecretSource:
    """The run's secret source, from ``config["configurable"]["plait_secrets"]``."""
    found = ((config or {}).get("configurable") or {}).get(SECRETS_KEY)
    return found if found is not None else ENVIRONMENT


def current_source() -> SecretSource:
    """The secret source of the run this code runs in (the tool call's, or LangGraph's config)."""
    from plait.engine.governance.current_call import (
        current_call,  # a leaf module; avoids an import cycle
    )

    call = current_call()
    if call is not None:
        return source_of(call.config)
    try:
        return source_of(get_config())
    except RuntimeError:  # outside a graph run
        return ENVIRONMENT


def with_secret_source(config: dict[str, Any], source: SecretSource) -> dict[str, Any]:
    """``config`` with its run's secrets coming from ``source``."""
    config.setdefault("configurable", {})[SECRETS_KEY] = source
    return config


#: Secret values shorter than this many characters are not masked: replacing every
#: occurrence of a one- to three-character value garbles all text that holds those
#: characters (a secret `x` turned `context_id` into `conte[redacted:X]t_id`), and a value
#: that short is guessed in a few thousand tries anyway. Log maskers of CI systems skip
#: short values too (the `google-github-actions/get-secretmanager-secrets` action masks
#: none under 4 characters by default, Ansible registers none under 4, the Azure Pipelines
#: agent has a minimum secret length). Each such secret is logged once per process.
MIN_MASKED_LENGTH = 4

log = logging.getLogger("plait.secrets")
#: The names of short secrets already logged by this process (see :func:`redact`).
_SAID_TOO_SHORT: set[str] = set()


def short_secret_warning(name: str, value: str) -> str | None:
    """What to tell whoever sets secret ``name`` to ``value`` when the value is too short to
    be masked (:data:`MIN_MASKED_LENGTH`); ``None`` when it is long enough."""
    return too_short_message(name, len(value)) if 0 < len(value) < MIN_MASKED_LENGTH else None


def too_short_message(name: str, length: int) -> str:
    """What the operator is told about secret ``name`` of ``length`` characters (not its value)."""
    return (
        f"secret {name} is {length} character(s) long: values shorter than "
        f"{MIN_MASKED_LENGTH} characters are not masked as [redacted:{name}] in tool results, "
        "errors, audit records and run output (masking them would garble every text holding "
        "those characters, and a value that short is no secret); give it a longer value"
    )


def redact(value: Any, secrets: Mapping[str, str]) -> Any:
    """``value`` with every secret value in its strings replaced by ``[redacted:NAME]``.

    Longer values are replaced first, so a secret that contains another is masked whole.
    Values shorter than :data:`MIN_MASKED_LENGTH` are left as they are; the first time a
    process meets one, a warning naming the secret (never its value) is logged.
    """
    masks = []
    for name, secret in sorted(secrets.items(), key=lambda pair: -len(pair[1])):
        if not secret:
            continue
        if len(secret) < MIN_MASKED_LENGTH:
            _say_too_short(name, len(secret))
            continue
        masks.append((secret, f"[redacted:{name}]"))
    return _masked(value, masks) if masks else value


def _say_too_short(name: str, length: int) -> None:
    if name not in _SAID_TOO_SHORT:
        _SAID_TOO_SHORT.add(name)
        log.warning(too_short_message(name, length))


def _masked(value: Any, masks: Sequence[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for secret, mask in masks:
            value = value.replace(secret, mask)
        return value
    if isinstance(value, Mapping):
        return {_masked(k, masks): _masked(v, masks) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item, masks) for item in value]
    return value


def _plain(value: Any) -> bool:
    """Whether ``value`` is JSON-like all the way down (so redaction reaches every string)."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    return False


def redacted_error(exc: Exception, secrets: Mapping[str, str]) -> Exception:
    """A copy of ``exc`` of the same class, its message and plain attributes redacted.

    The copy has no traceback, cause or context (they may hold the values).
    Attributes that are not plain data are dropped, except that an HTTP
    ``response`` keeps its ``status_code`` (the retry rules read it), in an
    object of its own. When the class cannot be copied this way, the copy is a
    ``RuntimeError`` naming it.
    """
    message = redact(str(exc), secrets)
    try:
        copy: Exception = type(exc).__new__(type(exc))
        copy.args = (message,)
        for key, value in vars(exc).items():
            if _plain(value):
                setattr(copy, key, redact(value, secrets))
            elif key == "response" and isinstance(getattr(value, "status_code", None), int):
                setattr(copy, key, types.SimpleNamespace(status_code=value.status_code))
        str(copy)  # a class whose message needs what was dropped cannot be copied
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {message}")
    return copy


def with_secrets_argument(function: Callable[..., Any], names: Sequence[str]) -> Callable[..., Any]:
    """``function`` as a coroutine function with its ``secrets`` filled in and hidden.

    The values come from the run's source at each call; a sync ``function``
    runs in a worker thread (as every sync tool does). The result and any
    error are redacted (:func:`redacted_error`).
    """
    signature = inspect.signature(function)
    if PARAMETER not in signature.parameters:
        raise ValueError(f"{function.__qualname__} lists secrets but takes no `secrets` argument")
    visible = signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name != PARAMETER]
    )
    is_async = inspect.iscoroutinefunction(function)

    @functools.wraps(function)
    async def call(**kwargs: Any) -> Any:
        secrets = await resolve(current_source(), names)
        arguments = {**kwargs, PARAMETER: secrets}
        try:
            if is_async:
                result = await function(**arguments)
            else:
                result = await asyncio.to_thread(function, **arguments)
        except Exception as exc:
            failure = redacted_error(exc, secrets)
        else:
            return redact(result, secrets)
        # Raised outside the handler, with the values gone from this frame, so neither
        # the copy's context nor its traceback's locals lead back to them.
        del secrets, arguments
        raise failure

    call.__signature__ = visible  # type: ignore[attr-defined]
    annotations = dict(getattr(function, "__annotations__", {}))
    annotations.pop(PARAMETER, None)
    call.__annotations__ = annotations
    del call.__wrapped__  # schema from the visible signature
    return call


async def mask_spec_secrets(value: Any, body: GraphBody, source: SecretSource) -> Any:
    """``value`` with the secrets ``body`` names (``spec.secrets``, models' keys, tools'
    secrets) masked as ``[redacted:NAME]``, their values read from ``source``: what a run of
    the spec could have seen, masked as tool results and audited model calls are."""
    wanted = list(dict.fromkeys(ref.name for ref in secret_refs(body) if not is_reserved(ref.name)))
    # What the source lacks cannot be in the value through it: nothing to mask.
    secrets = await source.read(wanted) if wanted else {}
    return redact(value, secrets) if secrets else value
