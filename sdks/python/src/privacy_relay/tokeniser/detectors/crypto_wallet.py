"""Crypto wallet addresses: Bitcoin bech32/bech32m (checksum verified), Bitcoin base58 (shape), Ethereum (0x + 40 hex)."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex

_WALLET = jsregex.compile(
    r"(?<![\p{L}\p{N}])(?:(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34}|0x[0-9a-fA-F]{40})(?![\p{L}\p{N}])", "gu"
)
_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATORS = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]


def _polymod(values: list[int]) -> int:
    chk = 1
    for v in values:
        top = chk >> 25
        chk = ((chk & 0x1FFFFFF) << 5) ^ v
        for i in range(5):
            if (top >> i) & 1:
                chk ^= _GENERATORS[i]
    return chk


def has_valid_bech32_checksum(address: str) -> bool:
    """BIP-173 / BIP-350 checksum (case-insensitive, not mixed)."""
    if address != address.lower() and address != address.upper():
        return False
    a = address.lower()
    sep = a.rfind("1")
    if sep < 1 or sep + 7 > len(a):
        return False
    hrp = a[:sep]
    data = []
    for c in a[sep + 1:]:
        v = _CHARSET.find(c)
        if v == -1:
            return False
        data.append(v)
    expanded = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    check = _polymod(expanded + data)
    return check == 1 or check == 0x2BC830A3


def _is_base58_like(body: str) -> bool:
    lower = sum(1 for c in body if "a" <= c <= "z")
    upper = sum(1 for c in body if "A" <= c <= "Z")
    digits = sum(1 for c in body if "0" <= c <= "9")
    return lower > 0 and upper > 0 and (digits >= 2 or (upper >= 6 and lower >= 6))


def _accept(m):
    value = m.group(0)
    if value[:3].lower() == "bc1" and not has_valid_bech32_checksum(value):
        return None
    if value[0] in "13" and not _is_base58_like(value[1:]):
        return None
    return (m.start(), m.end())


crypto_wallet_detector = Detector("CRYPTO_WALLET", lambda text: spans_from_regex(text, _WALLET, "CRYPTO_WALLET", _accept))
