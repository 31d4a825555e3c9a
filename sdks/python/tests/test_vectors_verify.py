"""sdks/vectors receipts.json, transparency.json, attestation.json `verify` and webhooks.json: every case answers
exactly `expected` (valid, reason, and every check's label, status and detail)."""

from __future__ import annotations

import pytest

from privacy_relay.verify._js import MISSING
from privacy_relay.verify.chain import verify_chain, verify_chain_export
from privacy_relay.verify.jwks import JwksError
from privacy_relay.verify.receipt import VerificationResult, verify_receipt
from privacy_relay.verify.transparency import verify_consistency_proof, verify_inclusion_proof
from privacy_relay.verify.webhook import (
    WebhookDeduper,
    WebhookVerificationError,
    sign_webhook_v0,
    sign_webhook_v1,
    verify_webhook,
)
from privacy_relay.wire.ecdsa import SigningKey, jwk_thumbprint

from .vectors import ids, load

RECEIPTS = load("receipts")
TRANSPARENCY = load("transparency")
ATTESTATION = load("attestation")
WEBHOOKS = load("webhooks")


def as_expected(result: VerificationResult) -> dict:
    return {
        "valid": result.valid,
        "reason": result.reason,
        "checks": [{"label": c.label, "status": c.status, "detail": c.detail} for c in result.checks],
    }


def test_gateway_key_and_jwks() -> None:
    key = RECEIPTS["gateway_key"]
    assert SigningKey.from_private_jwk(key["private_jwk"]).d.to_bytes(32, "big").hex() == key["d_hex"]
    assert jwk_thumbprint(key["public_jwk"]) == key["kid"]


@pytest.mark.parametrize("case", RECEIPTS["cases"], ids=ids(RECEIPTS["cases"]))
def test_receipt_case(case: dict) -> None:
    result = verify_receipt(
        case["input"],
        RECEIPTS["jwks"],
        now_seconds=case["now_seconds"],
        previous=case.get("previous", MISSING),
        attestation=case.get("attestation", MISSING),
    )
    assert as_expected(result) == case["expected"]


def chain_as_expected(result) -> dict:
    brk = result.break_
    return {
        "valid": result.valid,
        "verified": result.verified,
        "break": None if brk is None else {"index": brk.index, "seq": brk.seq, "kind": brk.kind, "reason": brk.reason},
        "gaps": [{"index": g.index, "after_seq": g.after_seq, "seq": g.seq} for g in result.gaps],
    }


@pytest.mark.parametrize("case", RECEIPTS["chains"], ids=ids(RECEIPTS["chains"]))
def test_chain_case(case: dict) -> None:
    result = verify_chain(case["receipts"], RECEIPTS["jwks"], now_seconds=case["now_seconds"], allow_gaps=case.get("allow_gaps", False))
    assert chain_as_expected(result) == case["expected"]


@pytest.mark.parametrize("case", RECEIPTS["chain_exports"], ids=ids(RECEIPTS["chain_exports"]))
def test_chain_export_case(case: dict) -> None:
    result = verify_chain_export(case["input"], RECEIPTS["jwks"], now_seconds=case["now_seconds"], allow_gaps=case.get("allow_gaps", False))
    got = {"valid": result.valid, "chains": [{"chain_id": c.chain_id, "count": c.count, **chain_as_expected(c)} for c in result.chains]}
    assert got == case["expected"]


@pytest.mark.parametrize("case", TRANSPARENCY["cases"], ids=ids(TRANSPARENCY["cases"]))
def test_transparency_case(case: dict) -> None:
    result = verify_inclusion_proof(case["proof"], case["sth"], TRANSPARENCY["jwks"], receipt=case.get("receipt", MISSING))
    assert as_expected(result) == case["expected"]


@pytest.mark.parametrize("case", TRANSPARENCY["consistency"], ids=ids(TRANSPARENCY["consistency"]))
def test_transparency_consistency_case(case: dict) -> None:
    result = verify_consistency_proof(case["proof"], case["old_head"], TRANSPARENCY["jwks"], new_head=case.get("new_head", MISSING))
    assert as_expected(result) == case["expected"]


@pytest.mark.parametrize("case", ATTESTATION["verify"], ids=ids(ATTESTATION["verify"]))
def test_attestation_offline_verdict(case: dict) -> None:
    result = verify_receipt(case["header"], {"keys": []}, now_seconds=case["now_seconds"])
    assert {"valid": result.valid, "reason": result.reason} == case["expected"]["offline"]


def test_a_jwks_that_is_not_one_raises_jwks_error_not_a_verdict() -> None:
    with pytest.raises(JwksError) as raised:
        verify_receipt(RECEIPTS["cases"][0]["input"], {"nope": 1}, now_seconds=0)
    assert raised.value.code == "jwks_invalid"


def test_webhook_signatures_reproduce_the_vector_headers() -> None:
    for case in WEBHOOKS["sign"]:
        assert sign_webhook_v1(case["body"], WEBHOOKS["secret"], case["timestamp"]) == case["v1"]
        assert sign_webhook_v0(case["payload"], WEBHOOKS["secret"]) == case["v0"]
    delivery = WEBHOOKS["delivery"]
    assert verify_webhook(delivery["body"].encode(), delivery["headers"], WEBHOOKS["secret"], now_seconds=delivery["payload"]["timestamp"]) is True


@pytest.mark.parametrize("case", WEBHOOKS["verify"], ids=ids(WEBHOOKS["verify"]))
def test_webhook_verify_case(case: dict) -> None:
    call = lambda: verify_webhook(  # noqa: E731
        case["body"].encode("utf-8"), case["headers"], case["secret"], case["tolerance_seconds"], now_seconds=case["now_seconds"]
    )
    if case["expected"]["ok"]:
        assert call() is True
    else:
        with pytest.raises(WebhookVerificationError) as raised:
            call()
        assert raised.value.code == case["expected"]["code"]


def test_webhook_without_secret_or_with_non_utf8_body_fails_with_its_code() -> None:
    delivery = WEBHOOKS["delivery"]
    with pytest.raises(WebhookVerificationError) as raised:
        verify_webhook(delivery["body"].encode(), delivery["headers"], "")
    assert raised.value.code == "missing_secret"
    with pytest.raises(WebhookVerificationError) as raised:
        verify_webhook(b"\xff\xfe", delivery["headers"], WEBHOOKS["secret"])
    assert raised.value.code == "malformed_body"


def test_deduper_drops_a_repeat_within_the_ttl_and_forgets_it_after() -> None:
    clock = [0.0]
    deduper = WebhookDeduper(ttl_seconds=10, now=lambda: clock[0])
    delivery = WEBHOOKS["delivery"]
    event_id = WebhookDeduper.event_id_of(delivery["body"], delivery["headers"])
    assert event_id == delivery["payload"]["event_id"]
    assert WebhookDeduper.event_id_of(delivery["body"], {}) == delivery["payload"]["event_id"]
    assert deduper.seen(event_id) is False
    assert deduper.seen(event_id) is True
    clock[0] = 10.5
    assert deduper.seen(event_id) is False
    assert len(deduper) == 1
