"""Runs the structured detectors and resolves overlaps."""

from __future__ import annotations

import bisect
from typing import Sequence

from .detectors import Detector
from .detectors.card import card_detector
from .detectors.crypto_wallet import crypto_wallet_detector
from .detectors.date_of_birth import date_of_birth_detector
from .detectors.email import email_detector
from .detectors.es_dni import es_dni_detector
from .detectors.fr_nir import fr_nir_detector
from .detectors.iban import iban_detector, rejected_iban_runs
from .detectors.ipv4 import ipv4_detector
from .detectors.ipv6 import ipv6_detector
from .detectors.mrz import mrz_detector
from .detectors.national_id import national_id_detector
from .detectors.nl_bsn import nl_bsn_detector
from .detectors.passport import passport_detector
from .detectors.phone import DEFAULT_PHONE_REGIONS, make_phone_detector
from .detectors.uk_nino import uk_nino_detector
from .detectors.url_credentials import url_credentials_detector
from .detectors.us_ssn import us_ssn_detector
from .types import Span

#: When two detections overlap, the earlier type wins: the most specific validated shapes first; names last, so a
#: model never overrides a validated identifier. A passport's machine-readable zone first: one value nothing splits.
PRIORITY: tuple[str, ...] = (
    "MRZ", "URL_CREDENTIALS", "EMAIL", "IBAN", "CARD", "FR_NIR", "US_SSN", "UK_NINO", "ES_DNI", "NL_BSN", "NATIONAL_ID",
    "DATE_OF_BIRTH", "PASSPORT", "CRYPTO_WALLET", "IPV6", "IPV4", "PHONE", "PERSON",
)
_RANK = {t: i for i, t in enumerate(PRIORITY)}


def structured_detectors(phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> list[Detector]:
    return [
        mrz_detector, url_credentials_detector, email_detector, iban_detector, card_detector, fr_nir_detector, us_ssn_detector,
        uk_nino_detector, es_dni_detector, nl_bsn_detector, national_id_detector, date_of_birth_detector,
        passport_detector, crypto_wallet_detector, ipv6_detector, ipv4_detector, make_phone_detector(phone_regions),
    ]


def resolve_overlaps(spans: Sequence[Span]) -> list[Span]:
    """A non-overlapping subset: higher priority first, then the longer span, then the earlier one."""
    ordered = sorted(spans, key=lambda s: (_RANK.get(s.type, len(PRIORITY)), -(s.end - s.start), s.start))
    kept: list[Span] = []
    starts: list[int] = []
    for s in ordered:
        if s.end <= s.start:
            continue
        lo = bisect.bisect_left(starts, s.start)
        nxt = kept[lo] if lo < len(kept) else None
        prev = kept[lo - 1] if lo > 0 else None
        if (nxt is None or s.end <= nxt.start) and (prev is None or prev.end <= s.start):
            kept.insert(lo, s)
            starts.insert(lo, s.start)
    return kept


def _mask_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    parts: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if end <= at:
            continue
        begin = max(at, start)
        parts.append(text[at:begin])
        parts.append("Q" * (end - begin))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def detect_structured(text: str, detectors: Sequence[Detector] | None = None) -> list[Span]:
    """Every structured detection. The phone parser runs last, on the text with every other detection masked:
    it reads digit runs greedily, so a phone next to an SSN would otherwise be read as one invalid number."""
    if detectors is None:
        detectors = structured_detectors()
    rejected = rejected_iban_runs(text) if any(d.type == "IBAN" for d in detectors) else []

    def outside_rejected(s: Span) -> bool:
        return not any(s.start < r[1] and s.end > r[0] for r in rejected)

    others = [s for d in detectors if d.type != "PHONE" for s in d.detect(text) if outside_rejected(s)]
    phones = [d for d in detectors if d.type == "PHONE"]
    if not phones:
        return resolve_overlaps(others)
    masked = _mask_spans(text, [(s.start, s.end) for s in others] + rejected)
    return resolve_overlaps(others + [s for d in phones for s in d.detect(masked)])
