// Writes the data files the Python engine shares with the TypeScript one, from the same sources, so both engines
// read identical tables: the IBAN country formats of ibantools (the TS engine's IBAN validator), and the
// egress policy and the portable name model (sdks/vectors/egress-policy.json and name-model.json, copied byte for
// byte: the package cannot read the repository).
// Run: node_modules/.bin/node sdks/python/tools/generate-data.ts           (then review the diff)
//      node_modules/.bin/node sdks/python/tools/generate-data.ts --check   (writes nothing; exits 1 naming each file
//                                                                          that differs; sdks/python/tests/test_data_files.py)
import { readFileSync, writeFileSync } from "node:fs"
import { countrySpecs } from "ibantools"

const ibantoolsVersion = (JSON.parse(readFileSync(new URL("../../../node_modules/ibantools/package.json", import.meta.url), "utf8")) as { version: string }).version
const tokeniserData = new URL("../src/privacy_relay/tokeniser/data/", import.meta.url)
const wireData = new URL("../src/privacy_relay/wire/data/", import.meta.url)

const countries: Record<string, { chars: number; bban_regexp: string; bban_check: string | null }> = {}
for (const [code, spec] of Object.entries(countrySpecs)) {
  const s = spec as { chars?: number; bban_regexp?: string; bban_validation_func?: { name: string } }
  if (s.chars === undefined || s.bban_regexp === undefined || s.bban_regexp === null) continue
  countries[code] = { chars: s.chars, bban_regexp: s.bban_regexp, bban_check: s.bban_validation_func?.name ?? null }
}


/** Every generated file: where it goes, and its exact bytes. */
const files: Array<[URL, Uint8Array]> = [
  [new URL("iban_countries.json", tokeniserData), new TextEncoder().encode(JSON.stringify({ source: `ibantools ${ibantoolsVersion}`, countries }, null, 1) + "\n")],
  [new URL("egress-policy.json", wireData), readFileSync(new URL("../../vectors/egress-policy.json", import.meta.url))],
  [new URL("name-model.json", tokeniserData), readFileSync(new URL("../../vectors/name-model.json", import.meta.url))]
]

const check = process.argv.includes("--check")
const differing: Array<string> = []
for (const [url, bytes] of files) {
  let onDisk: Uint8Array | undefined
  try {
    onDisk = readFileSync(url)
  } catch {
    onDisk = undefined
  }
  if (onDisk !== undefined && Buffer.compare(Buffer.from(onDisk), Buffer.from(bytes)) === 0) continue
  differing.push(url.pathname.split("/sdks/python/")[1] ?? url.pathname)
  if (!check) writeFileSync(url, bytes)
}
if (check && differing.length > 0) {
  console.error(`Python package data differs from its sources: ${differing.join(", ")} (run node sdks/python/tools/generate-data.ts and review the diff)`)
  process.exit(1)
}
console.log(check ? `Python package data up to date: ${files.length} files` : differing.length === 0 ? "Python package data unchanged" : `wrote ${differing.join(", ")}`)
