"""The SSE detokeniser on frames as providers cut them: aliases split across chunks in content, tool-call arguments
(JSON text: originals JSON-escaped) and Anthropic text/input_json deltas, text held back released at a field's end,
the receipt trailer kept, torn frames and non-JSON frames refused."""

from __future__ import annotations

import json

import pytest

from privacy_relay.errors import StreamError
from privacy_relay.sse import SseDetokeniser, detokenise_response_text

ALIASES = {"<EMAIL_1_ynha>": "jane.doe@example.com", "<PERSON_1_m2qd>": 'Jan "JJ" Smit'}


def frame(value: object, event: str | None = None) -> str:
    return ("" if event is None else f"event: {event}\n") + f"data: {json.dumps(value)}\n\n"


def chat(delta: dict, finish: str | None = None) -> str:
    return frame({"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def feed(sse: SseDetokeniser, text: str, piece: int) -> list:
    events = []
    for i in range(0, len(text), piece):
        events += sse.push(text[i:i + piece])
    return events + sse.end()


@pytest.mark.parametrize("piece", [1, 3, 7, 1000])
def test_chat_content_and_tool_arguments_restored_whatever_the_network_cut(piece: int) -> None:
    args = json.dumps({"to": "<EMAIL_1_ynha>", "name": "<PERSON_1_m2qd>"})
    stream = (
        chat({"content": "Mail <EMA"})
        + chat({"content": "IL_1_ynha> now, <PERS"})
        + chat({"tool_calls": [{"index": 0, "function": {"arguments": args[:15]}}]})
        + chat({"tool_calls": [{"index": 0, "function": {"arguments": args[15:]}}]})
        + chat({}, "stop")
        + frame({"v": 2, "jti": "x"}, "receipt-v2")
        + "data: [DONE]\n\n"
    )
    sse = SseDetokeniser("chat.completions", ALIASES)
    events = feed(sse, stream, piece)
    content = "".join(e.json["choices"][0]["delta"].get("content") or "" for e in events if isinstance(e.json, dict) and e.json.get("choices"))
    arguments = "".join(
        c["function"]["arguments"] for e in events if isinstance(e.json, dict) and e.json.get("choices") for c in e.json["choices"][0]["delta"].get("tool_calls") or []
    )
    assert content == "Mail jane.doe@example.com now, <PERS"  # a prefix that never completes is released as is
    assert json.loads(arguments) == {"to": "jane.doe@example.com", "name": 'Jan "JJ" Smit'}
    assert sse.completed and sse.receipt == {"v": 2, "jti": "x"}
    assert [e.event for e in events if e.event == "receipt-v2"] == ["receipt-v2"]


def test_anthropic_text_and_input_json_deltas_are_restored_and_released_at_block_stop() -> None:
    stream = (
        frame({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi <PERSON_1"}}, "content_block_delta")
        + frame({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "_m2qd>, <EMAIL_1_yn"}}, "content_block_delta")
        + frame({"type": "content_block_stop", "index": 0}, "content_block_stop")
        + frame({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"who": "<PERSON_1_m2qd>"}'}}, "content_block_delta")
        + frame({"type": "content_block_stop", "index": 1}, "content_block_stop")
        + frame({"type": "message_stop"}, "message_stop")
    )
    sse = SseDetokeniser("messages", ALIASES)
    events = feed(sse, stream, 4)
    text = "".join(e.json["delta"]["text"] for e in events if e.json.get("type") == "content_block_delta" and e.json["delta"]["type"] == "text_delta")
    partial = "".join(e.json["delta"]["partial_json"] for e in events if e.json.get("type") == "content_block_delta" and e.json["delta"]["type"] == "input_json_delta")
    assert text == 'Hi Jan "JJ" Smit, <EMAIL_1_yn'
    assert json.loads(partial) == {"who": 'Jan "JJ" Smit'}
    assert sse.completed


def test_torn_and_malformed_streams_are_stream_errors() -> None:
    sse = SseDetokeniser("chat.completions", ALIASES)
    sse.push('data: {"choices": []}\n\ndata: {"cho')
    with pytest.raises(StreamError) as raised:
        sse.end()
    assert raised.value.code == "stream_error"
    with pytest.raises(StreamError):
        SseDetokeniser("chat.completions", ALIASES).push("data: not json\n\n")
    with pytest.raises(StreamError):
        SseDetokeniser("chat.completions", ALIASES).push("event: receipt-v2\ndata: {oops\n\n")
    assert not SseDetokeniser("chat.completions", ALIASES).completed


def test_whole_answers_are_detokenised_as_json_so_quotes_stay_valid() -> None:
    answer = json.dumps({"choices": [{"message": {"content": "Dear <PERSON_1_m2qd>, see <EMAIL_9_zzzz>"}}]})
    restored = json.loads(detokenise_response_text(answer, ALIASES))
    assert restored["choices"][0]["message"]["content"] == 'Dear Jan "JJ" Smit, see <EMAIL_9_zzzz>'
    assert detokenise_response_text("plain <EMAIL_1_ynha>", ALIASES) == "plain jane.doe@example.com"


def test_whole_answers_restore_tool_call_arguments_so_they_still_parse() -> None:
    args = json.dumps({"to": "<PERSON_1_m2qd>", "cc": "<EMAIL_1_ynha>"})
    chat_answer = json.dumps({"choices": [{"message": {"tool_calls": [{"type": "function", "function": {"name": "mail", "arguments": args}}]}}]})
    call = json.loads(detokenise_response_text(chat_answer, ALIASES))["choices"][0]["message"]["tool_calls"][0]["function"]
    assert json.loads(call["arguments"]) == {"to": 'Jan "JJ" Smit', "cc": "jane.doe@example.com"}
    responses_answer = json.dumps({"output": [{"type": "function_call", "name": "mail", "arguments": args}]})
    assert json.loads(json.loads(detokenise_response_text(responses_answer, ALIASES))["output"][0]["arguments"])["to"] == 'Jan "JJ" Smit'
