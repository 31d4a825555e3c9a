"""Verification of an exported chain of receipts in chain order: every receipt verified and linked to the one
before it, so a gap, a reordering, a receipt of another chain, a changed or re-signed receipt is found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ._js import MISSING, is_number, js_string
from .envelope_input import decode_envelope_input
from .jwks import JwksOption, key_resolver_of
from .receipt import VerificationResult, verify_receipt


@dataclass(frozen=True)
class ChainBreak:
    index: int
    seq: Optional[float]
    jti: Optional[str]
    reason: str
    result: VerificationResult


@dataclass(frozen=True)
class ChainVerification:
    valid: bool
    chain_id: Optional[str]
    first_seq: Optional[float]
    last_seq: Optional[float]
    verified: int
    break_: Optional[ChainBreak]


def _seq_of(envelope: Any) -> Any:
    if isinstance(envelope, dict) and isinstance(envelope.get("chain"), dict) and is_number(envelope["chain"].get("seq")):
        return envelope["chain"]["seq"]
    return None


class _Resolver:
    def __init__(self, resolve: Any) -> None:
        self.resolve_key = resolve


def verify_chain(receipts: Sequence[Any], jwks: JwksOption, *, now_seconds: int | None = None) -> ChainVerification:
    """Verifies receipts of ONE chain given in chain order; stops at the first break and reports it."""
    if not isinstance(receipts, (list, tuple)):
        raise TypeError("verify_chain: receipts must be a list of receipts in chain order")
    source = _Resolver(key_resolver_of(jwks))
    envelopes = []
    for r in receipts:
        ok, decoded = decode_envelope_input(r)
        envelopes.append(decoded if ok else r)
    first = envelopes[0] if envelopes else None
    chain_id = first["chain"]["chain_id"] if isinstance(first, dict) and isinstance(first.get("chain"), dict) and isinstance(first["chain"].get("chain_id"), str) else None
    first_seq = _seq_of(first)
    last_seq = _seq_of(envelopes[-1]) if envelopes else None
    for index, envelope in enumerate(envelopes):
        result = verify_receipt(receipts[index], source, now_seconds=now_seconds, previous=MISSING if index == 0 else envelopes[index - 1])
        unchained = result.valid and not (isinstance(envelope, dict) and isinstance(envelope.get("chain"), dict))
        if not result.valid or unchained:
            reason = f"a {js_string(envelope.get('v', MISSING))} envelope is not part of a receipt chain" if unchained else result.reason
            jti = envelope["jti"] if isinstance(envelope, dict) and isinstance(envelope.get("jti"), str) else None
            return ChainVerification(False, chain_id, first_seq, last_seq, index, ChainBreak(index, _seq_of(envelope), jti, reason or "", result))
    return ChainVerification(True, chain_id, first_seq, last_seq, len(envelopes), None)
