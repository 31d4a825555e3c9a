"""Tool-call arguments in a conversation sent back are tokenised like the rest of it: the client restores them in
the model's answer (the app needs the real values), so a tool loop would otherwise send them upstream in the clear.
Mirrors test/sdks/typescript/tokeniser/tokeniseRequest.test.ts."""

from __future__ import annotations

import json

from privacy_relay.tokeniser.tokenise import Tokeniser

EMAIL = "jane.doe@example.com"
PHONE = "+44 20 7946 0958"


def alias_of(result, value: str) -> str:
    return next(alias for alias, original in result.map.items() if original == value)


def test_openai_tool_call_arguments_are_tokenised_nested_and_unchanged_arguments_keep_their_bytes() -> None:
    args = json.dumps({"to": EMAIL, "call": {"numbers": [PHONE, 7], "urgent": True}}, indent=2)
    untouched = '{ "city": "Paris",  "days": 3 }'
    body = {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "user", "content": f"Mail {EMAIL}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "send", "arguments": args}},
                    {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": untouched}},
                    {"id": "c3", "type": "function", "function": {"name": "raw", "arguments": f"not json {EMAIL}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": f"sent to {EMAIL}"},
            {"role": "assistant", "content": None, "function_call": {"name": "legacy", "arguments": json.dumps({"phone": PHONE})}},
        ],
    }
    out = Tokeniser(None).tokenise_request("chat.completions", body)
    wire = out.body_bytes.decode()
    assert EMAIL not in wire and "7946" not in wire
    email, phone = alias_of(out, EMAIL), alias_of(out, PHONE)
    sent = out.body
    assert sent["messages"][0]["content"] == f"Mail {email}"
    calls = sent["messages"][1]["tool_calls"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"to": email, "call": {"numbers": [phone, 7], "urgent": True}}
    assert calls[1]["function"]["arguments"] == untouched
    assert calls[2]["function"]["arguments"] == f"not json {email}"
    assert sent["messages"][2]["content"] == f"sent to {email}"
    assert json.loads(sent["messages"][3]["function_call"]["arguments"]) == {"phone": phone}
    assert out.detectors_fired == {"EMAIL": 4, "PHONE": 2}
    # The caller's body is a copy: untouched.
    assert json.loads(body["messages"][1]["tool_calls"][0]["function"]["arguments"])["to"] == EMAIL


def test_anthropic_tool_use_input_is_tokenised_with_the_same_alias_as_the_text() -> None:
    body = {
        "model": "claude",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": f"Mail {EMAIL}"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": EMAIL, "n": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": f"Phone {PHONE}"}]}]},
        ],
    }
    out = Tokeniser(None).tokenise_request("messages", body)
    email = alias_of(out, EMAIL)
    assert out.body["messages"][0]["content"] == f"Mail {email}"
    assert out.body["messages"][1]["content"][0] == {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": email, "n": 2}}
    assert PHONE not in out.body_bytes.decode()
