"""``plait tenants`` / ``plait keys`` against a real database, as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import Any

import pytest

from plait.engine.store.pool import Pool
from plait.server.auth import mcp_trust, store, tenant_secrets
from tests.integration.tenants.conftest import unique

pytestmark = pytest.mark.postgres


def plait(database_url: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``plait <args>`` on the database, with ``stdin`` piped in."""
    env = {**os.environ, "PLAIT_DATABASE_URL": database_url, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "plait.server.cli.app", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def output(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


async def test_an_operator_bootstraps_a_tenant_and_its_keys(
    tenants_database_url: str, tpool: Pool
) -> None:
    tenant = unique("ops")
    made = output(
        plait(tenants_database_url, "tenants", "create", tenant, "--max-running-runs", "3")
    )
    assert made["limits"]["max_running_runs"] == 3
    key = output(plait(tenants_database_url, "keys", "create", tenant, "--name", "ci"))
    assert key["key"].startswith(key["prefix"]) and key["role"] == "member"
    principal = await store.principal_of(tpool, key["key"])
    assert principal == store.Principal(
        tenant=tenant, role="member", key_id=key["key_id"], key_name="ci"
    )
    # Admin keys manage every tenant: only the operator's tenant has them.
    admin = plait(tenants_database_url, "keys", "create", tenant, "--role", "admin")
    assert admin.returncode == 2 and "member keys" in admin.stderr

    listed = output(plait(tenants_database_url, "keys", "list", tenant))
    assert [item["key_id"] for item in listed] == [key["key_id"]]
    assert key["key"] not in json.dumps(listed)

    changed = output(
        plait(
            tenants_database_url,
            "tenants",
            "set",
            tenant,
            "--daily-max-steps",
            "9",
            "--clear",
            "max-running-runs",
        )
    )
    assert changed["limits"]["daily_max_steps"] == 9
    assert changed["limits"]["max_running_runs"] is None

    output(plait(tenants_database_url, "keys", "revoke", tenant, key["key_id"]))
    assert await store.principal_of(tpool, key["key"]) is None


def test_mistakes_get_one_clear_message(tenants_database_url: str) -> None:
    missing = plait(tenants_database_url, "keys", "create", unique("nobody"))
    assert missing.returncode == 2
    assert "not found" in missing.stderr and "Traceback" not in missing.stderr
    bad_role = plait(tenants_database_url, "keys", "create", "default", "--role", "root")
    assert bad_role.returncode == 2 and "unknown role" in bad_role.stderr
    bad_id = plait(tenants_database_url, "tenants", "create", "Not Valid")
    assert bad_id.returncode == 2 and "invalid tenant id" in bad_id.stderr
    no_cost = plait(tenants_database_url, "tenants", "set", "default", "--daily-max-cost", "0")
    assert no_cost.returncode == 2 and "above 0" in no_cost.stderr
    nobody = plait(tenants_database_url, "keys", "list", unique("nobody"))
    assert nobody.returncode == 2 and "not found" in nobody.stderr


async def test_an_operator_grants_a_secret_from_stdin_and_never_sees_it_again(
    tenants_database_url: str, tpool: Pool
) -> None:
    tenant = unique("vault")
    output(plait(tenants_database_url, "tenants", "create", tenant))
    value = f"ghp-{uuid.uuid4().hex}"
    url = tenants_database_url
    granted = plait(url, "tenants", "secrets", "set", tenant, "GITHUB_TOKEN", stdin=value + "\n")
    assert output(granted)["name"] == "GITHUB_TOKEN" and value not in granted.stdout
    assert "warning" not in granted.stderr
    # Stored, but too short to be masked in run output: the operator is told, by name.
    short = plait(url, "tenants", "secrets", "set", tenant, "PIN", stdin="7x")
    assert output(short)["name"] == "PIN"
    assert short.stderr.startswith("warning: secret PIN is 2 character(s) long: values shorter")
    assert "7x" not in short.stderr
    output(plait(url, "tenants", "secrets", "delete", tenant, "PIN"))
    assert await tenant_secrets.secret_values(tpool, tenant, ["GITHUB_TOKEN"]) == {
        "GITHUB_TOKEN": value  # the newline echo adds is not part of it
    }
    listed = plait(url, "tenants", "secrets", "list", tenant)
    assert [item["name"] for item in output(listed)] == ["GITHUB_TOKEN"]
    assert value not in listed.stdout

    reserved = plait(url, "tenants", "secrets", "set", tenant, "PLAIT_ADMIN_KEY", stdin="x")
    assert reserved.returncode == 2 and "Plait's own settings" in reserved.stderr
    empty = plait(url, "tenants", "secrets", "set", tenant, "EMPTY", stdin="")
    assert empty.returncode == 2 and "empty" in empty.stderr
    nobody = plait(url, "tenants", "secrets", "set", unique("nobody"), "X", stdin="v")
    assert nobody.returncode == 2 and "not found" in nobody.stderr

    output(plait(url, "tenants", "secrets", "delete", tenant, "GITHUB_TOKEN"))
    assert output(plait(url, "tenants", "secrets", "list", tenant)) == []
    again = plait(url, "tenants", "secrets", "delete", tenant, "GITHUB_TOKEN")
    assert again.returncode == 2 and "not found" in again.stderr


async def test_an_operator_sets_and_clears_a_tenants_trusted_mcp_servers(
    tenants_database_url: str, tpool: Pool
) -> None:
    tenant = unique("trusting")
    await store.create_tenant(tpool, tenant)
    shown = output(plait(tenants_database_url, "tenants", "mcp-trust", "show", tenant))
    assert (shown["servers"], shown["default"]) == ([], True)
    servers = ["https://mcp.example.com/mcp", "mcp-server-time --local-timezone UTC"]
    made = output(plait(tenants_database_url, "tenants", "mcp-trust", "set", tenant, *servers))
    assert made["servers"] == servers and made["default"] is False
    assert (await mcp_trust.get_trust(tpool, tenant))["servers"] == servers

    refused = plait(tenants_database_url, "tenants", "mcp-trust", "set", tenant, "ftp://x/mcp")
    assert refused.returncode == 2 and "only http:// and https://" in refused.stderr
    missing = plait(tenants_database_url, "tenants", "mcp-trust", "show", unique("nobody"))
    assert missing.returncode == 2 and "not found" in missing.stderr

    none = output(plait(tenants_database_url, "tenants", "mcp-trust", "set", tenant))
    assert (none["servers"], none["default"]) == ([], False)  # a list that trusts none
    cleared = output(plait(tenants_database_url, "tenants", "mcp-trust", "clear", tenant))
    assert cleared["default"] is True
