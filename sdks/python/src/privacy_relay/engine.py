"""The on-device half of every private call: tokenise the body (detect -> alias), attest the exact egress bytes
with the device key, and later restore the originals in the answer.

Engine identity: id `relay-py`, the package version, and `sha256`, a fingerprint of the engine's own files: SHA-256
over every `.py` and `.json` file of the `privacy_relay` package, sorted by their path relative to the package
directory (`/` separators), each contributing the line `<path>\\0<sha256 hex of the file bytes>\\n`. Computed
once on import, so it describes the code actually running."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union
from urllib.parse import urlparse

from .attestation import EngineIdentity, build_attestation, encode_attestation_header
from .errors import (
    ConfigurationError,
    EgressPolicyError,
    InvalidRequestError,
    NameModelUnavailableError,
    NestingTooDeepError,
    UnsupportedContentError,
    UnsupportedFieldError,
)
from .tokeniser.names import NameModel, NameModelUnavailable
from .tokeniser.names.http import HttpNameModel
from .tokeniser.names.rules import BuiltinNameModel
from .tokeniser.redact_image import ImageRedactor
from .tokeniser.session import TokeniserSession
from .tokeniser.tokenise import MEDIA_POLICIES, InvalidRequestBody, Tokeniser
from .version import VERSION
from .wire.ecdsa import SigningKey
from .wire.egress_policy import EgressRefusal

#: Keys the per-call alias secret of a call with an Idempotency-Key (the same label as the TypeScript SDK's).
IDEMPOTENT_ALIASES_LABEL = "privacy-relay idempotent aliases\u0000"

ENGINE_ID = "relay-py"
_PACKAGE_DIR = Path(__file__).resolve().parent


def engine_source_sha256(package_dir: Path = _PACKAGE_DIR) -> str:
    files = sorted(
        (p.relative_to(package_dir).as_posix(), p) for p in package_dir.rglob("*") if p.is_file() and p.suffix in (".py", ".json") and "__pycache__" not in p.parts
    )
    digest = hashlib.sha256()
    for rel, p in files:
        digest.update(f"{rel}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n".encode("utf-8"))
    return digest.hexdigest()


ENGINE = EngineIdentity(ENGINE_ID, VERSION, engine_source_sha256())

NameModelSetting = Union[str, NameModel, None]


def name_model_of(setting: NameModelSetting) -> Optional[NameModel]:
    """`"builtin"` (default), `"off"`/None, an http(s) URL of a name model service, or a NameModel object."""
    if setting is None or setting == "off":
        return None
    if setting == "builtin":
        return BuiltinNameModel()
    if not isinstance(setting, str):
        return setting
    parsed = urlparse(setting)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigurationError(f'name_model must be "builtin", "off" or an http(s) URL, not {setting!r}.', code="configuration_error")
    return HttpNameModel(setting)


@dataclass(frozen=True)
class PreparedCall:
    """What leaves the device for one call, and what stays to restore the answer."""

    body_bytes: bytes
    #: X-Service-Engine and X-Service-Attestation.
    headers: Mapping[str, str]
    #: Alias -> original; stays on the device.
    map: dict[str, str]
    #: The tokenised body: exactly what the provider will see.
    tokenised_body: Any
    detectors_fired: dict[str, int] = field(default_factory=dict)
    #: What media_policy or passthrough_paths let through untokenised ([{path, kind}], sorted by path), as attested.
    passthrough: list[dict[str, str]] = field(default_factory=list)


def check_media_policy(value: Any) -> str:
    if value not in MEDIA_POLICIES:
        raise ConfigurationError(f'media_policy must be "refuse" (default), "redact" or "pass", not {value!r}.', code="configuration_error")
    return value


def check_passthrough_paths(value: Any) -> tuple[str, ...]:
    """JSON pointers (RFC 6901, `*` for any one segment) of fields the egress policy refuses or does not name."""
    if isinstance(value, (str, bytes)) or not all(isinstance(p, str) for p in value):
        raise ConfigurationError("passthrough_paths must be a list of JSON pointers such as \"/metadata_note\" or \"/messages/*/x_tag\".", code="configuration_error")
    for p in value:
        if not p.startswith("/"):
            raise ConfigurationError(f"passthrough_paths: {p!r} is not a JSON pointer (it starts with /, e.g. \"/x_trace_note\").", code="configuration_error")
    return tuple(value)


def egress_error(refusal: EgressRefusal) -> EgressPolicyError:
    """The SDK error for a refusal of the egress policy: nothing was sent."""
    details = refusal.details
    if refusal.code == "unsupported_content":
        return UnsupportedContentError(refusal.message, code=refusal.code, path=refusal.path, kind=refusal.kind, setting=details.get("setting"), status=415)
    if refusal.code == "nesting_too_deep":
        return NestingTooDeepError(refusal.message, code=refusal.code, path=refusal.path)
    return UnsupportedFieldError(refusal.message, code=refusal.code, path=refusal.path, setting=details.get("setting"))


class Engine:
    def __init__(
        self,
        *,
        names: Optional[NameModel],
        device_key: Callable[[], SigningKey],
        stable_alias_secret: Optional[Callable[[], bytes]] = None,
        identity: EngineIdentity = ENGINE,
        identifier_secret: Optional[Callable[[], bytes]] = None,
        media_policy: str = "refuse",
        passthrough_paths: Sequence[str] = (),
        redact_image: Optional[ImageRedactor] = None,
    ) -> None:
        """`identifier_secret`: the device alias secret end-user identifiers (`user`, `metadata` values,
        `messages[].name`, ...) are aliased under, asked for only when a body holds one (default: the stable alias
        secret when there is one, else a fresh random secret per call). `media_policy`, `passthrough_paths` and
        `redact_image`: the egress policy's opt-ins (sdks/vectors/README.md "Egress policy")."""
        self.tokeniser = Tokeniser(names)
        self.identity = identity
        self._device_key = device_key
        self._stable_alias_secret = stable_alias_secret
        self._identifier_secret = identifier_secret if identifier_secret is not None else stable_alias_secret
        self.media_policy = check_media_policy(media_policy)
        self.passthrough_paths = check_passthrough_paths(passthrough_paths)
        self._redact_image = redact_image

    def _call_secret(self, idempotency_key: Optional[str]) -> Optional[bytes]:
        """HMAC-SHA256 of the key under the device's alias secret (the TypeScript SDK's idempotentAliasSecret); None
        without a key or a device secret: a fresh random secret then."""
        if idempotency_key is None or self._stable_alias_secret is None:
            return None
        return hmac.new(self._stable_alias_secret(), f"{IDEMPOTENT_ALIASES_LABEL}{idempotency_key}".encode("utf-8"), hashlib.sha256).digest()

    def prepare(
        self,
        route: str,
        body: Any,
        idempotency_key: Optional[str] = None,
        *,
        media_policy: Optional[str] = None,
        passthrough_paths: Optional[Sequence[str]] = None,
        alias_secret: Optional[bytes] = None,
    ) -> PreparedCall:
        """Tokenises and attests one relay body under the egress policy. Raises NameModelUnavailableError
        (fail-closed), InvalidRequestError, or an EgressPolicyError (UnsupportedFieldError, UnsupportedContentError,
        NestingTooDeepError): in every case nothing is sent. With the caller's own `idempotency_key`, the aliases
        derive from it under the device-held alias secret, so a retry of the call (same key, same body) sends the same
        bytes and the gateway replays the first answer. `media_policy` and `passthrough_paths` override the engine's
        for this call (already checked: check_media_policy, check_passthrough_paths). `alias_secret`: the call's
        alias secret instead of the idempotency key's or a fresh one (a Conversation's, held for its life: aliases
        numbered by first appearance repeat turn after turn)."""
        secret = self._stable_alias_secret() if route == "embeddings" and self._stable_alias_secret is not None else None
        try:
            tokenised = self.tokeniser.tokenise_request(
                route,
                body,
                TokeniserSession(secret=alias_secret if alias_secret is not None else self._call_secret(idempotency_key), stable_alias_secret=secret),
                identifier_secret=self._identifier_secret,
                media_policy=self.media_policy if media_policy is None else media_policy,
                passthrough_paths=self.passthrough_paths if passthrough_paths is None else passthrough_paths,
                redact_image=self._redact_image,
            )
        except EgressRefusal as refusal:
            raise egress_error(refusal) from None
        except NameModelUnavailable as error:
            raise NameModelUnavailableError(
                f'The name model is unavailable ({error}); nothing was sent (fail-closed). Fix the name model, or use name_model "builtin" or "off".',
                code="name_model_unavailable",
            ) from error
        except InvalidRequestBody as error:
            raise InvalidRequestError(str(error), code="invalid_request") from error
        envelope = build_attestation(
            route=route,
            body_bytes=tokenised.body_bytes,
            detectors_fired=tokenised.detectors_fired,
            engine=self.identity,
            key=self._device_key(),
            passthrough=tokenised.passthrough,
        )
        return PreparedCall(
            body_bytes=tokenised.body_bytes,
            headers={"x-service-engine": self.identity.header_value, "x-service-attestation": encode_attestation_header(envelope)},
            map=tokenised.map,
            tokenised_body=tokenised.body,
            detectors_fired=tokenised.detectors_fired,
            passthrough=tokenised.passthrough,
        )
