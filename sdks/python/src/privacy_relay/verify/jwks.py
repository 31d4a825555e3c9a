"""The receipt verification keys: a JWKS the caller holds, or a cache that fetches it from the gateway
(GET /api/.well-known/service-receipt-pubkeys.jwks). Rotated-out keys stay published, so an unknown kid means
"fetched before a rotation": the cache refetches once."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Mapping, Optional, Protocol, Union

from cryptography.hazmat.primitives.asymmetric import ec

from ..wire.ecdsa import public_key_from_jwk

GATEWAY_IDENTITY_PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks"
DEFAULT_JWKS_TTL_SECONDS = 600.0


class JwksError(Exception):
    """The receipt keys are not available, so nothing could be verified (not a verdict on the receipt).

    `code`: invalid_gateway_url, jwks_unreachable or jwks_invalid."""

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class JwksSource(Protocol):
    def resolve_key(self, kid: str) -> Optional[ec.EllipticCurvePublicKey]: ...


JwksOption = Union[Mapping[str, Any], JwksSource]


def jwks_problem(value: Any) -> str | None:
    if not isinstance(value, dict) or not isinstance(value.get("keys"), list):
        return "not a JWKS: expected an object with a keys array"
    if not all(isinstance(k, dict) and isinstance(k.get("kid"), str) for k in value["keys"]):
        return "not a JWKS: every key needs a kid"
    return None


def key_resolver_from_jwks(jwks: Mapping[str, Any]) -> Callable[[str], Optional[ec.EllipticCurvePublicKey]]:
    """kid -> public key; None for an unknown kid or a key that is not a usable P-256 key."""
    imported: dict[str, Optional[ec.EllipticCurvePublicKey]] = {}

    def resolve(kid: str) -> Optional[ec.EllipticCurvePublicKey]:
        if kid not in imported:
            jwk = next((k for k in jwks["keys"] if k.get("kid") == kid), None)
            if jwk is None:
                return None
            try:
                imported[kid] = public_key_from_jwk(jwk)
            except ValueError:
                imported[kid] = None
        return imported[kid]

    return resolve


def key_resolver_of(jwks: JwksOption) -> Callable[[str], Optional[ec.EllipticCurvePublicKey]]:
    resolve = getattr(jwks, "resolve_key", None)
    if callable(resolve):
        return resolve
    problem = jwks_problem(jwks)
    if problem is not None:
        raise JwksError("jwks_invalid", f"jwks option: {problem}")
    return key_resolver_from_jwks(jwks)  # type: ignore[arg-type]


class JwksKeys:
    """What a JWKS cache decides, without its I/O (JwksCache and both clients' receipt keys use it, so they cannot
    differ): when to fetch (absent, older than the TTL, or a kid it does not hold, at most once a second), and what a
    fetched answer means (a JwksError unless a 200 holding a JWKS)."""

    def __init__(self, url: str, ttl_seconds: float = DEFAULT_JWKS_TTL_SECONDS) -> None:
        self.url = url
        self._ttl = ttl_seconds
        self._cached: tuple[Any, float, Callable[[str], Any]] | None = None

    def stale(self) -> bool:
        return self._cached is None or time.monotonic() - self._cached[1] >= self._ttl

    def unknown(self, kid: Optional[str]) -> bool:
        """A kid the held keys lack, held for more than a second (a rotation since): worth one more fetch."""
        if kid is None or self._cached is None:
            return False
        return self._cached[2](kid) is None and time.monotonic() - self._cached[1] > 1.0

    def wants_fetch(self, kid: Optional[str] = None) -> bool:
        return self.stale() or self.unknown(kid)

    def unreachable(self, error: BaseException) -> JwksError:
        return JwksError("jwks_unreachable", f"the gateway could not be reached for its receipt keys ({self.url}): {error}")

    def take(self, status: int, body: Any) -> Any:
        """A fetched answer: kept when it is a JWKS, else the JwksError it means."""
        if status != 200:
            raise JwksError("jwks_unreachable", f"the gateway answered {status} for its receipt keys ({self.url})", status=status)
        problem = jwks_problem(body)
        if problem is not None:
            raise JwksError("jwks_invalid", f"{self.url}: {problem}", status=200)
        self._cached = (body, time.monotonic(), key_resolver_from_jwks(body))
        return body

    @property
    def current(self) -> Any:
        assert self._cached is not None
        return self._cached[0]

    def resolve_key(self, kid: str) -> Optional[ec.EllipticCurvePublicKey]:
        return None if self._cached is None else self._cached[2](kid)


class JwksCache:
    """The gateway's JWKS, fetched when first needed, refreshed after `ttl_seconds` and once on an unknown kid.

    `fetch_json(url) -> (status, body)` does the HTTP GET (the clients pass theirs, gateway-locked)."""

    def __init__(self, url: str, fetch_json: Callable[[str], tuple[int, Any]], ttl_seconds: float = DEFAULT_JWKS_TTL_SECONDS) -> None:
        self._keys = JwksKeys(url, ttl_seconds)
        self._fetch_json = fetch_json
        self._lock = threading.Lock()

    def _fetch(self) -> Any:
        try:
            status, body = self._fetch_json(self._keys.url)
        except JwksError:
            raise
        except Exception as error:  # noqa: BLE001 - any transport failure means "unreachable"
            raise self._keys.unreachable(error) from error
        return self._keys.take(status, body)

    def refresh(self) -> Any:
        with self._lock:
            return self._fetch()

    def get(self) -> Any:
        with self._lock:
            if self._keys.stale():
                self._fetch()
            return self._keys.current

    def resolve_key(self, kid: str) -> Optional[ec.EllipticCurvePublicKey]:
        with self._lock:
            if self._keys.wants_fetch(kid):
                self._fetch()
            return self._keys.resolve_key(kid)


def create_jwks_cache(gateway_url: str, *, ttl_seconds: float = DEFAULT_JWKS_TTL_SECONDS, timeout: float = 10.0) -> JwksCache:
    """The JWKS of the gateway at `gateway_url` (https, or http to a loopback address), fetched with httpx from
    GET /api/.well-known/service-receipt-pubkeys.jwks when first needed, cached `ttl_seconds`, refetched once on an
    unknown kid: pass it as `jwks` to verify_receipt / verify_chain / verify_inclusion_proof for receipts you stored.
    (The TypeScript SDK's createJwksCache({ gatewayUrl }).) Raises ConfigurationError for a URL that is not allowed;
    JwksError (jwks_unreachable, jwks_invalid) when the keys are fetched and cannot be had."""
    import httpx

    from ..gateway import parse_gateway_url

    base = parse_gateway_url(gateway_url)

    def fetch_json(url: str) -> tuple[int, Any]:
        response = httpx.get(url, timeout=timeout, headers={"accept": "application/json"})
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, None

    return JwksCache(f"{base}{GATEWAY_IDENTITY_PROBE_PATH}", fetch_json, ttl_seconds)


def fetch_jwks(gateway_url: str, *, timeout: float = 10.0) -> dict:
    """The gateway's receipt keys (a JWKS dict), fetched once now: to keep beside stored receipts, or to verify offline
    later. Same rules and errors as create_jwks_cache."""
    return create_jwks_cache(gateway_url, timeout=timeout).get()
