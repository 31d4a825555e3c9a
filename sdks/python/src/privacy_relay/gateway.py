"""Gateway-locked base URL: a client talks only to a gateway, never to a provider. The URL must be https, or plain
http to a loopback address for development, and must answer the gateway identity probe
`GET /api/.well-known/service-receipt-pubkeys.jwks` with a JWKS of P-256 receipt keys."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigurationError, GatewayIdentityError
from .wire.ecdsa import is_public_jwk

GATEWAY_IDENTITY_PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks"


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost") or host == "::1":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == 4 and str(address).startswith("127.")


def parse_gateway_url(raw: str) -> str:
    """The base URL without a trailing slash; ConfigurationError naming the rule that failed."""

    def fail(message: str) -> ConfigurationError:
        return ConfigurationError(message, code="configuration_error")

    if not isinstance(raw, str) or raw.strip() == "":
        raise fail("gateway_url is not set: give the base URL of your Privacy Relay gateway (https://...).")
    try:
        url = urlsplit(raw.strip())
        host = url.hostname or ""
        port = url.port
    except ValueError:
        raise fail(f"gateway_url {raw!r} is not a URL.") from None
    if url.scheme not in ("http", "https") or host == "":
        raise fail(f"gateway_url must be an https URL, not {raw!r}.")
    if url.username is not None or url.password is not None:
        raise fail("gateway_url must not carry credentials; give the key as api_key or api_key_file.")
    if url.query or url.fragment:
        raise fail("gateway_url must not have a query or fragment.")
    if url.scheme == "http" and not _is_loopback(host):
        raise fail(
            f"gateway_url http://{url.netloc} is plain http to a non-loopback host; a gateway must be reached over https "
            "(plain http is allowed only to 127.0.0.1/localhost for development)."
        )
    netloc = (f"[{host}]" if ":" in host else host) + ("" if port is None else f":{port}")
    return f"{url.scheme}://{netloc}{url.path.rstrip('/')}"


def check_identity_answer(base_url: str, status: int, body: Any) -> Any:
    """The JWKS when the probe's answer is a gateway's; GatewayIdentityError otherwise."""

    def not_a_gateway(why: str) -> GatewayIdentityError:
        return GatewayIdentityError(
            f"gateway_url {base_url} is not a Privacy Relay gateway: {why} at GET {GATEWAY_IDENTITY_PROBE_PATH}. "
            "Client components only talk to a gateway, never to a provider.",
            code="gateway_identity_failed",
        )

    if status != 200:
        raise not_a_gateway(f"status {status}")
    keys = body.get("keys") if isinstance(body, dict) else None
    if not isinstance(keys, list) or not keys or not all(is_public_jwk(k) for k in keys):
        raise not_a_gateway("the answer is not a JWKS of P-256 receipt keys")
    return body


def unreachable(base_url: str, error: Exception) -> GatewayIdentityError:
    return GatewayIdentityError(
        f"gateway_url {base_url} cannot be reached: {error}. Is the gateway running, and is the URL right?", code="gateway_identity_failed"
    )
