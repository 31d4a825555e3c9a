"""A drop-in for the official `openai` Python package: an httpx transport that makes its requests private.

    client = RelayClient("https://relay.example", api_key_file="~/.relay-key")
    openai = OpenAI(base_url="https://relay.example/v1", api_key="unused",
                    http_client=httpx.Client(transport=client.http_transport()))

Chat completions, messages (and their token counting), embeddings, the Responses API (`openai.responses.create`)
and the model list are relayed: bodies are tokenised and attested here and
sent to the RelayClient's gateway with its key (the official client's own key and base URL are not used); answers,
streams included, come back with the originals restored. Errors are answered in the provider's error shape; a body
the egress policy refuses is answered here (400 unsupported_field or nesting_too_deep, 415 unsupported_content, with
`details.path`) and nothing is sent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Mapping, Optional, Sequence

import httpx

from ._common import ROUTE_PATHS
from ._concurrency import in_caller_thread, in_worker_thread
from .engine import check_media_policy, check_passthrough_paths
from .errors import RelayError, error_from_answer
from .sse import SseDetokeniser, detokenise_response_text

if TYPE_CHECKING:
    from .async_client import AsyncRelayClient
    from .client import RelayClient

#: Request headers of an official SDK that mean something to the gateway; the rest (its own auth) stay here.
FORWARDED_HEADERS = ("idempotency-key", "traceparent", "tracestate", "anthropic-version", "anthropic-beta")
_DROPPED = ("content-length", "content-encoding", "transfer-encoding")


#: The relayed routes, by the end of the official client's path (any base URL in front).
_ROUTES = (
    ("/chat/completions", "chat.completions"),
    ("/messages/count_tokens", "messages.count_tokens"),
    ("/messages", "messages"),
    ("/embeddings", "embeddings"),
    ("/responses", "responses"),
    ("/models", "models"),
)
_ANTHROPIC_ROUTES = ("messages", "messages.count_tokens")
_STREAMING_ROUTES = ("chat.completions", "messages", "responses")


def _route_of(path: str) -> Optional[str]:
    for suffix, route in _ROUTES:
        if path.endswith(suffix):
            return route
    return None


def _local_status(error: RelayError) -> int:
    return {"name_model_unavailable": 503, "connection_error": 502, "gateway_identity_failed": 502, "timeout": 504}.get(error.code, 400)


def _error_response(
    anthropic: bool, status: int, code: str, message: str, headers: Optional[httpx.Headers] = None, details: Optional[Mapping[str, Any]] = None
) -> httpx.Response:
    error: dict[str, Any] = {"type": code, "message": message} if anthropic else {"code": code, "message": message, "type": code}
    if details is not None:
        error["details"] = dict(details)
    body = {"type": "error", "error": error} if anthropic else {"error": error}
    out = httpx.Headers({k: v for k, v in (headers or {}).items() if k.lower() not in _DROPPED})
    out["content-type"] = "application/json"
    return httpx.Response(status, headers=out, content=json.dumps(body).encode("utf-8"))


def _settings(media_policy: Optional[str], passthrough_paths: Optional[Sequence[str]]) -> dict[str, Any]:
    """The engine settings a transport overrides, checked now (a bad one is a ConfigurationError at setup)."""
    out: dict[str, Any] = {}
    if media_policy is not None:
        out["media_policy"] = check_media_policy(media_policy)
    if passthrough_paths is not None:
        out["passthrough_paths"] = check_passthrough_paths(passthrough_paths)
    return out


def _too_deep(anthropic: bool) -> httpx.Response:
    """A body nested past what the JSON parser can read (far past the policy's 64 levels)."""
    return _error_response(
        anthropic, 400, "nesting_too_deep", "The request nests deeper than 64 levels; nothing was sent.", details={"path": ""}
    )


# unasync: generated
class _DetokenisedSse(httpx.SyncByteStream):
    def __init__(self, upstream: httpx.Response, route: str, aliases: dict[str, str]) -> None:
        self._upstream = upstream
        self._sse = SseDetokeniser(route, aliases)

    def __iter__(self) -> Iterator[bytes]:
        try:
            for text in self._upstream.iter_text():
                out = self._sse.push(text)
                if out:
                    yield "".join(e.serialise() for e in out).encode("utf-8")
            tail = self._sse.end()
            if tail:
                yield "".join(e.serialise() for e in tail).encode("utf-8")
        finally:
            self._upstream.close()

    def close(self) -> None:
        self._upstream.close()


class RelayTransport(httpx.BaseTransport):
    """The relay transport for `openai.OpenAI(http_client=httpx.Client(transport=...))` (http_transport())."""

    def __init__(self, client: "RelayClient", *, media_policy: Optional[str] = None, passthrough_paths: Optional[Sequence[str]] = None) -> None:
        self._client = client
        self._settings = _settings(media_policy, passthrough_paths)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        c = self._client
        route = _route_of(request.url.path)
        forwarded = {name: request.headers[name] for name in FORWARDED_HEADERS if name in request.headers}
        anthropic = route in _ANTHROPIC_ROUTES
        try:
            if route == "models":
                c._ready()
                upstream = c._http.get(f"{c.gateway_url}/api/v1/models", headers=c._core.headers(forwarded, forwarded.get("traceparent")), follow_redirects=False)
                return httpx.Response(upstream.status_code, headers={k: v for k, v in upstream.headers.items() if k.lower() not in _DROPPED}, content=upstream.content)
            if route is None or request.method != "POST":
                return _error_response(
                    anthropic, 404, "not_found", f"The relay transport relays chat completions, messages, token counts, embeddings, responses and the model list; not {request.method} {request.url.path}."
                )
            try:
                body = json.loads(request.read())
            except ValueError:
                return _error_response(anthropic, 400, "invalid_request", "The request body is not JSON.")
            except RecursionError:
                return _too_deep(anthropic)
            prepared = in_caller_thread(c._core.engine.prepare, route, body, forwarded.get("idempotency-key"), **self._settings)
            c._ready()
            stream = route in _STREAMING_ROUTES and isinstance(body, dict) and body.get("stream") is True
            headers = c._core.headers(
                {"content-type": "application/json", "accept": "text/event-stream" if stream else "application/json", **forwarded, **prepared.headers},
                forwarded.get("traceparent"),
            )
            upstream_request = c._http.build_request("POST", f"{c.gateway_url}{ROUTE_PATHS[route]}", headers=headers, content=prepared.body_bytes)
            upstream = c._http.send(upstream_request, stream=True, follow_redirects=False)
            answer_headers = httpx.Headers({k: v for k, v in upstream.headers.items() if k.lower() not in _DROPPED})
            if upstream.status_code >= 400:
                text = (upstream.read()).decode("utf-8", errors="replace")
                upstream.close()
                error = error_from_answer(upstream.status_code, upstream.headers, text)
                return _error_response(anthropic, upstream.status_code, error.code, error.message, answer_headers, error.details)
            if not stream:
                text = (upstream.read()).decode("utf-8")
                upstream.close()
                return httpx.Response(upstream.status_code, headers=answer_headers, content=detokenise_response_text(text, prepared.map).encode("utf-8"))
            return httpx.Response(upstream.status_code, headers=answer_headers, stream=_DetokenisedSse(upstream, route, prepared.map))
        except RelayError as error:
            return _error_response(anthropic, error.status or _local_status(error), error.code, error.message, details=error.details)
        except httpx.HTTPError as error:
            return _error_response(anthropic, 502, "connection_error", f"The gateway could not be reached: {error}")

    def close(self) -> None:
        pass
# unasync: end generated


# unasync: source
class _AsyncDetokenisedSse(httpx.AsyncByteStream):
    def __init__(self, upstream: httpx.Response, route: str, aliases: dict[str, str]) -> None:
        self._upstream = upstream
        self._sse = SseDetokeniser(route, aliases)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for text in self._upstream.aiter_text():
                out = self._sse.push(text)
                if out:
                    yield "".join(e.serialise() for e in out).encode("utf-8")
            tail = self._sse.end()
            if tail:
                yield "".join(e.serialise() for e in tail).encode("utf-8")
        finally:
            await self._upstream.aclose()

    async def aclose(self) -> None:
        await self._upstream.aclose()


class AsyncRelayTransport(httpx.AsyncBaseTransport):
    """The relay transport for `openai.AsyncOpenAI(http_client=httpx.AsyncClient(transport=...))` (http_transport())."""

    def __init__(self, client: "AsyncRelayClient", *, media_policy: Optional[str] = None, passthrough_paths: Optional[Sequence[str]] = None) -> None:
        self._client = client
        self._settings = _settings(media_policy, passthrough_paths)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        c = self._client
        route = _route_of(request.url.path)
        forwarded = {name: request.headers[name] for name in FORWARDED_HEADERS if name in request.headers}
        anthropic = route in _ANTHROPIC_ROUTES
        try:
            if route == "models":
                await c._ready()
                upstream = await c._http.get(f"{c.gateway_url}/api/v1/models", headers=c._core.headers(forwarded, forwarded.get("traceparent")), follow_redirects=False)
                return httpx.Response(upstream.status_code, headers={k: v for k, v in upstream.headers.items() if k.lower() not in _DROPPED}, content=upstream.content)
            if route is None or request.method != "POST":
                return _error_response(
                    anthropic, 404, "not_found", f"The relay transport relays chat completions, messages, token counts, embeddings, responses and the model list; not {request.method} {request.url.path}."
                )
            try:
                body = json.loads(await request.aread())
            except ValueError:
                return _error_response(anthropic, 400, "invalid_request", "The request body is not JSON.")
            except RecursionError:
                return _too_deep(anthropic)
            prepared = await in_worker_thread(c._core.engine.prepare, route, body, forwarded.get("idempotency-key"), **self._settings)
            await c._ready()
            stream = route in _STREAMING_ROUTES and isinstance(body, dict) and body.get("stream") is True
            headers = c._core.headers(
                {"content-type": "application/json", "accept": "text/event-stream" if stream else "application/json", **forwarded, **prepared.headers},
                forwarded.get("traceparent"),
            )
            upstream_request = c._http.build_request("POST", f"{c.gateway_url}{ROUTE_PATHS[route]}", headers=headers, content=prepared.body_bytes)
            upstream = await c._http.send(upstream_request, stream=True, follow_redirects=False)
            answer_headers = httpx.Headers({k: v for k, v in upstream.headers.items() if k.lower() not in _DROPPED})
            if upstream.status_code >= 400:
                text = (await upstream.aread()).decode("utf-8", errors="replace")
                await upstream.aclose()
                error = error_from_answer(upstream.status_code, upstream.headers, text)
                return _error_response(anthropic, upstream.status_code, error.code, error.message, answer_headers, error.details)
            if not stream:
                text = (await upstream.aread()).decode("utf-8")
                await upstream.aclose()
                return httpx.Response(upstream.status_code, headers=answer_headers, content=detokenise_response_text(text, prepared.map).encode("utf-8"))
            return httpx.Response(upstream.status_code, headers=answer_headers, stream=_AsyncDetokenisedSse(upstream, route, prepared.map))
        except RelayError as error:
            return _error_response(anthropic, error.status or _local_status(error), error.code, error.message, details=error.details)
        except httpx.HTTPError as error:
            return _error_response(anthropic, 502, "connection_error", f"The gateway could not be reached: {error}")

    async def aclose(self) -> None:
        pass
# unasync: end source
