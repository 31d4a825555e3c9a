"""IPv6 addresses: shape first, then full RFC 4291 validation (times and MAC addresses fail it)."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex
from .field_kinds import field_kind_at
from .ipv4 import NETWORK_CUE, line_around

_V4_TAIL = jsregex.compile(r"^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
_GROUP = jsregex.compile(r"^[0-9A-Fa-f]{1,4}$")
_CANDIDATE = jsregex.compile(r"(?<![\p{L}\p{N}:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})(?![\p{L}\p{N}:]|\.\d)", "gu")
_HEX = jsregex.compile(r"[0-9A-Fa-f]")


def is_valid_ipv6(value: str) -> bool:
    head = value
    available = 8
    v4 = _V4_TAIL.search(value)
    if v4 is not None:
        octets = [v4.group(i) for i in range(2, 6)]
        if not all((o == "0" or not o.startswith("0")) and int(o) <= 255 for o in octets):
            return False
        head = v4.group(1) if v4.group(1).endswith("::") else v4.group(1)[:-1]
        available = 6
    halves = head.split("::")
    if len(halves) > 2:
        return False

    def parse(part: str):
        if part == "":
            return []
        groups = part.split(":")
        return groups if all(_GROUP.search(g) for g in groups) else None

    if len(halves) == 1:
        groups = parse(halves[0])
        return groups is not None and len(groups) == available
    left, right = parse(halves[0]), parse(halves[1])
    return left is not None and right is not None and len(left) + len(right) < available


# A URL's bracketed host before the address; a bracketed host's port, a prefix length or a zone after it.
_URL_HOST_BEFORE = jsregex.compile(r":\/\/(?:[^\s@\/]*@)?\[$")
_PORT_PREFIX_OR_ZONE_AFTER = jsregex.compile(r"^(?:\]:\d{1,5}\b|\/\d{1,3}\b|%[\p{L}\p{N}]+)", "u")
_V4_DOT = jsregex.compile(r"\.\d")


def _announced_if_short(text: str, start: int, end: int) -> bool:
    """A compressed address with fewer than three groups written ("::2", "1::3") is also how code writes slices and
    scopes: it counts only where an address is announced (ip field, network word in the line, URL host, port/prefix/zone)."""
    value = text[start:end]
    if _V4_DOT.search(value) or sum(1 for g in value.split(":") if _GROUP.search(g)) >= 3:
        return True
    if field_kind_at(text, start, end) == "ip":
        return True
    before, after = line_around(text, start, end)
    return bool(
        NETWORK_CUE.search(before)
        or NETWORK_CUE.search(after)
        or _URL_HOST_BEFORE.search(before)
        or _PORT_PREFIX_OR_ZONE_AFTER.search(after)
    )


def _accept(text: str, m):
    value = m.group(0)
    if is_valid_ipv6(value) and _HEX.search(value) and _announced_if_short(text, m.start(), m.end()):
        return (m.start(), m.end())
    return None


ipv6_detector = Detector("IPV6", lambda text: spans_from_regex(text, _CANDIDATE, "IPV6", lambda m: _accept(text, m)))
