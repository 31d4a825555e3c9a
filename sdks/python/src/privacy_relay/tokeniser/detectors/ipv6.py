"""IPv6 addresses: shape first, then full RFC 4291 validation (times and MAC addresses fail it)."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex

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


ipv6_detector = Detector(
    "IPV6",
    lambda text: spans_from_regex(
        text, _CANDIDATE, "IPV6", lambda m: (m.start(), m.end()) if is_valid_ipv6(m.group(0)) and _HEX.search(m.group(0)) else None
    ),
)
