// Writes the data files the Python engine shares with the TypeScript one, from the same sources, so both engines
// read identical tables: the IBAN country formats of ibantools (the TS engine's IBAN validator) and the name
// gazetteer generated from @faker-js/faker (sdks/typescript/src/tokeniser/names/gazetteer.generated.ts).
// Run: node_modules/.bin/node sdks/python/tools/generate-data.ts   (then review the diff; test_data_files.py checks they agree)
import { readFileSync, writeFileSync } from "node:fs"
import { countrySpecs } from "ibantools"
import * as gazetteer from "../../typescript/src/tokeniser/names/gazetteer.generated.ts"

const ibantoolsVersion = (JSON.parse(readFileSync(new URL("../../../node_modules/ibantools/package.json", import.meta.url), "utf8")) as { version: string }).version
const out = new URL("../src/privacy_relay/tokeniser/data/", import.meta.url)

const countries: Record<string, { chars: number; bban_regexp: string; bban_check: string | null }> = {}
for (const [code, spec] of Object.entries(countrySpecs)) {
  const s = spec as { chars?: number; bban_regexp?: string; bban_validation_func?: { name: string } }
  if (s.chars === undefined || s.bban_regexp === undefined || s.bban_regexp === null) continue
  countries[code] = { chars: s.chars, bban_regexp: s.bban_regexp, bban_check: s.bban_validation_func?.name ?? null }
}
writeFileSync(new URL("iban_countries.json", out), JSON.stringify({ source: `ibantools ${ibantoolsVersion}`, countries }, null, 1) + "\n")

const names: Record<string, unknown> = {}
for (const [key, value] of Object.entries(gazetteer)) if (Array.isArray(value)) names[key] = value
writeFileSync(new URL("gazetteer.json", out), JSON.stringify({ source: "sdks/typescript/src/tokeniser/names/gazetteer.generated.ts", ...names }) + "\n")
