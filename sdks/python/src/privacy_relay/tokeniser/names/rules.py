"""Person names by rules and gazetteers: given names and surnames of many locales (the TypeScript engine's
gazetteer, generated from @faker-js/faker; data/gazetteer.json), titles, greetings, chat speakers, labelled
fields and mail headers in English, French, German, Spanish and Dutch, with negative lists (places, months,
weekdays, salutations, brands). Linear in the text: one pass over its words plus set look-ups.

This is the rule half of the TypeScript built-in name model; its statistical half (compromise, a JavaScript
library) has no Python counterpart here, so names that only compromise finds are not found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from .. import jsregex
from ..detectors.field_kinds import mentions
from ..detectors.fields import fields_of
from ..types import Span

_DATA = json.loads((Path(__file__).resolve().parent.parent / "data" / "gazetteer.json").read_text("utf-8"))
GIVEN = frozenset(_DATA["GIVEN_NAMES"])
SURNAME = frozenset(_DATA["SURNAMES"])
PLACE = frozenset(_DATA["PLACE_WORDS"])
CALENDAR = frozenset(_DATA["CALENDAR_WORDS"])

TITLES = frozenset(
    "mr mrs ms mx dr prof sir dame m mme mlle monsieur madame mademoiselle herr herrn frau fräulein señor señora señorita sr sra srta don doña dra dña meneer mevrouw mevr dhr mw heer signor signora sig".split()
)
GREETINGS = frozenset(
    "hi hello hey dear thanks thank cheers bye bonjour salut cher chère coucou merci hallo liebe lieber danke servus grüße gruß hola querida querido estimado estimada gracias saludos hoi beste dag bedankt groeten groet ciao cara caro grazie".split()
)
PARTICLES = frozenset("van der den de del della la le du des von vom zu ten ter te da di dos das y bin ibn al st".split())
STOP = frozenset(
    (
        "the this that these those and or but if in on at for from to with by of as is are was be it its he she we they you your our my his her their "
        "subject re fwd fw from to cc date sent best kind regards sincerely yours team support customer client patient name "
        "le la les un une des et ou mais pour avec dans sur par bonjour madame monsieur merci cordialement "
        "der die das ein eine und oder aber mit von für auf bei grüße viele beste freundlichen "
        "el los las una y o pero con para por en saludos un "
        "het een en maar met voor op bij groeten vriendelijke "
        "sir madam ford dell philips siemens bosch porsche renault heineken zara carrefour ferrari chanel disney boeing google apple amazon microsoft tesla "
        "ville stadt ort ciudad plaats nom naam nombre prénom vorname nachname apellidos voornaam achternaam titulaire kunde klant cliente sie ihr ich du wir usted vous nous ik wij jij"
    ).split()
)
ARTICLES = frozenset("the a an la le les der die das el los las het een".split())
PLACE_PREFIXES = frozenset("san santa santo saint sainte st sankt são sao den los las".split())

_NAME_CUE = jsregex.compile(
    r"(?:\b(?:on behalf of|account holder|holder|a nombre de|en nombre de|au nom de|de la part de|im namen von|namens|t\.n\.v\.|ten name van|kontoinhaber(?:in)?|titular|titulaire|signed by|firmado por|sign[ée] par|unterzeichnet von|groeten van|groet van|greetings from|grüße von|grüßen von|saludos de|amitiés de)\s*:?\s*)$",
    "iu",
)
_WORD = jsregex.compile(r"[\p{L}\p{M}](?:[\p{L}\p{M}'’\-]*[\p{L}\p{M}])?", "gu")
_CAPITALISED = jsregex.compile(r"^\p{Lu}\p{Ll}", "u")
_CAPITALISED_APOSTROPHE = jsregex.compile(r"^\p{Lu}['’]\p{Lu}\p{Ll}", "u")
_POSSESSIVE = jsregex.compile(r"['’]s$", "u")
_TITLE_GAP = jsregex.compile(r"^[.\s]*$")
_SPEAKER_HEAD = jsregex.compile(r"^\s*\[[\d:]+\]\s*$")
_SPEAKER_TAIL = jsregex.compile(r"^\s*:")
_ALONE_HEAD = jsregex.compile(r"^\s*(?:--\s*)?$")
_ALONE_TAIL = jsregex.compile(r"^\s*[,.!]?\s*$")
_SIGNED_TAIL = jsregex.compile(r"^[,.!\s]*$")
_SIGN_OFF = jsregex.compile(r"(?:thanks|cheers|merci|danke|gracias|bedankt|groeten|grüße|saludos|regards)[,!\s]*$", "i")
_MAIL_HEADER = jsregex.compile(r"""^(?:from|to|cc|reply-to|von|an|de|à|para|van|aan)\s*:\s*"?([^"<>\n@]+?)"?\s*<[^>\n]+>""", "gimu")
_FIELD_STOP = jsregex.compile(r"[,，;；、]", "u")
_DIGIT_OR_AT = jsregex.compile(r"[\d@]")
_OTHER_LETTER = jsregex.compile(r"^\p{Lo}", "u")


class _Word(NamedTuple):
    text: str
    start: int
    end: int


def _is_capitalised(w: str) -> bool:
    return _CAPITALISED.search(w) is not None or _CAPITALISED_APOSTROPHE.search(w) is not None


def _base(w: str) -> str:
    return _POSSESSIVE.sub("", w, count=1)


def _is_given(w: str) -> bool:
    return w in GIVEN or all(part in GIVEN for part in w.split("-"))


def _is_surname(w: str) -> bool:
    return w in SURNAME or all(part in SURNAME or part in GIVEN for part in w.split("-"))


def _name_like(w: str) -> bool:
    low = w.lower()
    return (
        _is_capitalised(w)
        and low not in STOP
        and low not in GREETINGS
        and low not in CALENDAR
        and (low[:-1] if low.endswith(".") else low) not in TITLES
        and low not in PLACE_PREFIXES
    )


def _words_of(text: str) -> list[_Word]:
    return [_Word(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def _joined(text: str, a: _Word, b: _Word) -> bool:
    return b.start - a.end == 1 and text[a.end] == " "


def _extend(text: str, words: list[_Word], i: int, limit: int = 4) -> int:
    last = i
    j = i + 1
    while j < len(words) and j - i <= limit + 2 and _joined(text, words[j - 1], words[j]):
        w = words[j].text
        if _name_like(w) and w not in PLACE:
            last = j
            j += 1
            continue
        if w.lower() in PARTICLES and not _is_capitalised(w):
            j += 1
            continue
        break
    return last


def _span(words: list[_Word], start: int, to: int) -> Span:
    last = words[to]
    return Span(words[start].start, last.end - (len(last.text) - len(_base(last.text))), "PERSON")


def _line_head(text: str, index: int) -> str:
    begin = max(0, index - 40)
    before = text[begin:index]
    nl = before.rfind("\n")
    return "?" if nl == -1 and begin > 0 else before[nl + 1:]


def _line_tail(text: str, index: int) -> str:
    after = text[index:index + 40]
    nl = after.find("\n")
    return after if nl == -1 else after[:nl]


def _names_in_prose(text: str) -> list[Span]:
    words = _words_of(text)
    spans: list[Span] = []
    i = 0
    while i < len(words):
        w = words[i]
        previous = words[i - 1] if i > 0 and words[i - 1].end >= w.start - 2 else None
        prev_lower = "" if previous is None else previous.text.lower()
        prev_title = prev_lower[:-1] if prev_lower.endswith(".") else prev_lower
        if previous is not None and prev_title in TITLES and w.text.lower() in PARTICLES and _TITLE_GAP.search(text[previous.end:w.start]):
            j = i
            while j < len(words) - 1 and words[j].text.lower() in PARTICLES and _joined(text, words[j], words[j + 1]):
                j += 1
            if j > i and _name_like(words[j].text):
                last = _extend(text, words, j)
                spans.append(_span(words, i, last))
                i = last + 1
                continue
        if not _name_like(w.text):
            i += 1
            continue
        if previous is not None and prev_lower in TITLES and _TITLE_GAP.search(text[previous.end:w.start]) and w.text.lower() not in CALENDAR:
            last = _extend(text, words, i)
            spans.append(_span(words, i, last))
            i = last + 1
            continue
        if previous is not None and prev_lower in ARTICLES:
            i += 1
            continue
        if _NAME_CUE.search(text[max(0, w.start - 30):w.start]):
            last = _extend(text, words, i)
            spans.append(_span(words, i, last))
            i = last + 1
            continue
        nxt = words[i + 1] if i + 1 < len(words) else None
        before_surname = (
            nxt is not None
            and _joined(text, w, nxt)
            and _is_capitalised(nxt.text)
            and _base(nxt.text) in SURNAME
            and _base(nxt.text) not in GIVEN
            and w.text not in PLACE
        )
        given = _is_given(_base(w.text))
        last = _extend(text, words, i) if given or before_surname else i
        if last > i:
            if w.text in PLACE and not _is_surname(_base(words[i + 1].text)):
                i += 1
                continue
            spans.append(_span(words, i, last))
            i = last + 1
            continue
        if w.text in PLACE:
            i += 1
            continue
        head = _line_head(text, w.start)
        tail = _line_tail(text, w.end)
        greeted = previous is not None and prev_lower in GREETINGS
        speaker = _SPEAKER_HEAD.search(head) is not None and _SPEAKER_TAIL.search(tail) is not None
        if not given and not greeted and not speaker:
            i += 1
            continue
        alone = _ALONE_HEAD.search(head) is not None and _ALONE_TAIL.search(tail) is not None
        signed_off = _SIGNED_TAIL.search(tail) is not None and _SIGN_OFF.search(head) is not None
        if greeted or speaker or (given and (alone or signed_off)):
            spans.append(_span(words, i, i))
        i += 1
    return spans


def _names_in_fields(text: str) -> list[Span]:
    spans: list[Span] = []
    for f in fields_of(text):
        if not mentions("name", f.label):
            continue
        full = text[f.start:f.end]
        stop = _FIELD_STOP.search(full)
        value = full if stop is None else full[:stop.start()]
        words = _words_of(value)
        if not words or len(words) > 5 or _DIGIT_OR_AT.search(value):
            continue
        if not all(_is_capitalised(w.text) or w.text.lower() in PARTICLES or _OTHER_LETTER.search(w.text) for w in words):
            continue
        if any(w.text.lower() in STOP and w.text.lower() not in PARTICLES for w in words):
            continue
        spans.append(Span(f.start + words[0].start, f.start + words[-1].end, "PERSON"))
    for m in _MAIL_HEADER.finditer(text):
        name = m.group(1).strip()
        at = m.start() + m.group(0).find(name)
        if all(_is_capitalised(w.text) or w.text.lower() in PARTICLES for w in _words_of(name)):
            spans.append(Span(at, at + len(name), "PERSON"))
    return spans


def detect_names_by_rules(text: str) -> list[Span]:
    """Person names found by rules, overlapping ones merged into one."""
    found = sorted(_names_in_fields(text) + _names_in_prose(text), key=lambda s: s.start)
    merged: list[Span] = []
    for s in found:
        if merged and s.start < merged[-1].end:
            merged[-1] = Span(merged[-1].start, max(merged[-1].end, s.end), "PERSON")
        else:
            merged.append(s)
    return merged


class BuiltinNameModel:
    """The on-device name model of the Python engine: gazetteer and rules, nothing leaves the device."""

    def detect(self, text: str) -> list[Span]:
        return detect_names_by_rules(text)
