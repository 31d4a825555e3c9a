"""Span agreement between the Python engine and the TypeScript engine on the multilingual evaluation corpus.

    /usr/bin/python3 sdks/python/tools/span_agreement.py [--write]

For every text of test/fixtures/pii-corpus/eval/{dev,heldout}.jsonl (en, fr, de, es, nl, mixed) and the shared
vector set, both engines detect structured spans with names off; a span agrees when both engines found exactly the
same (start, end, type). Agreement = agreeing spans / spans found by either engine. Prints the result and every
disagreement; --write also writes bench/results/python-span-agreement.{json,md}."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "sdks" / "python" / "src"))

from privacy_relay.tokeniser.names.rules import detect_names_by_rules  # noqa: E402
from privacy_relay.tokeniser.tokenise import Tokeniser  # noqa: E402

CORPORA = [ROOT / "test/fixtures/pii-corpus/eval/dev.jsonl", ROOT / "test/fixtures/pii-corpus/eval/heldout.jsonl"]


def _utf16_to_index(text: str) -> dict[int, int]:
    """UTF-16 code unit offset -> code point index (identical for BMP-only text)."""
    out, unit = {}, 0
    for i, ch in enumerate(text):
        out[unit] = i
        unit += 2 if ord(ch) > 0xFFFF else 1
    out[unit] = len(text)
    return out


@dataclass
class Agreement:
    texts: int
    spans_either: int
    spans_agreeing: int
    disagreements: list[dict]
    names_either: int = 0
    names_agreeing: int = 0
    name_disagreements: list = None  # type: ignore[assignment]

    @property
    def names_ratio(self) -> float:
        return 1.0 if self.names_either == 0 else self.names_agreeing / self.names_either

    @property
    def ratio(self) -> float:
        return 1.0 if self.spans_either == 0 else self.spans_agreeing / self.spans_either


def compare(paths: list[Path] = CORPORA) -> Agreement:
    rows = [json.loads(line) for p in paths for line in p.read_text("utf-8").splitlines() if line.strip()]
    ts = subprocess.run(
        [str(ROOT / "node_modules/.bin/node"), str(ROOT / "sdks/python/tools/ts-spans.ts"), *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    tokeniser = Tokeniser(None)
    either = agreeing = names_either = names_agreeing = 0
    disagreements = []
    name_disagreements = []
    for row, line in zip(rows, ts, strict=True):
        theirs_raw = json.loads(line)
        assert theirs_raw["id"] == row["id"]
        units = _utf16_to_index(row["text"])
        theirs = {(units[s], units[e], t) for s, e, t in theirs_raw["spans"]}
        ours = {(s.start, s.end, s.type) for s in tokeniser.detect_spans(row["text"])}
        either += len(theirs | ours)
        agreeing += len(theirs & ours)
        for s, e, t in sorted(theirs ^ ours):
            disagreements.append({"id": row["id"], "lang": row.get("lang"), "type": t, "value": row["text"][s:e], "found_by": "typescript only" if (s, e, t) in theirs else "python only"})
        their_names = {(units[s], units[e]) for s, e, _ in theirs_raw["names"]}
        our_names = {(s.start, s.end) for s in detect_names_by_rules(row["text"])}
        names_either += len(their_names | our_names)
        names_agreeing += len(their_names & our_names)
        for s, e in sorted(their_names ^ our_names):
            name_disagreements.append({"id": row["id"], "lang": row.get("lang"), "value": row["text"][s:e], "found_by": "typescript only" if (s, e) in their_names else "python only"})
    return Agreement(len(rows), either, agreeing, disagreements, names_either, names_agreeing, name_disagreements)


def main() -> None:
    result = compare()
    summary = {
        "texts": result.texts,
        "spans_found_by_either": result.spans_either,
        "spans_agreeing": result.spans_agreeing,
        "agreement": round(result.ratio, 5),
        "target": 0.99,
        "pass": result.ratio >= 0.99,
        "disagreements": result.disagreements,
        "name_rules": {
            "names_found_by_either": result.names_either,
            "names_agreeing": result.names_agreeing,
            "agreement": round(result.names_ratio, 5),
            "disagreements": result.name_disagreements,
        },
    }
    print(json.dumps({k: v for k, v in summary.items() if k not in ("disagreements", "name_rules")}))
    for d in result.disagreements:
        print(f"  {d['id']} ({d['lang']}) {d['type']} {d['value']!r}: {d['found_by']}")
    print(json.dumps({"name_rules": {k: v for k, v in summary["name_rules"].items() if k != "disagreements"}}))
    for d in result.name_disagreements:
        print(f"  {d['id']} ({d['lang']}) PERSON {d['value']!r}: {d['found_by']}")
    if "--write" in sys.argv:
        out = ROOT / "bench" / "results"
        (out / "python-span-agreement.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", "utf-8")
        lines = [
            "# Python engine vs TypeScript engine: structured spans (names off)",
            "",
            f"Corpus: test/fixtures/pii-corpus/eval dev + heldout ({result.texts} texts, en/fr/de/es/nl/mixed).",
            f"Agreement: {result.spans_agreeing} of {result.spans_either} spans ({result.ratio:.2%}); target 99%: {'PASS' if summary['pass'] else 'FAIL'}.",
            "",
            "| id | lang | type | value | found by |",
            "|---|---|---|---|---|",
            *[f"| {d['id']} | {d['lang']} | {d['type']} | `{d['value']}` | {d['found_by']} |" for d in result.disagreements],
            "",
            "## Name rules (the gazetteer half of the built-in name model, without the TypeScript engine's compromise)",
            "",
            f"Agreement: {result.names_agreeing} of {result.names_either} names ({result.names_ratio:.2%}).",
            "",
            "| id | lang | value | found by |",
            "|---|---|---|---|",
            *[f"| {d['id']} | {d['lang']} | `{d['value']}` | {d['found_by']} |" for d in result.name_disagreements],
            "",
        ]
        (out / "python-span-agreement.md").write_text("\n".join(lines), "utf-8")


if __name__ == "__main__":
    main()
