"""sdks/vectors/egress-policy-cases.json: the Python engine walks every body with the egress policy exactly as the
reference engine does: the same refusals at the same JSON pointers, or the same bytes, passthrough declarations,
detector counts and alias map."""

from __future__ import annotations

import copy

import pytest

from privacy_relay.engine import egress_error
from privacy_relay.errors import NestingTooDeepError, UnsupportedContentError, UnsupportedFieldError
from privacy_relay.tokeniser.session import TokeniserSession
from privacy_relay.tokeniser.tokenise import Tokeniser
from privacy_relay.wire.egress_policy import EGRESS_ROUTES, MAX_EGRESS_DEPTH, EgressRefusal

from .vectors import ids, load

CASES = load("egress-policy-cases")["cases"]
ERRORS = {"unsupported_field": (UnsupportedFieldError, 400), "unsupported_content": (UnsupportedContentError, 415), "nesting_too_deep": (NestingTooDeepError, 400)}


def run(case: dict):
    options = case["options"]
    assert options["names"] == "off"
    return Tokeniser(None).tokenise_request(
        case["route"],
        copy.deepcopy(case["body"]),
        TokeniserSession(secret=bytes.fromhex(options["secret_hex"])),
        identifier_secret=bytes.fromhex(options["identifier_secret_hex"]),
        media_policy=options["media_policy"],
        passthrough_paths=options["passthrough_paths"],
    )


def test_the_cases_cover_every_route_and_refusal() -> None:
    assert load("egress-policy-cases")["max_depth"] == MAX_EGRESS_DEPTH
    assert {c["route"] for c in CASES} == set(EGRESS_ROUTES)
    assert {c["expected"]["refusal"]["code"] for c in CASES if "refusal" in c["expected"]} == set(ERRORS)


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_egress_policy_case(case: dict) -> None:
    expected = case["expected"]
    if "refusal" in expected:
        with pytest.raises(EgressRefusal) as caught:
            run(case)
        refusal = caught.value
        got = {"code": refusal.code, "path": refusal.path, **({} if refusal.kind is None else {"kind": refusal.kind})}
        assert got == expected["refusal"]
        # The SDK error the clients raise: its class, status, path and details.
        error = egress_error(refusal)
        cls, status = ERRORS[refusal.code]
        assert isinstance(error, cls) and error.status == status and error.code == refusal.code and error.path == refusal.path
        assert error.details == refusal.details and error.details["path"] == refusal.path
        return
    out = run(case)
    text = out.body_bytes.decode("utf-8")
    assert text == expected["body_jcs"]
    assert out.passthrough == expected["passthrough"]
    assert out.detectors_fired == expected["detectors_fired"]
    assert [list(pair) for pair in out.map.items()] == expected["map"]
    for value in case.get("never_sent", []):
        assert value not in text
