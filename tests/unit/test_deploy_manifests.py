"""The Kubernetes manifests in deploy/ parse and use what the real code offers.

Checked without a cluster: every YAML document loads and names its kind; the
kustomization lists exactly the manifests beside it; every ``plait`` command
and flag in a container (and the Dockerfile's CMD) exists in the real CLI;
every environment variable the ConfigMap and the Secret example set is one that
Plait or a model provider reads; KEDA reads the database URL the pods get.
(``tests/integration/server/multiprocess/test_deploy_probes.py`` starts real
processes for the probe paths and runs the KEDA query on Postgres.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
import yaml

from plait.engine.store.database import DATABASE_URL_ENV, HOME_ENV
from plait.server.auth.tenant_secrets import ENV_SECRETS_ENV
from plait.server.cli.app import app
from plait.server.settings import (
    ADMIN_KEY_ENV,
    AUTH_CACHE_ENV,
    EDITOR_ENV,
    HOST_ENV,
    PORT_ENV,
    SPECS_ENV,
    WORKERS_ENV,
)

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BASE = DEPLOY / "base"
#: What the code reads (server/settings.py, engine/store/database.py).
PLAIT_ENV = {
    DATABASE_URL_ENV,
    HOME_ENV,
    SPECS_ENV,
    WORKERS_ENV,
    HOST_ENV,
    PORT_ENV,
    EDITOR_ENV,
    ADMIN_KEY_ENV,
    AUTH_CACHE_ENV,
    ENV_SECRETS_ENV,
}
#: Model providers' keys, read by their LangChain integrations (or a spec's api_key_env).
PROVIDER_KEYS = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}


def documents(path: Path) -> list[dict[str, Any]]:
    """Every YAML document of ``path``."""
    with path.open(encoding="utf-8") as file:
        return [doc for doc in yaml.safe_load_all(file) if doc is not None]


def manifests() -> dict[str, dict[str, Any]]:
    """Every object in deploy/ by ``Kind/name``."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(DEPLOY.rglob("*.yaml")):
        for doc in documents(path):
            found[f"{doc['kind']}/{doc['metadata']['name'] if 'metadata' in doc else path}"] = doc
    return found


def containers() -> list[dict[str, Any]]:
    """The containers of every Deployment."""
    return [
        container
        for doc in manifests().values()
        if doc["kind"] == "Deployment"
        for container in doc["spec"]["template"]["spec"]["containers"]
    ]


def cli_options(subcommand: str) -> set[str]:
    """The option names ``plait <subcommand>`` accepts, from the real Typer app."""
    group = typer.main.get_command(app)
    # Typer's own click-compatible group: commands by name, each with its params.
    command = group.commands[subcommand]  # type: ignore[attr-defined]
    return {name for param in command.params for name in param.opts}


def assert_plait_command(command: list[str]) -> None:
    """``command`` is ``plait <subcommand> ...`` with options the CLI knows."""
    assert command[0] == "plait", command
    subcommand, *rest = command[1:]
    known = cli_options(subcommand)
    flags = [arg for arg in rest if arg.startswith("-")]
    unknown = [flag for flag in flags if flag.split("=", 1)[0] not in known]
    assert not unknown, f"plait {subcommand} has no {unknown}; it has {sorted(known)}"


def test_every_manifest_parses_and_names_its_kind() -> None:
    found = manifests()
    kinds = sorted(doc["kind"] for doc in found.values())
    assert kinds == sorted(
        [
            "ConfigMap",
            "Deployment",
            "Deployment",
            "HorizontalPodAutoscaler",
            "Kustomization",
            "PodDisruptionBudget",
            "PodDisruptionBudget",
            "ScaledObject",
            "Secret",
            "Service",
        ]
    )
    for doc in found.values():
        assert doc["apiVersion"], doc


def test_kustomization_lists_exactly_the_manifests_beside_it() -> None:
    (kustomization,) = documents(BASE / "kustomization.yaml")
    listed = set(kustomization["resources"])
    beside = {path.name for path in BASE.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == beside
    # The example Secret is not applied with the base: real values come from elsewhere.
    assert not (BASE / "secret.example.yaml").exists()


def test_containers_run_real_commands_and_flags() -> None:
    commands = {tuple(container["command"][:2]) for container in containers()}
    assert commands == {("plait", "serve"), ("plait", "worker")}
    for container in containers():
        assert_plait_command(container["command"])
    api = next(c for c in containers() if c["command"][1] == "serve")
    assert "--no-workers" in api["command"]
    assert api["command"][api["command"].index("--host") + 1] == "0.0.0.0"


def test_dockerfile_cmd_is_a_real_command() -> None:
    cmd = next(
        line for line in (DEPLOY / "Dockerfile").read_text().splitlines() if line.startswith("CMD")
    )
    assert_plait_command(json.loads(cmd.removeprefix("CMD").strip()))


def test_probes_use_named_ports_the_containers_open() -> None:
    for container in containers():
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        for probe in ("livenessProbe", "startupProbe", "readinessProbe"):
            if probe in container:
                assert container[probe]["httpGet"]["port"] in ports, (container["name"], probe)
    api = next(c for c in containers() if c["name"] == "api")
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["command"][api["command"].index("--port") + 1] == str(ports_of(api)["http"])
    worker = next(c for c in containers() if c["name"] == "worker")
    assert worker["livenessProbe"]["httpGet"]["path"] == "/healthz"
    health_port = worker["command"][worker["command"].index("--health-port") + 1]
    assert health_port == str(ports_of(worker)["health"])
    assert worker["command"][worker["command"].index("--health-host") + 1] == "0.0.0.0"


def ports_of(container: dict[str, Any]) -> dict[str, int]:
    """A container's ports by name."""
    return {port["name"]: port["containerPort"] for port in container["ports"]}


def test_environment_names_are_ones_the_code_reads() -> None:
    found = manifests()
    config = found["ConfigMap/plait"]["data"]
    secret = found["Secret/plait"]["stringData"]
    assert set(config) <= PLAIT_ENV, set(config) - PLAIT_ENV
    assert set(secret) <= PLAIT_ENV | PROVIDER_KEYS, set(secret) - PLAIT_ENV - PROVIDER_KEYS
    assert DATABASE_URL_ENV in secret
    for container in containers():
        sources = {
            next(iter(ref.values()))["name"] for ref in container["envFrom"]
        }  # configMapRef / secretRef
        assert sources == {"plait"}


def test_keda_reads_the_database_url_the_workers_get() -> None:
    found = manifests()
    scaled = found["ScaledObject/plait-worker"]
    assert scaled["spec"]["scaleTargetRef"]["name"] == "plait-worker"
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "postgresql"
    assert trigger["metadata"]["connectionFromEnv"] == DATABASE_URL_ENV
    worker = next(c for c in containers() if c["name"] == "worker")
    concurrency = worker["command"][worker["command"].index("--concurrency") + 1]
    # One worker per --concurrency runs wanting a slot.
    assert trigger["metadata"]["targetQueryValue"] == concurrency


def test_worker_grace_period_outlasts_its_lease() -> None:
    """A worker killed at the end of its grace period loses its runs for one lease at most."""
    worker = manifests()["Deployment/plait-worker"]["spec"]["template"]["spec"]
    command = worker["containers"][0]["command"]
    lease = float(command[command.index("--lease-seconds") + 1])
    assert worker["terminationGracePeriodSeconds"] > lease


def test_kustomize_rewrites_the_image_every_container_uses() -> None:
    # Checked here rather than by `kubectl kustomize`, which a fresh machine lacks:
    # an image name the kustomization does not list would silently keep `plait`.
    (kustomization,) = documents(BASE / "kustomization.yaml")
    assert set(kustomization) <= {"apiVersion", "kind", "labels", "resources", "images"}
    rewritten = {image["name"] for image in kustomization["images"]}
    assert {container["image"].split(":")[0] for container in containers()} <= rewritten
