"""Settings of a Plait server process, from the environment with CLI overrides."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from plait.server.auth.code_policy import TENANT_MODULES_ENV
from plait.server.http.cors import LOCAL_ORIGINS, CorsPolicy, parse_origins
from plait.server.queue.defaults import DEFAULT_MAX_ATTEMPTS

if TYPE_CHECKING:
    from plait.server.workers.webhook_urls import WebhookPolicy

SPECS_ENV = "PLAIT_SPECS_DIR"
WORKERS_ENV = "PLAIT_WORKERS"
WORKER_PROCESSES_ENV = "PLAIT_WORKER_PROCESSES"
HOST_ENV = "PLAIT_HOST"
PORT_ENV = "PLAIT_PORT"
EDITOR_ENV = "PLAIT_EDITOR_DIR"
#: An admin key accepted without being stored (bootstraps tenants and keys).
ADMIN_KEY_ENV = "PLAIT_ADMIN_KEY"
#: How long a key lookup is cached: a revoked key works at most this long elsewhere.
AUTH_CACHE_ENV = "PLAIT_AUTH_CACHE_SECONDS"
#: Lost attempts before a run is dead-lettered, for specs without `max_attempts`.
MAX_ATTEMPTS_ENV = "PLAIT_MAX_ATTEMPTS"
#: A `plait worker`'s lease on the runs it claims (also its children's under `plait serve`).
LEASE_SECONDS_ENV = "PLAIT_LEASE_SECONDS"
#: Largest request body, in bytes; larger ones get 413 (server/http/request_limits.py).
MAX_BODY_ENV = "PLAIT_MAX_BODY_BYTES"
#: How long an idle keep-alive connection stays open (`plait serve --keep-alive-seconds`).
KEEP_ALIVE_ENV = "PLAIT_KEEP_ALIVE_SECONDS"
#: Longer than the idle timeouts of the clients and proxies in front (aiohttp's pool 15 s,
#: AWS load balancers 60 s): the side that closes an idle connection must be the client,
#: or a request sent as the server closes it is lost (uvicorn's own default is 5 s).
DEFAULT_KEEP_ALIVE_SECONDS = 75
#: Processes that read and lint uploaded specs, and their time limit (server/graphs/spec_checks.py).
SPEC_PROCESSES_ENV = "PLAIT_SPEC_PROCESSES"
SPEC_CHECK_SECONDS_ENV = "PLAIT_SPEC_CHECK_SECONDS"
#: Browser front ends on other origins that may call the API (server/http/cors.py).
CORS_ORIGINS_ENV = "PLAIT_CORS_ORIGINS"
CORS_ORIGIN_REGEX_ENV = "PLAIT_CORS_ORIGIN_REGEX"
CORS_CREDENTIALS_ENV = "PLAIT_CORS_CREDENTIALS"
#: The editor's build output in a source checkout (`npm run build`).
DEFAULT_EDITOR_DIR = Path(__file__).resolve().parents[1] / "editor" / "dist"


def _default_webhook_policy() -> WebhookPolicy:
    # Its module is imported here and in from_env: it imports asyncio and socket, and
    # `plait --help` imports this one (for the CLI options' variable names).
    from plait.server.workers.webhook_urls import WebhookPolicy

    return WebhookPolicy()


@dataclass(frozen=True)
class Settings:
    """What one ``plait serve`` process needs to know.

    ``database_url`` None means :func:`plait.engine.store.database_url` decides
    (``PLAIT_DATABASE_URL`` or the embedded server); ``workers`` is how many runs
    the in-process worker executes at once; 0 means the process only serves
    the API and separate ``plait worker`` processes run the runs.
    ``worker_processes`` > 0 runs that many child worker processes (each
    executing ``workers`` runs at once) instead of the in-process worker.
    """

    database_url: str | None = None
    specs_dir: Path = Path("specs")
    workers: int = 10
    worker_processes: int = 0
    host: str = "127.0.0.1"
    port: int = 8000
    pool_max_size: int = 20
    editor_dir: Path = DEFAULT_EDITOR_DIR
    #: With it (or any stored key) every API request needs ``x-api-key`` (docs/api.md).
    admin_key: str | None = None
    auth_cache_seconds: float = 5.0
    #: Modules tenants' uploaded specs may call besides the specs folder's (code_policy.py).
    tenant_modules: frozenset[str] = frozenset()
    #: Attempts of a run that may lose their worker in a row before it is
    #: dead-lettered (a spec's ``max_attempts`` wins).
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    #: 1 MiB: a spec at its size limit (512 Ki characters) still fits, even as JSON.
    max_body_bytes: int = 1024 * 1024
    spec_processes: int = 2
    spec_check_seconds: float = 10.0
    #: Which addresses runs' ``webhook`` may name besides public ones
    #: (server/workers/webhook_urls.py).
    webhooks: WebhookPolicy = field(default_factory=_default_webhook_policy)
    #: Which browser front ends on other origins may call the API.
    cors: CorsPolicy = field(default_factory=CorsPolicy)

    @classmethod
    def from_env(cls) -> Settings:
        """Settings from ``PLAIT_*`` variables, defaults where unset."""
        # Imported here: the store's module loads logging, and `plait --help` imports this one.
        from plait.engine.store import DATABASE_URL_ENV
        from plait.server.workers.webhook_urls import WebhookPolicy

        env = os.environ
        default = cls()
        return cls(
            database_url=env.get(DATABASE_URL_ENV) or None,
            specs_dir=Path(env.get(SPECS_ENV) or default.specs_dir),
            workers=int(env.get(WORKERS_ENV) or default.workers),
            worker_processes=int(env.get(WORKER_PROCESSES_ENV) or default.worker_processes),
            host=env.get(HOST_ENV) or default.host,
            port=int(env.get(PORT_ENV) or default.port),
            editor_dir=Path(env.get(EDITOR_ENV) or default.editor_dir),
            admin_key=env.get(ADMIN_KEY_ENV) or None,
            auth_cache_seconds=float(env.get(AUTH_CACHE_ENV) or default.auth_cache_seconds),
            tenant_modules=frozenset(
                name.strip() for name in env.get(TENANT_MODULES_ENV, "").split(",") if name.strip()
            ),
            max_attempts=int(env.get(MAX_ATTEMPTS_ENV) or default.max_attempts),
            max_body_bytes=int(env.get(MAX_BODY_ENV) or default.max_body_bytes),
            spec_processes=int(env.get(SPEC_PROCESSES_ENV) or default.spec_processes),
            spec_check_seconds=float(env.get(SPEC_CHECK_SECONDS_ENV) or default.spec_check_seconds),
            webhooks=WebhookPolicy.from_env(),
            cors=CorsPolicy(
                origins=parse_origins(env.get(CORS_ORIGINS_ENV, "")),
                origin_regex=env.get(CORS_ORIGIN_REGEX_ENV, LOCAL_ORIGINS),
                credentials=env.get(CORS_CREDENTIALS_ENV, "").lower() in ("1", "true", "yes"),
            ),
        )
