"""A private chat completion, non-streamed and streamed, with the receipt checked offline.

    GATEWAY_URL=https://relay.example GATEWAY_KEY_FILE=./gateway-key python examples/quickstart.py

The key file holds your gateway key (svc_...) and must be readable by you alone (chmod 600).
"""

from __future__ import annotations

import os

from privacy_relay import RelayClient

PROMPT = "Draft a reply to jane.doe@example.com confirming the refund to IBAN DE89 3704 0044 0532 0130 00."

with RelayClient(os.environ["GATEWAY_URL"], api_key_file=os.environ["GATEWAY_KEY_FILE"], name_model="builtin") as client:
    model = os.environ.get("MODEL", "local-chat")
    answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}])
    print("left this device:", answer.tokenised_request["messages"][0]["content"])
    print("answer:", answer["choices"][0]["message"]["content"])
    print("receipt verified offline:", answer.receipt_verified)

    streamed = ""
    with client.chat.completions.create(model=model, messages=[{"role": "user", "content": PROMPT}], stream=True) as stream:
        for chunk in stream:
            if chunk.get("choices"):
                streamed += chunk["choices"][0]["delta"].get("content") or ""
    print("streamed:", streamed)
    print("stream receipt verified offline:", stream.receipt_verified)
