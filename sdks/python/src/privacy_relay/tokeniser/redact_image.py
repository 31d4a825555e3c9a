"""Image parts under media_policy="redact": the image's identifiers are painted over on the device by the client's
image redactor before it leaves, in the shape the part came in (an OpenAI `image_url` part, a Responses
`input_image` part, an Anthropic image `source`). Only inline data can be redacted: the device never fetches a remote
image, and a provider-side file is out of its reach (both refused). The Python SDK ships no redactor (no on-device
OCR): a client gives one as `redact_image=`, a callable (image bytes, media type) -> (bytes, media type)."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Callable, Tuple

from ..wire.egress_policy import EgressRefusal

#: (image bytes, media type) -> (redacted bytes, media type).
ImageRedactor = Callable[[bytes, str], Tuple[bytes, str]]

_DATA_URL = re.compile(r"data:(image/[a-z0-9.+-]+);base64,(.*)", re.IGNORECASE | re.DOTALL)
_WHITESPACE = re.compile(r"\s+")


def _cannot_redact(path: str, why: str) -> EgressRefusal:
    return EgressRefusal(
        "unsupported_content", path, f"The image at {path} is not sent: {why}, so it cannot be redacted on the device. Nothing was sent.", "image"
    )


def _decode(data: str) -> bytes:
    compact = _WHITESPACE.sub("", data)
    return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)


def _redact_data_url(url: Any, path: str, redact: ImageRedactor) -> str:
    match = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if match is None:
        raise _cannot_redact(path, "it is not inline image data (a remote URL or a stored file)")
    try:
        data = _decode(match.group(2))
    except (binascii.Error, ValueError):
        raise _cannot_redact(path, "its base64 data is malformed") from None
    out_bytes, out_type = redact(data, match.group(1).lower())
    return f"data:{out_type};base64,{base64.b64encode(out_bytes).decode('ascii')}"


def redact_image_part(part: Any, path: str, redact: ImageRedactor) -> Any:
    """The part with its image replaced by the redactor's output; EgressRefusal when it cannot be redacted."""
    if not isinstance(part, dict):
        raise _cannot_redact(path, "it is not an image part")
    if part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
        return {**part, "image_url": {**part["image_url"], "url": _redact_data_url(part["image_url"].get("url"), path, redact)}}
    if part.get("type") == "input_image":
        if part.get("file_id") is not None:
            raise _cannot_redact(path, "it is a stored file")
        return {**part, "image_url": _redact_data_url(part.get("image_url"), path, redact)}
    if part.get("type") == "base64" and isinstance(part.get("data"), str) and isinstance(part.get("media_type"), str):
        url = _redact_data_url(f"data:{part['media_type']};base64,{part['data']}", path, redact)
        match = _DATA_URL.fullmatch(url)
        assert match is not None
        return {**part, "media_type": match.group(1), "data": match.group(2)}
    raise _cannot_redact(path, "it is not inline image data (a remote URL or a stored file)")
