"""Verification of an exported chain of receipts in chain order: every receipt verified and linked to the one
before it, so a gap, a reordering, a receipt of another chain, a changed or a substituted receipt is found, with its
position and its kind. verify_chain_export takes what `receipt_chain_export` (the MCP tool) writes, or JSON Lines.
Kinds, reasons and positions are the TypeScript SDK's (sdks/vectors/receipts.json `chains` and `chain_exports`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ._js import MISSING, is_number, js_string
from .envelope_input import decode_envelope_input
from .jwks import JwksOption, key_resolver_of
from .receipt import VerificationResult, verify_receipt

CHAIN_BREAK_KINDS: tuple[str, ...] = ("gap", "reorder", "duplicate", "substituted", "other_chain", "tampered", "invalid", "unchained")
"""gap: seq jumps forward and the missing receipts are not in the list; reorder: seq goes back, or jumps to a receipt
whose predecessors come later; duplicate: the same seq again; substituted: seq follows but prev_hash is not the hash
of the receipt before (one of the two is not the receipt the chain holds); other_chain: a receipt of another chain;
tampered: the signature does not verify; invalid: another check fails; unchained: an envelope of no chain."""


@dataclass(frozen=True)
class ChainBreak:
    index: int
    seq: Optional[float]
    jti: Optional[str]
    kind: str
    reason: str
    result: VerificationResult


@dataclass(frozen=True)
class ChainGap:
    """Receipts missing between two in the list (only with allow_gaps): seq after_seq + 1 to seq - 1."""

    index: int
    after_seq: float
    seq: float


@dataclass(frozen=True)
class ChainVerification:
    valid: bool
    chain_id: Optional[str]
    first_seq: Optional[float]
    last_seq: Optional[float]
    verified: int
    break_: Optional[ChainBreak]
    gaps: tuple[ChainGap, ...] = field(default=())
    count: int = 0


@dataclass(frozen=True)
class ChainExportVerification:
    valid: bool
    chains: tuple[ChainVerification, ...]


def _chain_of(envelope: Any) -> Optional[dict]:
    return envelope["chain"] if isinstance(envelope, dict) and isinstance(envelope.get("chain"), dict) else None


def _seq_of(envelope: Any) -> Any:
    chain = _chain_of(envelope)
    return chain["seq"] if chain is not None and is_number(chain.get("seq")) else None


class _Resolver:
    def __init__(self, resolve: Any) -> None:
        self.resolve_key = resolve


_LINK_FAILURE = re.compile(r"^seq \d+ does not follow previous seq |^previous receipt belongs to another chain$|^prev_hash is not the hash of the previous receipt$")


def _link_kind(envelopes: list, index: int) -> str:
    before, here = _chain_of(envelopes[index - 1]), _chain_of(envelopes[index])
    if index == 0 or before is None or here is None:
        return "invalid"
    if before.get("chain_id", MISSING) != here.get("chain_id", MISSING):
        return "other_chain"
    if not is_number(before.get("seq")) or not is_number(here.get("seq")):
        return "invalid"
    if here["seq"] == before["seq"]:
        return "duplicate"
    if here["seq"] < before["seq"]:
        return "reorder"
    if here["seq"] > before["seq"] + 1:
        low, high = before["seq"], here["seq"]
        for later in envelopes[index + 1:]:
            seq = _seq_of(later)
            if seq is not None and low < seq < high and _chain_of(later).get("chain_id", MISSING) == here.get("chain_id", MISSING):
                return "reorder"
        return "gap"
    return "substituted"


def _kind_of(result: VerificationResult, envelopes: list, index: int) -> str:
    failed = next((c for c in result.checks if c.status == "fail"), None)
    if failed is not None and failed.label == "signature":
        return "tampered"
    if failed is not None and failed.label == "chain linkage (seq and prev_hash)" and index > 0 and _LINK_FAILURE.search(failed.detail):
        return _link_kind(envelopes, index)
    return "invalid"


def verify_chain(receipts: Sequence[Any], jwks: JwksOption, *, now_seconds: int | None = None, allow_gaps: bool = False) -> ChainVerification:
    """Verifies receipts of ONE chain given in chain order; stops at the first break and reports it, named. With
    allow_gaps (the receipts one client holds of a chain other clients also write to), a receipt after a gap is
    verified on its own and the gap listed."""
    if not isinstance(receipts, (list, tuple)):
        raise TypeError("verify_chain: receipts must be a list of receipts in chain order")
    source = _Resolver(key_resolver_of(jwks))
    envelopes = []
    for r in receipts:
        ok, decoded = decode_envelope_input(r)
        envelopes.append(decoded if ok else r)
    first = envelopes[0] if envelopes else None
    first_chain = _chain_of(first)
    chain_id = first_chain["chain_id"] if first_chain is not None and isinstance(first_chain.get("chain_id"), str) else None
    first_seq = _seq_of(first)
    last_seq = _seq_of(envelopes[-1]) if envelopes else None
    gaps: list[ChainGap] = []

    def verify(index: int, linked: bool) -> VerificationResult:
        previous = MISSING if index == 0 or not linked else envelopes[index - 1]
        return verify_receipt(receipts[index], source, now_seconds=now_seconds, previous=previous)

    for index, envelope in enumerate(envelopes):
        result = verify(index, True)
        kind = None if result.valid else _kind_of(result, envelopes, index)
        if kind == "gap" and allow_gaps:
            gaps.append(ChainGap(index, _seq_of(envelopes[index - 1]), _seq_of(envelope)))
            result = verify(index, False)
            kind = None if result.valid else _kind_of(result, envelopes, index)
        if kind is None and _chain_of(envelope) is None:
            kind = "unchained"
        if kind is not None:
            reason = f"a {js_string(envelope.get('v', MISSING))} envelope is not part of a receipt chain" if kind == "unchained" else result.reason
            jti = envelope["jti"] if isinstance(envelope, dict) and isinstance(envelope.get("jti"), str) else None
            brk = ChainBreak(index, _seq_of(envelope), jti, kind, reason or "", result)
            return ChainVerification(False, chain_id, first_seq, last_seq, index, brk, tuple(gaps), len(envelopes))
    return ChainVerification(True, chain_id, first_seq, last_seq, len(envelopes), None, tuple(gaps), len(envelopes))


def chains_of_export(exported: Any) -> list[tuple[Optional[str], list]]:
    """The receipts of an export, grouped by chain in their order: receipt_chain_export's output (the dict, or its JSON
    text: {"chains": [{"chain_id", "receipts"}]}), its jsonl text (one receipt per line), or a list of receipts.
    Raises TypeError for anything else."""
    value = exported
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8")
    if isinstance(value, str):
        text = value.strip()
        try:
            parsed: Any = json.loads(text)
        except ValueError:
            parsed = MISSING
        if (isinstance(parsed, dict) and isinstance(parsed.get("chains"), list)) or isinstance(parsed, list):
            value = parsed
        else:
            value = [line.strip() for line in text.split("\n") if line.strip() != ""]
    if isinstance(value, dict) and isinstance(value.get("chains"), list):
        out = []
        for entry in value["chains"]:
            if not isinstance(entry, dict) or not isinstance(entry.get("receipts"), list):
                raise TypeError("verify_chain_export: every entry of chains needs a receipts list")
            out.append((entry["chain_id"] if isinstance(entry.get("chain_id"), str) else None, list(entry["receipts"])))
        return out
    if not isinstance(value, (list, tuple)):
        raise TypeError("verify_chain_export: give receipt_chain_export's output (dict or JSON), its jsonl text, or a list of receipts")
    groups: dict[Optional[str], list] = {}
    for receipt in value:
        ok, decoded = decode_envelope_input(receipt)
        chain = _chain_of(decoded) if ok else None
        key = chain["chain_id"] if chain is not None and isinstance(chain.get("chain_id"), str) else None
        groups.setdefault(key, []).append(receipt)
    return list(groups.items())


def verify_chain_export(exported: Any, jwks: JwksOption, *, now_seconds: int | None = None, allow_gaps: bool = False) -> ChainExportVerification:
    """Verifies an exported set of chains offline (see chains_of_export for the forms), each with verify_chain in the
    export's order. Raises TypeError for what is not an export, JwksError when the keys cannot be obtained."""
    chains = tuple(verify_chain(receipts, jwks, now_seconds=now_seconds, allow_gaps=allow_gaps) for _, receipts in chains_of_export(exported))
    return ChainExportVerification(all(c.valid for c in chains), chains)
