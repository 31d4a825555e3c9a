"""Webhook receivers: authenticate a delivery (v1 `X-Service-Signature` preferred, v0 `X-Service-Webhook-Signature`
when v1 is absent) and drop duplicates by event_id."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Mapping, Optional, Union

from ..wire.jcs import canonical_string

DEFAULT_TOLERANCE_SECONDS = 300
DEFAULT_DEDUPE_TTL_SECONDS = 24 * 60 * 60

_MESSAGES = {
    "missing_headers": "the delivery carries neither X-Service-Signature nor X-Service-Webhook-Signature",
    "malformed_header": "the signature header is not in its scheme's form (t=<unix>,v1=<hex> or sha256=<hex>)",
    "bad_signature": "the signature does not match the body under this secret (tampered body, or a wrong or rotated secret)",
    "stale_timestamp": "the signature is genuine but its timestamp is outside the tolerance: a stale or replayed delivery",
    "malformed_body": "the body is not UTF-8 JSON with an integer timestamp",
    "missing_secret": "no webhook secret was given",
}
_HEX_SHA256 = re.compile(r"[0-9a-f]{64}")
_TIMESTAMP = re.compile(r"[0-9]{1,15}")
_V0 = re.compile(r"sha256=([0-9a-fA-F]+)")

Headers = Union[Mapping[str, str], Any]


class WebhookVerificationError(Exception):
    """A delivery that must not be trusted. `code`: missing_headers, malformed_header, bad_signature,
    stale_timestamp, malformed_body or missing_secret."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _fail(code: str, scheme: str | None = None) -> WebhookVerificationError:
    return WebhookVerificationError(code, _MESSAGES[code] if scheme is None else f"{scheme}: {_MESSAGES[code]}")


def header_value(headers: Headers, name: str) -> Optional[str]:
    """One header's value, case-insensitively (a dict, httpx.Headers, a WSGI-style mapping); the first when repeated."""
    wanted = name.lower()
    items = headers.items() if hasattr(headers, "items") else headers
    for key, value in items:
        if str(key).lower() == wanted and value is not None:
            return value if isinstance(value, str) else (value[0] if value else None)
    return None


def _hmac_hex(secret: str, message: str) -> str:
    return hmac.new(secret.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()


def _within(timestamp: float, now: float, tolerance: float) -> bool:
    return abs(now - timestamp) <= tolerance


def _verify_v1(header: str, raw: str, secret: str, now: float, tolerance: float) -> str | None:
    timestamp: str | None = None
    candidates: list[str] = []
    for item in header.split(","):
        sep = item.find("=")
        if sep <= 0:
            return "malformed_header"
        name, value = item[:sep].strip(), item[sep + 1:].strip()
        if name == "t":
            # Exactly one decimal timestamp: two would let an attacker pair one with a replayed signature.
            if timestamp is not None or not _TIMESTAMP.fullmatch(value):
                return "malformed_header"
            timestamp = value
        elif name == "v1":
            candidates.append(value.lower())
    if timestamp is None or not candidates:
        return "malformed_header"
    expected = _hmac_hex(secret, f"{timestamp}.{raw}")
    matched = False
    for candidate in candidates:  # every candidate compared: timing does not reveal which one matched
        if _HEX_SHA256.fullmatch(candidate) and hmac.compare_digest(candidate, expected):
            matched = True
    if not matched:
        return "bad_signature"
    return None if _within(int(timestamp), now, tolerance) else "stale_timestamp"


def _verify_v0(header: str, raw: str, secret: str, now: float, tolerance: float) -> str | None:
    match = _V0.fullmatch(header.strip())
    if match is None:
        return "malformed_header"
    try:
        payload = json.loads(raw)
        canonical = canonical_string(payload)
    except (ValueError, TypeError):
        return "malformed_body"
    if not hmac.compare_digest(match.group(1).lower(), _hmac_hex(secret, canonical)):
        return "bad_signature"
    timestamp = payload.get("timestamp") if isinstance(payload, dict) else None
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)) or (isinstance(timestamp, float) and not timestamp.is_integer()) or abs(timestamp) > 2**53 - 1:
        return "malformed_body"
    return None if _within(timestamp, now, tolerance) else "stale_timestamp"


def verify_webhook(
    body: bytes | str,
    headers: Headers,
    secret: str,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    *,
    now_seconds: float | None = None,
) -> bool:
    """True when the delivery is authentic and fresh; otherwise raises WebhookVerificationError with a stable code.

    Pass the body exactly as received (bytes), before any JSON parsing. v1 is used whenever its header is present
    (a failing v1 is not retried as v0); v0 only for senders that send it alone, with the payload's own timestamp.
    """
    if not isinstance(secret, str) or secret == "":
        raise _fail("missing_secret")
    try:
        raw = body if isinstance(body, str) else bytes(body).decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        raise _fail("malformed_body") from None
    now = time.time() if now_seconds is None else now_seconds
    v1 = header_value(headers, "x-service-signature")
    v0 = header_value(headers, "x-service-webhook-signature")
    present = lambda v: v is not None and v.strip() != ""  # noqa: E731
    if not present(v1) and not present(v0):
        raise _fail("missing_headers")
    scheme = "v1" if present(v1) else "v0"
    problem = _verify_v1(v1, raw, secret, now, tolerance_seconds) if scheme == "v1" else _verify_v0(v0, raw, secret, now, tolerance_seconds)  # type: ignore[arg-type]
    if problem is not None:
        raise _fail(problem, scheme)
    return True


def sign_webhook_v1(body: str, secret: str, timestamp: int) -> str:
    """The X-Service-Signature value a sender puts on `body` (for tests and local tooling)."""
    return f"t={timestamp},v1={_hmac_hex(secret, f'{timestamp}.{body}')}"


def sign_webhook_v0(payload: Any, secret: str) -> str:
    return f"sha256={_hmac_hex(secret, canonical_string(payload))}"


class WebhookDeduper:
    """In-memory dedupe keyed by event_id for one receiver process; ids are remembered for `ttl_seconds` from first
    sight (default 24 hours). Call `seen` only after verify_webhook passed, so unsigned traffic cannot fill it.
    Several processes need a shared store instead (a unique index)."""

    def __init__(self, ttl_seconds: float = DEFAULT_DEDUPE_TTL_SECONDS, now: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_seconds
        self._now = now
        self._first_seen: "OrderedDict[str, float]" = OrderedDict()
        self._lock = threading.Lock()

    def seen(self, event_id: str) -> bool:
        """True when this event_id was already seen within the TTL (answer 2xx, skip the work); else records it."""
        if not isinstance(event_id, str) or event_id == "":
            raise TypeError("WebhookDeduper.seen needs a non-empty event_id")
        with self._lock:
            at = self._now()
            while self._first_seen:
                key, first = next(iter(self._first_seen.items()))
                if at - first < self._ttl:
                    break
                self._first_seen.popitem(last=False)
            if event_id in self._first_seen:
                return True
            self._first_seen[event_id] = at
            return False

    @staticmethod
    def event_id_of(body: bytes | str, headers: Headers) -> Optional[str]:
        """Idempotency-Key, else X-Service-Webhook-Event-Id, else the body's event_id."""
        from_header = header_value(headers, "idempotency-key") or header_value(headers, "x-service-webhook-event-id")
        if from_header:
            return from_header
        try:
            parsed = json.loads(body if isinstance(body, str) else bytes(body).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        event_id = parsed.get("event_id") if isinstance(parsed, dict) else None
        return event_id if isinstance(event_id, str) and event_id != "" else None

    def __len__(self) -> int:
        return len(self._first_seen)
