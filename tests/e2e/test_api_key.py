"""The editor on a server that requires API keys: the key prompt, the stored key, a full run.

A server of its own (module scope) with ``PLAIT_ADMIN_KEY`` set; the admin
creates a tenant and a member key through the API, and the browser uses that
member key as a user of the tenant would.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import SPEC_SOURCES, guarded, screenshot
from tests.e2e.helpers import api, expect_status, newest_thread
from tests.integration.server.harness import Cluster, fresh_cluster

ADMIN_KEY = secrets.token_hex(32)
TENANT = "acme-e2e"
STORAGE_KEY = "plait.apiKey"


@pytest.fixture(scope="module")
def keyed_server(
    editor_dist: object, postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` with an admin key in its environment: every API call needs a key."""
    with fresh_cluster(
        postgres_server_url,
        tmp_path_factory.mktemp("e2e-keys"),
        SPEC_SOURCES,
        extra_env={"PLAIT_ADMIN_KEY": ADMIN_KEY},
    ) as running:
        yield running


@pytest.fixture(scope="module")
def member_key(keyed_server: Cluster) -> str:
    """A member key of a new tenant, made by the admin through the API."""
    with api(keyed_server.url, ADMIN_KEY) as admin:
        created = admin.post("/tenants", json={"tenant_id": TENANT})
        assert created.status_code == 201, created.text
        made = admin.post(f"/tenants/{TENANT}/keys", json={"role": "member", "name": "browser"})
        assert made.status_code == 201, made.text
        key: str = made.json()["key"]
    return key


@pytest.fixture
def keyed_editor(page: Page, keyed_server: Cluster) -> Iterator[Page]:
    """A fresh browser page (empty localStorage) guarded like the other e2e pages."""
    with guarded(page):
        yield page


def test_key_prompt_then_list_and_run(
    keyed_editor: Page, keyed_server: Cluster, member_key: str
) -> None:
    """No key yet: the editor asks, refuses a wrong key, takes a member key, lists, runs a graph."""
    page = keyed_editor
    base = keyed_server.url
    with api(base) as anonymous:
        assert anonymous.get("/graphs").status_code == 401  # the server really wants a key

    page.goto(base + "/")
    dialog = page.get_by_test_id("api-key-dialog")
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("api-key-detail")).to_contain_text("this server needs an API key")
    expect(page.get_by_test_id("graphs-page")).to_contain_text("Loading")

    # A wrong key: the dialog stays, with the server's reason.
    page.get_by_test_id("api-key-input").fill("plait_nope_0000")
    page.get_by_test_id("api-key-use").click()
    expect(page.get_by_test_id("api-key-detail")).to_contain_text("unknown or revoked")
    expect(dialog).to_be_visible()
    screenshot(page, "api-key-prompt")

    # The member key: the list that was waiting loads.
    page.get_by_test_id("api-key-input").fill(member_key)
    page.get_by_test_id("api-key-use").click()
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("graph-row-summarize")).to_be_visible()
    key_id = member_key.split("_")[1]
    button = page.get_by_test_id("api-key-button")
    expect(button).to_have_text(f"API key: plait_{key_id}_••••")
    assert member_key not in page.content()
    assert page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')") == member_key

    # Open the graph and run it to its end (run stream and all reads carry the key).
    page.get_by_test_id("graph-open-summarize").click()
    expect(page.get_by_test_id("graph-title")).to_contain_text("summarize@1.0.0")
    page.get_by_test_id("toolbar-run").click()
    expect(page.get_by_test_id("run-input-form")).to_be_visible()
    page.get_by_test_id("run-start").click()
    phase = page.get_by_test_id("run-phase")
    expect(phase).to_have_attribute("data-phase", "success", timeout=30_000)
    expect_status(page, "summarize", "done")
    expect(dialog).to_be_hidden()

    # The run belongs to the key's tenant, and finished with the scripted summary.
    thread = newest_thread(base, "summarize", member_key)
    with api(base, member_key) as http:
        state = http.get(f"/threads/{thread['thread_id']}/state").json()
    assert state["values"]["summary"].startswith("The customer was charged twice")
    with api(base, ADMIN_KEY) as admin:
        other = admin.get(f"/threads/{thread['thread_id']}")
    assert other.status_code == 404  # the admin key acts for `default`, not this tenant

    # The key survives a reload: no prompt.
    page.goto(base + "/")
    expect(page.get_by_test_id("graph-row-summarize")).to_be_visible()
    expect(dialog).to_be_hidden()


def test_forget_key_asks_again(keyed_editor: Page, keyed_server: Cluster, member_key: str) -> None:
    """Forget the key from the header button: the list reloads and the server asks again.

    Dismissing the prompt shows the server's 401 on the page; the button takes a key later.
    """
    page = keyed_editor
    base = keyed_server.url
    page.goto(base + "/")
    page.evaluate(f"localStorage.setItem('{STORAGE_KEY}', {member_key!r})")
    page.reload()
    expect(page.get_by_test_id("graph-row-summarize")).to_be_visible()
    expect(page.get_by_test_id("api-key-dialog")).to_be_hidden()

    page.get_by_test_id("api-key-button").click()
    expect(page.get_by_test_id("api-key-current")).to_contain_text("••••")
    page.get_by_test_id("api-key-forget").click()
    expect(page.get_by_test_id("api-key-detail")).to_contain_text("this server needs an API key")
    assert page.evaluate(f"localStorage.getItem('{STORAGE_KEY}')") is None

    page.get_by_test_id("api-key-cancel").click()
    expect(page.get_by_test_id("api-key-dialog")).to_be_hidden()
    expect(page.get_by_test_id("graphs-error")).to_contain_text("this server needs an API key")
    expect(page.get_by_test_id("api-key-button")).to_have_text("API key: none")

    # The button lets the user give a key later: the list reloads with it.
    page.get_by_test_id("api-key-button").click()
    page.get_by_test_id("api-key-input").fill(member_key)
    page.get_by_test_id("api-key-input").press("Enter")
    expect(page.get_by_test_id("graph-row-summarize")).to_be_visible()
    expect(page.get_by_test_id("graphs-error")).to_have_count(0)
