"""Card candidates on long inputs: the runs of digit groups the card detector judges, and what it finds in them."""

import random

import regex

from privacy_relay.tokeniser.detectors.card import card_detector, digit_group_runs

# The pattern digit_group_runs replaces: the specification of a run.
RUN_PATTERN = regex.compile(r"(?<![0-9\-+])[0-9]+(?:(?: [0-9]+)+|(?:-[0-9]+)+)?(?![0-9]|-[0-9])")


def test_runs_are_exactly_what_the_former_pattern_matched_on_random_texts():
    rng = random.Random(41)
    alphabet = "0123456789  --+a\n"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        by_pattern = [(m.start(), m.end()) for m in RUN_PATTERN.finditer(text)]
        by_scanner = [(run[0].start, run[-1].end) for run in digit_group_runs(text)]
        assert by_scanner == by_pattern, repr(text)


def test_a_card_after_millions_of_digit_groups_is_found():
    card = "4111 1111 1111 1111"
    text = "12 " * 3_400_000 + f"x {card} y"
    spans = card_detector.detect(text)
    assert [text[s.start : s.end] for s in spans] == [card]
