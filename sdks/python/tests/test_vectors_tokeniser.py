"""sdks/vectors aliases.json, tokeniser-spans.json and tokeniser-names.json: tags, tokenisation outputs and maps,
streaming detokenisation chunk by chunk, and the spans of the multilingual sets (names off, and the built-in name
model on), exactly."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from privacy_relay.tokeniser.alias import ALIAS_PATTERN, TAG_ALPHABET, is_alias, tag_from_mac
from privacy_relay.tokeniser.detokenise import StreamingDetokeniser, detokenise
from privacy_relay.tokeniser.names.rules import BuiltinNameModel
from privacy_relay.tokeniser.session import TokeniserSession
from privacy_relay.tokeniser.tokenise import Tokeniser

from .vectors import ids, load

ALIASES = load("aliases")
SPANS = load("tokeniser-spans")
NAMES = load("tokeniser-names")
REQUEST_SECRET = bytes.fromhex(ALIASES["request_secret_hex"])
STABLE_SECRET = bytes.fromhex(ALIASES["stable_secret_hex"])


def test_pattern_and_alphabet_are_the_vector_ones() -> None:
    assert ALIAS_PATTERN.pattern.replace("[0-9]", "\\d") == ALIASES["pattern"]
    assert TAG_ALPHABET == ALIASES["tag_alphabet"]
    for case in ALIASES["is_alias"]:
        assert is_alias(case["text"]) is case["alias"], case["text"]


def test_tag_derivation_per_request_and_stable() -> None:
    for tag in ALIASES["tags"]["per_request"]:
        mac = hmac.new(REQUEST_SECRET, tag["message"].encode(), hashlib.sha256).digest()
        assert mac.hex() == tag["hmac_sha256"]
        assert tag_from_mac(mac, ALIASES["request_tag_length"]) == tag["tag"]
    for tag in ALIASES["tags"]["stable"]:
        mac = hmac.new(STABLE_SECRET, tag["message"].encode(), hashlib.sha256).digest()
        assert mac.hex() == tag["hmac_sha256"]
        assert tag_from_mac(mac, ALIASES["stable_tag_length"]) == tag["tag"]
        session = TokeniserSession(stable_alias_secret=STABLE_SECRET)
        assert session.alias_for(tag["type"], tag["value"]) == tag["alias"]


@pytest.mark.parametrize("case", ALIASES["tokenise"], ids=ids(ALIASES["tokenise"], "text"))
def test_tokenise_with_names_off(case: dict) -> None:
    session = TokeniserSession(secret=REQUEST_SECRET)
    assert Tokeniser(None).tokenise_text(case["text"], session) == case["output"]
    assert [list(pair) for pair in session.map.items()] == case["map"]
    assert session.detectors_fired == case["detectors_fired"]


@pytest.mark.parametrize("case", ALIASES["tokenise_stable"], ids=ids(ALIASES["tokenise_stable"], "text"))
def test_tokenise_with_stable_aliases(case: dict) -> None:
    session = TokeniserSession(secret=REQUEST_SECRET, stable_alias_secret=STABLE_SECRET)
    assert Tokeniser(None).tokenise_text(case["text"], session) == case["output"]
    assert [list(pair) for pair in session.map.items()] == case["map"]


@pytest.mark.parametrize("case", ALIASES["streams"], ids=ids(ALIASES["streams"]))
def test_streaming_detokeniser_push_by_push(case: dict) -> None:
    aliases = dict(case["map"])
    stream = StreamingDetokeniser(aliases)
    assert [stream.push(chunk) for chunk in case["chunks"]] == case["outputs"]
    assert stream.flush() == case["flush"]
    assert "".join(case["outputs"]) + case["flush"] == case["joined"] == detokenise("".join(case["chunks"]), aliases)


@pytest.mark.parametrize("case", SPANS["cases"], ids=[c["text"][:40] for c in SPANS["cases"]])
def test_spans_of_the_multilingual_set(case: dict) -> None:
    tokeniser = Tokeniser(None, phone_regions=SPANS["engine_settings"]["phone_regions"])
    found = [{"start": s.start, "end": s.end, "type": s.type, "value": case["text"][s.start:s.end]} for s in tokeniser.detect_spans(case["text"])]
    assert found == case["spans"]


@pytest.mark.parametrize("case", NAMES["cases"], ids=[c["text"][:40] for c in NAMES["cases"]])
def test_spans_with_the_builtin_name_model(case: dict) -> None:
    assert NAMES["engine_settings"]["names"] == "builtin"
    tokeniser = Tokeniser(BuiltinNameModel(), phone_regions=NAMES["engine_settings"]["phone_regions"])
    found = [{"start": s.start, "end": s.end, "type": s.type, "value": case["text"][s.start:s.end]} for s in tokeniser.detect_spans(case["text"])]
    assert found == case["spans"]


LARGE = load("tokeniser-large")


@pytest.mark.parametrize("case", LARGE["cases"], ids=[c["name"] for c in LARGE["cases"]])
def test_spans_after_a_pathological_long_run(case) -> None:
    """Millions of repeats of a short unit, then a real value: no regex stack or limit error, and the value is found."""
    text = case["unit"] * case["times"] + case["tail"]
    tokeniser = Tokeniser(None, phone_regions=LARGE["engine_settings"]["phone_regions"])
    found = [{"start": s.start, "end": s.end, "type": s.type, "value": text[s.start:s.end]} for s in tokeniser.detect_spans(text)]
    assert found == case["spans"]
