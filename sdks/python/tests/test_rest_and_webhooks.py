"""The REST capability set against a real gateway (gateway key and portal token routes), and a webhook delivered
by the gateway to the example WSGI receiver, authenticated with verify_webhook and deduplicated."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx
import pytest

from privacy_relay import AuthenticationError, ConfigurationError, RelayClient, verify_webhook
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "webhook_receiver.py"


def load_example():
    spec = importlib.util.spec_from_file_location("webhook_receiver", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


class _Quiet(WSGIRequestHandler):
    def log_message(self, *_: object) -> None:
        pass


_ISSUED: list[str] = []


@pytest.fixture()
def tenant(relay: Relay, device_key: SigningKey):
    api_key, prefix = relay.funded_key()
    # Once through the operator CLI (as an operator issues one), then through the admin API it calls.
    portal = relay.cli(
        "portal-token", "create", "--key-prefix", prefix, "--abilities", "ability:keys.read,ability:keys.write,ability:billing.read,webhooks.manage,webhooks.read"
    )["token"] if not _ISSUED else relay.portal_token(prefix, ["ability:keys.read", "ability:keys.write", "ability:billing.read", "webhooks.manage", "webhooks.read"])
    _ISSUED.append(portal)
    with RelayClient(relay.url, api_key=api_key, portal_token=portal, name_model="off", device_key=device_key) as client:
        yield client, prefix


def test_self_routes_with_the_gateway_key(tenant) -> None:
    client, prefix = tenant
    assert client.rest.self.key()["key_prefix"] == prefix
    assert client.rest.self.balance()["balance_usd"] == "10.000000"
    usage = client.rest.self.usage()
    assert isinstance(usage, dict) and usage != {}


def test_keys_receipts_and_billing_with_the_portal_token(relay: Relay, tenant) -> None:
    client, prefix = tenant
    listed = client.rest.keys.list()
    assert any(k["key_prefix"] == prefix for k in listed["keys"])
    created = client.rest.keys.create(name="python-sdk", idempotency_key="py-sdk-key-1")
    assert created["api_key"].startswith("svc_")
    mine = next(k for k in client.rest.keys.list()["keys"] if k["key_prefix"] == prefix)
    assert client.rest.keys.scopes(mine["id"]) == {"permissions": mine["permissions"], "models": mine["models"]}
    assert client.rest.keys.scopes("no-such-key") is None
    again = client.rest.keys.create(name="python-sdk", idempotency_key="py-sdk-key-1")  # same key: replayed, not applied twice
    assert again["api_key"] == created["api_key"]
    assert client.rest.billing.balance()["balance_usd"] == "10.000000"
    answer = client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "mail bob@example.net"}])
    jti = answer.receipt["jti"]
    assert jti in json.dumps(client.rest.receipts.get(jti))
    assert any(jti in json.dumps(r) for r in client.rest.receipts.list(limit=10)["receipts"])
    assert client.rest.receipts.verify(answer.receipt).valid
    online = client.rest.receipts.verify_online(answer.receipt)
    assert online["valid"] is True
    proof = client.rest.receipts.inclusion_proof(jti)
    from privacy_relay import verify_inclusion_proof

    jwks = httpx.get(f"{relay.url}/api/.well-known/service-receipt-pubkeys.jwks").json()
    assert verify_inclusion_proof(proof, None, jwks, receipt=answer.receipt).valid
    # a head kept now is a prefix of the log after another call: the consistency proof verifies offline
    from privacy_relay import verify_consistency_proof

    kept = client.rest.receipts.signed_tree_head()
    client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "again"}])
    consistency = client.rest.receipts.consistency_proof(kept["tree_size"])
    assert consistency["first"] == kept["tree_size"]
    assert verify_consistency_proof(consistency, kept, jwks).valid


def test_portal_routes_need_a_portal_token_and_a_bad_one_is_401(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key("0")
    with RelayClient(relay.url, api_key=api_key, device_key=device_key) as client:
        with pytest.raises(ConfigurationError):
            client.rest.keys.list()
    with RelayClient(relay.url, api_key=api_key, portal_token="spt_" + "a" * 52, device_key=device_key) as client:
        with pytest.raises(AuthenticationError) as raised:
            client.rest.billing.balance()
        assert raised.value.status == 401 and raised.value.request_id


def test_a_webhook_test_event_reaches_the_example_receiver_verified_and_deduplicated(relay: Relay, tenant) -> None:
    client, _ = tenant
    example = load_example()
    events: list[dict] = []
    raw: list[tuple[bytes, dict]] = []
    secret_box: dict[str, str] = {}

    def app(environ, start_response):
        # Keep the exact bytes and headers too, to replay the delivery below.
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        raw.append((body, headers))
        import io

        environ["wsgi.input"] = io.BytesIO(body)
        return inner(environ, start_response)

    inner = None
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/hooks"
        endpoint = client.rest.webhooks.endpoints.create(url=url, events=["webhook.test"])
        secret_box["secret"] = endpoint["secret"]
        inner = example.make_app(endpoint["secret"], events.append)
        client.rest.webhooks.endpoints.test(endpoint["id"])
        deadline = time.monotonic() + 30
        while not events and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [e["event"] for e in events] == ["webhook.test"]
        body, headers = raw[0]
        assert verify_webhook(body, headers, endpoint["secret"]) is True
        # The same delivery again is a duplicate: answered 200, not handled twice.
        replay = httpx.post(url, content=body, headers={k: v for k, v in headers.items() if k.startswith("x-") or k == "idempotency-key"})
        assert replay.status_code == 200 and replay.json() == {"duplicate": True}
        # A forged one is refused with its code.
        forged = httpx.post(url, content=body.replace(b"webhook.test", b"webhook.tesT"), headers={k: v for k, v in headers.items() if k.startswith("x-")})
        assert forged.status_code == 400 and forged.json() == {"error": "bad_signature"}
        assert len(events) == 1
        deliveries = client.rest.webhooks.deliveries.list()
        assert "webhook.test" in json.dumps(deliveries)
    finally:
        server.shutdown()
        server.server_close()


def test_the_async_client_reaches_the_same_rest_routes(relay: Relay, device_key: SigningKey) -> None:
    import asyncio

    from privacy_relay import AsyncRelayClient

    api_key, prefix = relay.funded_key()
    portal = relay.portal_token(prefix, ["ability:keys.read", "ability:billing.read"])

    async def run() -> tuple:
        async with AsyncRelayClient(relay.url, api_key=api_key, portal_token=portal, name_model="off", device_key=device_key) as client:
            key = await client.rest.self.key()
            listed = await client.rest.keys.list()
            mine = next(k for k in listed["keys"] if k["key_prefix"] == prefix)
            scopes = await client.rest.keys.scopes(mine["id"])
            answer = await client.chat.completions.create(model="local-chat", messages=[{"role": "user", "content": "hi"}])
            verdict = await client.rest.receipts.verify(answer.receipt)
            return key, mine, scopes, verdict

    key, mine, scopes, verdict = asyncio.run(run())
    assert key["key_prefix"] == prefix
    assert scopes == {"permissions": mine["permissions"], "models": mine["models"]}
    assert verdict.valid and verdict.reason is None
