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

#: A place's JSON pointer as a linked list of segments, `(parent, segment)`, None for the body: the walk builds the
#: pointer text only where it needs it (a refusal, a media part, a passthrough), not for every value it visits.
Link = Optional[tuple]


def escape_segment(segment: Union[str, int]) -> str:
    return str(segment).replace("~", "~0").replace("/", "~1")


def child(path: str, segment: Union[str, int]) -> str:
    return f"{path}/{escape_segment(segment)}"


def pointer(link: Link) -> str:
    """The JSON pointer of a linked path."""
    segments: list[str] = []
    while link is not None:
        link, segment = link
        segments.append(escape_segment(segment))
    return "".join("/" + s for s in reversed(segments))


@dataclass(frozen=True)
class EgressPlace:
    """A holder and key: a place in the (copied) body whose value the client may rewrite."""

    holder: Holder
    key: Union[str, int]
    link: Link
    #: A string holding JSON whose strings are the user text (tool-call arguments).
    json: bool = False

    @property
    def path(self) -> str:
        """JSON pointer of the place."""
        return pointer(self.link)


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


# -- the policy, compiled once: refs resolved, each node a small object the walk dispatches on -----------------------

_PASS, _TOKENISE, _STABLE, _REFUSE, _OBJECT, _ARRAY, _BY_TYPE, _TAGGED, _JSON_TEXT, _MEDIA = range(10)
_LEAVES = {"pass": _PASS, "tokenise": _TOKENISE, "tokenise-stable": _STABLE, "refuse": _REFUSE}
_ABSENT = object()


class _Node:
    __slots__ = ("kind", "a", "b", "c")

    def __init__(self) -> None:
        self.kind = -1
        self.a: Any = None
        self.b: Any = None
        self.c: Any = _ABSENT


def _compile_policy(policy: dict[str, Any]) -> dict[str, _Node]:
    definitions: dict[str, Any] = policy["definitions"]
    compiled: dict[str, _Node] = {}

    def node_of(raw: Any, where: str) -> _Node:
        if isinstance(raw, dict) and "ref" in raw:
            name = raw["ref"]
            if name not in definitions:
                raise ValueError(f"egress policy: unknown definition {name} at {where}")
            if name not in compiled:
                compiled[name] = _Node()  # before filling it: a definition may refer to itself
                fill(compiled[name], definitions[name], name)
            return compiled[name]
        node = _Node()
        fill(node, raw, where)
        return node

    def fill(node: _Node, raw: Any, where: str) -> None:
        if isinstance(raw, str):
            if raw not in _LEAVES:
                raise ValueError(f"egress policy: unknown leaf {raw!r} at {where}")
            node.kind = _LEAVES[raw]
        elif isinstance(raw, dict) and "ref" in raw:
            target = node_of(raw, where)
            node.kind, node.a, node.b, node.c = target.kind, target.a, target.b, target.c
        elif isinstance(raw, dict) and "byType" in raw:
            node.kind, node.a = _BY_TYPE, {t: node_of(n, f"{where}/{t}") for t, n in raw["byType"].items()}
        elif isinstance(raw, dict) and "object" in raw:
            node.kind = _OBJECT
            node.a = {m: node_of(n, f"{where}/{m}") for m, n in raw["object"].items()}
            node.b = node_of(raw["other"], f"{where}/*") if "other" in raw else None
        elif isinstance(raw, dict) and "array" in raw:
            node.kind, node.a = _ARRAY, node_of(raw["array"], f"{where}/*")
        elif isinstance(raw, dict) and "tagged" in raw:
            node.kind, node.a = _TAGGED, raw["tagged"]
            node.b = {v: node_of(n, f"{where}/{v}") for v, n in raw["variants"].items()}
            node.c = raw["absent"] if "absent" in raw else _ABSENT
        elif isinstance(raw, dict) and "jsonText" in raw:
            node.kind = _JSON_TEXT
        elif isinstance(raw, dict) and "media" in raw:
            node.kind, node.a = _MEDIA, raw["media"]
        else:
            raise ValueError(f"egress policy: malformed node at {where}")

    return {route: node_of(raw, route) for route, raw in policy["routes"].items()}


_ROUTES = _compile_policy(EGRESS_POLICY)


def _compile_patterns(patterns: Iterable[str]) -> list[list[str]]:
    return [[] if p == "" else p.split("/")[1:] for p in patterns]


def _matches(patterns: list[list[str]], path: str) -> bool:
    if not patterns:
        return False
    segments = [] if path == "" else path.split("/")[1:]
    return any(len(p) == len(segments) and all(s == "*" or s == segments[i] for i, s in enumerate(p)) for p in patterns)


_CONTAINERS = (dict, list, tuple)


def check_egress_depth(body: Any) -> None:
    """Refuses a body nested deeper than MAX_EGRESS_DEPTH levels, without recursion (a hostile body cannot exhaust the
    stack). Depth first with an explicit stack, children pushed in order and taken from the end: the path reported
    is the one the TypeScript engine reports."""
    if not isinstance(body, _CONTAINERS):
        return
    stack: list[tuple[Any, int, Link]] = [(body, 1, None)]
    while stack:
        value, depth, link = stack.pop()
        if depth > MAX_EGRESS_DEPTH:
            raise _too_deep(pointer(link))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(item, _CONTAINERS):
                stack.append((item, depth + 1, (link, key)))


def _too_deep(path: str) -> EgressRefusal:
    return EgressRefusal("nesting_too_deep", path, f"The request nests deeper than {MAX_EGRESS_DEPTH} levels at {path}; nothing was sent.")


def walk_egress(
    route: str, body: Any, *, passthrough_paths: Iterable[str] = (), declared_paths: Iterable[str] = (), depth_checked: bool = False
) -> EgressWalk:
    """Walks `body` (which the caller may then rewrite at the places returned; tuples must already be lists) with the
    route's policy. Raises EgressRefusal at the first member or variant the policy refuses or does not name (unless a
    passthrough pattern matches its path), at a value of a JSON type the policy does not expect, and past
    MAX_EGRESS_DEPTH (`depth_checked`: the caller already ran check_egress_depth on this body)."""
    if not depth_checked:
        check_egress_depth(body)
    root = _ROUTES.get(route)
    if root is None:
        raise EgressRefusal("unsupported_field", "", f"The egress policy has no route {json.dumps(route)}; nothing was sent.")
    patterns = _compile_patterns(passthrough_paths)
    declared = frozenset(declared_paths)
    walk = EgressWalk()
    texts, identifiers = walk.texts, walk.identifiers

    def refuse(link: Link, what: str) -> None:
        path = pointer(link)
        if path in declared or _matches(patterns, path):
            walk.passthrough.append({"path": path, "kind": "field"})
            return
        raise EgressRefusal(
            "unsupported_field",
            path,
            f"{what} at {'the body' if path == '' else path} is not sent: the egress policy does not allow it (fail-closed). "
            "Nothing was sent. To send it untokenised, name its path in passthrough_paths (PASSTHROUGH_PATHS).",
        )

    def strings(holder: Any, key: Union[str, int], link: Link, into: list[EgressPlace]) -> None:
        """Every string inside the value at any depth, as places (keys are names, not text)."""
        value = holder[key]
        if isinstance(value, str):
            into.append(EgressPlace(holder, key, link))
        elif isinstance(value, list):
            for i in range(len(value)):
                strings(value, i, (link, i), into)
        elif isinstance(value, dict):
            for k in list(value):
                strings(value, k, (link, k), into)

    def visit(node: _Node, holder: Any, key: Union[str, int], link: Link) -> None:
        value = holder[key]
        if value is None:
            return
        kind = node.kind
        if kind == _PASS:
            return
        if kind == _TOKENISE:
            return strings(holder, key, link, texts)
        if kind == _OBJECT:
            if not isinstance(value, dict):
                return refuse(link, f"A value of type {json_type_of(value)} (an object was expected)")
            members, other = node.a, node.b
            for member in list(value):
                member_node = members.get(member, other)
                if member_node is None:
                    refuse((link, member), f"The field {json.dumps(member, ensure_ascii=False)}")
                else:
                    visit(member_node, value, member, (link, member))
            return None
        if kind == _TAGGED:
            if not isinstance(value, dict):
                return refuse(link, f"A value of type {json_type_of(value)} (an object was expected)")
            tagged = node.a
            variant = node.c if tagged not in value and node.c is not _ABSENT else value.get(tagged)
            chosen = node.b.get(variant) if isinstance(variant, str) else None
            if chosen is None:
                return refuse(
                    link, f"A part of {tagged} {json.dumps(variant, ensure_ascii=False)}" if isinstance(variant, str) else f"A part without a string {tagged}"
                )
            return visit(chosen, holder, key, link)
        if kind == _BY_TYPE:
            type_ = json_type_of(value)
            chosen = node.a.get(type_)
            if chosen is None:
                return refuse(link, f"A value of type {type_}")
            return visit(chosen, holder, key, link)
        if kind == _ARRAY:
            if not isinstance(value, list):
                return refuse(link, f"A value of type {json_type_of(value)} (an array was expected)")
            item = node.a
            for i in range(len(value)):
                visit(item, value, i, (link, i))
            return None
        if kind == _STABLE:
            return strings(holder, key, link, identifiers)
        if kind == _REFUSE:
            return refuse(link, "This field")
        if kind == _JSON_TEXT:
            if not isinstance(value, str):
                return strings(holder, key, link, texts)
            texts.append(EgressPlace(holder, key, link, json=True))
            return None
        if kind == _MEDIA:
            walk.media.append(MediaPlace(holder, key, pointer(link), node.a))
            return None
        raise ValueError(f"egress policy: malformed node at {pointer(link)}")

    visit(root, {"body": body}, "body", None)
    return walk


def json_copy(value: Any) -> Any:
    """A copy of a JSON value made of dicts, lists and scalars (tuples become lists), to walk and rewrite. Call it
    after check_egress_depth: it recurses."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_copy(v) for v in value]
    return value
