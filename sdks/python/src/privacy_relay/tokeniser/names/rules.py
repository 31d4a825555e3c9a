"""The portable name model (the TypeScript engine's names/nameRules.ts, the Rust engine's tokeniser/names.rs): person
names by gazetteers, capitalisation, position and per-language cue words, all read from data/name-model.json
(model_data.py), the same file every engine reads. Given names and surnames of many locales, names that are also
ordinary words (never a name alone), titles, greetings, sign-offs, phrases that introduce a person, labelled fields
(table headers, JSON keys, form labels) and negative lists (places, months and weekdays that are also names,
brands). Linear in the text: one pass over its words plus set look-ups."""

from __future__ import annotations

from typing import NamedTuple

from .. import jsregex
from ..detectors.fields import fields_of
from ..types import Span
from .model_data import (
    ALONE_NOT_A_NAME,
    AMBIGUOUS,
    ARTICLES,
    CALENDAR,
    CAPITALISED_PARTICLES,
    COMMON_WORDS,
    GIVEN,
    GREETINGS,
    INTRODUCER,
    MAIL_HEADER,
    PARTICLES,
    PLACE,
    PLACE_PREFIXES,
    POSSESSIVE_LINKS,
    SIGN_OFF,
    STOP,
    SURNAME,
    TITLES,
    is_name_label,
)

_WORD = jsregex.compile(r"[\p{L}\p{M}](?:[\p{L}\p{M}'’\-]*[\p{L}\p{M}])?", "gu")
_CAPITALISED = jsregex.compile(r"^(?:\p{Lu}\p{Ll}|\p{Lu}['’]\p{Lu}\p{Ll})", "u")
# Particles that only ever join the parts of a person's name (not "de", also in "Banco de España").
_NAME_PARTICLES = frozenset(["van", "von", "ten", "ter", "vom", "zu"])
# A value in quotes: 'Grace Holloway', "Thomas" (SQL values, CSV cells, code).
_QUOTE_BEFORE = jsregex.compile("[\"'‘“]$")
_QUOTE_AFTER = jsregex.compile("^[\"'’”]")
_ENCLOSED_BEFORE = jsregex.compile("(?:^|[(\\[\"'“‘]\\s*)$")
_ENCLOSED_AFTER = jsregex.compile("^\\s*(?:[,)\\]\"'”’:;]|$)")
# The line that opens an e-mail signature.
_SIGNATURE_DELIMITER = jsregex.compile(r"^\s*--\s*$")
_SPEAKER_HEAD = jsregex.compile(r"^\s*\[[\d:]+\]\s*$")
_SPEAKER_TAIL = jsregex.compile(r"^\s*:")
_ALONE_HEAD = jsregex.compile(r"^\s*(?:--\s*)?$")
_ALONE_TAIL = jsregex.compile(r"^\s*[,.!]?\s*$")
_SIGNED_TAIL = jsregex.compile(r"^[,.!\s]*$")
_TITLE_GAP = jsregex.compile(r"^[.\s]*$")
_SAME_SENTENCE_GAP = jsregex.compile(r"^ {1,2}$")
_FIELD_STOP = jsregex.compile(r"[,，;；、]", "u")
_DIGIT_OR_AT = jsregex.compile(r"[\d@]")
_OTHER_LETTER = jsregex.compile(r"^\p{Lo}", "u")


class _Word(NamedTuple):
    text: str
    start: int
    end: int


def _is_capitalised(w: str) -> bool:
    return _CAPITALISED.search(w) is not None


def _base(w: str) -> str:
    return w[:-2] if w.endswith("'s") or w.endswith("’s") else w


def _is_given(w: str) -> bool:
    return w in GIVEN or ("-" in w and all(part in GIVEN for part in w.split("-")))


def _is_surname(w: str) -> bool:
    return w in SURNAME or ("-" in w and all(part in SURNAME or part in GIVEN for part in w.split("-")))


def _is_strong_given(w: str) -> bool:
    """A given name that is a name even by itself: not also an ordinary word, a place, a month or a trade."""
    return _is_given(w) and w not in AMBIGUOUS and w not in PLACE and w.lower() not in CALENDAR and w.lower() not in ALONE_NOT_A_NAME


def _name_like(w: str) -> bool:
    """A capitalised word that may be part of a name (not a stop word, month or weekday)."""
    if not _is_capitalised(w):
        return False
    low = w.lower()
    return low not in STOP and low not in GREETINGS and low not in CALENDAR and low not in TITLES and low not in PLACE_PREFIXES


def _is_possessive(w: str) -> bool:
    return _base(w) != w


def _after_particles(text: str, words: list[_Word], j: int) -> int:
    """The index of the first word after a run of particles starting at j, or j."""
    k = j
    while k < len(words) - 1 and _is_particle(words[k].text) and _joined(text, words[k], words[k + 1]):
        k += 1
    return k


def _is_particle(w: str) -> bool:
    low = w.lower()
    return low in PARTICLES and (not _is_capitalised(w) or low in CAPITALISED_PARTICLES)


def _is_particle_only(w: str) -> bool:
    """A capitalised particle ("Le", "Van") is a name's part only before another capitalised word."""
    return w.lower() in CAPITALISED_PARTICLES


def _words_of(text: str) -> list[_Word]:
    return [_Word(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def _joined(text: str, a: _Word, b: _Word) -> bool:
    """Only a single space joins the words of one name."""
    return b.start - a.end == 1 and text[a.end] == " "


def _extend(text: str, words: list[_Word], i: int, limit: int = 4) -> int:
    """Extends a name starting at word i to the right: capitalised words, and particles followed by one."""
    last = i
    j = i + 1
    while j < len(words) and j - i <= limit + 2 and _joined(text, words[j - 1], words[j]):
        # A possessive ends the name: "Chloe Okafor's Social Security number".
        if _is_possessive(words[last].text):
            break
        w = words[j].text
        k = j
        while k < len(words) and _is_particle(words[k].text) and k + 1 < len(words) and _joined(text, words[k], words[k + 1]):
            k += 1
        if k > j and _name_like(words[k].text) and not _is_particle(words[k].text):
            last = k
            j = k + 1
            continue
        if _name_like(w) and not _is_particle_only(w):
            last = j
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


def _previous_line(text: str, line_start: int) -> str:
    """The line before the one starting at `line_start` (at most 40 characters of its end)."""
    if line_start <= 0:
        return ""
    before = text[max(0, line_start - 41):line_start - 1]
    return before[before.rfind("\n") + 1:]


def _is_signature_line(text: str, words: list[_Word], i: int) -> bool:
    """True when words[i] starts a line of one to four name-like words right after a sign-off line or `--`."""
    w = words[i]
    head = _line_head(text, w.start)
    if _ALONE_HEAD.search(head) is None or (w.text.lower() in COMMON_WORDS and not _is_given(w.text)) or w.text in PLACE:
        return False
    before = _previous_line(text, w.start - len(head))
    if SIGN_OFF.search(before) is None and _SIGNATURE_DELIMITER.search(before) is None:
        return False
    last = _extend(text, words, i, 3)
    return _ALONE_TAIL.search(_line_tail(text, words[last].end)) is not None


def _names_in_prose(text: str) -> list[Span]:
    words = _words_of(text)
    spans: list[Span] = []
    i = 0
    while i < len(words):
        w = words[i]
        # Most words are neither capitalised nor a particle: nothing to do for them.
        if not _is_capitalised(w.text) and not (len(w.text) <= 5 and w.text.lower() in PARTICLES):
            i += 1
            continue
        previous = words[i - 1] if i > 0 and words[i - 1].end >= w.start - 2 else None
        prev_lower = "" if previous is None else previous.text.lower()
        prev_title = prev_lower[:-1] if prev_lower.endswith(".") else prev_lower
        # "Mevr. de Vries", "Sra. de la Fuente": particles right after a title start the surname.
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
        b = _base(w.text)
        if previous is not None and prev_lower in TITLES and _TITLE_GAP.search(text[previous.end:w.start]):
            last = _extend(text, words, i)
            spans.append(_span(words, i, last))
            i = last + 1
            continue
        if previous is not None and prev_lower in ARTICLES:
            i += 1
            continue
        if INTRODUCER.search(text[max(0, w.start - 30):w.start]):
            last = _extend(text, words, i)
            if last > i or w.text not in PLACE:
                spans.append(_span(words, i, last))
                i = last + 1
                continue
        nxt = words[i + 1] if i + 1 < len(words) else None
        next_base = "" if nxt is None else _base(nxt.text)
        before_surname = (
            nxt is not None
            and _joined(text, w, nxt)
            and _is_capitalised(nxt.text)
            and next_base in SURNAME
            and next_base not in GIVEN
            and w.text not in PLACE
        )
        given = _is_given(b)
        strong = given and _is_strong_given(b)
        next_joined = nxt is not None and _joined(text, w, nxt) and _name_like(nxt.text)
        next_known = _is_surname(next_base) or _is_given(next_base)
        unknown_word = next_base.lower() not in COMMON_WORDS and next_base not in PLACE and not _is_particle_only(next_base)
        after_run = _after_particles(text, words, i + 1) if nxt is not None and _joined(text, w, nxt) else i + 1
        particles_then_surname = after_run > i + 1 and _is_capitalised(words[after_run].text) and _is_surname(_base(words[after_run].text))
        if b in AMBIGUOUS:
            # An ordinary word after it still makes a name when the two stand alone between brackets, quotes or commas.
            enclosed = (
                next_joined
                and _ENCLOSED_BEFORE.search(_line_head(text, w.start)) is not None
                and _ENCLOSED_AFTER.search(_line_tail(text, nxt.end)) is not None
            )
            next_ok = next_base not in AMBIGUOUS and (next_known or unknown_word or enclosed)
        else:
            next_ok = next_known or unknown_word
        ambiguous_start = given and ((next_joined and next_ok) or particles_then_surname)
        starts_name = before_surname or strong or ambiguous_start
        if not starts_name and _is_signature_line(text, words, i):
            last = _extend(text, words, i, 3)
            spans.append(_span(words, i, last))
            i = last + 1
            continue
        particle_name = (
            not starts_name
            and b.lower() not in COMMON_WORDS
            and w.text not in PLACE
            and nxt is not None
            and _joined(text, w, nxt)
            and nxt.text.lower() in _NAME_PARTICLES
        )
        last = _extend(text, words, i) if starts_name or particle_name else i
        if last > i:
            if w.text in PLACE and not _is_surname(next_base) and not _is_given(next_base):
                i += 1
                continue
            spans.append(_span(words, i, last))
            i = last + 1
            continue
        head = _line_head(text, w.start)
        tail = _line_tail(text, w.end)
        if w.text in PLACE:
            if (
                given
                and _ALONE_HEAD.search(head) is not None
                and _ALONE_TAIL.search(tail) is not None
                and SIGN_OFF.search(_previous_line(text, w.start - len(head))) is not None
            ):
                spans.append(_span(words, i, i))
            i += 1
            continue
        greeted = previous is not None and prev_lower in GREETINGS
        if strong and _QUOTE_BEFORE.search(head) is not None and _QUOTE_AFTER.search(tail) is not None:
            spans.append(_span(words, i, i))
            i += 1
            continue
        speaker = _SPEAKER_HEAD.search(head) is not None and _SPEAKER_TAIL.search(tail) is not None
        if not given and not greeted and not speaker:
            i += 1
            continue
        alone = _ALONE_HEAD.search(head) is not None and _ALONE_TAIL.search(tail) is not None
        signed_off = _SIGNED_TAIL.search(tail) is not None and SIGN_OFF.search(head) is not None
        mid_sentence = (
            strong
            and not tail.startswith(" &")
            and not head.endswith("& ")
            and previous is not None
            and (prev_lower in POSSESSIVE_LINKS or not _is_capitalised(previous.text))
            and _SAME_SENTENCE_GAP.search(text[previous.end:w.start]) is not None
        )
        if greeted or speaker or (given and b not in AMBIGUOUS and (alone or signed_off)) or mid_sentence:
            spans.append(_span(words, i, i))
        i += 1
    return spans


def _names_in_fields(text: str) -> list[Span]:
    spans: list[Span] = []
    for f in fields_of(text):
        if not is_name_label(f.label):
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
    for m in MAIL_HEADER.finditer(text):
        name = m.group(1).strip()
        at = m.start() + m.group(0).find(name)
        # "Reply-To: <noreply@...>": no display name.
        if name and all(_is_capitalised(w.text) or w.text.lower() in PARTICLES for w in _words_of(name)):
            spans.append(Span(at, at + len(name), "PERSON"))
    return spans


def detect_names_by_rules(text: str) -> list[Span]:
    """Person names of `text` by the portable name model, overlapping ones merged into one."""
    found = sorted(_names_in_fields(text) + _names_in_prose(text), key=lambda s: s.start)
    merged: list[Span] = []
    for s in found:
        if merged and s.start < merged[-1].end:
            merged[-1] = Span(merged[-1].start, max(merged[-1].end, s.end), "PERSON")
        else:
            merged.append(s)
    return merged


class BuiltinNameModel:
    """The on-device name model of the Python engine: the portable name model, nothing leaves the device."""

    def detect(self, text: str) -> list[Span]:
        return detect_names_by_rules(text)
