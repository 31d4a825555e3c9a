"""ECMAScript regular expressions on the `regex` module, with ECMAScript's meaning.

The engine's patterns are shared with the TypeScript engine, whose semantics differ from Python's in a few
places that change what matches: `\\d`, `\\w` and `\\b` are ASCII-only, `\\s` is ECMAScript's whitespace set,
`.` stops at every line terminator, and `$` (without the m flag) matches only at the very end. `compile`
rewrites those so one pattern source finds the same spans in both engines.
"""

from __future__ import annotations

from functools import lru_cache

import regex

_WS = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_WORD = "A-Za-z0-9_"
_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_WS}]",
    "S": f"[^{_WS}]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
}
_INSIDE = {"d": "0-9", "w": _WORD, "s": _WS, "b": "\\x08"}


def _starts_with_word_char(source: str, i: int) -> bool:
    """True when the pattern at `i` must match an ASCII word character first: a literal letter, digit or `_`
    (not quantified with `?`/`*`/`{0`), or a group whose every alternative starts so."""
    if i >= len(source):
        return False
    c = source[i]
    if c.isascii() and (c.isalnum() or c == "_"):
        follow = source[i + 1:i + 3]
        return not (follow[:1] in ("?", "*") or follow.startswith("{0"))
    if source.startswith("(?:", i):
        depth, j, starts = 0, i, [i + 3]
        while j < len(source):
            ch = source[j]
            if ch == "\\":
                j += 2
                continue
            if ch == "[":
                j = source.index("]", j + 1) + 1
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            elif ch == "|" and depth == 1:
                starts.append(j + 1)
            j += 1
        if j >= len(source) or source[j + 1:j + 2] in ("?", "*"):
            return False
        return all(_starts_with_word_char(source, k) for k in starts)
    return False


def translate(source: str, multiline: bool = False) -> str:
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            n = source[i + 1]
            if n in ("p", "P") and i + 2 < len(source) and source[i + 2] == "{":
                close = source.index("}", i)
                out.append(source[i:close + 1])
                i = close + 1
                continue
            if n == "u" and i + 5 < len(source):
                out.append(source[i:i + 6])
                i += 6
                continue
            if in_class and n in _INSIDE:
                out.append(_INSIDE[n])
            elif in_class and n in "DWS":
                raise ValueError(f"\\{n} inside a character class is not supported")
            elif not in_class and n == "b" and _starts_with_word_char(source, i + 2):
                # Before a word character a boundary only needs a non-word character (or nothing) behind: the same
                # match, and much cheaper for the engine than the two-sided test.
                out.append(f"(?<![{_WORD}])")
            elif not in_class and n in _OUTSIDE:
                out.append(_OUTSIDE[n])
            elif n == "/":
                out.append("/")
            else:
                out.append(source[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
                out.append(c)
            elif c == "[":
                out.append("\\[")
            else:
                out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if source[i + 1:i + 2] == "^":
                out.append("^")
                i += 1
            if source[i + 1:i + 2] == "]":  # "[]" / "[^]" never occur in our patterns; keep them literal-safe
                raise ValueError("empty character classes are not supported")
        elif c == "." :
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif c == "$" and not multiline:
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def compile(source: str, flags: str = "") -> "regex.Pattern[str]":  # noqa: A001 - mirrors re.compile
    """Compiles an ECMAScript pattern source with its flags (`g`, `u`, `y` need no translation here)."""
    options = regex.V0
    if "i" in flags:
        options |= regex.IGNORECASE
    if "m" in flags:
        options |= regex.MULTILINE
    if "s" in flags:
        raise ValueError("the s flag is not supported")
    return regex.compile(translate(source, "m" in flags), options)
