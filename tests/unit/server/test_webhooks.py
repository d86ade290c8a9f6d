"""Webhook addresses, signatures and back-off.

server/workers/webhook_urls.py and server/workers/webhook_sender.py.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from datetime import timedelta

import pytest

from plait.server.workers.webhook_sender import backoff, signature
from plait.server.workers.webhook_urls import WebhookPolicy, WebhookRefused, check_webhook_url


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
     "::1", "fd00::1", "fe80::1", "::ffff:10.0.0.1", "0.0.0.0", "224.0.0.1"],
)  # fmt: skip
def test_inner_addresses_are_refused_by_default(address: str) -> None:
    assert not WebhookPolicy().allows(ipaddress.ip_address(address))


def test_public_addresses_are_allowed() -> None:
    for address in ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"):
        assert WebhookPolicy().allows(ipaddress.ip_address(address))


def test_the_operator_allows_private_addresses_or_chosen_networks() -> None:
    assert WebhookPolicy(allow_private=True).allows(ipaddress.ip_address("127.0.0.1"))
    # Multicast and 0.0.0.0 are never a receiver, whatever is allowed.
    assert not WebhookPolicy(allow_private=True).allows(ipaddress.ip_address("0.0.0.0"))
    listed = WebhookPolicy(allowed_networks=(ipaddress.ip_network("10.8.0.0/16"),))
    assert listed.allows(ipaddress.ip_address("10.8.1.2"))
    assert not listed.allows(ipaddress.ip_address("10.9.1.2"))


async def test_urls_are_checked_for_scheme_and_resolved_addresses() -> None:
    policy = WebhookPolicy()
    await check_webhook_url("https://93.184.216.34/hook", policy)
    with pytest.raises(WebhookRefused, match=r"reaches 127\.0\.0\.1"):
        await check_webhook_url("http://127.0.0.1:8000/hook", policy)
    with pytest.raises(WebhookRefused, match=r"reaches (127\.0\.0\.1|::1)"):
        await check_webhook_url("http://localhost/hook", policy)
    with pytest.raises(WebhookRefused, match="not an http"):
        await check_webhook_url("file:///etc/passwd", policy)
    with pytest.raises(WebhookRefused, match="invalid port"):
        await check_webhook_url("http://93.184.216.34:99999/", policy)


def test_a_receiver_verifies_the_signature_as_documented() -> None:
    body = b'{"run_id":"r1","status":"success"}'
    header = signature("s3cret", 1764720000, body)
    # What docs/api.md tells a receiver to do:
    fields = dict(part.split("=", 1) for part in header.split(","))
    expected = hmac.new(b"s3cret", fields["t"].encode() + b"." + body, hashlib.sha256)
    assert hmac.compare_digest(fields["v1"], expected.hexdigest())
    assert signature("other", 1764720000, body) != header


def test_backoff_doubles_up_to_an_hour() -> None:
    assert [backoff(n) for n in (1, 2, 3)] == [timedelta(seconds=s) for s in (1, 2, 4)]
    assert backoff(30) == timedelta(hours=1)


def test_a_policy_travels_to_child_processes_through_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy = WebhookPolicy(
        allow_private=True, allowed_networks=(ipaddress.ip_network("10.8.0.0/16"),)
    )
    for name, value in policy.to_env().items():
        monkeypatch.setenv(name, value)
    assert WebhookPolicy.from_env() == policy
    for name, value in WebhookPolicy().to_env().items():
        monkeypatch.setenv(name, value)
    assert WebhookPolicy.from_env() == WebhookPolicy()
