"""A multi-turn Responses conversation whose history and aliases stay on this device: each turn is sent with the
earlier ones (tokenised again, the same value under the same alias), nothing is stored at the provider.

    GATEWAY_URL=https://relay.example GATEWAY_KEY_FILE=./gateway-key python examples/conversation.py
"""

from __future__ import annotations

import json
import os

from privacy_relay import RelayClient


def text_of(response: dict) -> str:
    """The text of a Response's message items (the openai package's `output_text`)."""
    return "".join(part.get("text", "") for item in response.get("output", []) if item.get("type") == "message" for part in item["content"])


with RelayClient(os.environ["GATEWAY_URL"], api_key_file=os.environ["GATEWAY_KEY_FILE"]) as client:
    model = os.environ.get("MODEL", "local-chat")
    conversation = client.conversations.create()

    first = conversation.responses.create(model=model, input="My name is Dr. Ada Lovelace, write to ada@example.org.")
    print("turn 1:", text_of(first))

    with conversation.responses.create(model=model, input="Send the invoice to ada@example.org.", stream=True) as stream:
        print("turn 2: ", end="")
        for event in stream:
            if event["type"] == "response.output_text.delta":
                print(event["delta"], end="", flush=True)
        print()

    print("turns kept on this device:", len(conversation.items), "aliases:", len(conversation.aliases))
    print("what left this device on turn 2:", json.dumps(stream.tokenised_request["input"]))
