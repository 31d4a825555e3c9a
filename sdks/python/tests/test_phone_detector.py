"""The phone detector on long runs of digit groups (mirrors test/sdks/typescript/tokeniser/detectors/phone.test.ts).
Their cost is measured by the TypeScript bench (`npm run bench:engine`, digit-run rows), not asserted here."""

from __future__ import annotations

from privacy_relay.tokeniser.detectors.phone import make_phone_detector


def _phones(text: str) -> list[str]:
    return [text[s.start:s.end] for s in make_phone_detector().detect(text)]


def test_100_kb_of_12_holds_no_phone_and_the_phones_around_and_inside_it_are_found() -> None:
    run = "12 " * 17_000
    text = f"Call +44 20 7946 0958 today.\n{run}0612345678 {run}\nor (212) 555-0187 tomorrow."
    assert len(text) > 100_000
    assert _phones(text) == ["+44 20 7946 0958", "0612345678", "(212) 555-0187"]


def test_a_run_of_single_digits_and_dots_dashes_or_brackets_gives_no_phone() -> None:
    for unit in ["1.", "12-", "(12) ", "1 "]:
        assert _phones(unit * 30_000) == [], unit


def test_each_of_many_mobile_numbers_in_one_space_separated_run_is_found_once() -> None:
    text = "0612345678 " * 100
    found = make_phone_detector().detect(text)
    assert [s.start for s in found] == [i * 11 for i in range(100)]
    assert all(text[s.start:s.end] == "0612345678" for s in found)
