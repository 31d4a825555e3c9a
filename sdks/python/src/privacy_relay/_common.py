"""What the sync and async clients share: settings, the engine, headers, answers and their metadata."""

from __future__ import annotations

import json
import re
import threading
import uuid
from typing import Any, Callable, Mapping, Optional, Sequence

from .attestation import EngineIdentity
from .engine import ENGINE, Engine, NameModelSetting, PreparedCall, name_model_of
from .tokeniser.redact_image import ImageRedactor
from .device import load_or_create_alias_secret, load_or_create_device_key, read_gateway_key_file
from .errors import ConfigurationError
from .gateway import parse_gateway_url
from .transport import new_traceparent
from .verify.receipt import VerificationResult
from .wire.base64 import decode_json_header
from .wire.ecdsa import SigningKey

ROUTE_PATHS = {
    "chat.completions": "/api/v1/chat/completions",
    "messages": "/api/v1/messages",
    "messages.count_tokens": "/api/v1/messages/count_tokens",
    "embeddings": "/api/v1/embeddings",
    "responses": "/api/v1/responses",
}
_GATEWAY_KEY = re.compile(r"svc_[a-z2-7]+")


class RelayAnswer(dict):
    """A provider-shaped answer (a dict that serialises to exactly the provider's JSON) with the relay's metadata
    as attributes: `request_id`, `receipt` (decoded v2), `receipt_verified`, `receipt_verification`,
    `countersignature` (decoded X-Service-Receipt-V3) and `tokenised_request` (exactly what left this device)."""

    request_id: Optional[str]
    receipt: Optional[dict]
    receipt_verified: Optional[bool]
    receipt_verification: Optional[VerificationResult]
    countersignature: Optional[dict]
    tokenised_request: Any
    _aliases: dict


def decode_header(value: Optional[str]) -> Optional[dict]:
    if value is None:
        return None
    try:
        decoded = decode_json_header(value)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def chunk_json(events: list) -> list:
    return [e.json for e in events if e.event != "receipt-v2" and e.data != "[DONE]" and e.json is not None]


class ClientCore:
    def __init__(
        self,
        gateway_url: str,
        *,
        api_key: Optional[str],
        api_key_file: Optional[str],
        portal_token: Optional[str],
        name_model: NameModelSetting,
        device_key: Optional[SigningKey],
        stable_embedding_aliases: bool,
        engine: Optional[EngineIdentity],
        media_policy: str = "refuse",
        passthrough_paths: Sequence[str] = (),
        redact_image: Optional[ImageRedactor] = None,
    ) -> None:
        self.gateway_url = parse_gateway_url(gateway_url)
        if api_key is not None and api_key_file is not None:
            raise ConfigurationError("Give api_key or api_key_file, not both.", code="configuration_error")
        key = api_key if api_key is not None else (read_gateway_key_file(api_key_file) if api_key_file is not None else None)
        if key is not None and not _GATEWAY_KEY.fullmatch(key):
            raise ConfigurationError("api_key is not a gateway key (svc_...).", code="configuration_error")
        self._api_key = key
        self._portal_token = portal_token
        lock = threading.Lock()
        cached: dict[str, Any] = {}

        def once(name: str, make: Callable[[], Any]) -> Callable[[], Any]:
            def get() -> Any:
                with lock:
                    if name not in cached:
                        cached[name] = make()
                    return cached[name]

            return get

        alias_secret = once("alias_secret", load_or_create_alias_secret)
        self.engine = Engine(
            names=name_model_of(name_model),
            device_key=(lambda: device_key) if device_key is not None else once("device_key", load_or_create_device_key),
            stable_alias_secret=alias_secret if stable_embedding_aliases else None,
            identity=engine or ENGINE,
            # End-user identifiers get device-stable USER_ aliases under the device's alias secret (read or made on
            # the first body that holds one), whatever stable_embedding_aliases says.
            identifier_secret=alias_secret,
            media_policy=media_policy,
            passthrough_paths=passthrough_paths,
            redact_image=redact_image,
        )

    def api_key(self) -> str:
        if self._api_key is None:
            raise ConfigurationError("This call needs a gateway key: give api_key or api_key_file.", code="configuration_error")
        return self._api_key

    def headers(self, extra: Mapping[str, str], traceparent: Optional[str]) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key()}", "accept": "application/json", "traceparent": traceparent or new_traceparent(), **extra}

    def relay_headers(self, prepared: PreparedCall, stream: bool, idempotency_key: Optional[str], traceparent: Optional[str]) -> dict[str, str]:
        return self.headers(
            {
                "content-type": "application/json",
                "accept": "text/event-stream" if stream else "application/json",
                "idempotency-key": idempotency_key or str(uuid.uuid4()),
                **prepared.headers,
            },
            traceparent,
        )

    def rest_headers(self, method: str, auth: str, has_body: bool, idempotency_key: Optional[str], traceparent: Optional[str]) -> dict[str, str]:
        headers = {"accept": "application/json", "traceparent": traceparent or new_traceparent()}
        if auth == "key":
            headers["authorization"] = f"Bearer {self.api_key()}"
        elif auth == "portal":
            if self._portal_token is None:
                raise ConfigurationError("This call needs a portal token: give portal_token (spt_...) to the client.", code="configuration_error")
            headers["authorization"] = f"Bearer {self._portal_token}"
        if has_body:
            headers["content-type"] = "application/json"
        if method != "GET":
            headers["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        return headers


def body_of(model: Any, messages: Any, stream: bool, extra: Mapping[str, Any], input_: Any = None) -> dict:
    body: dict[str, Any] = {}
    if model is not None:
        body["model"] = model
    if messages is not None:
        body["messages"] = messages
    if input_ is not None:
        body["input"] = input_
    if stream:
        body["stream"] = True
    body.update(extra)
    return body


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
