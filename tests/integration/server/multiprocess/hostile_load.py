"""Hostile validation requests against a Plait server, as a process of its own.

``python -m tests.integration.server.multiprocess.hostile_load URL SECONDS [SENDERS]``
keeps ``SENDERS`` (10) requests in flight for ``SECONDS``: YAML of 50,000 nested
``[``, a billion-laughs document, a 600 KB run of ``[`` (over the YAML size
limit, under the body limit) and a 3 MiB JSON body (over the body limit). It
prints one JSON object: per kind, how many answers of each ``status code``
came back. A process of its own, so that building and sending the bodies does
not slow the test's own measurements of the server.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from typing import Any

import httpx

#: Nine levels of nine aliases: 9**9 values from a few lines.
LAUGHS = "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n"
    if i
    else "l0: &l0 [x, x, x, x, x, x, x, x, x]\n"
    for i in range(9)
)
YAML = {"content-type": "application/yaml"}
#: (path, headers, body) of each kind of hostile request.
KINDS: dict[str, tuple[str, dict[str, str], bytes]] = {
    "brackets": ("/graphs/validate", YAML, b"[" * 50_000),
    "laughs": ("/graphs/validate", YAML, LAUGHS.encode()),
    "too_long_yaml": ("/graphs/validate", YAML, b"[" * 600_000),
    "huge_json": (
        "/graphs/validate",
        {"content-type": "application/json"},
        json.dumps({"yaml": "x" * (3 * 1024 * 1024)}).encode(),
    ),
}


def outcome(response: httpx.Response) -> str:
    """``<status> <first issue code or problem type>``."""
    body: Any = response.json()
    if response.status_code == 200:
        issues = body.get("issues") or [{}]
        first = issues[0]
        return f"200 {first.get('code')} {first.get('line')}:{first.get('column')}"
    return f"{response.status_code} {body.get('type')}"


async def send(base: str, index: int, until: float, tally: dict[str, Counter[str]]) -> None:
    """One sender: its kind of request, again and again, until ``until``."""
    kind = list(KINDS)[index % len(KINDS)]
    path, headers, body = KINDS[kind]
    async with httpx.AsyncClient(base_url=base, timeout=60.0) as http:
        while time.monotonic() < until:
            try:
                response = await http.post(path, content=body, headers=headers)
                tally[kind][outcome(response)] += 1
            except httpx.HTTPError as exc:
                tally[kind][f"transport {type(exc).__name__}"] += 1


async def main(base: str, seconds: float, senders: int) -> dict[str, dict[str, int]]:
    """Run the senders; per kind, the count of each outcome."""
    tally: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    until = time.monotonic() + seconds
    await asyncio.gather(*(send(base, index, until, tally) for index in range(senders)))
    return {kind: dict(counts) for kind, counts in tally.items()}


if __name__ == "__main__":
    url, duration = sys.argv[1], float(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    print(json.dumps(asyncio.run(main(url, duration, count))))
