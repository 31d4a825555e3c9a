"""What a field label says its value is, in English, French, German, Spanish, Dutch (and the labels of other EU
national identifiers). A label is normalised first: `birth_date`, `birthDate` and `Birth-Date` read "birth date"."""

from __future__ import annotations

from typing import Optional

from .. import jsregex
from .fields import Field, field_at, fields_of

_KINDS: list[tuple[str, object]] = [
    (k, jsregex.compile(p, "iu"))
    for k, p in [
        ("dob", r"\b(?:dob|d\.o\.b|birth ?dates?|date (?:of )?birth|birthday|born|date de naissance|date naissance|n[ée]e?(?: ?\(e\))? le|geburtsdatum|geb\.?(?: ?-? ?datum)?|geboren(?: am| op)?|fecha (?:de )?nacimiento|f\.? nacimiento|nacid[oa](?: el)?|geboortedatum|geb\. ?datum|data (?:di )?nascita|nat[oa] il)(?:$|[\s:.])"),
        ("passport", r"\b(?:passport|passeport|reisepass|pass[ -]?(?:nr|nummer)|pasaporte|passaporto|passaporte|paspoort)"),
        ("ssn", r"\b(?:ssn|social security)\b"),
        ("nino", r"\b(?:nino|ni (?:number|no)|national insurance)\b"),
        ("bsn", r"\b(?:bsn|burgerservicenummer|sofi ?-?nummer)\b"),
        ("steuerId", r"\b(?:steuer ?-?id(?:nr)?|steuer ?-?idnr|steueridentifikationsnummer|idnr|identifikationsnummer)\b"),
        ("ahv", r"\b(?:ahv|avs|sozialversicherungsnummer)\b"),
        ("beNationalNumber", r"(?:rijksregister|registre national|num[ée]ro national|\bniss\b|\binsz\b)"),
        ("ppsn", r"\b(?:ppsn?|pps (?:no|number)|personal public service)\b"),
        ("pesel", r"\bpesel\b"),
        ("personnummer", r"\bperson(?:nummer|nr)\b"),
        ("cpr", r"\bcpr\b"),
        ("hetu", r"\b(?:hetu|henkil[öo]tunnus)\b"),
        ("codiceFiscale", r"\b(?:codice fiscale|cf)\b"),
        ("ip", r"\b(?:ip|ipv4|ips|ip ?-?ad(?:d)?res(?:s|se)?|remote addr|addr|direcci[óo]n ip|adresse ip|ip-adres|peer)\b"),
        ("phone", r"\b(?:phone|tel|t[ée]l|t[ée]l[ée]phone|telefon|telefoon|tel[ée]fono|telefonnummer|telefoonnummer|mobile?|mobil|mobilnummer|mobiel|m[óo]vil|cell|handy|portable|fax|gsm|contact number)\b"),
        ("version", r"\b(?:version|versie|versi[óo]n|app version|client|user agent|agent|sdk|release|build|firmware)\b"),
        ("reference", r"\b(?:order|orders|invoice|ref|reference|tracking|ticket|sku|ean|upc|isbn|serial|item|article|confirmation|booking|reservation|shipment|receipt|commande|facture|rechnung|bestellnummer|bestellung|auftrag|pedido|factura|bestelling|ordernummer|factuur|id|record|kundennummer|kd nr|klantnummer|n° client|nº cliente|identifiant|amount|montant|betrag|importe|bedrag|price|total|summe|pid|port|bytes|count|zip|postcode|plz)\b"),
        ("name", r"\b(?:name|full name|first name|last name|given name|surname|customer|contact|patient|cardholder|employee|nom|pr[ée]nom|client|titulaire|vorname|nachname|familienname|kunde|kundin|karteninhaber|mitarbeiter|nombre|apellidos|cliente|titular|paciente|naam|voornaam|achternaam|klant|rekeninghouder|pati[ëe]nt|fn)\b|姓名|联系人|聯絡人|名字|氏名|名前|担当者|имя|фио|отправитель"),
    ]
]
_PATTERN_OF = dict(_KINDS)
_CAMEL = jsregex.compile(r"([\p{Ll}])(\p{Lu})", "gu")
_UNDERSCORES = jsregex.compile(r"[_]+", "g")
_WRAPPING = jsregex.compile(r"""^[\s"'()[\]#€$£:=.,-]*$""")
_NEGATION = jsregex.compile(r"\b(?:no|not|without|unknown|geen|zonder|kein|keine|ohne|sans|aucun|sin|ningún)\b", "i")
_LAST_DIGIT_RUN = jsregex.compile(r"\d[^\d]*$")


def _normalise(label: str) -> str:
    return _UNDERSCORES.sub(" ", _CAMEL.sub(r"\1 \2", label)).lower().strip()


_cache: dict[str, Optional[str]] = {}


def kind_of_label(label: str) -> Optional[str]:
    """The kind of value a label announces, or None when it says nothing the detectors use."""
    if label in _cache:
        return _cache[label]
    n = _normalise(label)
    kind = next((k for k, p in _KINDS if p.search(n)), None)  # type: ignore[attr-defined]
    if len(_cache) > 5000:
        _cache.clear()
    _cache[label] = kind
    return kind


def field_kind_at(text: str, start: int, end: int) -> Optional[str]:
    f = field_at(text, start, end)
    return None if f is None else kind_of_label(f.label)


def whole_value_kind_at(text: str, start: int, end: int) -> Optional[str]:
    """The kind of the field whose whole value is [start, end) (give or take quotes, brackets, currency signs)."""
    f = field_at(text, start, end)
    if f is None or f.end - f.start - (end - start) > 16:
        return None
    rest = text[f.start:start] + text[end:f.end]
    return kind_of_label(f.label) if _WRAPPING.search(rest) else None


def fields_of_kind(text: str, kind: str) -> list[Field]:
    return [f for f in fields_of(text) if kind_of_label(f.label) == kind]


def mentions(kind: str, s: str) -> bool:
    return _PATTERN_OF[kind].search(_normalise(s)) is not None  # type: ignore[attr-defined]


def mentioned_before(kind: str, text: str, start: int, width: int = 50) -> bool:
    """True when the words before `start` on the same line, after the last digit there, name `kind`."""
    window = text[max(0, start - width):start]
    m = _LAST_DIGIT_RUN.search(window)
    cut = max(window.rfind("\n"), m.start() if m else -1)
    if cut >= 0:
        window = window[cut + 1:]
    if _NEGATION.search(window):
        return False
    return _PATTERN_OF[kind].search(_normalise(window)) is not None  # type: ignore[attr-defined]
