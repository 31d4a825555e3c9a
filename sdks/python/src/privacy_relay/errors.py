"""Typed errors. Every failure is a RelayError carrying `status` (0 when no HTTP answer was received), a stable
`code` (the gateway's error code, or one of the SDK's own) and `request_id` (the gateway's X-Request-Id).

SDK codes: configuration_error, gateway_identity_failed, connection_error, timeout, name_model_unavailable
(fail-closed: nothing was sent), invalid_request (a body the engine cannot tokenise), stream_error, and the egress
policy's refusals (nothing was sent): unsupported_field (400), unsupported_content (415), nesting_too_deep (400)."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any, Mapping, Optional


class RelayError(Exception):
    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str,
        request_id: Optional[str] = None,
        body: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        #: The error object of the gateway's answer (`{code, message, ...}`), when there was one.
        self.body = body

    @property
    def details(self) -> Optional[Mapping[str, Any]]:
        """`details` of the error object (e.g. `{"path": ...}`), when it has them."""
        details = self.body.get("details") if isinstance(self.body, Mapping) else None
        return details if isinstance(details, Mapping) else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, request_id={self.request_id!r}, message={self.message!r})"


class InvalidRequestError(RelayError):
    """400: the gateway (or the engine) refused the request's shape."""


class AuthenticationError(RelayError):
    """401: missing, unknown, revoked or expired key (or portal credentials)."""


class InsufficientBalanceError(RelayError):
    """402: the wallet has no available balance."""


class PermissionDeniedError(RelayError):
    """403: scope, ability, engine or model not allowed."""


class NotFoundError(RelayError):
    """404: unknown resource or model."""


class ConflictError(RelayError):
    """409: conflict (idempotency key reuse, ...)."""


class PayloadTooLargeError(RelayError):
    """413: body over the gateway's limit."""


class PretokenisationRequiredError(RelayError):
    """428: the gateway did not accept the on-device attestation (nothing was forwarded)."""


class RateLimitError(RelayError):
    """429: rate limit or quota; `retry_after_seconds` from Retry-After."""

    def __init__(self, message: str, *, retry_after_seconds: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after_seconds = retry_after_seconds


class ServerError(RelayError):
    """5xx: the gateway or the upstream provider failed."""


class ConnectionError(RelayError):  # noqa: A001 - the SDK's own family, as in the TypeScript SDK
    """No HTTP answer: connection refused or reset, DNS, TLS."""


class TimeoutError(RelayError):  # noqa: A001
    """The call took longer than the client's timeout."""


class ConfigurationError(RelayError):
    """Client-side setting or environment problem (gateway URL, key file, ...). Nothing was sent."""


class GatewayIdentityError(RelayError):
    """The gateway URL does not answer the gateway identity probe: nothing is sent there."""


class NameModelUnavailableError(RelayError):
    """The name model could not run and the client is fail-closed: nothing was sent."""


class StreamError(RelayError):
    """Malformed SSE from the gateway, or a stream that ended before its end marker."""


class EgressPolicyError(RelayError):
    """The engine refused the body before anything left the device (the egress policy, fail-closed): nothing was
    sent. `path` is the JSON pointer of what was refused, `kind` the media kind (image, audio, file, document) for
    unsupported_content, `setting` the client setting that would allow it ("PASSTHROUGH_PATHS": passthrough_paths=,
    "MEDIA_POLICY": media_policy=), all in `details` too. Messages name paths and types, never values."""

    def __init__(self, message: str, *, code: str, path: str, kind: Optional[str] = None, setting: Optional[str] = None, status: int = 400) -> None:
        details: dict[str, str] = {"path": path}
        if kind is not None:
            details["kind"] = kind
        if setting is not None:
            details["setting"] = setting
        super().__init__(message, status=status, code=code, body={"code": code, "message": message, "details": details})
        self.path = path
        self.kind = kind
        self.setting = setting


class UnsupportedFieldError(EgressPolicyError, InvalidRequestError):
    """400 unsupported_field: a field or part type the egress policy refuses or does not name. Nothing was sent; to
    send it untokenised (and declared in the attestation), name its path in the client's passthrough_paths."""


class NestingTooDeepError(EgressPolicyError, InvalidRequestError):
    """400 nesting_too_deep: the body nests objects and arrays deeper than 64 levels. Nothing was sent."""


class UnsupportedContentError(EgressPolicyError):
    """415 unsupported_content: an image, audio, file or document the client will not send under its media_policy
    (or a remote URL holding an identifier). Nothing was sent."""


_BY_STATUS = {
    400: InvalidRequestError,
    401: AuthenticationError,
    402: InsufficientBalanceError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    428: PretokenisationRequiredError,
}


def retry_after_seconds(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Retry-After in seconds (delta-seconds or an HTTP date); None when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    try:
        seconds = float(value)
        if seconds >= 0 and seconds != float("inf"):
            return seconds
        return None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def error_from_answer(status: int, headers: Mapping[str, str], body_text: str) -> RelayError:
    """The typed error for a gateway answer >= 400: our `{error: {code, message}}`, Anthropic's
    `{type: "error", error: {type, message}}` and OAuth's `{error, error_description}`."""
    try:
        parsed = json.loads(body_text)
    except ValueError:
        parsed = None
    record = parsed if isinstance(parsed, dict) else {}
    inner = record.get("error") if isinstance(record.get("error"), dict) else None
    if inner is not None and isinstance(inner.get("code"), str):
        code = inner["code"]
    elif inner is not None and isinstance(inner.get("type"), str):
        code = inner["type"]
    elif isinstance(record.get("error"), str):
        code = record["error"]
    else:
        code = f"http_{status}"
    if inner is not None and isinstance(inner.get("message"), str) and inner["message"] != "":
        message = inner["message"]
    elif isinstance(record.get("error_description"), str):
        message = record["error_description"]
    else:
        message = f"The gateway answered {status}."
    request_id = headers.get("x-request-id")
    kwargs: dict[str, Any] = {"status": status, "code": code, "request_id": request_id, "body": inner if inner is not None else (record if parsed is not None else None)}
    if status == 429:
        return RateLimitError(message, retry_after_seconds=retry_after_seconds(headers.get("retry-after")), **kwargs)
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else RelayError)
    return cls(message, **kwargs)
