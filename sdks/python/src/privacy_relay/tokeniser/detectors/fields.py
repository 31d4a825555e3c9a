"""Reads the structure of a text: which values sit under which label. A column header, a JSON or YAML key, a
`key=value` field or a form label ("Date of birth: ...") says what a value is as clearly as a sentence does,
so detectors use it as a cue. Recognised: delimited tables (two or more consecutive lines with the same number of
cells: tab, semicolon or comma; quoted CSV cells; the first line the header) and markdown tables; `"key": value`
(JSON), `key: "value"` (JS, YAML); `key=value`; `Label: value` (or `Label - value`) at the start of a line.
Linear in the text: each line is read a bounded number of times."""

from __future__ import annotations

from typing import NamedTuple, Optional

from .. import jsregex


class Field(NamedTuple):
    label: str
    start: int
    end: int


class _Line(NamedTuple):
    text: str
    start: int


class _Cell(NamedTuple):
    text: str
    start: int
    end: int


def _lines_of(text: str) -> list[_Line]:
    lines: list[_Line] = []
    at = 0
    while True:
        nl = text.find("\n", at)
        end = len(text) if nl == -1 else nl
        raw = text[at:end]
        lines.append(_Line(raw[:-1] if raw.endswith("\r") else raw, at))
        if nl == -1:
            return lines
        at = nl + 1


def _cells_of(line: _Line, sep: str) -> list[_Cell]:
    cells: list[_Cell] = []
    s = line.text
    i = 0
    while True:
        start = i
        while start < len(s) and s[start] == " ":
            start += 1
        if s[start:start + 1] == '"':
            j = start + 1
            while j < len(s) and not (s[j] == '"' and s[j + 1:j + 2] != '"'):
                j += 2 if s[j] == '"' else 1
            close = s.find(sep, j)
            nxt = len(s) if close == -1 else close
            start += 1
            end = min(j, len(s))
        else:
            close = s.find(sep, i)
            nxt = len(s) if close == -1 else close
            end = nxt
            while end > start and s[end - 1] == " ":
                end -= 1
        cells.append(_Cell(s[start:end], line.start + start, line.start + end))
        if nxt >= len(s):
            return cells
        i = nxt + len(sep)


def _markdown_cells(line: _Line) -> Optional[list[_Cell]]:
    t = line.text.strip()
    if not t.startswith("|") or not t.endswith("|") or len(t) < 3:
        return None
    offset = line.text.find("|")
    inner = _Line(line.text[offset + 1:line.text.rfind("|")], line.start + offset + 1)
    out = []
    for c in _cells_of(inner, "|"):
        lead = len(c.text) - len(c.text.lstrip())
        v = c.text.strip()
        out.append(_Cell(v, c.start + lead, c.start + lead + len(v)))
    return out


_RULE = jsregex.compile(r"^:?-{2,}:?$")
_HEADER_BAD = jsregex.compile(r"[@:={}[\]]")
_DIGIT = jsregex.compile(r"\d")
_LETTER = jsregex.compile(r"\p{L}", "u")


def _is_markdown_rule(cells: list[_Cell]) -> bool:
    return all(_RULE.search(c.text) for c in cells)


def _looks_like_header(cells: list[_Cell]) -> bool:
    return all(
        0 < len(c.text) <= 48 and not _HEADER_BAD.search(c.text) and len(_DIGIT.findall(c.text)) <= 2 for c in cells
    ) and any(_LETTER.search(c.text) for c in cells)


_SEPARATORS = ("\t", ";", ",")


def _read_tables(lines: list[_Line], in_table: list[bool], out: list[Field]) -> None:
    i = 0
    while i < len(lines) - 1:
        header = lines[i]
        matched = False
        md_header = _markdown_cells(header)
        if md_header is not None and len(md_header) >= 2 and _looks_like_header(md_header):
            j = i + 1
            rows: list[list[_Cell]] = []
            while j < len(lines):
                cells = _markdown_cells(lines[j])
                if cells is None or len(cells) != len(md_header):
                    break
                if not _is_markdown_rule(cells):
                    rows.append(cells)
                j += 1
            if rows:
                for row in rows:
                    for k, c in enumerate(row):
                        if c.end > c.start:
                            out.append(Field(md_header[k].text, c.start, c.end))
                for k in range(i, j):
                    in_table[k] = True
                i = j
                matched = True
        if not matched:
            for sep in _SEPARATORS:
                if sep not in header.text:
                    continue
                head = _cells_of(header, sep)
                if len(head) < 2 or not _looks_like_header(head):
                    continue
                j = i + 1
                while j < len(lines) and sep in lines[j].text and len(_cells_of(lines[j], sep)) == len(head):
                    j += 1
                if j == i + 1:
                    continue
                for k in range(i + 1, j):
                    for n, c in enumerate(_cells_of(lines[k], sep)):
                        if c.end > c.start:
                            out.append(Field(head[n].text, c.start, c.end))
                for k in range(i, j):
                    in_table[k] = True
                i = j
                matched = True
                break
        if not matched:
            i += 1


_JSON_PAIR = jsregex.compile(r'"([^"\n]{1,60})"\s*:\s*(?:"((?:[^"\\\n]|\\.)*)"|(-?\d[\d.]*))', "gu")
_QUOTED_VALUE = jsregex.compile(r"""(?<![\p{L}\p{N}_"'])([\p{L}_][\p{L}\p{N}_]{0,40})\s*:\s*(["'])([^\n]*?)\2""", "gu")
_KEY_EQUALS = jsregex.compile(r"""(?<![\p{L}\p{N}_.\-])([\p{L}_][\p{L}\p{N}_.\-]{0,40})=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s,;&"')]+))""", "gu")
_LINE_LABEL = jsregex.compile(
    r"^[ \t]*(?:-[ \t]+)?(\p{L}[\p{L}\p{M}\p{N}_.'’()\/#°º\-]*(?: [\p{L}\p{M}\p{N}_.'’()\/#°º\-]+){0,4}?)[ \t]*(?:[:：]|[ \t]-[ \t])[ \t]*(\S[^\n]*?)[ \t]*$",
    "u",
)
_VCARD_LABEL = jsregex.compile(r"^([A-Z][A-Z-]*(?:;[^:\n]*)?):(\S[^\n]*?)\s*$")
_QUOTED_WHOLE = jsregex.compile(r"""^(["']).*\1$""")
_MAX_VALUE = 240


def _push_value(out: list[Field], label: str, start: int, value: str) -> None:
    lead = len(value) - len(value.lstrip())
    v = value.strip()
    if v != "" and len(v) <= _MAX_VALUE:
        out.append(Field(label, start + lead, start + lead + len(v)))


def _read_line(line: _Line, out: list[Field]) -> None:
    before = len(out)
    s = line.text
    vcard = _VCARD_LABEL.search(s)
    if vcard is not None and ";" in vcard.group(1):
        _push_value(out, vcard.group(1), line.start + len(s) - (len(s) - len(s.rstrip())) - len(vcard.group(2)), vcard.group(2))
        return
    if '"' in s and ":" in s:
        for m in _JSON_PAIR.finditer(s):
            value = m.group(2) if m.group(2) is not None else m.group(3)
            at = m.start() + len(m.group(0)) - len(value) - (1 if m.group(2) is not None else 0)
            _push_value(out, m.group(1), line.start + at, value)
    if len(out) == before and ('"' in s or "'" in s) and ":" in s:
        for m in _QUOTED_VALUE.finditer(s):
            _push_value(out, m.group(1), line.start + m.start() + len(m.group(0)) - 1 - len(m.group(3)), m.group(3))
    if "=" in s:
        for m in _KEY_EQUALS.finditer(s):
            value = next(g for g in (m.group(2), m.group(3), m.group(4)) if g is not None)
            quoted = m.group(2) is not None or m.group(3) is not None
            _push_value(out, m.group(1), line.start + m.start() + len(m.group(0)) - len(value) - (1 if quoted else 0), value)
    if len(out) == before and (":" in s or "：" in s or " - " in s):
        m = _VCARD_LABEL.search(s) or _LINE_LABEL.search(s)
        if m is not None and not m.group(2).startswith("//"):
            value = m.group(2)
            at = len(s) - (len(s) - len(s.rstrip())) - len(value)
            if _QUOTED_WHOLE.search(value) and len(value) >= 2:
                value = value[1:-1]
                at += 1
            _push_value(out, m.group(1), line.start + at, value)


_memo: list[tuple[str, list[Field]]] = []


def fields_of(text: str) -> list[Field]:
    """Every labelled value of `text`, in text order. Remembers the last two texts read: detectors ask in turn,
    about the text and about the text with other detections masked (the phone detector's)."""
    for remembered, fields in _memo:
        if remembered is text or remembered == text:
            return fields
    lines = _lines_of(text)
    in_table = [False] * len(lines)
    fields: list[Field] = []
    if "\n" in text:
        _read_tables(lines, in_table, fields)
    for i, line in enumerate(lines):
        if not in_table[i] and len(line.text) > 0:
            _read_line(line, fields)
    fields.sort(key=lambda f: f.start)
    _memo.insert(0, (text, fields))
    del _memo[2:]
    return fields


def field_at(text: str, start: int, end: Optional[int] = None) -> Optional[Field]:
    """The field whose value contains [start, end), if any."""
    if end is None:
        end = start + 1
    fields = fields_of(text)
    lo, hi, last = 0, len(fields) - 1, -1
    while lo <= hi:
        mid = (lo + hi) >> 1
        if fields[mid].start <= start:
            last = mid
            lo = mid + 1
        else:
            hi = mid - 1
    k = last
    while k >= 0 and k >= last - 4:
        f = fields[k]
        if f.start <= start and f.end >= end:
            return f
        k -= 1
    return None
