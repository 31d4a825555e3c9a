"""E-mail addresses: dot-atom local part, LDH domain labels and an alphabetic TLD; letters of any script allowed
(internationalised addresses)."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex

# The repeated parts are bounded (256 dot-atoms, 127 labels, beyond what an address can hold), as in the TypeScript
# engine, whose V8 regex stack overflowed on a few million "a."; the `regex` module needs no bound, but one pattern
# finds the same spans in every engine.
_EMAIL = jsregex.compile(
    r"(?<![\p{L}\p{N}\p{M}._%+\-])[\p{L}\p{M}\p{N}_%+\-]+(?:\.[\p{L}\p{M}\p{N}_%+\-]+){0,255}@(?:[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}\-]{0,61}[\p{L}\p{M}\p{N}])?\.){1,127}\p{L}[\p{L}\p{M}]{1,62}(?![\p{L}\p{M}\p{N}\-]|\.[\p{L}\p{N}])",
    "gu",
)
_SCP_REMOTE = jsregex.compile(r"^:[^\s]")


def _detect(text: str):
    def accept(m):
        # "git@github.com:org/repo.git" is an scp-style remote (user@host:path), not a mailbox.
        if _SCP_REMOTE.search(text[m.end():m.end() + 2]):
            return None
        return (m.start(), m.end())

    return spans_from_regex(text, _EMAIL, "EMAIL", accept)


email_detector = Detector("EMAIL", _detect)
