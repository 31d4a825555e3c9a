"""The egress policy (sdks/vectors/egress-policy.json, copied into the package as wire/data/egress-policy.json by
tools/generate-data.ts; grammar in sdks/vectors/README.md "Egress policy"): every field and content-part type of each
client route classified as user text, an end-user identifier, structure, media or refused. The engine walks a body
with it before anything leaves the device: it tokenises the places the walk returns and refuses the rest. Anything
the policy does not name is refused, so a field a provider adds next month is never sent in the clear by default.

The same walk as the TypeScript engine's (sdks/typescript/src/wire/egressPolicy.ts), held to
sdks/vectors/egress-policy-cases.json: the same refusals at the same JSON pointers, in the same order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Union

#: The policy file inside the package (a byte-for-byte copy of sdks/vectors/egress-policy.json).
POLICY_PATH = Path(__file__).resolve().parent / "data" / "egress-policy.json"
EGRESS_POLICY: dict[str, Any] = json.loads(POLICY_PATH.read_text("utf-8"))

#: Objects and arrays a body may nest, counted from the body itself (sdks/vectors/README.md "Nesting").
MAX_EGRESS_DEPTH = 64

#: The routes the policy classifies.
EGRESS_ROUTES: tuple[str, ...] = tuple(EGRESS_POLICY["routes"])

MEDIA_KINDS = ("image", "audio", "file", "document")

#: The client settings that would let a refused value through, named in a refusal's details (the same names in every
#: SDK; the Python clients spell them passthrough_paths= and media_policy=).
_SETTINGS = {"unsupported_field": "PASSTHROUGH_PATHS", "unsupported_content": "MEDIA_POLICY"}


def egress_refusal_status(code: str) -> int:
    """The HTTP status a client answers each refusal with: 415 for media, 400 otherwise."""
    return 415 if code == "unsupported_content" else 400


def egress_refusal_setting(code: str) -> Optional[str]:
    return _SETTINGS.get(code)


class EgressRefusal(Exception):
    """The body strays from the policy at `path` (a JSON pointer), or holds media the client will not send: nothing
    may be sent. `code`: unsupported_field, unsupported_content or nesting_too_deep. Messages name paths, JSON types
    and part types, never values."""

    def __init__(self, code: str, path: str, message: str, kind: Optional[str] = None) -> None:
        super().__init__(message)
        self.code = code
        self.path = path
        self.message = message
        self.kind = kind

    @property
    def status(self) -> int:
        return egress_refusal_status(self.code)

    @property
    def details(self) -> dict[str, str]:
        """`details` of the error: the path, the media kind, the setting that allows it."""
        out = {"path": self.path}
        if self.kind is not None:
            out["kind"] = self.kind
        setting = egress_refusal_setting(self.code)
        if setting is not None:
            out["setting"] = setting
        return out

    def __repr__(self) -> str:
        return f"EgressRefusal({self.code!r}, {self.path!r})"


Holder = Union[dict, list]


@dataclass(frozen=True)
class EgressPlace:
    """A holder and key: a place in the (copied) body whose value the client may rewrite."""

    holder: Holder
    key: Union[str, int]
    #: JSON pointer of the place.
    path: str
    #: A string holding JSON whose strings are the user text (tool-call arguments).
    json: bool = False


@dataclass(frozen=True)
class MediaPlace:
    holder: Holder
    key: Union[str, int]
    path: str
    kind: str


@dataclass
class EgressWalk:
    """What one walk found: the places to tokenise, the media, and what passthrough patterns let through."""

    #: String leaves of user text, in document order.
    texts: list[EgressPlace] = field(default_factory=list)
    #: String leaves of end-user identifiers (device-stable aliases), in document order.
    identifiers: list[EgressPlace] = field(default_factory=list)
    #: Media values (the whole part or source object), for the client's media policy.
    media: list[MediaPlace] = field(default_factory=list)
    #: Members or variants refused or unknown that a passthrough pattern let through (sent untokenised, declared).
    passthrough: list[dict[str, str]] = field(default_factory=list)


def escape_segment(segment: Union[str, int]) -> str:
    return str(segment).replace("~", "~0").replace("/", "~1")


def child(path: str, segment: Union[str, int]) -> str:
    return f"{path}/{escape_segment(segment)}"


def json_type_of(value: Any) -> str:
    """The JSON type of a Python value: null, boolean, number, string, array (list or tuple), object (dict); any other
    Python type answers its own name (no JSON type of the policy lists it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _compile_patterns(patterns: Iterable[str]) -> list[list[str]]:
    return [[] if p == "" else p.split("/")[1:] for p in patterns]


def _matches(patterns: list[list[str]], path: str) -> bool:
    if not patterns:
        return False
    segments = [] if path == "" else path.split("/")[1:]
    return any(len(p) == len(segments) and all(s == "*" or s == segments[i] for i, s in enumerate(p)) for p in patterns)


def check_egress_depth(body: Any) -> None:
    """Refuses a body nested deeper than MAX_EGRESS_DEPTH levels, without recursion (a hostile body cannot exhaust the
    stack). Depth first with an explicit stack, children pushed in order: the path reported is the one the TypeScript
    engine reports."""
    stack: list[tuple[Any, int, str]] = [(body, 1, "")]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_EGRESS_DEPTH:
                raise _too_deep(path)
            for key in value:
                stack.append((value[key], depth + 1, child(path, key)))
        elif isinstance(value, (list, tuple)):
            if depth > MAX_EGRESS_DEPTH:
                raise _too_deep(path)
            for i, item in enumerate(value):
                stack.append((item, depth + 1, child(path, i)))


def _too_deep(path: str) -> EgressRefusal:
    return EgressRefusal("nesting_too_deep", path, f"The request nests deeper than {MAX_EGRESS_DEPTH} levels at {path}; nothing was sent.")


def walk_egress(route: str, body: Any, *, passthrough_paths: Iterable[str] = (), declared_paths: Iterable[str] = ()) -> EgressWalk:
    """Walks `body` (which the caller may then rewrite at the places returned; tuples must already be lists) with the
    route's policy. Raises EgressRefusal at the first member or variant the policy refuses or does not name (unless a
    passthrough pattern matches its path), at a value of a JSON type the policy does not expect, and past
    MAX_EGRESS_DEPTH."""
    check_egress_depth(body)
    root = EGRESS_POLICY["routes"].get(route)
    if root is None:
        raise EgressRefusal("unsupported_field", "", f"The egress policy has no route {json.dumps(route)}; nothing was sent.")
    definitions = EGRESS_POLICY["definitions"]
    patterns = _compile_patterns(passthrough_paths)
    declared = frozenset(declared_paths)
    walk = EgressWalk()

    def refuse(path: str, what: str) -> None:
        if path in declared or _matches(patterns, path):
            walk.passthrough.append({"path": path, "kind": "field"})
            return
        raise EgressRefusal(
            "unsupported_field",
            path,
            f"{what} at {'the body' if path == '' else path} is not sent: the egress policy does not allow it (fail-closed). "
            "Nothing was sent. To send it untokenised, name its path in passthrough_paths (PASSTHROUGH_PATHS).",
        )

    def strings(holder: Holder, key: Union[str, int], path: str, into: list[EgressPlace]) -> None:
        """Every string inside the value at any depth, as places (keys are names, not text)."""
        value = holder[key]  # type: ignore[index]
        if isinstance(value, str):
            into.append(EgressPlace(holder, key, path))
        elif isinstance(value, list):
            for i in range(len(value)):
                strings(value, i, child(path, i), into)
        elif isinstance(value, dict):
            for k in list(value):
                strings(value, k, child(path, k), into)

    def visit(node: Any, holder: Holder, key: Union[str, int], path: str) -> None:
        value = holder[key]  # type: ignore[index]
        if value is None:
            return
        if isinstance(node, str):
            if node == "pass":
                return
            if node == "tokenise":
                return strings(holder, key, path, walk.texts)
            if node == "tokenise-stable":
                return strings(holder, key, path, walk.identifiers)
            if node == "refuse":
                return refuse(path, "This field")
            raise ValueError(f"egress policy: unknown leaf {node!r} at {path}")
        if "ref" in node:
            target = definitions.get(node["ref"])
            if target is None:
                raise ValueError(f"egress policy: unknown definition {node['ref']}")
            return visit(target, holder, key, path)
        if "byType" in node:
            type_ = json_type_of(value)
            chosen = node["byType"].get(type_)
            if chosen is None:
                return refuse(path, f"A value of type {type_}")
            return visit(chosen, holder, key, path)
        if "object" in node:
            if not isinstance(value, dict):
                return refuse(path, f"A value of type {json_type_of(value)} (an object was expected)")
            members = node["object"]
            other = node.get("other")
            for member in list(value):
                member_node = members[member] if member in members else other
                if member_node is None:
                    refuse(child(path, member), f"The field {json.dumps(member, ensure_ascii=False)}")
                else:
                    visit(member_node, value, member, child(path, member))
            return None
        if "array" in node:
            if not isinstance(value, list):
                return refuse(path, f"A value of type {json_type_of(value)} (an array was expected)")
            for i in range(len(value)):
                visit(node["array"], value, i, child(path, i))
            return None
        if "tagged" in node:
            if not isinstance(value, dict):
                return refuse(path, f"A value of type {json_type_of(value)} (an object was expected)")
            tagged = node["tagged"]
            variant = node["absent"] if tagged not in value and "absent" in node else value.get(tagged)
            variants = node["variants"]
            if not isinstance(variant, str) or variant not in variants:
                return refuse(
                    path, f"A part of {tagged} {json.dumps(variant, ensure_ascii=False)}" if isinstance(variant, str) else f"A part without a string {tagged}"
                )
            return visit(variants[variant], holder, key, path)
        if "jsonText" in node:
            if not isinstance(value, str):
                return strings(holder, key, path, walk.texts)
            walk.texts.append(EgressPlace(holder, key, path, json=True))
            return None
        if "media" in node:
            walk.media.append(MediaPlace(holder, key, path, node["media"]))
            return None
        raise ValueError(f"egress policy: malformed node at {path}")

    box = {"body": body}
    visit(root, box, "body", "")
    return walk


def json_copy(value: Any) -> Any:
    """A copy of a JSON value made of dicts, lists and scalars (tuples become lists), to walk and rewrite. Call it
    after check_egress_depth: it recurses."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_copy(v) for v in value]
    return value
