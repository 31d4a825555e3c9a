"""The bytes every envelope signature covers, and signing an envelope."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .base64 import b64url_encode
from .jcs import canonical_bytes


def signing_input(envelope: Mapping[str, Any]) -> bytes:
    """The JCS bytes of the envelope with both `sig` and `signature` removed."""
    return canonical_bytes({k: v for k, v in envelope.items() if k not in ("sig", "signature")})


def sign_envelope(unsigned: Mapping[str, Any], sign: Callable[[bytes], bytes]) -> str:
    signature = sign(signing_input(unsigned))
    if len(signature) != 64:
        raise ValueError("a signer must return a raw 64-byte r||s signature")
    return b64url_encode(signature)
