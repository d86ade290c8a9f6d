"""Send the webhook outbox: POST each ended run to its ``webhook``, signed, retried, at least once.

Every worker runs a :class:`WebhookSender`. It claims due deliveries under a
lease (:mod:`plait.server.queue.webhooks`), POSTs the run as JSON and records the
outcome. A 2xx answer delivers it; anything else (another status, a timeout,
a refused connection) is retried with exponential back-off until
``max_attempts`` are spent. A sender that dies mid-call leaves its lease to
expire, and another sends the same delivery again: receivers dedupe on the
``X-Plait-Delivery`` header, which every attempt of a delivery repeats.

The body is signed when the server has a secret (``PLAIT_WEBHOOK_SECRET``):
``X-Plait-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from plait.engine.store import Pool
from plait.server.queue import webhooks
from plait.server.queue.webhooks import Delivery
from plait.server.workers.webhook_urls import WebhookPolicy, WebhookRefused, check_webhook_url

log = logging.getLogger(__name__)

SECRET_ENV = "PLAIT_WEBHOOK_SECRET"
TIMEOUT_ENV = "PLAIT_WEBHOOK_TIMEOUT_SECONDS"
MAX_ATTEMPTS_ENV = "PLAIT_WEBHOOK_MAX_ATTEMPTS"
DELIVERY_HEADER = "X-Plait-Delivery"
ATTEMPT_HEADER = "X-Plait-Attempt"
SIGNATURE_HEADER = "X-Plait-Signature"
#: First retry after this long, doubling each time up to :data:`MAX_BACKOFF_SECONDS`.
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 3600.0
#: Deliveries one sender calls at once.
BATCH = 10


@dataclass(frozen=True)
class SenderSettings:
    """How webhooks are sent: the signing secret, each call's time limit, attempts."""

    secret: str | None = None
    timeout_seconds: float = 10.0
    max_attempts: int = 10

    @classmethod
    def from_env(cls) -> SenderSettings:
        """From ``PLAIT_WEBHOOK_SECRET``, ``_TIMEOUT_SECONDS`` and ``_MAX_ATTEMPTS``."""
        env, default = os.environ, cls()
        return cls(
            secret=env.get(SECRET_ENV) or None,
            timeout_seconds=float(env.get(TIMEOUT_ENV) or default.timeout_seconds),
            max_attempts=int(env.get(MAX_ATTEMPTS_ENV) or default.max_attempts),
        )

    @property
    def lease_seconds(self) -> float:
        """How long a claim lasts: a call times out well before another sender may take it."""
        return 2 * self.timeout_seconds + 1


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Plait-Signature`` value of ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def backoff(attempt: int) -> timedelta:
    """How long to wait after failed attempt number ``attempt`` (1, 2, 4, ... seconds)."""
    return timedelta(seconds=min(FIRST_BACKOFF_SECONDS * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS))


class WebhookSender:
    """Claims and sends due deliveries; call :meth:`send_due` now and then."""

    def __init__(
        self,
        pool: Pool,
        owner: str,
        settings: SenderSettings | None = None,
        policy: WebhookPolicy | None = None,
    ) -> None:
        self.pool = pool
        self.owner = owner
        self.settings = settings or SenderSettings.from_env()
        # Checked again before each call: a host name may resolve inside the network by now.
        self.policy = policy or WebhookPolicy.from_env()
        # No redirects: a public URL must not bounce the server to a private one.
        self._http = httpx.AsyncClient(
            timeout=self.settings.timeout_seconds, follow_redirects=False
        )
        self._in_flight: set[asyncio.Task[None]] = set()

    async def send_due(self) -> int:
        """Send what is due now (up to :data:`BATCH`); return how many were claimed.

        Cancelling this leaves the calls going: :meth:`close` lets them finish.
        """
        claimed = await webhooks.claim(self.pool, self.owner, BATCH, self.settings.lease_seconds)
        calls = [asyncio.create_task(self._send(delivery)) for delivery in claimed]
        self._in_flight.update(calls)
        for call in calls:
            call.add_done_callback(self._in_flight.discard)
        if calls:
            await asyncio.shield(asyncio.gather(*calls))
        return len(claimed)

    async def close(self) -> None:
        """Let the calls in flight finish and record their outcome, then close the
        connections: a worker stopping mid-call (SIGTERM) does not leave its receivers
        a second delivery."""
        if self._in_flight:
            await asyncio.wait(self._in_flight, timeout=self.settings.lease_seconds)
        await self._http.aclose()

    async def _send(self, delivery: Delivery) -> None:
        body = json.dumps(
            {**delivery.payload, "webhook_sent_at": datetime.now(UTC).isoformat()},
            separators=(",", ":"),
        ).encode()
        headers = {
            "Content-Type": "application/json",
            DELIVERY_HEADER: delivery.delivery_id,
            ATTEMPT_HEADER: str(delivery.attempt),
        }
        if self.settings.secret:
            headers[SIGNATURE_HEADER] = signature(self.settings.secret, int(time.time()), body)
        try:
            await check_webhook_url(delivery.url, self.policy)
            answer = await self._http.post(delivery.url, content=body, headers=headers)
            error = None if answer.is_success else f"answered {answer.status_code}"
        except WebhookRefused as refused:
            error = str(refused)
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if error is None:
            await webhooks.delivered(self.pool, delivery, self.owner)
            return
        last = delivery.attempt >= self.settings.max_attempts
        log.warning(
            "webhook %s of run %s, attempt %d: %s%s",
            delivery.delivery_id,
            delivery.run_id,
            delivery.attempt,
            error,
            " (giving up)" if last else "",
        )
        retry_in = None if last else backoff(delivery.attempt)
        await webhooks.failed(self.pool, delivery, self.owner, error, retry_in)
