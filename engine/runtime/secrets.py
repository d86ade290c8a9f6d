"""Secrets: given to the tools that list them, hidden from everything else.

``spec.secrets`` names the secrets a graph uses; a tool lists the ones it
needs (``tools.<name>.secrets``) and its function receives them as the keyword
argument ``secrets`` (a dict). Values come from the environment, else from the
file ``PLAIT_SECRETS_FILE`` (``KEY=VALUE`` lines), read at call time so a
rotated secret needs no restart and no value is held by a compiled graph.

The ``secrets`` parameter is removed from the tool's signature, so it is not in
the argument schema a model sees and a model cannot pass it. Each value is
replaced by ``[redacted:NAME]`` in the tool's result and in its error message
before anything else sees them, so the value never reaches the model, the
recorded tool results, events, checkpoints, the audit trail or logs.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: Environment variable naming the secrets file.
SECRETS_FILE_ENV = "PLAIT_SECRETS_FILE"
#: The keyword argument a tool function receives its secrets in.
PARAMETER = "secrets"


class SecretMissing(LookupError):
    """A secret is in neither the environment nor the secrets file."""


def _from_file(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        values[key.strip()] = value.strip()
    return values


def read_secrets(names: Sequence[str]) -> dict[str, str]:
    """The values of ``names``: the environment first, then ``PLAIT_SECRETS_FILE``."""
    found = {name: os.environ[name] for name in names if name in os.environ}
    missing = [name for name in names if name not in found]
    file = os.environ.get(SECRETS_FILE_ENV)
    if missing and file:
        stored = _from_file(Path(file))
        found.update({name: stored[name] for name in missing if name in stored})
    still = [name for name in names if name not in found]
    if still:
        where = f"the environment or {file}" if file else "the environment"
        raise SecretMissing(f"secret(s) {', '.join(still)} not found in {where}")
    return found


def redact(value: Any, secrets: Mapping[str, str]) -> Any:
    """``value`` with every secret value in its strings replaced by ``[redacted:NAME]``."""
    if isinstance(value, str):
        for name, secret in secrets.items():
            if secret:
                value = value.replace(secret, f"[redacted:{name}]")
        return value
    if isinstance(value, Mapping):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item, secrets) for item in value]
    return value


def with_secrets(function: Callable[..., Any], names: Sequence[str]) -> Callable[..., Any]:
    """``function`` with its ``secrets`` argument filled in and hidden, and its output redacted.

    Sync stays sync and async stays async (the tool loader runs sync tools in a thread).
    """
    signature = inspect.signature(function)
    if PARAMETER not in signature.parameters:
        raise ValueError(f"{function.__qualname__} lists secrets but takes no `secrets` argument")
    visible = signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name != PARAMETER]
    )

    def _failure(exc: Exception, secrets: Mapping[str, str]) -> Exception:
        # A new exception of a plain type: the original (and its traceback's
        # locals) may hold the value; the type name is kept in the message.
        return RuntimeError(f"{type(exc).__name__}: {redact(str(exc), secrets)}")

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def call_async(**kwargs: Any) -> Any:
            secrets = read_secrets(names)
            try:
                result = await function(**kwargs, **{PARAMETER: secrets})
            except Exception as exc:
                raise _failure(exc, secrets) from None
            return redact(result, secrets)

        wrapper: Callable[..., Any] = call_async
    else:

        @functools.wraps(function)
        def call_sync(**kwargs: Any) -> Any:
            secrets = read_secrets(names)
            try:
                result = function(**kwargs, **{PARAMETER: secrets})
            except Exception as exc:
                raise _failure(exc, secrets) from None
            return redact(result, secrets)

        wrapper = call_sync
    wrapper.__signature__ = visible  # type: ignore[attr-defined]
    annotations = dict(getattr(function, "__annotations__", {}))
    annotations.pop(PARAMETER, None)
    wrapper.__annotations__ = annotations
    del wrapper.__wrapped__  # type: ignore[attr-defined]  # schema from the visible signature
    return wrapper
