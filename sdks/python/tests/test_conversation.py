"""client.conversations (issue 34 item 2; the TypeScript SDK's client.conversations mirrored): multi-turn Responses
calls whose history and aliases stay on this device, against a real gateway and the fake provider. Each turn resends
the earlier turns before its input under the conversation's alias secret, so a value keeps its first alias and the
earlier turns are the same bytes; the originals come back; a refused, failed or cut turn leaves the history as it
was; previous_response_id is refused on the device; one turn at a time. RelayClient and AsyncRelayClient."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from privacy_relay import AsyncConversation, AsyncRelayClient, ConflictError, Conversation, InvalidRequestError, RelayClient, UnsupportedContentError
from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay
from .test_client import PROMPT, assert_only_aliases_left
from .test_responses import output_text

EMAIL = "jane.doe@example.com"
SECOND = f"Send a copy to {EMAIL} too."
INSTRUCTIONS = f"You write to {EMAIL}."
ALIAS = re.compile(r"<[A-Z_]+_[A-Za-z0-9_]+>")


@pytest.fixture()
def client(relay: Relay, device_key: SigningKey):
    api_key, _ = relay.funded_key()
    relay.reset_provider()
    with RelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as c:
        yield c


def sent_bodies(relay: Relay) -> list[dict]:
    return [json.loads(r["body"]) for r in relay.received() if r["path"] == "/v1/responses"]


def email_aliases(value: object) -> set[str]:
    return {a for a in ALIAS.findall(json.dumps(value)) if a.startswith("<EMAIL_")}


def assert_two_turns_sent_with_the_same_aliases(relay: Relay) -> None:
    first, second = (b["input"] for b in sent_bodies(relay))
    # Turn 2 resends turn 1 (its input item and the answer's output item, the same bytes), then the new message.
    assert len(first) == 1 and len(second) == 3
    assert second[0] == first[0]
    assert second[1]["type"] == "message" and second[1]["role"] == "assistant"
    assert second[2]["role"] == "user"
    # The e-mail keeps its first turn's alias, in the history and the new message alike.
    assert len(email_aliases(first)) == 1 and email_aliases(second) == email_aliases(first)
    assert email_aliases(second[2]) == email_aliases(first)
    assert_only_aliases_left(relay)


def test_two_turns_resend_the_history_with_the_same_aliases_and_answer_with_the_originals(relay: Relay, client: RelayClient) -> None:
    conversation = client.conversations.create()
    assert isinstance(conversation, Conversation)
    first = conversation.responses.create(model="local-chat", instructions=INSTRUCTIONS, input=PROMPT)
    assert output_text(first) == f"Echo: {PROMPT}"
    assert first.receipt_verified is True
    second = conversation.responses.create(model="local-chat", instructions=INSTRUCTIONS, input=SECOND)
    assert output_text(second) == f"Echo: {SECOND}"
    assert second["instructions"] == INSTRUCTIONS
    assert_two_turns_sent_with_the_same_aliases(relay)
    # The items on the device hold the originals; the map restores any alias of the conversation.
    assert conversation.items[0] == {"role": "user", "content": PROMPT}
    assert output_text({"output": [conversation.items[1]]}) == f"Echo: {PROMPT}"
    assert conversation.items[2] == {"role": "user", "content": SECOND}
    assert len(conversation.items) == 4
    assert EMAIL in conversation.aliases.values()
    # The instructions, tokenised under the same secret, are the same bytes each turn.
    assert len({b["instructions"] for b in sent_bodies(relay)}) == 1


def test_a_streamed_turn_joins_the_history_once_read_to_the_end(relay: Relay, client: RelayClient) -> None:
    conversation = client.conversations.create()
    with conversation.responses.create(model="local-chat", input=PROMPT, stream=True) as stream:
        assert conversation.items == []
        text = "".join(e["delta"] for e in stream if e["type"] == "response.output_text.delta")
    assert text == f"Echo: {PROMPT}"
    assert stream.receipt_verified is True and stream.request_id
    assert len(conversation.items) == 2
    assert output_text(conversation.responses.create(model="local-chat", input=SECOND)) == f"Echo: {SECOND}"
    assert_two_turns_sent_with_the_same_aliases(relay)


def test_one_turn_at_a_time_and_a_stream_closed_early_leaves_the_history(relay: Relay, client: RelayClient) -> None:
    conversation = client.conversations.create()
    stream = conversation.responses.create(model="local-chat", input=PROMPT, stream=True)
    with pytest.raises(ConflictError) as busy:
        conversation.responses.create(model="local-chat", input=SECOND)
    assert busy.value.code == "conversation_busy"
    assert len(relay.received()) == 1
    events = iter(stream)
    next(events)
    stream.close()
    assert conversation.items == []
    # Free again: the next turn goes through, with no trace of the closed one.
    assert output_text(conversation.responses.create(model="local-chat", input=SECOND)) == f"Echo: {SECOND}"
    assert len(sent_bodies(relay)[1]["input"]) == 1 and len(conversation.items) == 2


def test_refused_turns_send_nothing_and_leave_the_history_as_it_was(relay: Relay, client: RelayClient) -> None:
    conversation = client.conversations.create()
    conversation.responses.create(model="local-chat", input=PROMPT)
    relay.reset_provider()
    image = [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}]
    with pytest.raises(UnsupportedContentError):
        conversation.responses.create(model="local-chat", input=image)
    for field in ("previous_response_id", "conversation"):
        with pytest.raises(InvalidRequestError) as refused:
            conversation.responses.create(model="local-chat", input=SECOND, **{field: "resp_earlier"})
        assert refused.value.code == "invalid_request" and refused.value.details == {"path": field}
    with pytest.raises(InvalidRequestError) as no_input:
        conversation.responses.create(model="local-chat", input={"role": "user", "content": SECOND})
    assert no_input.value.details == {"path": "input"}
    assert relay.received() == []
    assert len(conversation.items) == 2
    # The same turn again, without what was refused, goes through.
    assert output_text(conversation.responses.create(model="local-chat", input=SECOND)) == f"Echo: {SECOND}"
    assert len(sent_bodies(relay)[0]["input"]) == 3


def test_two_conversations_alias_the_same_value_differently(relay: Relay, client: RelayClient) -> None:
    client.conversations.create().responses.create(model="local-chat", input=PROMPT)
    client.conversations.create().responses.create(model="local-chat", input=PROMPT)
    first, second = (b["input"] for b in sent_bodies(relay))
    assert email_aliases(first) and email_aliases(first) != email_aliases(second)


def test_a_function_call_round_trip_across_turns(relay: Relay, client: RelayClient) -> None:
    tools = [{"type": "function", "name": "send_mail", "description": "Send an e-mail", "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}}]
    conversation = client.conversations.create()
    first = conversation.responses.create(model="local-chat", tools=tools, input=PROMPT)
    calls = [item for item in first["output"] if item.get("type") == "function_call"]
    assert calls, first["output"]
    result = f"Sent to {EMAIL}."
    second = conversation.responses.create(model="local-chat", tools=tools, input=[{"type": "function_call_output", "call_id": calls[0]["call_id"], "output": result}])
    assert output_text(second) == f"Echo: {result}"
    first_sent, second_sent = (b["input"] for b in sent_bodies(relay))
    assert second_sent[1]["type"] == "function_call" and second_sent[2]["type"] == "function_call_output"
    assert email_aliases(second_sent[2]) == email_aliases(first_sent)
    assert_only_aliases_left(relay)


def test_async_conversation_two_turns_json_and_stream(relay: Relay, device_key: SigningKey) -> None:
    api_key, _ = relay.funded_key()
    relay.reset_provider()

    async def run() -> tuple[str, str, int, str]:
        async with AsyncRelayClient(relay.url, api_key=api_key, name_model="off", device_key=device_key, retries=0) as c:
            conversation = c.conversations.create()
            assert isinstance(conversation, AsyncConversation)
            first = output_text(await conversation.responses.create(model="local-chat", input=PROMPT))
            text = ""
            async with await conversation.responses.create(model="local-chat", input=SECOND, stream=True) as stream:
                with pytest.raises(ConflictError):
                    await conversation.responses.create(model="local-chat", input=SECOND)
                async for event in stream:
                    if event["type"] == "response.output_text.delta":
                        text += event["delta"]
            assert stream.receipt_verified is True
            with pytest.raises(InvalidRequestError):
                await conversation.responses.create(model="local-chat", input=SECOND, previous_response_id="resp_earlier")
            return first, text, len(conversation.items), conversation.items[3]["content"][0]["text"]

    first, text, items, last = asyncio.run(run())
    assert first == f"Echo: {PROMPT}" and text == f"Echo: {SECOND}" and items == 4 and last == f"Echo: {SECOND}"
    assert_two_turns_sent_with_the_same_aliases(relay)
