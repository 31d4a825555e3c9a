"""ES256 (ECDSA P-256 with SHA-256) with raw r||s signatures and JWK keys.

Verification and everyday signing use `cryptography` (OpenSSL). `sign_deterministic` implements RFC 6979
nonces in pure Python, without low-S normalisation, so that signatures are reproducible byte for byte
(the cross-language vectors use it); it is not constant-time, so it is for tests and reproducible
fixtures, never the device's everyday signing.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from .base64 import b64url_decode, b64url_encode
from .jcs import canonical_bytes

# P-256 domain parameters (SEC 2 / FIPS 186-4).
_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_A = _P - 3
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_G = (
    0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
)


def is_p256_field_element(value: Any) -> bool:
    """A 32-byte value in base64url without padding (43 characters)."""
    if not isinstance(value, str) or len(value) != 43:
        return False
    try:
        return len(b64url_decode(value)) == 32
    except ValueError:
        return False


def is_public_jwk(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("kty") == "EC"
        and value.get("crv") == "P-256"
        and is_p256_field_element(value.get("x"))
        and is_p256_field_element(value.get("y"))
    )


def public_key_from_jwk(jwk: Mapping[str, Any]) -> ec.EllipticCurvePublicKey:
    """Raises ValueError when the JWK is not a P-256 public key on the curve."""
    if not is_public_jwk(dict(jwk)):
        raise ValueError("not an EC P-256 public JWK")
    x = int.from_bytes(b64url_decode(jwk["x"]), "big")
    y = int.from_bytes(b64url_decode(jwk["y"]), "big")
    return ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()


def verify_raw(public_key: ec.EllipticCurvePublicKey, signature: bytes, data: bytes) -> bool:
    """ES256 over `data` with a raw 64-byte r||s signature; False for anything malformed."""
    if len(signature) != 64:
        return False
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    try:
        public_key.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
        return True
    except (InvalidSignature, ValueError):
        return False


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 thumbprint (the `kid` of a key): SHA-256 of the JCS of crv, kty, x, y."""
    members = {"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"], "y": jwk["y"]}
    return b64url_encode(hashlib.sha256(canonical_bytes(members)).digest())


@dataclass(frozen=True)
class SigningKey:
    """A P-256 key pair for attestations; `public_jwk` is what envelopes embed."""

    private_key: ec.EllipticCurvePrivateKey

    @staticmethod
    def generate() -> "SigningKey":
        return SigningKey(ec.generate_private_key(ec.SECP256R1()))

    @staticmethod
    def from_private_jwk(jwk: Mapping[str, Any]) -> "SigningKey":
        if not is_public_jwk(dict(jwk)) or not is_p256_field_element(jwk.get("d")):
            raise ValueError("not an EC P-256 private JWK")
        d = int.from_bytes(b64url_decode(jwk["d"]), "big")
        key = SigningKey(ec.derive_private_key(d, ec.SECP256R1()))
        if key.public_jwk != {"kty": "EC", "crv": "P-256", "x": jwk["x"], "y": jwk["y"]}:
            raise ValueError("the private JWK's d does not match its x and y")
        return key

    @property
    def d(self) -> int:
        return self.private_key.private_numbers().private_value

    @property
    def public_jwk(self) -> dict[str, str]:
        numbers = self.private_key.public_key().public_numbers()
        return {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url_encode(numbers.x.to_bytes(32, "big")),
            "y": b64url_encode(numbers.y.to_bytes(32, "big")),
        }

    @property
    def private_jwk(self) -> dict[str, str]:
        return {**self.public_jwk, "d": b64url_encode(self.d.to_bytes(32, "big"))}

    def sign(self, data: bytes) -> bytes:
        """ES256 with OpenSSL's randomised nonce; raw r||s."""
        r, s = decode_dss_signature(self.private_key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def sign_deterministic(self, data: bytes) -> bytes:
        """ES256 with an RFC 6979 nonce and no low-S normalisation; raw r||s (reproducible)."""
        return sign_rfc6979(self.d, data)


# --- RFC 6979 signing over P-256 in Jacobian coordinates -------------------------------------------


def _jacobian_double(p: tuple[int, int, int]) -> tuple[int, int, int]:
    x, y, z = p
    if y == 0:
        return (0, 0, 0)
    ysq = y * y % _P
    s = 4 * x * ysq % _P
    zsq = z * z % _P
    m = (3 * x * x + _A * zsq * zsq) % _P
    nx = (m * m - 2 * s) % _P
    ny = (m * (s - nx) - 8 * ysq * ysq) % _P
    nz = 2 * y * z % _P
    return (nx, ny, nz)


def _jacobian_add(p: tuple[int, int, int], q: tuple[int, int, int]) -> tuple[int, int, int]:
    if p[2] == 0:
        return q
    if q[2] == 0:
        return p
    z1sq = p[2] * p[2] % _P
    z2sq = q[2] * q[2] % _P
    u1 = p[0] * z2sq % _P
    u2 = q[0] * z1sq % _P
    s1 = p[1] * z2sq * q[2] % _P
    s2 = q[1] * z1sq * p[2] % _P
    if u1 == u2:
        return _jacobian_double(p) if s1 == s2 else (0, 0, 0)
    h = (u2 - u1) % _P
    r = (s2 - s1) % _P
    h2 = h * h % _P
    h3 = h * h2 % _P
    u1h2 = u1 * h2 % _P
    nx = (r * r - h3 - 2 * u1h2) % _P
    ny = (r * (u1h2 - nx) - s1 * h3) % _P
    nz = h * p[2] * q[2] % _P
    return (nx, ny, nz)


def _scalar_base_x(k: int) -> int:
    result = (0, 0, 0)
    addend = (_G[0], _G[1], 1)
    while k:
        if k & 1:
            result = _jacobian_add(result, addend)
        addend = _jacobian_double(addend)
        k >>= 1
    zinv = pow(result[2], -1, _P)
    return result[0] * zinv * zinv % _P


def sign_rfc6979(d: int, data: bytes) -> bytes:
    digest = hashlib.sha256(data).digest()
    z = int.from_bytes(digest, "big")
    x_octets = d.to_bytes(32, "big")
    h_octets = (z % _N).to_bytes(32, "big")
    v = b"\x01" * 32
    k_mac = b"\x00" * 32
    k_mac = hmac.new(k_mac, v + b"\x00" + x_octets + h_octets, hashlib.sha256).digest()
    v = hmac.new(k_mac, v, hashlib.sha256).digest()
    k_mac = hmac.new(k_mac, v + b"\x01" + x_octets + h_octets, hashlib.sha256).digest()
    v = hmac.new(k_mac, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k_mac, v, hashlib.sha256).digest()
        k = int.from_bytes(v, "big")
        if 1 <= k < _N:
            r = _scalar_base_x(k) % _N
            if r != 0:
                s = pow(k, -1, _N) * (z + r * d) % _N
                if s != 0:
                    return r.to_bytes(32, "big") + s.to_bytes(32, "big")
        k_mac = hmac.new(k_mac, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k_mac, v, hashlib.sha256).digest()
