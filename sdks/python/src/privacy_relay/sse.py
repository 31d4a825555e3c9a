"""Restores originals in a streamed answer (SSE) as it arrives, frame by frame, for OpenAI chat completion chunks
and Anthropic message events. Each streaming text field (a choice's `delta.content`, a tool call's arguments, an
Anthropic `text_delta` / `input_json_delta`) has its own streaming detokeniser, so an alias cut across two chunks
is restored whole. Text held back when a field ends (finish_reason, content_block_stop, [DONE]) is released in
that frame or one just before it. The `event: receipt-v2` trailer passes through unchanged and is kept."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .errors import StreamError
from .tokeniser.detokenise import StreamingDetokeniser

_FRAME_END = re.compile(r"\r?\n\r?\n")
_LINE = re.compile(r"\r?\n")
_CHAT_KEY = re.compile(r"^(c|t)(\d+)(?:\.(\d+))?$")
#: The events that end a Responses stream.
_RESPONSES_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})


@dataclass(frozen=True)
class SseEvent:
    event: Optional[str]
    data: str
    #: The parsed JSON of `data`, when it is JSON.
    json: Any = None

    def serialise(self) -> str:
        return ("" if self.event is None else f"event: {self.event}\n") + f"data: {self.data}\n\n"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_escaped(aliases: Mapping[str, str]) -> dict[str, str]:
    """Originals escaped for the inside of a JSON string (tool arguments and partial_json stream JSON text)."""
    return {a: _compact(original)[1:-1] for a, original in aliases.items()}


class SseDetokeniser:
    def __init__(self, route: str, aliases: Mapping[str, str]) -> None:
        self._route = route
        self._map = dict(aliases)
        self._escaped = _json_escaped(aliases)
        self._fields: dict[str, StreamingDetokeniser] = {}
        self._buffer = ""
        self.receipt: Any = None
        self.completed = False
        self._last_id: Any = None
        self._last_model: Any = None
        #: Responses: synthetic events inserted so far; every later sequence_number moves up by as many.
        self._shift = 0

    def _field(self, key: str, json_text: bool) -> StreamingDetokeniser:
        d = self._fields.get(key)
        if d is None:
            d = self._fields[key] = StreamingDetokeniser(self._escaped if json_text else self._map)
        return d

    def _release(self, key: str) -> str:
        d = self._fields.pop(key, None)
        return "" if d is None else d.flush()

    def _event(self, name: Optional[str], value: Any) -> SseEvent:
        return SseEvent(name, _compact(value), value)

    def _release_all_chat(self) -> list[SseEvent]:
        choices = []
        for key in list(self._fields):
            text = self._release(key)
            if text == "":
                continue
            m = _CHAT_KEY.match(key)
            if m is None:
                continue
            kind, index, tool = m.group(1), int(m.group(2)), m.group(3)
            delta = {"content": text} if kind == "c" else {"tool_calls": [{"index": int(tool or 0), "function": {"arguments": text}}]}
            choices.append({"index": index, "delta": delta, "finish_reason": None})
        if not choices:
            return []
        return [self._event(None, {"id": self._last_id, "object": "chat.completion.chunk", "model": self._last_model, "choices": choices})]

    def _chat_frame(self, chunk: dict) -> list[SseEvent]:
        self._last_id = chunk.get("id", self._last_id)
        self._last_model = chunk.get("model", self._last_model)
        for choice in chunk.get("choices") if isinstance(chunk.get("choices"), list) else []:
            if not isinstance(choice, dict):
                continue
            i = choice.get("index", 0)
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else None
            if delta is not None and isinstance(delta.get("content"), str):
                delta["content"] = self._field(f"c{i}", False).push(delta["content"])
            for call in (delta.get("tool_calls") if delta is not None and isinstance(delta.get("tool_calls"), list) else []):
                if isinstance(call, dict) and isinstance(call.get("function"), dict) and isinstance(call["function"].get("arguments"), str):
                    call["function"]["arguments"] = self._field(f"t{i}.{call.get('index', 0)}", True).push(call["function"]["arguments"])
            if choice.get("finish_reason") is not None:
                rest = self._release(f"c{i}")
                if rest != "":
                    before = delta.get("content") if delta is not None and isinstance(delta.get("content"), str) else ""
                    choice["delta"] = {**(delta or {}), "content": before + rest}
                for key in [k for k in self._fields if k.startswith(f"t{i}.")]:
                    args = self._release(key)
                    if args == "":
                        continue
                    current = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
                    calls = current.get("tool_calls") if isinstance(current.get("tool_calls"), list) else []
                    choice["delta"] = {**current, "tool_calls": [*calls, {"index": int(key.split(".")[1]), "function": {"arguments": args}}]}
            message = choice.get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                message["content"] = self._field(f"m{i}", False).push(message["content"]) + self._release(f"m{i}")
        return [self._event(None, chunk)]

    def _messages_frame(self, name: Optional[str], value: dict) -> list[SseEvent]:
        index = value.get("index", 0)
        if value.get("type") == "content_block_delta" and isinstance(value.get("delta"), dict):
            delta = value["delta"]
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                delta["text"] = self._field(f"b{index}", False).push(delta["text"])
            if delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                delta["partial_json"] = self._field(f"j{index}", True).push(delta["partial_json"])
            return [self._event(name, value)]
        if value.get("type") == "content_block_stop":
            out: list[SseEvent] = []
            text = self._release(f"b{index}")
            if text != "":
                out.append(self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}))
            partial = self._release(f"j{index}")
            if partial != "":
                out.append(
                    self._event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}})
                )
            return [*out, self._event(name, value)]
        if value.get("type") == "message_stop":
            self.completed = True
        return [self._event(name, value)]

    # -- Responses (as sdks/typescript/src/sseDetokeniser.ts) --------------------------------------------------------

    def _renumbered(self, value: dict) -> dict:
        n = value.get("sequence_number")
        return {**value, "sequence_number": n + self._shift} if isinstance(n, int) and not isinstance(n, bool) else dict(value)

    @staticmethod
    def _responses_key(delta_type: str, value: dict) -> str:
        def part(k: str) -> str:
            v = value.get(k)
            return "" if v is None else str(v)

        return "|".join(["r", delta_type, part("item_id"), part("output_index"), part("content_index"), part("summary_index")])

    def _responses_release(self, key: str, next_number: Any) -> list[SseEvent]:
        """Held-back text of one Responses field as a delta event of its own, placed before an event numbered `next_number`."""
        rest = self._release(key)
        if rest == "":
            return []
        _, delta_type, item_id, output_index, content_index, summary_index = key.split("|")
        synthetic: dict[str, Any] = {"type": delta_type}
        numbered = isinstance(next_number, int) and not isinstance(next_number, bool)
        if numbered:
            synthetic["sequence_number"] = next_number + self._shift
        if item_id != "":
            synthetic["item_id"] = item_id
        if output_index != "":
            synthetic["output_index"] = int(output_index)
        if content_index != "":
            synthetic["content_index"] = int(content_index)
        if summary_index != "":
            synthetic["summary_index"] = int(summary_index)
        synthetic["delta"] = rest
        if numbered:
            self._shift += 1
        return [self._event(delta_type, synthetic)]

    def _responses_frame(self, name: Optional[str], value: dict) -> list[SseEvent]:
        kind = value.get("type") if isinstance(value.get("type"), str) else (name or "")
        if kind.endswith(".delta") and isinstance(value.get("delta"), str):
            out = self._renumbered(value)
            out["delta"] = self._field(self._responses_key(kind, value), "arguments" in kind).push(value["delta"])
            return [self._event(name, out)]
        before: list[SseEvent] = []
        if kind.endswith(".done"):
            before.extend(self._responses_release(self._responses_key(kind[: -len(".done")] + ".delta", value), value.get("sequence_number")))
        if kind in _RESPONSES_TERMINAL:
            # Whatever a provider left open without its .done event is released before the end.
            for key in list(self._fields):
                before.extend(self._responses_release(key, value.get("sequence_number")))
            self.completed = True
        return [*before, self._event(name, _detokenise_deep(self._renumbered(value), self._map, self._escaped))]

    def _handle(self, raw: str) -> list[SseEvent]:
        name: Optional[str] = None
        data: list[str] = []
        for line in _LINE.split(raw):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
        if not data:
            return []
        text = "\n".join(data)
        if name == "receipt-v2":
            try:
                self.receipt = json.loads(text)
            except ValueError:
                raise StreamError("The receipt-v2 trailer is not JSON.", status=200, code="stream_error") from None
            return [SseEvent(name, text, self.receipt)]
        if text == "[DONE]":
            self.completed = True
            return [*(self._release_all_chat() if self._route == "chat.completions" else []), SseEvent(name, text, None)]
        try:
            value = json.loads(text)
        except ValueError:
            raise StreamError("The gateway sent a stream frame that is not JSON.", status=200, code="stream_error") from None
        if not isinstance(value, dict):
            return [SseEvent(name, text, value)]
        if name == "error" or value.get("type") == "error":
            return [SseEvent(name, text, value)]
        if self._route == "chat.completions":
            return self._chat_frame(value)
        if self._route == "responses":
            return self._responses_frame(name, value)
        return self._messages_frame(name, value)

    def push(self, text: str) -> list[SseEvent]:
        """Feeds gateway text; returns the complete events it finished, detokenised."""
        self._buffer += text
        out: list[SseEvent] = []
        while True:
            m = _FRAME_END.search(self._buffer)
            if m is None:
                return out
            raw = self._buffer[:m.start()]
            self._buffer = self._buffer[m.end():]
            out.extend(self._handle(raw))

    def end(self) -> list[SseEvent]:
        """The input ended: the last events (held-back text released); StreamError on a torn frame."""
        if self._buffer.strip() != "":
            self._buffer = ""
            raise StreamError("The stream ended in the middle of a frame.", status=200, code="stream_error")
        if self._route == "chat.completions":
            return self._release_all_chat()
        if self._route == "responses":
            return [e for key in list(self._fields) for e in self._responses_release(key, None)]
        out = []
        for key in list(self._fields):
            text = self._release(key)
            if text == "":
                continue
            delta = {"type": "text_delta", "text": text} if key.startswith("b") else {"type": "input_json_delta", "partial_json": text}
            out.append(self._event("content_block_delta", {"type": "content_block_delta", "index": int(key[1:]), "delta": delta}))
        return out


def _detokenise_deep(value: Any, aliases: Mapping[str, str], escaped: Mapping[str, str], key: Optional[str] = None) -> Any:
    """Every string of a whole JSON value restored; the value of an `arguments` key (a JSON text) with escaped originals."""
    from .tokeniser.detokenise import detokenise

    if isinstance(value, str):
        return detokenise(value, escaped if key == "arguments" else aliases)
    if isinstance(value, list):
        return [_detokenise_deep(v, aliases, escaped) for v in value]
    if isinstance(value, dict):
        return {k: _detokenise_deep(v, aliases, escaped, k) for k, v in value.items()}
    return value


def detokenise_response_text(text: str, aliases: Mapping[str, str]) -> str:
    """A response body with this request's originals restored: JSON is parsed, every string detokenised (a tool
    call's `arguments`, JSON text, with JSON-escaped originals so it still parses) and re-serialised (splicing into
    raw JSON text could break it); other bodies are detokenised as text."""
    from .tokeniser.detokenise import detokenise

    try:
        parsed = json.loads(text)
    except ValueError:
        return detokenise(text, aliases)
    return _compact(_detokenise_deep(parsed, aliases, _json_escaped(aliases)))
