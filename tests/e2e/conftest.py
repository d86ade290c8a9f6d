"""Browser tests: the built editor in the system Chromium against a real ``plait serve``.

One ``plait serve`` per session on a free port of 127.0.0.1, with its own fresh
database on the test Postgres and a temp specs folder holding copies of the
example specs. The editor is built with ``npm run build`` when ``editor/dist``
is missing or older than any editor source. Every page fails its test if it
requests anything from a host other than 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route

from tests.integration.server.harness import SPECS, Cluster, fresh_cluster

REPO = Path(__file__).resolve().parents[2]
EDITOR = REPO / "editor"
DIST_INDEX = EDITOR / "dist" / "index.html"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Specs the server starts with (copied: saving a version writes into the folder).
SPEC_SOURCES = [
    SPECS / "refund-approval.yaml",
    SPECS / "summarize.yaml",
    SPECS / "plait_examples",
]
#: Where the README's screenshots go.
ALLOWED_HOSTS = {"127.0.0.1"}


def _newest_source_mtime() -> float:
    sources = [
        *EDITOR.joinpath("src").rglob("*"),
        EDITOR / "index.html",
        EDITOR / "vite.config.ts",
        REPO / "package.json",
        REPO / "package-lock.json",
        REPO / "schemas" / "plait-v1.schema.json",
    ]
    return max(path.stat().st_mtime for path in sources if path.is_file())


@pytest.fixture(scope="session")
def editor_dist() -> Path:
    """``editor/dist``, rebuilt first when missing or stale (needs ``npm ci`` done once)."""
    if not DIST_INDEX.exists() or DIST_INDEX.stat().st_mtime < _newest_source_mtime():
        npm = shutil.which("npm")
        assert npm, "npm is needed to build the editor (see README: npm ci && npm run build)"
        built = subprocess.run(
            [npm, "run", "build"], cwd=REPO, capture_output=True, text=True, check=False
        )
        assert built.returncode == 0, f"npm run build failed:\n{built.stdout}\n{built.stderr}"
    return DIST_INDEX.parent


@pytest.fixture(scope="session")
def plait_server(
    editor_dist: Path, postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """``plait serve`` (in-process workers) serving the built editor at ``/``."""
    work_dir = tmp_path_factory.mktemp("e2e-server")
    with fresh_cluster(postgres_server_url, work_dir, SPEC_SOURCES) as running:
        yield running


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """The system Chromium (Playwright cannot download browsers here), quiet and sandbox-free."""
    assert CHROMIUM.exists(), "install the Debian package `chromium` (/usr/bin/chromium)"
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """A desktop-sized window, so the canvas, YAML and panels all fit."""
    return {**browser_context_args, "viewport": {"width": 1600, "height": 1000}}


@pytest.fixture
def editor(page: Page, plait_server: Cluster) -> Iterator[Page]:
    """A page on the server's origin that records (and blocks) requests to any other host.

    The test fails at teardown if anything tried to leave 127.0.0.1 (CDN fonts,
    remote images, telemetry), and on uncaught page errors.
    """
    with guarded(page):
        page.goto(plait_server.url + "/")
        yield page


@contextmanager
def guarded(page: Page) -> Iterator[Page]:
    """Block requests to hosts other than 127.0.0.1; fail on exit if one was tried or a page threw.

    (The ``editor`` fixture and tests with a server of their own share it.)
    """
    outside: list[str] = []
    errors: list[str] = []

    def guard(route: Route) -> None:
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in ALLOWED_HOSTS:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.context.route("**/*", guard)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(15_000)
    yield page
    assert outside == [], f"the page requested hosts other than 127.0.0.1: {outside}"
    assert errors == [], f"uncaught errors in the page: {errors}"


def screenshot(page: Page, name: str) -> None:
    """Save a screenshot for the docs, only when asked: ``PLAIT_SCREENSHOTS=docs/images``.

    A plain test run leaves the working tree as it was.
    """
    folder = os.environ.get("PLAIT_SCREENSHOTS")
    if not folder:
        return
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / f"{name}.png"))
