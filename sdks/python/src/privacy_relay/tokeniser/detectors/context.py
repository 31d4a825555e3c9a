"""Context helpers: the words right before a candidate decide whether a number is an identifier or, say, an
order number."""

from __future__ import annotations

from .. import jsregex

_NON_PERSONAL_NUMBER_LABEL = jsregex.compile(
    r"(?:\b(?:order|orders|invoice|invoices|inv|tracking|track|ref|reference|ticket|case|isbn(?:-1[03])?|issn|ean|upc|sku|serial|s\/n|part|item|article|confirmation|booking|reservation|shipment|parcel|package|po|receipt|build|commande|facture|rechnung|bestellung|bestellnummer|auftrag|pedido|factura|referencia|n[ºo°]\s*de\s*pedido)\b\.?\s*(?:no\.?|nr\.?|number|num\.?|n[ºo°]|#|id|code|numéro|nummer|número)?\s*[:#=]?\s*)$",
    "i",
)
_LETTER_OR_NUMBER = jsregex.compile(r"[\p{L}\p{N}]", "u")


def text_before(text: str, index: int, width: int) -> str:
    """The text of the same line before `index`, at most `width` characters."""
    piece = text[max(0, index - width):index]
    newline = piece.rfind("\n")
    return piece if newline == -1 else piece[newline + 1:]


def follows_non_personal_label(text: str, index: int) -> bool:
    """A digit run right after "order no.", "invoice #", "ISBN"... is a reference, whatever its checksum says."""
    return _NON_PERSONAL_NUMBER_LABEL.search(text_before(text, index, 40)) is not None


def is_delimited(text: str, start: int, end: int) -> bool:
    """True when the characters just outside [start, end) are not letters or digits (a whole-token match)."""
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    return not _LETTER_OR_NUMBER.match(before) and not _LETTER_OR_NUMBER.match(after)


def digits_only(value: str) -> str:
    return "".join(c for c in value if "0" <= c <= "9")
