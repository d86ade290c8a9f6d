"""The API in process: the FastAPI app with its lifespan, driven by httpx over ASGI.

The app runs against the session's test database with an in-process worker,
on a temporary specs folder holding copies of a few example specs (uploads
write into it). Streams are read to their end (ASGITransport delivers a
response once the app finished it), which every run here reaches.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.integration.server.harness import client_of, running_app

REPO = Path(__file__).resolve().parents[4]
EXAMPLE_SPECS = ("summarize.yaml", "refund-approval.yaml")


@dataclass(frozen=True)
class Frame:
    """One SSE frame as a client parses it."""

    event: str
    data: Any
    id: str | None


def parse_sse(text: str) -> tuple[list[Frame], list[str]]:
    """Frames and comment lines of an SSE body (the framing the LangGraph SDK decodes)."""
    frames: list[Frame] = []
    comments: list[str] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data, ident = "", [], None
        for line in block.split("\n"):
            if not line:
                continue
            if line.startswith(":"):
                comments.append(line)
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                ident = value
        if event or data:
            frames.append(Frame(event, json.loads("\n".join(data)) if data else None, ident))
    return frames, comments


@pytest.fixture(scope="module")
def specs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A specs folder with copies of example specs and their python package."""
    folder = tmp_path_factory.mktemp("specs")
    for name in EXAMPLE_SPECS:
        shutil.copy(REPO / "specs" / name, folder / name)
    shutil.copytree(REPO / "specs" / "plait_examples", folder / "plait_examples")
    return folder


@pytest.fixture(scope="module")
async def app(database_url: str, specs_dir: Path) -> AsyncIterator[FastAPI]:
    """The app with an in-process worker."""
    async with running_app(database_url, specs_dir, workers=4) as application:
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the app."""
    async with client_of(app) as http:
        yield http


@pytest.fixture(scope="module")
async def idle_app(database_url: str, specs_dir: Path) -> AsyncIterator[FastAPI]:
    """The app with no worker (``--no-workers``): runs stay pending, so queue states hold still."""
    async with running_app(database_url, specs_dir, workers=0) as application:
        yield application


@pytest.fixture
async def idle_client(idle_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the worker-less app."""
    async with client_of(idle_app) as http:
        yield http


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """Check an RFC 9457 problem response; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert isinstance(body["type"], str) and body["type"]
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["instance"] == response.request.url.path
    return body


async def new_thread(client: httpx.AsyncClient, **body: Any) -> str:
    """Create a thread; return its id."""
    response = await client.post("/threads", json=body)
    assert response.status_code == 200, response.text
    thread_id: str = response.json()["thread_id"]
    return thread_id


SUMMARY_INPUT = {"text": "I was charged twice for my November invoice."}
REFUND_HIGH = {"order_id": "A-1002", "amount": 180.0, "reason": "Item arrived broken"}
