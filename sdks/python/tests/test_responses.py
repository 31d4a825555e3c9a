"""client.responses.create (OpenAI's Responses API, issue 34) on RelayClient and AsyncRelayClient against a real
gateway and the fake provider: JSON and streamed, the provider sees only aliases, the originals come back (also in
deltas cut mid-alias), receipts verify. And the Responses SSE detokeniser on its own, an alias cut across events."""

from __future__ import annotations

import asyncio
import json

import pytest

from privacy_relay import AsyncRelayClient, RelayClient
from privacy_relay.attestation import ATTESTATION_ROUTES
from privacy_relay.sse import SseDetokeniser
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay
from .test_client import PROMPT, assert_only_aliases_left

EMAIL = "jane.doe@example.com"


def output_text(response: dict) -> str:
    return "".join(c["text"] for item in response["output"] if item.get("type") == "message" for c in item["content"] if c.get("type") == "output_text")


@pytest.fixture()
def client(relay: Relay, device_key: SigningKey):
    api_key, _ = relay.funded_key()
    relay.reset_provider()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as c:
        yield c


def test_attestation_routes_include_responses_and_count_tokens() -> None:
    assert "responses" in ATTESTATION_ROUTES and "messages.count_tokens" in ATTESTATION_ROUTES


def test_responses_json_sends_only_aliases_and_answers_with_the_originals(relay: Relay, client: RelayClient) -> None:
    answer = client.responses.create(model="local-chat", instructions=f"You write to {EMAIL}.", input=PROMPT)
    assert output_text(answer) == f"Echo: {PROMPT}"
    assert answer["instructions"] == f"You write to {EMAIL}."
    assert all(r["path"] == "/v1/responses" for r in relay.received())
    sent = json.loads(assert_only_aliases_left(relay)[0])
    assert "<EMAIL_" in json.dumps(sent) and EMAIL not in json.dumps(answer.tokenised_request)
    assert answer.request_id
    assert answer.receipt is not None and answer.receipt_verified is True
    assert "receipt" not in json.loads(json.dumps(answer))


def test_responses_streamed_events_come_back_with_the_originals_and_a_verified_receipt(relay: Relay, client: RelayClient) -> None:
    with client.responses.create(model="local-chat", input=[{"role": "user", "content": PROMPT}], stream=True) as stream:
        assert stream.receipt is None
        events = list(stream)
    types = [e["type"] for e in events]
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert text == f"Echo: {PROMPT}"
    done = [e["text"] for e in events if e["type"] == "response.output_text.done"]
    assert done == [f"Echo: {PROMPT}"]
    assert output_text(next(e for e in events if e["type"] == "response.completed")["response"]) == f"Echo: {PROMPT}"
    assert types[-1] == "response.completed" and "keepalive" not in types and "receipt-v2" not in types
    numbers = [e["sequence_number"] for e in events]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert_only_aliases_left(relay)
    assert stream.request_id
    assert stream.receipt is not None and stream.receipt_verified is True


def test_async_responses_json_and_stream(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key()
    relay.reset_provider()

    async def run() -> tuple[dict, str, object]:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key) as c:
            answer = await c.responses.create(model="local-chat", input=PROMPT)
            stream = await c.responses.create(model="local-chat", input=PROMPT, stream=True)
            text = ""
            async for event in stream:
                if event["type"] == "response.output_text.delta":
                    text += event["delta"]
            return answer, text, stream

    answer, text, stream = asyncio.run(run())
    assert output_text(answer) == f"Echo: {PROMPT}"
    assert answer.receipt_verified is True  # type: ignore[attr-defined]
    assert text == f"Echo: {PROMPT}"
    assert stream.receipt_verified is True  # type: ignore[attr-defined]
    assert len(assert_only_aliases_left(relay)) == 2


def _frame(event: dict) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


def test_responses_sse_alias_cut_across_events_is_restored_and_renumbered() -> None:
    alias = "<EMAIL_1_abcd>"
    sse = SseDetokeniser("responses", {alias: EMAIL})
    ids = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    wire = "".join(
        [
            _frame({"type": "response.created", "sequence_number": 0, "response": {"id": "r"}}),
            _frame({"type": "response.output_text.delta", "sequence_number": 1, **ids, "delta": "Hi <EMAIL"}),
            _frame({"type": "response.output_text.delta", "sequence_number": 2, **ids, "delta": "_1_abcd> and <EMA"}),
            _frame({"type": "response.output_text.done", "sequence_number": 3, **ids, "text": f"Hi {alias} and <EMA"}),
            _frame({"type": "response.completed", "sequence_number": 4, "response": {"output": [{"type": "message", "content": [{"type": "output_text", "text": f"Hi {alias}"}]}]}}),
            'event: receipt-v2\ndata: {"v":2}\n\n',
        ]
    )
    events = []
    for i in range(0, len(wire), 7):  # 7-character network pieces
        events.extend(sse.push(wire[i : i + 7]))
    events.extend(sse.end())
    values = [e.json for e in events if e.event != "receipt-v2"]
    text = "".join(v["delta"] for v in values if v["type"] == "response.output_text.delta")
    assert text == f"Hi {EMAIL} and <EMA"
    assert next(v for v in values if v["type"] == "response.output_text.done")["text"] == f"Hi {EMAIL} and <EMA"
    assert output_text(values[-1]["response"]) == f"Hi {EMAIL}"
    numbers = [v["sequence_number"] for v in values]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert sse.completed and sse.receipt == {"v": 2}


def test_the_official_openai_package_responses_create_over_the_transport(relay: Relay, device_key: SigningKey) -> None:
    """`openai.OpenAI(http_client=httpx.Client(transport=client.http_transport())).responses.create`, JSON and
    streamed: the app gets its originals back, the provider saw only aliases, the receipt header comes through."""
    import httpx
    import openai

    api_key, _ = relay.funded_key()
    relay.reset_provider()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as client:
        with httpx.Client(transport=client.http_transport()) as http:
            official = openai.OpenAI(base_url=f"{relay.url}/v1", api_key="sk-unused", http_client=http, max_retries=0)
            raw = official.responses.with_raw_response.create(model="local-chat", instructions=f"You write to {EMAIL}.", input=PROMPT)
            response = raw.parse()
            assert response.output_text == f"Echo: {PROMPT}"
            assert response.instructions == f"You write to {EMAIL}."
            assert raw.headers["x-service-receipt-v2"]
            text = ""
            completed = ""
            for event in official.responses.create(model="local-chat", input=PROMPT, stream=True):
                if event.type == "response.output_text.delta":
                    text += event.delta
                if event.type == "response.completed":
                    completed = event.response.output_text
            assert text == f"Echo: {PROMPT}" and completed == f"Echo: {PROMPT}"
    assert [r["path"] for r in relay.received()] == ["/v1/responses", "/v1/responses"]
    assert_only_aliases_left(relay)


def test_a_responses_field_the_policy_refuses_is_answered_by_the_transport_and_nothing_is_sent(relay: Relay, device_key: SigningKey) -> None:
    import httpx
    import openai

    api_key, _ = relay.funded_key()
    relay.reset_provider()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as client:
        with httpx.Client(transport=client.http_transport()) as http:
            official = openai.OpenAI(base_url=f"{relay.url}/v1", api_key="sk-unused", http_client=http, max_retries=0)
            with pytest.raises(openai.BadRequestError) as refused:
                official.responses.create(model="local-chat", input=PROMPT, previous_response_id="resp_earlier")
    assert refused.value.status_code == 400
    assert refused.value.body["code"] == "unsupported_field"  # type: ignore[index]
    assert refused.value.body["details"]["path"] == "/previous_response_id"  # type: ignore[index]
    assert relay.received() == []


def test_messages_count_tokens_counts_the_tokenised_request_unbilled_and_unreceipted(relay: Relay, client: RelayClient) -> None:
    before = client.rest.self.balance()["balance_usd"]
    answer = client.messages.count_tokens(model="local-chat", messages=[{"role": "user", "content": PROMPT}], system=f"Reply to {EMAIL}")
    assert isinstance(answer["input_tokens"], int) and answer["input_tokens"] > 0
    assert answer.receipt is None and answer.receipt_verified is None
    # What left the device: aliases only; the count is of that text.
    sent = json.dumps(answer.tokenised_request)
    assert "<EMAIL_" in sent and EMAIL not in sent
    for body in (r["body"] for r in relay.received()):
        assert EMAIL not in body
    assert client.rest.self.balance()["balance_usd"] == before


def test_count_tokens_async_and_through_the_transport_for_the_anthropic_shape(relay: Relay, device_key: SigningKey) -> None:
    import httpx

    api_key, _ = relay.funded_key()

    async def run() -> int:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as c:
            return (await c.messages.count_tokens(model="local-chat", messages=[{"role": "user", "content": PROMPT}]))["input_tokens"]

    assert asyncio.run(run()) > 0
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as client:
        with httpx.Client(base_url="https://api.anthropic.com", transport=client.http_transport()) as http:
            counted = http.post("/v1/messages/count_tokens", json={"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})
            assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
            # A field count_tokens does not take is refused in Anthropic's error shape; nothing is sent.
            relay.reset_provider()
            refused = http.post("/v1/messages/count_tokens", json={"model": "local-chat", "messages": [], "metadata": {"user_id": EMAIL}})
            assert refused.status_code == 400
            assert refused.json()["type"] == "error" and refused.json()["error"]["type"] == "unsupported_field"
            assert relay.received() == []
