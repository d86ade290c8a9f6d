"""``plait tenants`` / ``plait keys`` against a real database, as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from engine.store.pool import Pool
from server.auth import store
from tests.integration.tenants.conftest import unique

pytestmark = pytest.mark.postgres


def plait(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``plait <args>`` on the database."""
    env = {**os.environ, "PLAIT_DATABASE_URL": database_url, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "server.cli.app", *args],
        env=env,
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
    assert principal == store.Principal(tenant=tenant, role="member", key_id=key["key_id"])
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
