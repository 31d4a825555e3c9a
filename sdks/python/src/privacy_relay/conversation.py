"""A multi-turn Responses API conversation whose history and aliases stay on this device (`client.conversations`),
as the TypeScript SDK's (sdks/typescript/src/conversation.ts).

The provider cannot hold the earlier turns for us (`previous_response_id` / `conversation`): it would answer from
aliases the next request does not know, so the egress policy refuses both (docs/proxy.md). Instead the conversation
keeps every turn's input and the model's output items here, as originals, and sends them again on each turn. They
are tokenised under one alias secret held for the conversation's life: aliases are numbered by first appearance and
the earlier turns come first, so a value keeps the alias it had on its first turn, the prefix the provider sees is
the same bytes turn after turn (its prompt cache still works), and an answer that names an earlier turn's alias is
restored like any other."""

from __future__ import annotations

import secrets
import threading
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Optional

from ._common import body_of
from .errors import ConflictError, InvalidRequestError

if TYPE_CHECKING:
    from .async_client import AsyncRelayClient
    from .client import RelayClient

#: What the provider must not be asked to remember: the conversation carries its history itself.
SERVER_STATE_FIELDS = ("previous_response_id", "conversation")


def _refused(message: str, path: str) -> InvalidRequestError:
    return InvalidRequestError(message, code="invalid_request", body={"code": "invalid_request", "message": message, "details": {"path": path}})


def _input_items(input_: Any) -> list:
    if isinstance(input_, str):
        return [{"role": "user", "content": input_}]
    if isinstance(input_, list):
        return list(input_)
    raise _refused("conversation.responses.create needs `input`: a string or a list of input items. Nothing was sent.", "input")


class _History:
    """What both kinds of conversation keep: the items, the aliases, the alias secret and whether a turn runs."""

    def __init__(self) -> None:
        # Never leaves the device: the per-call alias secret of every turn (see the module's docstring).
        self._alias_secret = secrets.token_bytes(32)
        self._items: list = []
        self._aliases: dict[str, str] = {}
        self._lock = threading.Lock()
        self._turn_running = False

    @property
    def items(self) -> list:
        """Every turn so far, as originals: each turn's input items, then the model's output items."""
        return self._items

    @property
    def aliases(self) -> dict[str, str]:
        """Alias -> original over every turn; they stay on this device."""
        return self._aliases

    def _begin(self, extra: dict, input_: Any) -> list:
        for field in SERVER_STATE_FIELDS:
            if extra.get(field) is not None:
                raise _refused(
                    f'A conversation keeps its history on this device; drop "{field}" (the provider would answer from aliases this device cannot restore). Nothing was sent.',
                    field,
                )
        turn = _input_items(input_)
        with self._lock:  # one turn at a time: the next turn's history is this one's answer
            if self._turn_running:
                raise ConflictError(
                    "This conversation's previous turn has not finished (a streamed turn finishes when its stream has been read to the end). Nothing was sent.",
                    code="conversation_busy",
                )
            self._turn_running = True
        return turn

    def _body(self, model: Any, turn: list, stream: bool, extra: dict) -> dict:
        return body_of(model, None, stream, extra, [*self._items, *turn])

    def _finish(self, turn: list, output: Any, aliases: dict) -> None:
        """A turn joins the history only once its answer is whole; a refused, failed or cut turn leaves it as it was."""
        self._turn_running = False
        if not isinstance(output, list):
            return
        self._items.extend([*turn, *output])
        self._aliases.update(aliases)

    def _release(self) -> None:
        self._turn_running = False


class _Watched:
    """The turn's stream, read through: `response.completed`'s output (already restored) becomes history when the
    stream has been read to the end; closing it earlier, or a cut, leaves the history as it was."""

    def __init__(self, stream: Any, conversation: _History, turn: list) -> None:
        self._stream = stream
        self._conversation = conversation
        self._turn = turn
        self._output: Any = None
        self._open = True

    def _see(self, event: dict) -> None:
        if event.get("type") == "response.completed" and isinstance(event.get("response"), dict):
            self._output = event["response"].get("output")

    def _end(self, whole: bool) -> None:
        if not self._open:
            return
        self._open = False
        if whole:
            self._conversation._finish(self._turn, self._output, self._stream._prepared.map)
        else:
            self._conversation._release()

    def __getattr__(self, name: str) -> Any:
        # request_id, tokenised_request, receipt, receipt_verified, receipt_verification: the stream's own.
        return getattr(self._stream, name)


class ConversationStream(_Watched):
    """A streamed turn of a Conversation: RelayStream's events and attributes."""

    def __iter__(self) -> Iterator[dict]:
        whole = False
        try:
            for event in self._stream:
                self._see(event)
                yield event
            whole = True
        finally:
            self._end(whole)

    def close(self) -> None:
        self._stream.close()
        self._end(False)

    def __enter__(self) -> "ConversationStream":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class AsyncConversationStream(_Watched):
    """A streamed turn of an AsyncConversation: AsyncRelayStream's events and attributes."""

    async def __aiter__(self) -> AsyncIterator[dict]:
        whole = False
        try:
            async for event in self._stream:
                self._see(event)
                yield event
            whole = True
        finally:
            self._end(whole)

    async def aclose(self) -> None:
        await self._stream.aclose()
        self._end(False)

    async def __aenter__(self) -> "AsyncConversationStream":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.aclose()


class _ConversationResponses:
    def __init__(self, conversation: "Conversation") -> None:
        self._conversation = conversation

    def create(self, *, model: Any = None, input: Any = None, stream: bool = False, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> Any:  # noqa: A002 - OpenAI's name
        """One turn (JSON, or `stream=True` a ConversationStream): the earlier turns are sent before this `input`."""
        c = self._conversation
        turn = c._begin(extra, input)
        try:
            answer = c._client._relay("responses", c._body(model, turn, stream, extra), idempotency_key, traceparent, timeout, alias_secret=c._alias_secret)
        except BaseException:
            c._release()
            raise
        if stream:
            return ConversationStream(answer, c, turn)
        c._finish(turn, answer.get("output"), answer._aliases)
        return answer


class _AsyncConversationResponses:
    def __init__(self, conversation: "AsyncConversation") -> None:
        self._conversation = conversation

    async def create(self, *, model: Any = None, input: Any = None, stream: bool = False, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> Any:  # noqa: A002 - OpenAI's name
        """One turn (JSON, or `stream=True` an AsyncConversationStream): the earlier turns are sent before this `input`."""
        c = self._conversation
        turn = c._begin(extra, input)
        try:
            answer = await c._client._relay("responses", c._body(model, turn, stream, extra), idempotency_key, traceparent, timeout, alias_secret=c._alias_secret)
        except BaseException:
            c._release()
            raise
        if stream:
            return AsyncConversationStream(answer, c, turn)
        c._finish(turn, answer.get("output"), answer._aliases)
        return answer


class Conversation(_History):
    """`client.conversations.create()`: `conversation.responses.create(model=..., input=...)` per turn; `items` and
    `aliases` kept on this device. Not OpenAI's server-side Conversations API: nothing is stored at the gateway or
    the provider."""

    def __init__(self, client: "RelayClient") -> None:
        super().__init__()
        self._client = client
        self.responses = _ConversationResponses(self)


class AsyncConversation(_History):
    """Conversation for AsyncRelayClient: `await conversation.responses.create(...)`."""

    def __init__(self, client: "AsyncRelayClient") -> None:
        super().__init__()
        self._client = client
        self.responses = _AsyncConversationResponses(self)


class Conversations:
    """`client.conversations`: `create()` starts a conversation kept on this device."""

    def __init__(self, client: "RelayClient") -> None:
        self._client = client

    def create(self) -> Conversation:
        return Conversation(self._client)


class AsyncConversations:
    def __init__(self, client: "AsyncRelayClient") -> None:
        self._client = client

    def create(self) -> AsyncConversation:
        return AsyncConversation(self._client)
