"""What a run gives a chat model: its API key, from the run's secrets, and nothing else.

A model's ``api_key_env`` names a secret like any other (engine/governance/secrets.py):
``plait run`` reads it from the environment, a server from the run's tenant.
Where the run's source is not the environment (a server), the provider's SDK
must not fall back on a key of its own from the process's environment either
(``engine/models/factory.py`` passes it a placeholder, or refuses).
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.engine.governance.secrets import SecretSource, resolve
from plait.engine.spec.models import ModelDef


@dataclass(frozen=True)
class ModelAccess:
    """The value of a model's ``api_key_env`` secret, and whether its provider's SDK may
    read the process's environment (``plait run``: yes; a server: no)."""

    api_key: str | None = None
    environment: bool = True


async def model_access(definition: ModelDef, source: SecretSource) -> ModelAccess:
    """The run's :class:`ModelAccess` to ``definition``: its key resolved from ``source``."""
    api_key = None
    if definition.api_key_env is not None:
        api_key = (await resolve(source, [definition.api_key_env]))[definition.api_key_env]
    return ModelAccess(api_key, source.reads_environment)
