"""Shared vocabulary of the tokeniser."""

from __future__ import annotations

from typing import NamedTuple

#: Every category the engine tokenises; an alias carries its category, e.g. `<EMAIL_1_k3f9>`.
ENTITY_TYPES: tuple[str, ...] = (
    "EMAIL", "PHONE", "CARD", "US_SSN", "UK_NINO", "ES_DNI", "FR_NIR", "NL_BSN", "NATIONAL_ID", "IBAN",
    "IPV4", "IPV6", "DATE_OF_BIRTH", "PASSPORT", "MRZ", "CRYPTO_WALLET", "URL_CREDENTIALS", "PERSON",
)


class Span(NamedTuple):
    """A detected value: offsets into the scanned text (`end` exclusive) and its category."""

    start: int
    end: int
    type: str
