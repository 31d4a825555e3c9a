"""Tokenising texts and relay request bodies."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

from ..wire.egress_policy import EgressRefusal, EgressWalk, check_egress_depth, json_copy, walk_egress
from ..wire.jcs import canonical_bytes
from .alias import STABLE_TAG_LENGTH, tag_from_mac
from .detect_structured import detect_structured, resolve_overlaps, structured_detectors
from .detectors import Detector
from .detectors.phone import DEFAULT_PHONE_REGIONS
from .names import NameModel, NameModelUnavailable
from .redact_image import ImageRedactor, redact_image_part
from .session import TokeniserSession
from .types import Span

NamesSetting = Union[NameModel, None]

#: What the client does with an image, audio, file or document part it cannot read as text.
MEDIA_POLICIES = ("refuse", "redact", "pass")


class InvalidRequestBody(ValueError):
    """A body the engine cannot tokenise (not an object, `messages` not an array, not serialisable). A body it can
    read but must not send raises EgressRefusal (wire/egress_policy.py)."""


class Tokeniser:
    """The detectors and name model of one client; `session()` gives the per-request state."""

    def __init__(self, names: Optional[NameModel] = None, *, fail_open: bool = False, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> None:
        self.names = names
        self.fail_open = fail_open
        self.detectors: list[Detector] = structured_detectors(phone_regions)

    def detect_spans(self, text: str, session: Optional[TokeniserSession] = None) -> list[Span]:
        """Every value the detectors and the name model find, non-overlapping, in text order."""
        structured = detect_structured(text, self.detectors)
        names: list[Span] = []
        if self.names is not None:
            try:
                names = [s for s in self.names.detect(text) if 0 <= s.start < s.end <= len(text)]
            except Exception as error:  # noqa: BLE001 - any failure of the model means "unavailable"
                if self.fail_open:
                    if session is not None:
                        session.name_model_skipped = True
                    names = []
                elif isinstance(error, NameModelUnavailable):
                    raise
                else:
                    raise NameModelUnavailable("name model failed; nothing was sent") from error
        return resolve_overlaps(structured + [Span(s.start, s.end, "PERSON") for s in names])

    def tokenise_text(self, text: str, session: TokeniserSession) -> str:
        """`text` with every detected value replaced by its alias in `session`."""
        session.observe(text)
        if text == "":
            return text
        out: list[str] = []
        at = 0
        for span in self.detect_spans(text, session):
            out.append(text[at:span.start])
            out.append(session.alias_for(span.type, text[span.start:span.end]))
            session.count_fired(span.type)
            at = span.end
        out.append(text[at:])
        return "".join(out)

    def tokenise_request(
        self,
        route: str,
        body: Any,
        session: Optional[TokeniserSession] = None,
        *,
        identifier_secret: Union[bytes, Callable[[], bytes], None] = None,
        media_policy: str = "refuse",
        passthrough_paths: Sequence[str] = (),
        redact_image: Optional[ImageRedactor] = None,
    ) -> "TokenisedRequest":
        """Tokenises one request body of a client route under the egress policy (sdks/vectors/egress-policy.json), on
        a copy: user text is tokenised (aliases numbered in document order), end-user identifiers get device-stable
        `USER_<tag>` aliases under `identifier_secret` (bytes, or a callable asked only when the body holds one;
        default: a fresh random secret), structure passes, and everything else is refused before anything is sent
        (EgressRefusal: a field or part type the policy refuses or does not name, media under media_policy "refuse",
        nesting past 64 levels). `passthrough_paths` (pointers, `*` for one segment) let named refused or unknown
        fields through untokenised; `media_policy` "pass" sends media as it is (a remote URL naming somebody is still
        refused), "redact" paints images over with `redact_image`. What they let through is `passthrough`. The bytes
        to send are the UTF-8 JCS form of the tokenised body. A streamed chat completion gets
        `stream_options.include_usage: true` (the gateway relays bytes unchanged and cannot add it)."""
        if not isinstance(body, dict):
            raise InvalidRequestBody("request body must be a JSON object")
        if route not in ("embeddings", "responses") and not isinstance(body.get("messages"), (list, tuple)):
            raise InvalidRequestBody("messages must be an array")
        if media_policy not in MEDIA_POLICIES:
            raise ValueError(f"media_policy must be one of {', '.join(MEDIA_POLICIES)}, not {media_policy!r}")
        # Before the copy: the copy recurses, a hostile nesting must not reach it.
        check_egress_depth(body)
        body_copy = json_copy(body)
        walk = walk_egress(route, body_copy, passthrough_paths=passthrough_paths, depth_checked=True)
        passthrough = list(walk.passthrough)
        _apply_media_policy(walk, media_policy, redact_image, passthrough)
        session = session or TokeniserSession()
        slots = [s for place in walk.texts for s in (_json_text_slots(place.holder, place.key) if place.json else [_key_slot(place.holder, place.key)])]
        for slot in slots:
            session.observe(slot.text)
        for slot in slots:
            slot.write(self.tokenise_text(slot.text, session))
        for commit in {id(slot.commit): slot.commit for slot in slots if slot.commit is not None}.values():
            commit()
        detectors_fired = dict(session.detectors_fired)
        if walk.identifiers:
            secret = identifier_secret() if callable(identifier_secret) else identifier_secret
            key = secret if secret is not None else secrets.token_bytes(32)
            for place in walk.identifiers:
                place.holder[place.key] = end_user_alias(key, place.holder[place.key])  # type: ignore[index]
            detectors_fired["USER"] = detectors_fired.get("USER", 0) + len(walk.identifiers)
        passthrough.sort(key=lambda entry: entry["path"].encode("utf-16-be", "surrogatepass"))
        if route == "chat.completions" and body_copy.get("stream") is True:
            options = body_copy.get("stream_options") if isinstance(body_copy.get("stream_options"), dict) else {}
            body_copy["stream_options"] = {**options, "include_usage": True}
        try:
            body_bytes = canonical_bytes(body_copy)
        except (TypeError, ValueError) as error:
            raise InvalidRequestBody(f"request body cannot be serialised as JSON: {error}") from error
        return TokenisedRequest(body_copy, body_bytes, session.map, detectors_fired, session.name_model_skipped, passthrough)


def end_user_alias(secret: bytes, value: str) -> str:
    """`USER_<tag>`: the device-stable alias of an end-user identifier, 10 characters of
    HMAC-SHA256(secret, "end-user\\0" + value) in the tag alphabet (sdks/vectors/README.md "Stable end-user aliases")."""
    mac = hmac.new(secret, f"end-user\0{value}".encode("utf-8"), hashlib.sha256).digest()
    return f"USER_{tag_from_mac(mac, STABLE_TAG_LENGTH)}"


_URL = re.compile(r"https?://", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def _url_probe() -> Tokeniser:
    """The detectors a media URL is read with (names off: a URL is not prose)."""
    return Tokeniser(None)


def _urls_in(value: Any, into: list[str]) -> list[str]:
    """Every http(s) URL string inside a media value (an image part's `url`, a source's `url`, `file_url`, ...)."""
    if isinstance(value, str):
        if _URL.match(value):
            into.append(value)
    elif isinstance(value, list):
        for item in value:
            _urls_in(item, into)
    elif isinstance(value, dict):
        for key in value:
            _urls_in(value[key], into)
    return into


def _media_refusal(path: str, kind: str, why: str) -> EgressRefusal:
    return EgressRefusal("unsupported_content", path, f"The {kind} at {path} is not sent: {why}. Nothing was sent.", kind)


def _apply_media_policy(walk: EgressWalk, policy: str, redact: Optional[ImageRedactor], passthrough: list[dict[str, str]]) -> None:
    """The client's media policy over the walk's media parts: refused (the default), passed as they are (declared; a
    remote URL holding an identifier is still refused), or, for images under "redact", painted over on the device."""
    for media in walk.media:
        value = media.holder[media.key]  # type: ignore[index]
        if policy == "refuse":
            raise _media_refusal(media.path, media.kind, 'the client does not send media it cannot tokenise (media_policy "refuse")')
        if policy == "redact" and media.kind != "image":
            raise _media_refusal(
                media.path, media.kind, f'only images can be redacted on the device (media_policy "redact"); set media_policy "pass" to send {media.kind} untokenised'
            )
        if policy == "redact":
            if redact is None:
                raise _media_refusal(media.path, media.kind, "this client has no image redactor")
            media.holder[media.key] = redact_image_part(value, media.path, redact)  # type: ignore[index]
            passthrough.append({"path": media.path, "kind": "image-redacted"})
            continue
        # pass: sent as it is, unless a remote URL names somebody (the URL text is read by the provider and its fetcher).
        for url in _urls_in(value, []):
            if _url_probe().tokenise_text(url, TokeniserSession()) != url:
                raise _media_refusal(media.path, media.kind, "its URL holds a personal identifier")
        passthrough.append({"path": media.path, "kind": media.kind})


@dataclass(frozen=True)
class TokenisedRequest:
    body: Any
    #: The exact bytes to send: UTF-8 of the RFC 8785 (JCS) form of `body`.
    body_bytes: bytes
    #: Alias -> original, for detokenising the response. It stays on the device.
    map: dict[str, str]
    detectors_fired: dict[str, int]
    name_model_skipped: bool
    #: What media_policy or passthrough_paths let through untokenised ([{path, kind}], sorted by path; the v3
    #: attestation's `passthrough` claim); empty when nothing was.
    passthrough: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Slot:
    """A place in the body that holds user text: read it, then write its tokenised form back."""

    text: str
    write: Callable[[str], None]
    #: Run once after every slot is written (slots may share it): puts what the writes changed into the body.
    commit: Optional[Callable[[], None]] = None


def _key_slot(holder: Any, key: Any) -> _Slot:
    def write(tokenised: str) -> None:
        holder[key] = tokenised

    return _Slot(holder[key], write)


def _leaf_slots(value: Any) -> list[_Slot]:
    """Every string inside a JSON value (object values and array items at any depth; keys are names, not user text)."""
    if isinstance(value, list):
        return [s for i, item in enumerate(value) for s in ([_key_slot(value, i)] if isinstance(item, str) else _leaf_slots(item))]
    if isinstance(value, dict):
        return [s for key in list(value) for s in ([_key_slot(value, key)] if isinstance(value[key], str) else _leaf_slots(value[key]))]
    return []


def _json_text_slots(holder: dict, key: str) -> list[_Slot]:
    """A tool call's `arguments`, a JSON text: the strings inside it, written back as JSON once one of them changed (an
    unchanged one keeps its bytes). Text that is not JSON is tokenised as it is. These are values the client restored
    in the model's answer, so an app sending the conversation back would otherwise send them upstream in the clear."""
    text = holder.get(key)
    if not isinstance(text, str):
        return []
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        # RecursionError: JSON nested past Python's stack; its text is tokenised as it is.
        return [_key_slot(holder, key)]
    if isinstance(parsed, str):
        def write_string(tokenised: str, original: str = parsed) -> None:
            if tokenised != original:
                holder[key] = json.dumps(tokenised, ensure_ascii=False)

        return [_Slot(parsed, write_string)]

    # Serialised once for the whole arguments text, after its last value was written, not once per replaced value.
    changed = False

    def commit() -> None:
        if changed:
            holder[key] = json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))

    def rewriting(leaf: _Slot) -> _Slot:
        def write(tokenised: str) -> None:
            nonlocal changed
            if tokenised == leaf.text:
                return
            leaf.write(tokenised)
            changed = True

        return _Slot(leaf.text, write, commit)

    try:
        leaves = _leaf_slots(parsed)
    except RecursionError:
        return [_key_slot(holder, key)]
    return [rewriting(leaf) for leaf in leaves]
