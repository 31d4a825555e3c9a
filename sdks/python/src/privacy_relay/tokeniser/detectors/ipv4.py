"""IPv4 addresses, only where the context announces an address: versions and other four-part numbers are as
common as addresses."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex
from .context import text_before
from .field_kinds import field_kind_at, whole_value_kind_at

_IPV4 = jsregex.compile(r"(?<![\p{L}\p{N}._\-])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\p{L}\p{N}_]|\.\d|-[A-Za-z])", "gu")
_UPGRADE_CUE = jsregex.compile(
    r"\b(?:upgrad|updat|downgrad|migrat|bump|aktualisier|mis à jour|actualiz|bijgewerkt)\w*\b[^\n\d]{0,20}(?:\d[\w.\-]*[^\n\d]{1,12})?(?:from|to|von|auf|de|à|a|naar|van)\s*$",
    "i",
)
_VERSION_CUE = jsregex.compile(
    r"(?:\b(?:v|ver|version|versión|versione|release|build|firmware|fw|rev|revision|update|patch|sdk|api|kb|chrome|firefox|edge|windows|ios|android|macos)\.?\s*[:=]?\s*|\bv)$",
    "i",
)
NETWORK_CUE = jsregex.compile(
    r"\b(?:ip|ipv4|ipv6|inet|inet6|loopback|localhost|ips|address|addresses|addr|host|hosts|hostname|server|servers|client|peer|from|to|connect|connected|connection|login|logged|access|log|logs|firewall|blocked|block|ban|banned|allow|allowlist|whitelist|blacklist|denylist|gateway|router|dns|resolver|nameserver|proxy|vpn|subnet|netmask|route|ping|ssh|telnet|listen|bind|nat|lan|wan|remote|source|destination|src|dst|forwarded|upstream|downstream|endpoint|url|uri|adresse|adresa|dirección|direccion|indirizzo|ip-adresse|attacker|vanaf|vandaan|depuis|desde|von|aus|connexion|anmeldung|zugriff|acceso|conexión|conexion|inlog|inlogpoging|inlogpogingen|inloggen|verbinding|verbindingen|aanmelding|aanmeldingen|anmeldungen|anmeldeversuche|zugriffe|connexions|conexiones|accesos|accessi|accesso|pare-feu|cortafuegos)\b",
    "i",
)
_PORT_OR_PREFIX = jsregex.compile(r"^(?::\d{1,5}\b|\/\d{1,2}\b)")
# A URL's host: "https://10.0.0.5/admin", "ssh://deploy@10.0.0.5".
_URL_HOST_BEFORE = jsregex.compile(r":\/\/(?:[^\s@\/]*@)?$")
# A log line's timestamp and nothing else before the address; only for numbers that do not look like a version.
_LOG_TIMESTAMP_BEFORE = jsregex.compile(
    r"^\s*[[(]?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)[\])]?\s*$"
)


def _looks_like_version(parts: list[str]) -> bool:
    return int(parts[0]) < 10 and all(int(p) < 100 for p in parts)


def _is_octet(s: str) -> bool:
    return (s == "0" or not s.startswith("0")) and int(s) <= 255


_CIDR_PREFIX = jsregex.compile(r"^\/(\d{1,2})(?!\d)")


def _is_network_range(parts: list[str], text: str, end: int) -> bool:
    """A network range in CIDR notation: "/prefix" (0 to 31) right after an address whose host bits are all zero
    ("192.168.0.0/16"). It names a network, no one's device; an address with host bits set ("inet 10.0.0.5/24") is
    still one."""
    m = _CIDR_PREFIX.search(text[end:end + 4])
    if m is None or int(m.group(1)) > 31:
        return False
    address = 0
    for part in parts:
        address = address * 256 + int(part)
    return address % (2 ** (32 - int(m.group(1)))) == 0


def line_around(text: str, start: int, end: int) -> tuple[str, str]:
    """Up to 80 characters before and 40 after, within the line."""
    before = text[max(0, start - 80):start]
    before = before[before.rfind("\n") + 1:]
    after = text[end:end + 40]
    nl = after.find("\n")
    return before, (after if nl == -1 else after[:nl])


def _accept(text: str, m):
    start, end = m.start(), m.end()
    parts = [m.group(1), m.group(2), m.group(3), m.group(4)]
    if not all(_is_octet(p) for p in parts):
        return None
    if _is_network_range(parts, text, end):
        return None
    kind = field_kind_at(text, start, end)
    if kind == "ip":
        return (start, end)
    if whole_value_kind_at(text, start, end) == "reference":
        return None
    if kind == "version" and _looks_like_version(parts):
        return None
    if _VERSION_CUE.search(text_before(text, start, 30)) or _UPGRADE_CUE.search(text_before(text, start, 60)):
        return None
    before, after = line_around(text, start, end)
    announced = (
        NETWORK_CUE.search(before) is not None
        or NETWORK_CUE.search(after) is not None
        or _PORT_OR_PREFIX.search(after) is not None
        or _URL_HOST_BEFORE.search(before) is not None
        or (_LOG_TIMESTAMP_BEFORE.search(before) is not None and not _looks_like_version(parts))
        or text_before(text, start, 200).strip() == ""
    )
    return (start, end) if announced else None


ipv4_detector = Detector("IPV4", lambda text: spans_from_regex(text, _IPV4, "IPV4", lambda m: _accept(text, m)))
