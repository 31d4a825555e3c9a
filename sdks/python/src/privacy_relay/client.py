# Generated from async_client.py by sdks/python/tools/unasync.py: edit that file and regenerate, never this one.
"""RelayClient: every relay call is tokenised and attested on this device, sent to the gateway, and answered
with the originals restored here (streams too). Gateway-locked: it talks only to an https (or loopback) URL that
answers the gateway identity probe, and sends no key anywhere before that probe passed.

Generated from async_client.py (AsyncRelayClient) by sdks/python/tools/unasync.py, so the sync and async
clients cannot drift; the test suite fails when this file is not what the generator writes."""

from __future__ import annotations

import threading
import json
from typing import Any, Iterator, Optional, Sequence

import httpx

from ._common import ROUTE_PATHS, ClientCore, RelayAnswer, body_of, chunk_json, decode_header, dumps
from ._concurrency import in_caller_thread
from .attestation import EngineIdentity
from .conversation import Conversations
from .engine import NameModelSetting, PreparedCall
from .errors import RelayError, StreamError
from .gateway import GATEWAY_IDENTITY_PROBE_PATH, check_identity_answer, unreachable
from .rest import RestApi
from .sse import SseDetokeniser, detokenise_response_text
from .tokeniser.redact_image import ImageRedactor
from .transport import Transport, RetryPolicy, json_of
from .verify.envelope_input import envelope_or_raw
from .verify.jwks import JwksKeys
from .verify.receipt import VerificationResult, verify_receipt
from .wire.ecdsa import SigningKey


class RelayStream:
    """A streamed answer: OpenAI chunks (chat), Anthropic events (messages) or Responses events with originals
    restored, then `receipt`, `receipt_verified` and `receipt_verification` once it has ended. Close it (or use
    `with`) to stop."""

    def __init__(self, client: "RelayClient", route: str, prepared: PreparedCall, response: httpx.Response) -> None:
        self._client = client
        self._route = route
        self._prepared = prepared
        self._response = response
        self.request_id: Optional[str] = response.headers.get("x-request-id")
        self.tokenised_request = prepared.tokenised_body
        self.receipt: Optional[dict] = None
        self.receipt_verified: Optional[bool] = None
        self.receipt_verification: Optional[VerificationResult] = None

    def __iter__(self) -> Iterator[dict]:
        sse = SseDetokeniser(self._route, self._prepared.map)
        try:
            for text in self._response.iter_text():
                for item in chunk_json(sse.push(text)):
                    yield item
            for item in chunk_json(sse.end()):
                yield item
        except RelayError:
            raise
        except httpx.HTTPError as error:
            raise StreamError(f"The stream broke: {error}", status=self._response.status_code, code="stream_error", request_id=self.request_id) from error
        finally:
            self._response.close()
        if not sse.completed:
            raise StreamError(
                "The stream ended before its end marker (the upstream cut it); the answer is incomplete.",
                status=self._response.status_code,
                code="stream_error",
                request_id=self.request_id,
            )
        self.receipt = sse.receipt if isinstance(sse.receipt, dict) else None
        self.receipt_verified, self.receipt_verification = self._client._verify(self.receipt)

    def close(self) -> None:
        self._response.close()

    def __enter__(self) -> "RelayStream":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class _Completions:
    def __init__(self, client: "RelayClient") -> None:
        self._client = client

    def create(self, *, model: Any = None, messages: Any = None, stream: bool = False, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> Any:
        """An OpenAI chat completion through the relay; `stream=True` answers a stream of chunks (RelayStream)."""
        return self._client._relay("chat.completions", body_of(model, messages, stream, extra), idempotency_key, traceparent, timeout)


class _Chat:
    def __init__(self, client: "RelayClient") -> None:
        self.completions = _Completions(client)


class _Messages:
    def __init__(self, client: "RelayClient") -> None:
        self._client = client

    def create(self, *, model: Any = None, messages: Any = None, stream: bool = False, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> Any:
        """An Anthropic message through the relay; `stream=True` answers a stream of events (RelayStream)."""
        return self._client._relay("messages", body_of(model, messages, stream, extra), idempotency_key, traceparent, timeout)

    def count_tokens(self, *, model: Any = None, messages: Any = None, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> RelayAnswer:
        """Anthropic token counting through the relay (POST /api/v1/messages/count_tokens): `input_tokens` of the
        tokenised request, the text the provider would see. Not billed, no receipt (`receipt` is None)."""
        return self._client._relay("messages.count_tokens", body_of(model, messages, False, extra), idempotency_key, traceparent, timeout)


class _Embeddings:
    def __init__(self, client: "RelayClient") -> None:
        self._client = client

    def create(self, *, model: Any = None, input: Any = None, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> RelayAnswer:  # noqa: A002 - OpenAI's name
        """Embeddings; stable (keyed) aliases by default so equal inputs embed equally."""
        return self._client._relay("embeddings", body_of(model, None, False, extra, input), idempotency_key, traceparent, timeout)


class _Responses:
    def __init__(self, client: "RelayClient") -> None:
        self._client = client

    def create(self, *, model: Any = None, input: Any = None, stream: bool = False, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None, **extra: Any) -> Any:  # noqa: A002 - OpenAI's name
        """OpenAI's Responses API through the relay (POST /api/v1/responses). `stream=True` answers a stream
        (RelayStream) of Responses event dicts (`response.output_text.delta`, ..., `response.completed`) with the originals restored
        as they stream; `receipt` once it has ended."""
        return self._client._relay("responses", body_of(model, None, stream, extra, input), idempotency_key, traceparent, timeout)


class _Models:
    def __init__(self, client: "RelayClient") -> None:
        self._client = client

    def list(self, *, traceparent: Optional[str] = None, timeout: Optional[float] = None) -> Any:
        c = self._client
        c._ready()
        response = c._transport.send("GET", f"{c.gateway_url}/api/v1/models", headers=c._core.headers({}, traceparent), timeout=timeout)
        return response.json()


class RelayClient:
    """The client. `gateway_url`: https, or http to a loopback address. `api_key` or `api_key_file` (a 0600 file;
    prefer it on servers). `name_model`: "builtin" (default), "off", or the URL of a name model service; fail-closed:
    if it fails, nothing is sent. `retries` after the first attempt on 429, 5xx and network errors; `timeout` per
    attempt in seconds. `portal_token` for the portal REST routes.

    Every body is walked with the egress policy before anything is sent (fail-closed): a field or part type the
    policy refuses or does not name raises UnsupportedFieldError (400), media raises UnsupportedContentError (415),
    nesting past 64 levels NestingTooDeepError (400); nothing is sent. Opt-ins, declared in the attestation:
    `media_policy` "refuse" (default) | "pass" (media sent as it is; a remote URL naming somebody is still refused) |
    "redact" (images painted over by `redact_image`, a callable (bytes, media type) -> (bytes, media type); the SDK
    ships none); `passthrough_paths`: JSON pointers (`*` for one segment) of fields to send untokenised. End-user
    identifiers (`user`, `metadata` values, `messages[].name`, ...) leave as device-stable `USER_` aliases under the
    device alias secret.

    RelayClient and AsyncRelayClient have the same settings and surface; AsyncRelayClient's calls are coroutines and
    run the engine's work (detection, aliases, the attestation signature) in a worker thread."""

    def __init__(
        self,
        gateway_url: str,
        *,
        api_key: Optional[str] = None,
        api_key_file: Optional[str] = None,
        name_model: NameModelSetting = "builtin",
        retries: int = 2,
        timeout: float = 60.0,
        portal_token: Optional[str] = None,
        device_key: Optional[SigningKey] = None,
        stable_embedding_aliases: bool = True,
        engine: Optional[EngineIdentity] = None,
        media_policy: str = "refuse",
        passthrough_paths: Sequence[str] = (),
        redact_image: Optional[ImageRedactor] = None,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        self._core = ClientCore(
            gateway_url,
            api_key=api_key,
            api_key_file=api_key_file,
            portal_token=portal_token,
            name_model=name_model,
            device_key=device_key,
            stable_embedding_aliases=stable_embedding_aliases,
            engine=engine,
            media_policy=media_policy,
            passthrough_paths=passthrough_paths,
            redact_image=redact_image,
        )
        self.gateway_url = self._core.gateway_url
        self._http = http_client or httpx.Client(timeout=timeout)
        self._transport = Transport(self._http, RetryPolicy(retries=retries), timeout)
        self._identity_lock = threading.Lock()
        self._identity_ok = False
        self._jwks = JwksKeys(f"{self.gateway_url}{GATEWAY_IDENTITY_PROBE_PATH}")
        self._jwks_lock = threading.Lock()
        self.chat = _Chat(self)
        self.messages = _Messages(self)
        self.embeddings = _Embeddings(self)
        self.responses = _Responses(self)
        self.conversations = Conversations(self)
        self.models = _Models(self)
        self.rest = RestApi(self._rest_call, self._verify_value)

    # -- gateway identity and receipts ---------------------------------------------------------------------------

    def _fetch_jwks(self) -> tuple[int, Any]:
        response = self._http.get(self._jwks.url, headers={"accept": "application/json"}, follow_redirects=False)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None

    def _ready(self) -> None:
        """The gateway identity probe, once per client (again after a failure): nothing is sent before it passed.
        Its answer is the receipt keys: kept, so the first receipt needs no second fetch."""
        with self._identity_lock:
            if self._identity_ok:
                return
            try:
                status, body = self._fetch_jwks()
            except httpx.HTTPError as error:
                raise unreachable(self.gateway_url, error) from error
            self._jwks.take(200, check_identity_answer(self.gateway_url, status, body))
            self._identity_ok = True

    def _keys(self, kid: Optional[str]) -> Any:
        """The JWKS, fetched when absent or stale, and once more for a kid it lacks (a key rotation; JwksKeys)."""
        with self._jwks_lock:
            if self._jwks.wants_fetch(kid):
                try:
                    status, body = self._fetch_jwks()
                except httpx.HTTPError as error:
                    raise self._jwks.unreachable(error) from error
                self._jwks.take(status, body)
            return self._jwks.current

    def _verify_value(self, value: Any) -> VerificationResult:
        decoded = envelope_or_raw(value)
        kid = decoded.get("kid") if isinstance(decoded, dict) and isinstance(decoded.get("kid"), str) else None
        return verify_receipt(value, self._keys(kid))

    def _verify(self, receipt: Optional[dict]) -> tuple[Optional[bool], Optional[VerificationResult]]:
        if receipt is None:
            return None, None
        result = self._verify_value(receipt)
        return result.valid, result

    # -- calls -----------------------------------------------------------------------------------------------------

    def _relay(self, route: str, body: dict, idempotency_key: Optional[str], traceparent: Optional[str], timeout: Optional[float], *, alias_secret: Optional[bytes] = None) -> Any:
        prepared = in_caller_thread(self._core.engine.prepare, route, body, idempotency_key, alias_secret=alias_secret)
        stream = route != "embeddings" and body.get("stream") is True
        self._ready()
        response = self._transport.send(
            "POST",
            f"{self.gateway_url}{ROUTE_PATHS[route]}",
            headers=self._core.relay_headers(prepared, stream, idempotency_key, traceparent),
            content=prepared.body_bytes,
            stream=stream,
            timeout=timeout,
        )
        if stream:
            return RelayStream(self, route, prepared, response)
        answer = RelayAnswer(json.loads(detokenise_response_text(response.text, prepared.map)))
        answer.request_id = response.headers.get("x-request-id")
        answer.receipt = decode_header(response.headers.get("x-service-receipt-v2"))
        answer.receipt_verified, answer.receipt_verification = self._verify(answer.receipt)
        answer.countersignature = decode_header(response.headers.get("x-service-receipt-v3"))
        answer.tokenised_request = prepared.tokenised_body
        answer._aliases = prepared.map  # for a Conversation: stays on the device, not part of the JSON
        return answer

    def _rest_call(self, method: str, path: str, auth: str, body: Any = None, *, idempotency_key: Optional[str] = None, traceparent: Optional[str] = None, timeout: Optional[float] = None) -> Any:
        headers = self._core.rest_headers(method, auth, body is not None, idempotency_key, traceparent)
        if auth != "none":
            self._ready()  # a key or token goes only to a URL that answered the identity probe
        response = self._transport.send(method, f"{self.gateway_url}{path}", headers=headers, content=None if body is None else dumps(body), timeout=timeout)
        return json_of(response.text)

    def http_transport(self, *, media_policy: Optional[str] = None, passthrough_paths: Optional[Sequence[str]] = None) -> httpx.BaseTransport:
        """An httpx transport for the official `openai` package: `OpenAI(base_url=..., api_key="unused",
        http_client=httpx.Client(transport=client.http_transport()))`. Its requests are tokenised and attested
        here and sent to this client's gateway with this client's key; answers (streams included) come back with
        the originals restored. `media_policy` and `passthrough_paths` override the client's for this transport;
        a refused body is answered locally (400/415 in the provider's error shape, `details.path`), nothing sent."""
        from .httpx_transport import RelayTransport

        return RelayTransport(self, media_policy=media_policy, passthrough_paths=passthrough_paths)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "RelayClient":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()
