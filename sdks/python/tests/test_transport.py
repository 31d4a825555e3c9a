"""Retries: 429/5xx/network errors retried with the same Idempotency-Key, Retry-After honoured (and a wait over
60 s not made), 4xx not retried, every error typed. A scripted httpx transport plays the gateway's answers so the
waits are observed exactly (no real sleeping)."""

from __future__ import annotations

import httpx
import pytest

from privacy_relay.errors import ConnectionError, InvalidRequestError, RateLimitError, ServerError, error_from_answer, retry_after_seconds
from privacy_relay.transport import RetryPolicy, Transport


def scripted(answers: list) -> tuple[Transport, list[httpx.Request], list[float]]:
    seen: list[httpx.Request] = []
    waits: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers[len(seen) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    transport = Transport(httpx.Client(transport=httpx.MockTransport(handler)), RetryPolicy(retries=2), 5.0, sleep=waits.append)
    return transport, seen, waits


def error(status: int, code: str, headers: dict | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"code": code, "message": f"{code} happened"}}, headers={"x-request-id": "req-1", **(headers or {})})


def test_429_then_200_waits_retry_after_and_resends_the_same_idempotency_key() -> None:
    transport, seen, waits = scripted([error(429, "rate_limited", {"retry-after": "2"}), httpx.Response(200, json={"ok": True})])
    response = transport.send("POST", "https://relay.example/api/v1/chat/completions", headers={"idempotency-key": "k-1"}, content=b"{}")
    assert response.json() == {"ok": True}
    assert waits == [2.0]
    assert [r.headers["idempotency-key"] for r in seen] == ["k-1", "k-1"]


def test_5xx_and_network_errors_retry_with_backoff_then_raise_the_last_typed_error() -> None:
    transport, seen, waits = scripted([error(503, "upstream_unavailable"), httpx.ConnectError("refused"), error(502, "upstream_error")])
    with pytest.raises(ServerError) as raised:
        transport.send("GET", "https://relay.example/api/v1/models", headers={})
    assert (raised.value.status, raised.value.code, raised.value.request_id) == (502, "upstream_error", "req-1")
    assert len(seen) == 3 and len(waits) == 2 and all(0 <= w <= 1.0 for w in waits)


def test_a_network_error_alone_is_a_connection_error() -> None:
    transport, _, _ = scripted([httpx.ConnectError("refused")] * 3)
    with pytest.raises(ConnectionError) as raised:
        transport.send("GET", "https://relay.example/x", headers={})
    assert raised.value.status == 0 and raised.value.code == "connection_error"


def test_4xx_is_not_retried() -> None:
    transport, seen, waits = scripted([error(400, "invalid_request")])
    with pytest.raises(InvalidRequestError) as raised:
        transport.send("POST", "https://relay.example/x", headers={}, content=b"{}")
    assert raised.value.code == "invalid_request" and len(seen) == 1 and waits == []


def test_a_retry_after_over_60_seconds_is_not_waited_for() -> None:
    transport, seen, waits = scripted([error(429, "quota_exceeded", {"retry-after": "3600"})])
    with pytest.raises(RateLimitError) as raised:
        transport.send("GET", "https://relay.example/x", headers={})
    assert raised.value.retry_after_seconds == 3600 and len(seen) == 1 and waits == []


def test_retry_after_forms_and_error_shapes() -> None:
    assert retry_after_seconds("7") == 7
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470) == 10
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    anthropic = error_from_answer(404, {"x-request-id": "r"}, '{"type":"error","error":{"type":"not_found_error","message":"no"}}')
    assert (anthropic.status, anthropic.code, anthropic.message, anthropic.request_id) == (404, "not_found_error", "no", "r")
    oauth = error_from_answer(401, {}, '{"error":"invalid_token","error_description":"expired"}')
    assert (oauth.code, oauth.message) == ("invalid_token", "expired")
    plain = error_from_answer(500, {}, "<html>")
    assert isinstance(plain, ServerError) and plain.code == "http_500"
