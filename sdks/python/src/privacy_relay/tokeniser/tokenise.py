"""Tokenising texts and relay request bodies."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from ..wire.jcs import canonical_bytes
from .detect_structured import detect_structured, resolve_overlaps, structured_detectors
from .detectors import Detector
from .detectors.phone import DEFAULT_PHONE_REGIONS
from .names import NameModel, NameModelUnavailable
from .session import TokeniserSession
from .types import Span

NamesSetting = Union[NameModel, None]


class InvalidRequestBody(ValueError):
    """A body the engine cannot tokenise (not an object, `messages` not an array, not serialisable)."""


class Tokeniser:
    """The detectors and name model of one client; `session()` gives the per-request state."""

    def __init__(self, names: Optional[NameModel] = None, *, fail_open: bool = False, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> None:
        self.names = names
        self.fail_open = fail_open
        self.detectors: list[Detector] = structured_detectors(phone_regions)

    def detect_spans(self, text: str, session: Optional[TokeniserSession] = None) -> list[Span]:
        """Every value the detectors and the name model find, non-overlapping, in text order."""
        structured = detect_structured(text, self.detectors)
        names: list[Span] = []
        if self.names is not None:
            try:
                names = [s for s in self.names.detect(text) if 0 <= s.start < s.end <= len(text)]
            except Exception as error:  # noqa: BLE001 - any failure of the model means "unavailable"
                if self.fail_open:
                    if session is not None:
                        session.name_model_skipped = True
                    names = []
                elif isinstance(error, NameModelUnavailable):
                    raise
                else:
                    raise NameModelUnavailable("name model failed; nothing was sent") from error
        return resolve_overlaps(structured + [Span(s.start, s.end, "PERSON") for s in names])

    def tokenise_text(self, text: str, session: TokeniserSession) -> str:
        """`text` with every detected value replaced by its alias in `session`."""
        session.observe(text)
        if text == "":
            return text
        out: list[str] = []
        at = 0
        for span in self.detect_spans(text, session):
            out.append(text[at:span.start])
            out.append(session.alias_for(span.type, text[span.start:span.end]))
            session.count_fired(span.type)
            at = span.end
        out.append(text[at:])
        return "".join(out)

    def tokenise_request(self, route: str, body: Any, session: Optional[TokeniserSession] = None) -> "TokenisedRequest":
        """Tokenises the user text of a chat completions, messages or embeddings body (a copy). The bytes to send
        are the UTF-8 JCS form of the tokenised body. A streamed chat completion gets
        `stream_options.include_usage: true` (the gateway relays bytes unchanged and cannot add it)."""
        if not isinstance(body, dict):
            raise InvalidRequestBody("request body must be a JSON object")
        body_copy = copy.deepcopy(body)
        session = session or TokeniserSession()
        slots = _slots_for(route, body_copy)
        for slot in slots:
            session.observe(slot.text)
        for slot in slots:
            slot.write(self.tokenise_text(slot.text, session))
        for commit in {id(slot.commit): slot.commit for slot in slots if slot.commit is not None}.values():
            commit()
        if route == "chat.completions" and body_copy.get("stream") is True:
            options = body_copy.get("stream_options") if isinstance(body_copy.get("stream_options"), dict) else {}
            body_copy["stream_options"] = {**options, "include_usage": True}
        try:
            body_bytes = canonical_bytes(body_copy)
        except (TypeError, ValueError) as error:
            raise InvalidRequestBody(f"request body cannot be serialised as JSON: {error}") from error
        return TokenisedRequest(body_copy, body_bytes, session.map, dict(session.detectors_fired), session.name_model_skipped)


@dataclass(frozen=True)
class TokenisedRequest:
    body: Any
    #: The exact bytes to send: UTF-8 of the RFC 8785 (JCS) form of `body`.
    body_bytes: bytes
    #: Alias -> original, for detokenising the response. It stays on the device.
    map: dict[str, str]
    detectors_fired: dict[str, int]
    name_model_skipped: bool


@dataclass(frozen=True)
class _Slot:
    """A place in the body that holds user text: read it, then write its tokenised form back."""

    text: str
    write: Callable[[str], None]
    #: Run once after every slot is written (slots may share it): puts what the writes changed into the body.
    commit: Optional[Callable[[], None]] = None


def _key_slot(holder: Any, key: Any) -> _Slot:
    def write(tokenised: str) -> None:
        holder[key] = tokenised

    return _Slot(holder[key], write)


def _leaf_slots(value: Any) -> list[_Slot]:
    """Every string inside a JSON value (object values and array items at any depth; keys are names, not user text)."""
    if isinstance(value, list):
        return [s for i, item in enumerate(value) for s in ([_key_slot(value, i)] if isinstance(item, str) else _leaf_slots(item))]
    if isinstance(value, dict):
        return [s for key in list(value) for s in ([_key_slot(value, key)] if isinstance(value[key], str) else _leaf_slots(value[key]))]
    return []


def _json_text_slots(holder: dict, key: str) -> list[_Slot]:
    """A tool call's `arguments`, a JSON text: the strings inside it, written back as JSON once one of them changed (an
    unchanged one keeps its bytes). Text that is not JSON is tokenised as it is. These are values the client restored
    in the model's answer, so an app sending the conversation back would otherwise send them upstream in the clear."""
    text = holder.get(key)
    if not isinstance(text, str):
        return []
    try:
        parsed = json.loads(text)
    except ValueError:
        return [_key_slot(holder, key)]
    if isinstance(parsed, str):
        def write_string(tokenised: str, original: str = parsed) -> None:
            if tokenised != original:
                holder[key] = json.dumps(tokenised, ensure_ascii=False)

        return [_Slot(parsed, write_string)]

    # Serialised once for the whole arguments text, after its last value was written, not once per replaced value.
    changed = False

    def commit() -> None:
        if changed:
            holder[key] = json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))

    def rewriting(leaf: _Slot) -> _Slot:
        def write(tokenised: str) -> None:
            nonlocal changed
            if tokenised == leaf.text:
                return
            leaf.write(tokenised)
            changed = True

        return _Slot(leaf.text, write, commit)

    return [rewriting(leaf) for leaf in _leaf_slots(parsed)]


def _content_slots(holder: dict, key: str) -> list[_Slot]:
    content = holder.get(key)
    if isinstance(content, str):
        return [_key_slot(holder, key)]
    if not isinstance(content, list):
        return []
    slots: list[_Slot] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            slots.append(_key_slot(part, "text"))
        # Anthropic tool results carry their own content (a string or text blocks) that the model reads.
        if part.get("type") == "tool_result":
            slots.extend(_content_slots(part, "content"))
        # An Anthropic assistant turn's tool call: its input holds the arguments the client restored.
        if part.get("type") == "tool_use":
            slots.extend(_leaf_slots(part.get("input")))
    return slots


def _message_slots(message: dict) -> list[_Slot]:
    """One message's user text: its content, then (OpenAI assistant turns) its tool calls' arguments."""
    slots = _content_slots(message, "content")
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                slots.extend(_json_text_slots(call["function"], "arguments"))
    # The deprecated single function call of older OpenAI clients.
    if isinstance(message.get("function_call"), dict):
        slots.extend(_json_text_slots(message["function_call"], "arguments"))
    return slots


def _messages_slots(body: dict) -> list[_Slot]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise InvalidRequestBody("messages must be an array")
    return [slot for m in messages if isinstance(m, dict) for slot in _message_slots(m)]


def _slots_for(route: str, body: dict) -> list[_Slot]:
    if route == "chat.completions":
        return _messages_slots(body)
    if route == "messages":
        return _content_slots(body, "system") + _messages_slots(body)
    if route == "embeddings":
        value = body.get("input")
        if isinstance(value, str):
            return [_key_slot(body, "input")]
        if isinstance(value, list):
            return [_key_slot(value, i) for i, item in enumerate(value) if isinstance(item, str)]
        return []
    raise InvalidRequestBody(f"unknown route {route}")
