"""A URL carrying a user name and password in its authority: the span covers scheme, credentials and host[:port]."""

from __future__ import annotations

from .. import jsregex
from . import Detector, spans_from_regex

_URL_WITH_CREDENTIALS = jsregex.compile(
    r"""\b[a-zA-Z][a-zA-Z0-9+.\-]{1,15}:\/\/[^\s:/@?#<>"']*:[^\s/@?#<>"']+@[A-Za-z0-9.\-_\[\]:]*[A-Za-z0-9\]]""", "g"
)

url_credentials_detector = Detector(
    "URL_CREDENTIALS", lambda text: spans_from_regex(text, _URL_WITH_CREDENTIALS, "URL_CREDENTIALS", lambda m: (m.start(), m.end()))
)
