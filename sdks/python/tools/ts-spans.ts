// Prints, for each JSONL file given, one JSON line per text: {"id", "spans": [[start, end, type], ...], "names"} as
// the TypeScript engine's structured detectors find them (names off, default phone regions) and as its built-in
// name model (the portable name model, names/nameRules.ts) finds names. The Python SDK's
// span-agreement check (tools/span_agreement.py, tests/test_span_agreement.py) compares its own engine with these.
// Offsets are UTF-16 code units; the caller converts them when a text has characters outside the BMP.
import { readFileSync } from "node:fs"
import { detectStructured } from "../../typescript/src/tokeniser/detectStructured.ts"
import { detectNames } from "../../typescript/src/tokeniser/names/nameRules.ts"

for (const path of process.argv.slice(2)) {
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue
    const row = JSON.parse(line) as { id: unknown; text: string }
    const spans = detectStructured(row.text).map((s) => [s.start, s.end, s.type])
    // The built-in name model (the portable name model), which the Python engine ports.
    const names = detectNames(row.text).map((s) => [s.start, s.end, s.type])
    process.stdout.write(`${JSON.stringify({ id: row.id, spans, names })}\n`)
  }
}
